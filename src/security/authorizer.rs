//! The broker's one authorizer (decision 0141): `--authorizer none|acl`, `--super-users`,
//! `--allow-everyone-if-no-acl-found`, over the cluster's replicated ACLs.
//!
//! ```text
//!  handler ─► Authorizer::authorize(principal, host, operation, resource) -> bool
//!               none: true (Kafka with no authorizer)
//!               acl:  node.read_local(AclTable::authorize)   (Kafka's StandardAuthorizer rules,
//!                     raft_meta::cohort_app::acl; index probes, not a scan)
//! ```
//!
//! The ACLs are read from this node's applied state at each call: a CreateAcls or DeleteAcls
//! applied here counts for the next request of every connection, those already open included.

use std::collections::BTreeSet;
use std::sync::Arc;

use raft_meta::cohort_app::acl::{AuthorizerSettings, Decision, Resource};
use raft_meta::cohort_app::{AclOperation, AclResourceType, AclTable, CohortApp};
use raft_meta::MetaNode;

use super::principal::Principal;

pub use raft_meta::cohort_app::acl::CLUSTER_NAME;

/// Parses Kafka's `super.users`: `User:a;User:b` (each `Type:name`; empty: none).
pub fn parse_super_users(list: &str) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for p in list.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        match p.split_once(':') {
            Some((kind, name)) if !kind.is_empty() && !name.is_empty() => {
                out.insert(p.to_owned());
            }
            _ => return None,
        }
    }
    Some(out)
}

/// What the flags say: `None` for `--authorizer none`.
pub fn settings_from_flags(
    authorizer: &str,
    super_users: &str,
    allow_if_no_acl: bool,
) -> Option<AuthorizerSettings> {
    (authorizer == "acl").then(|| AuthorizerSettings {
        super_users: parse_super_users(super_users).unwrap_or_default(),
        allow_if_no_acl,
    })
}

/// Decides who may do what.
pub struct Authorizer {
    settings: Option<AuthorizerSettings>,
    node: Option<Arc<MetaNode<CohortApp>>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// `settings` `None`: everything allowed. `node` is where the ACLs are read (none in
    /// handler tests without Raft: no ACL then).
    pub fn new(
        settings: Option<AuthorizerSettings>,
        node: Option<Arc<MetaNode<CohortApp>>>,
    ) -> Self {
        Self { settings, node }
    }

    /// Whether an ACL authorizer is configured (`--authorizer acl`): Kafka answers the ACL
    /// APIs SECURITY_DISABLED without one.
    pub fn enabled(&self) -> bool {
        self.settings.is_some()
    }

    /// Whether `principal`, connected from `host`, may do `operation` on the resource.
    pub fn authorize(
        &self,
        principal: &Principal,
        host: &str,
        operation: AclOperation,
        resource_type: AclResourceType,
        name: &str,
    ) -> bool {
        let Some(settings) = &self.settings else {
            return true;
        };
        let who = principal.to_string();
        let resource = Resource {
            resource_type,
            name,
        };
        let decision = match &self.node {
            Some(node) => node.read_local(|a| {
                a.app
                    .acls()
                    .authorize(settings, &who, host, operation, resource)
            }),
            None => AclTable::default().authorize(settings, &who, host, operation, resource),
        };
        decision == Decision::Allowed
    }

    /// Kafka's `authorizeByResourceType`: whether `principal` may do `operation` on some
    /// resource of the type.
    pub fn authorize_by_resource_type(
        &self,
        principal: &Principal,
        host: &str,
        operation: AclOperation,
        resource_type: AclResourceType,
    ) -> bool {
        let Some(settings) = &self.settings else {
            return true;
        };
        let who = principal.to_string();
        let decision = match &self.node {
            Some(node) => node.read_local(|a| {
                a.app.acls().authorize_by_resource_type(
                    settings,
                    &who,
                    host,
                    operation,
                    resource_type,
                )
            }),
            None => AclTable::default().authorize_by_resource_type(
                settings,
                &who,
                host,
                operation,
                resource_type,
            ),
        };
        decision == Decision::Allowed
    }

    /// Kafka's `authorized_operations` bit set: bit `code` set for each operation of
    /// `operations` the principal may do on the resource.
    pub fn operations_bits(
        &self,
        principal: &Principal,
        host: &str,
        resource_type: AclResourceType,
        name: &str,
        operations: &[AclOperation],
    ) -> i32 {
        operations
            .iter()
            .filter(|op| self.authorize(principal, host, **op, resource_type, name))
            .fold(0, |bits, op| bits | (1 << op.code()))
    }

    /// [`Authorizer::authorize`] on the CLUSTER resource.
    pub fn authorize_cluster(
        &self,
        principal: &Principal,
        host: &str,
        operation: AclOperation,
    ) -> bool {
        self.authorize(
            principal,
            host,
            operation,
            AclResourceType::Cluster,
            CLUSTER_NAME,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn super_users_parse_as_kafkas_list() {
        assert_eq!(
            parse_super_users("User:a; User:b;"),
            Some(BTreeSet::from(["User:a".to_owned(), "User:b".to_owned()]))
        );
        assert_eq!(parse_super_users(""), Some(BTreeSet::new()));
        assert_eq!(parse_super_users("alice"), None);
        assert_eq!(parse_super_users("User:"), None);
    }

    #[test]
    fn none_allows_everything_acl_denies_without_an_acl_unless_told() {
        let alice = Principal::user("alice");
        let none = Authorizer::new(None, None);
        assert!(none.authorize_cluster(&alice, "h", AclOperation::Alter));
        let acl = Authorizer::new(settings_from_flags("acl", "User:root", false), None);
        assert!(acl.enabled());
        assert!(!acl.authorize_cluster(&alice, "h", AclOperation::Alter));
        assert!(acl.authorize_cluster(&Principal::user("root"), "h", AclOperation::Alter));
        let open = Authorizer::new(settings_from_flags("acl", "", true), None);
        assert!(open.authorize_cluster(&alice, "h", AclOperation::Alter));
    }
}
