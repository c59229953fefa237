//! What the three ACL APIs share: Kafka's wire codes of resource types, pattern types,
//! operations and permissions, read into the replicated state's types with Kafka's checks
//! (`AclControlManager.validateNewAcl`, `validateFilter`), and the cluster-level gate.
//!
//! ```text
//!  code 0 (UNKNOWN) or unknown code ─► INVALID_REQUEST
//!  ANY (1) / MATCH (2) in a new ACL  ─► INVALID_REQUEST ("Invalid resourceType ANY", ...)
//!  DELEGATION_TOKEN (6), USER (7)    ─► no ACL kept on them: refused in a new ACL, matching
//!                                      nothing in a filter
//! ```

use raft_meta::cohort_app::{
    AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPatternType, AclPermission,
    AclResourceType,
};

use super::RequestContext;
use protocol::ErrorCode;

/// Kafka's `ResourceType` names by code.
pub fn resource_type_name(code: i8) -> String {
    match code {
        0 => "UNKNOWN".into(),
        1 => "ANY".into(),
        2 => "TOPIC".into(),
        3 => "GROUP".into(),
        4 => "CLUSTER".into(),
        5 => "TRANSACTIONAL_ID".into(),
        6 => "DELEGATION_TOKEN".into(),
        7 => "USER".into(),
        other => format!("UNKNOWN({other})"),
    }
}

/// Kafka's `PatternType` code of a pattern.
pub fn pattern_code(p: AclPatternType) -> i8 {
    match p {
        AclPatternType::Literal => 3,
        AclPatternType::Prefixed => 4,
    }
}

/// Kafka's `AclPermissionType` code.
pub fn permission_code(p: AclPermission) -> i8 {
    match p {
        AclPermission::Deny => 2,
        AclPermission::Allow => 3,
    }
}

fn permission_from(code: i8) -> Option<AclPermission> {
    match code {
        2 => Some(AclPermission::Deny),
        3 => Some(AclPermission::Allow),
        _ => None,
    }
}

fn pattern_from(code: i8) -> Option<AclPatternType> {
    match code {
        3 => Some(AclPatternType::Literal),
        4 => Some(AclPatternType::Prefixed),
        _ => None,
    }
}

/// The fields of one ACL as a request carries them.
pub struct WireAcl<'a> {
    pub resource_type: i8,
    pub name: &'a str,
    pub pattern: i8,
    pub principal: &'a str,
    pub host: &'a str,
    pub operation: i8,
    pub permission: i8,
}

/// A CreateAcls creation as an ACL, or Kafka's INVALID_REQUEST message.
pub fn new_acl(w: &WireAcl<'_>) -> Result<AclBinding, String> {
    let resource_type =
        AclResourceType::from_code(w.resource_type).ok_or_else(|| match w.resource_type {
            6 | 7 => format!(
                "ACLs on resource type {} are not kept by this broker",
                resource_type_name(w.resource_type)
            ),
            c => format!("Invalid resourceType {}", resource_type_name(c)),
        })?;
    let pattern = pattern_from(w.pattern).ok_or_else(|| {
        format!(
            "Invalid patternType {}",
            ["UNKNOWN", "ANY", "MATCH"]
                .get(usize::try_from(w.pattern).unwrap_or(0))
                .unwrap_or(&"UNKNOWN")
        )
    })?;
    let operation = AclOperation::from_code(w.operation).ok_or_else(|| {
        format!(
            "Invalid operation {}",
            if w.operation == 1 { "ANY" } else { "UNKNOWN" }
        )
    })?;
    let permission = permission_from(w.permission).ok_or_else(|| {
        format!(
            "Invalid permissionType {}",
            if w.permission == 1 { "ANY" } else { "UNKNOWN" }
        )
    })?;
    let acl = AclBinding {
        resource_type,
        name: w.name.to_owned(),
        pattern,
        principal: w.principal.to_owned(),
        host: w.host.to_owned(),
        operation,
        permission,
    };
    raft_meta::cohort_app::acl::check_new_acl(&acl)?;
    Ok(acl)
}

/// A filter read off the wire.
pub enum WireFilter {
    /// A valid filter.
    Filter(AclFilter),
    /// A valid filter on a resource type no ACL is kept for: matches nothing.
    Nothing,
}

/// The fields of one filter as a request carries them.
pub struct WireAclFilter<'a> {
    pub resource_type: i8,
    pub name: Option<&'a str>,
    pub pattern: i8,
    pub principal: Option<&'a str>,
    pub host: Option<&'a str>,
    pub operation: i8,
    pub permission: i8,
}

/// A DescribeAcls / DeleteAcls filter, or Kafka's INVALID_REQUEST message ("Unknown
/// patternFilter." / "Unknown entryFilter.", as `AclControlManager.validateFilter`).
pub fn filter(w: &WireAclFilter<'_>) -> Result<WireFilter, String> {
    let resource_type = match w.resource_type {
        1 => None,
        6 | 7 => return check_entry(w).map(|()| WireFilter::Nothing),
        c => Some(AclResourceType::from_code(c).ok_or("Unknown patternFilter.")?),
    };
    let pattern = match w.pattern {
        1 => AclPatternFilter::Any,
        2 => AclPatternFilter::Match,
        c => AclPatternFilter::Exactly(pattern_from(c).ok_or("Unknown patternFilter.")?),
    };
    check_entry(w)?;
    Ok(WireFilter::Filter(AclFilter {
        resource_type,
        name: w.name.map(str::to_owned),
        pattern,
        principal: w.principal.map(str::to_owned),
        host: w.host.map(str::to_owned),
        operation: AclOperation::from_code(w.operation),
        permission: permission_from(w.permission),
    }))
}

fn check_entry(w: &WireAclFilter<'_>) -> Result<(), String> {
    let op_ok = w.operation == 1 || AclOperation::from_code(w.operation).is_some();
    let perm_ok = w.permission == 1 || permission_from(w.permission).is_some();
    if op_ok && perm_ok {
        Ok(())
    } else {
        Err("Unknown entryFilter.".to_owned())
    }
}

/// Kafka's gate on the ACL APIs (`AclApis`): SECURITY_DISABLED without an authorizer, then
/// the API's row of `security::api_acls` (DESCRIBE on the CLUSTER for DescribeAcls, ALTER for
/// Create/DeleteAcls).
pub fn gate(ctx: &RequestContext) -> Result<(), (ErrorCode, String)> {
    let authorizer = &ctx.broker.authorizer;
    if !authorizer.enabled() {
        return Err((
            ErrorCode::SecurityDisabled,
            "No Authorizer is configured.".to_owned(),
        ));
    }
    let host = ctx.peer.ip().to_string();
    let allowed =
        crate::security::api_acls::needs_of(ctx.api_key, crate::security::api_acls::Part::Cluster)
            .all(|n| authorizer.authorize_cluster(&ctx.principal, &host, n.operation));
    if !allowed {
        return Err((
            ErrorCode::ClusterAuthorizationFailed,
            "Cluster authorization failed.".to_owned(),
        ));
    }
    Ok(())
}

/// Create/DeleteAcls' gate: ALTER on the cluster, then the replicated state that takes the
/// change.
pub fn writable(
    ctx: &RequestContext,
) -> Result<&std::sync::Arc<crate::group_coordinator::GroupCoordinator>, (ErrorCode, String)> {
    gate(ctx)?;
    ctx.broker.groups.as_ref().ok_or_else(|| {
        (
            ErrorCode::CoordinatorNotAvailable,
            "the replicated state is not running".to_owned(),
        )
    })
}
