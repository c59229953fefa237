//! ACL bindings and the pure authorize function with Kafka's `StandardAuthorizer` semantics
//! (`StandardAuthorizerData.authorize` / `findResult`), over an index so that a lookup costs a
//! few map probes per resource, never a scan of every ACL.
//!
//! ```text
//!  authorize(principal, host, operation, resource) =
//!     super user                                   ─► ALLOWED
//!     ACLs on the resource: LITERAL name, LITERAL "*", PREFIXED p for every prefix p of name
//!        any DENY matching (principal or User:*, host or *, op or ALL)      ─► DENIED
//!        else any ALLOW matching (op, ALL, or implying it: READ/WRITE/DELETE/ALTER imply
//!             DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS)              ─► ALLOWED
//!        else if the resource has ACLs at all (for anyone)                 ─► DENIED
//!        else allow.everyone.if.no.acl.found ? ALLOWED : DENIED
//! ```
//!
//! Pure: no IO, no clock; the table is data the replicated state can hold.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

/// Kafka's resource types that Cohort's APIs name (`ResourceType` codes on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AclResourceType {
    Topic,
    Group,
    Cluster,
    TransactionalId,
}

impl AclResourceType {
    /// Kafka's wire code (TOPIC 2, GROUP 3, CLUSTER 4, TRANSACTIONAL_ID 5).
    pub fn code(self) -> i8 {
        match self {
            AclResourceType::Topic => 2,
            AclResourceType::Group => 3,
            AclResourceType::Cluster => 4,
            AclResourceType::TransactionalId => 5,
        }
    }

    pub fn from_code(code: i8) -> Option<Self> {
        match code {
            2 => Some(AclResourceType::Topic),
            3 => Some(AclResourceType::Group),
            4 => Some(AclResourceType::Cluster),
            5 => Some(AclResourceType::TransactionalId),
            _ => None,
        }
    }
}

/// How an ACL's resource name matches (`PatternType`: LITERAL 3, PREFIXED 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AclPatternType {
    Literal,
    Prefixed,
}

/// Kafka's `AclOperation` (wire codes 2..=14; ANY 1 is a filter, never an ACL's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AclOperation {
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
    CreateTokens,
    DescribeTokens,
}

impl AclOperation {
    /// Kafka's wire code.
    pub fn code(self) -> i8 {
        match self {
            AclOperation::All => 2,
            AclOperation::Read => 3,
            AclOperation::Write => 4,
            AclOperation::Create => 5,
            AclOperation::Delete => 6,
            AclOperation::Alter => 7,
            AclOperation::Describe => 8,
            AclOperation::ClusterAction => 9,
            AclOperation::DescribeConfigs => 10,
            AclOperation::AlterConfigs => 11,
            AclOperation::IdempotentWrite => 12,
            AclOperation::CreateTokens => 13,
            AclOperation::DescribeTokens => 14,
        }
    }

    pub fn from_code(code: i8) -> Option<Self> {
        use AclOperation::*;
        [
            All,
            Read,
            Write,
            Create,
            Delete,
            Alter,
            Describe,
            ClusterAction,
            DescribeConfigs,
            AlterConfigs,
            IdempotentWrite,
            CreateTokens,
            DescribeTokens,
        ]
        .into_iter()
        .find(|o| o.code() == code)
    }

    /// Whether an ALLOW ACL for `self` grants `wanted` (Kafka's `IMPLIES_DESCRIBE` and
    /// `IMPLIES_DESCRIBE_CONFIGS`; only ALLOW ACLs imply).
    fn allow_grants(self, wanted: AclOperation) -> bool {
        use AclOperation::*;
        match (self, wanted) {
            (All, _) => true,
            (Read | Write | Delete | Alter | Describe, Describe) => true,
            (AlterConfigs | DescribeConfigs, DescribeConfigs) => true,
            (a, b) => a == b,
        }
    }

    /// Whether a DENY ACL for `self` refuses `wanted` (the operation itself or ALL).
    fn deny_refuses(self, wanted: AclOperation) -> bool {
        self == AclOperation::All || self == wanted
    }
}

/// ALLOW or DENY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AclPermission {
    Allow,
    Deny,
}

/// One ACL binding (Kafka's `AclBinding` as `StandardAcl` holds it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AclBinding {
    pub resource_type: AclResourceType,
    /// The resource name; `*` with LITERAL matches every resource of the type.
    pub name: String,
    pub pattern: AclPatternType,
    /// `User:alice`, or `User:*` for everyone.
    pub principal: String,
    /// A client address, or `*`.
    pub host: String,
    pub operation: AclOperation,
    pub permission: AclPermission,
}

/// The resource a request acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource<'a> {
    pub resource_type: AclResourceType,
    pub name: &'a str,
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Denied,
}

/// What the authorizer is configured with besides the ACLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizerSettings {
    /// `super.users`: principals allowed everything.
    pub super_users: BTreeSet<String>,
    /// `allow.everyone.if.no.acl.found`.
    pub allow_if_no_acl: bool,
}

pub const WILDCARD: &str = "*";
pub const WILDCARD_PRINCIPAL: &str = "User:*";

/// How a filter matches an ACL's pattern type (Kafka's `PatternType` as a filter: ANY 1,
/// MATCH 2, LITERAL 3, PREFIXED 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AclPatternFilter {
    /// Any pattern type; a name then matches the pattern's name exactly.
    Any,
    /// The patterns that would apply to a resource of that name: the literal name, the
    /// literal `*`, and every PREFIXED pattern the name starts with.
    Match,
    /// This pattern type only, the name exactly.
    Exactly(AclPatternType),
}

/// Kafka's `AclBindingFilter`: `None` is ANY (or a null name, principal, host).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AclFilter {
    pub resource_type: Option<AclResourceType>,
    pub name: Option<String>,
    pub pattern: AclPatternFilter,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: Option<AclOperation>,
    pub permission: Option<AclPermission>,
}

impl AclFilter {
    /// Whether `acl` matches (Kafka's `ResourcePatternFilter.matches` and
    /// `AccessControlEntryFilter.matches`).
    pub fn matches(&self, acl: &AclBinding) -> bool {
        self.matches_pattern(acl)
            && self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && self.operation.is_none_or(|o| o == acl.operation)
            && self.permission.is_none_or(|p| p == acl.permission)
    }

    fn matches_pattern(&self, acl: &AclBinding) -> bool {
        if self.resource_type.is_some_and(|t| t != acl.resource_type) {
            return false;
        }
        if let AclPatternFilter::Exactly(p) = self.pattern {
            if p != acl.pattern {
                return false;
            }
        }
        let Some(name) = &self.name else {
            return true;
        };
        match (self.pattern, acl.pattern) {
            (AclPatternFilter::Any | AclPatternFilter::Exactly(_), _) => *name == acl.name,
            (AclPatternFilter::Match, AclPatternType::Literal) => {
                *name == acl.name || acl.name == WILDCARD
            }
            (AclPatternFilter::Match, AclPatternType::Prefixed) => name.starts_with(&acl.name),
        }
    }
}

/// Why a new ACL is refused (Kafka answers INVALID_REQUEST with these messages).
pub fn check_new_acl(acl: &AclBinding) -> Result<(), String> {
    if acl.name.is_empty() {
        return Err("Resource name should not be empty".to_owned());
    }
    if acl.resource_type == AclResourceType::Cluster && acl.name != CLUSTER_NAME {
        return Err(format!(
            "The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        ));
    }
    match acl.principal.split_once(':') {
        Some((kind, name)) if !kind.is_empty() && !name.is_empty() => Ok(()),
        _ => Err(format!(
            "Could not parse principal from `{}` (no colon is found separating the principal \
             type from the principal name)",
            acl.principal
        )),
    }
}

/// The name of the CLUSTER resource.
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// The ACLs of a cluster, indexed by (resource type, pattern) then name: an authorization
/// probes the literal name, the literal `*` and each prefix of the name (a map lookup each),
/// never the other ACLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclTable {
    by_resource: HashMap<(AclResourceType, AclPatternType), HashMap<String, BTreeSet<AclBinding>>>,
    count: usize,
}

impl AclTable {
    /// Adds `acl`; false if it was there already.
    pub fn insert(&mut self, acl: AclBinding) -> bool {
        let added = self
            .by_resource
            .entry((acl.resource_type, acl.pattern))
            .or_default()
            .entry(acl.name.clone())
            .or_default()
            .insert(acl);
        if added {
            self.count += 1;
        }
        added
    }

    /// Removes `acl`; false if it was not there.
    pub fn remove(&mut self, acl: &AclBinding) -> bool {
        let key = (acl.resource_type, acl.pattern);
        let Some(names) = self.by_resource.get_mut(&key) else {
            return false;
        };
        let Some(set) = names.get_mut(&acl.name) else {
            return false;
        };
        let removed = set.remove(acl);
        if set.is_empty() {
            names.remove(&acl.name);
        }
        if names.is_empty() {
            self.by_resource.remove(&key);
        }
        if removed {
            self.count -= 1;
        }
        removed
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Every ACL, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = &AclBinding> {
        let mut all: Vec<&AclBinding> = self
            .by_resource
            .values()
            .flat_map(HashMap::values)
            .flatten()
            .collect();
        all.sort();
        all.into_iter()
    }

    /// The ACLs `filter` matches, in a stable order (DescribeAcls).
    pub fn describe(&self, filter: &AclFilter) -> Vec<AclBinding> {
        self.iter().filter(|a| filter.matches(a)).cloned().collect()
    }

    /// CreateAcls: each ACL added unless refused (an ACL already there is a success, as in
    /// Kafka's `AclControlManager.createAcls`); answers each in order.
    pub fn create(&mut self, acls: Vec<AclBinding>) -> Vec<Result<(), String>> {
        acls.into_iter()
            .map(|acl| {
                check_new_acl(&acl)?;
                self.insert(acl);
                Ok(())
            })
            .collect()
    }

    /// DeleteAcls: for each filter, the ACLs it matches in the table as the command found it
    /// (an ACL matched by two filters is listed by both, removed once); all of them removed.
    pub fn delete(&mut self, filters: &[AclFilter]) -> Vec<Vec<AclBinding>> {
        let matched: Vec<Vec<AclBinding>> = filters.iter().map(|f| self.describe(f)).collect();
        for acl in matched.iter().flatten() {
            self.remove(acl);
        }
        matched
    }

    /// The state a snapshot holds.
    pub fn restore(&mut self, acls: Vec<AclBinding>) {
        *self = AclTable::default();
        for acl in acls {
            self.insert(acl);
        }
    }

    /// The ACLs whose pattern matches `resource`: its literal name, the literal wildcard, and
    /// a PREFIXED pattern for every prefix of its name (one probe per prefix).
    fn matching<'a>(&'a self, resource: Resource<'a>) -> impl Iterator<Item = &'a AclBinding> {
        let t = resource.resource_type;
        let literal = self.by_resource.get(&(t, AclPatternType::Literal));
        let prefixed = self.by_resource.get(&(t, AclPatternType::Prefixed));
        let literal = [resource.name, WILDCARD]
            .into_iter()
            .filter_map(move |n| literal.and_then(|m| m.get(n)));
        let prefixes = resource
            .name
            .char_indices()
            .map(|(i, c)| &resource.name[..i + c.len_utf8()])
            .filter_map(move |p| prefixed.and_then(|m| m.get(p)));
        literal.chain(prefixes).flatten()
    }

    /// Kafka's `StandardAuthorizer.authorize` for one action.
    pub fn authorize(
        &self,
        settings: &AuthorizerSettings,
        principal: &str,
        host: &str,
        operation: AclOperation,
        resource: Resource<'_>,
    ) -> Decision {
        if settings.super_users.contains(principal) {
            return Decision::Allowed;
        }
        let mut has_resource_acls = false;
        let mut allowed = false;
        for acl in self.matching(resource) {
            has_resource_acls = true;
            if acl.principal != principal && acl.principal != WILDCARD_PRINCIPAL {
                continue;
            }
            if acl.host != WILDCARD && acl.host != host {
                continue;
            }
            match acl.permission {
                AclPermission::Deny if acl.operation.deny_refuses(operation) => {
                    return Decision::Denied;
                }
                AclPermission::Allow if acl.operation.allow_grants(operation) => allowed = true,
                _ => {}
            }
        }
        // An ALLOW that matched, else the no-ACL rule (only for a resource without any ACL).
        if allowed || (!has_resource_acls && settings.allow_if_no_acl) {
            Decision::Allowed
        } else {
            Decision::Denied
        }
    }

    /// Kafka's `authorizeByResourceType`: whether `principal` may do `operation` on *some*
    /// resource of the type (InitProducerId without a transactional id accepts WRITE on any
    /// topic). An ALLOW counts unless a DENY for the same principal, host and operation covers
    /// its pattern: a DENY on the literal `*`, a literal DENY of the same name, or a prefixed
    /// DENY that is a prefix of it.
    pub fn authorize_by_resource_type(
        &self,
        settings: &AuthorizerSettings,
        principal: &str,
        host: &str,
        operation: AclOperation,
        resource_type: AclResourceType,
    ) -> Decision {
        // As Kafka's default implementation: a resource no ACL names decides first, which
        // covers super users and `allow.everyone.if.no.acl.found`.
        let unnamed = Resource {
            resource_type,
            name: "hardcode",
        };
        if self.authorize(settings, principal, host, operation, unnamed) == Decision::Allowed {
            return Decision::Allowed;
        }
        let applies = |acl: &&AclBinding| {
            acl.resource_type == resource_type
                && (acl.principal == principal || acl.principal == WILDCARD_PRINCIPAL)
                && (acl.host == WILDCARD || acl.host == host)
        };
        let denies: Vec<&AclBinding> = self
            .iter()
            .filter(applies)
            .filter(|a| a.permission == AclPermission::Deny && a.operation.deny_refuses(operation))
            .collect();
        let covered = |allow: &AclBinding| {
            denies.iter().any(|d| match d.pattern {
                AclPatternType::Literal => {
                    d.name == WILDCARD
                        || (allow.pattern == AclPatternType::Literal && d.name == allow.name)
                }
                AclPatternType::Prefixed => allow.name.starts_with(d.name.as_str()),
            })
        };
        let allowed = self
            .iter()
            .filter(applies)
            .filter(|a| a.permission == AclPermission::Allow && a.operation.allow_grants(operation))
            .any(|a| !covered(a));
        if allowed {
            Decision::Allowed
        } else {
            Decision::Denied
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AclOperation::*;
    use AclPatternType::*;
    use AclPermission::*;
    use AclResourceType::*;

    fn acl(
        t: AclResourceType,
        name: &str,
        pattern: AclPatternType,
        principal: &str,
        host: &str,
        op: AclOperation,
        perm: AclPermission,
    ) -> AclBinding {
        AclBinding {
            resource_type: t,
            name: name.into(),
            pattern,
            principal: principal.into(),
            host: host.into(),
            operation: op,
            permission: perm,
        }
    }

    fn topic(name: &str) -> Resource<'_> {
        Resource {
            resource_type: Topic,
            name,
        }
    }

    /// Rows written from Kafka's documentation of the authorizer (docs/security.html
    /// "Authorization and ACLs", KIP-290 prefixed ACLs) and `StandardAuthorizerData`:
    /// (ACLs, settings, principal, host, operation, resource, expected).
    #[test]
    fn the_matrix_from_kafkas_documentation() {
        let alice = "User:alice";
        let bob = "User:bob";
        let none = AuthorizerSettings::default();
        let open = AuthorizerSettings {
            allow_if_no_acl: true,
            ..Default::default()
        };
        let su = AuthorizerSettings {
            super_users: BTreeSet::from(["User:admin".to_owned()]),
            ..Default::default()
        };
        type Row<'a> = (
            Vec<AclBinding>,
            &'a AuthorizerSettings,
            &'a str,
            &'a str,
            AclOperation,
            Resource<'a>,
            Decision,
        );
        let rows: Vec<Row> = vec![
            // No ACL on the resource: allow.everyone.if.no.acl.found decides.
            (
                vec![],
                &none,
                alice,
                "10.0.0.1",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            (
                vec![],
                &open,
                alice,
                "10.0.0.1",
                Read,
                topic("t"),
                Decision::Allowed,
            ),
            // An ACL for someone else on the resource: denied even with allow-if-no-acl.
            (
                vec![acl(Topic, "t", Literal, bob, "*", Read, Allow)],
                &open,
                alice,
                "10.0.0.1",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            // Super users bypass ACLs, DENY included.
            (
                vec![acl(Topic, "t", Literal, "User:admin", "*", All, Deny)],
                &su,
                "User:admin",
                "h",
                Alter,
                topic("t"),
                Decision::Allowed,
            ),
            // Exact ALLOW.
            (
                vec![acl(Topic, "t", Literal, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("t"),
                Decision::Allowed,
            ),
            // READ does not grant WRITE.
            (
                vec![acl(Topic, "t", Literal, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Write,
                topic("t"),
                Decision::Denied,
            ),
            // READ, WRITE, DELETE, ALTER imply DESCRIBE.
            (
                vec![acl(Topic, "t", Literal, alice, "*", Write, Allow)],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Allowed,
            ),
            (
                vec![acl(Topic, "t", Literal, alice, "*", Delete, Allow)],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Allowed,
            ),
            (
                vec![acl(Topic, "t", Literal, alice, "*", Alter, Allow)],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Allowed,
            ),
            // CREATE does not imply DESCRIBE.
            (
                vec![acl(Topic, "t", Literal, alice, "*", Create, Allow)],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Denied,
            ),
            // ALTER_CONFIGS implies DESCRIBE_CONFIGS.
            (
                vec![acl(Topic, "t", Literal, alice, "*", AlterConfigs, Allow)],
                &none,
                alice,
                "h",
                DescribeConfigs,
                topic("t"),
                Decision::Allowed,
            ),
            // A DENY READ does not deny DESCRIBE implied by an ALLOW WRITE.
            (
                vec![
                    acl(Topic, "t", Literal, alice, "*", Write, Allow),
                    acl(Topic, "t", Literal, alice, "*", Read, Deny),
                ],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Allowed,
            ),
            // DENY wins over ALLOW, also from a wildcard principal and a prefixed pattern.
            (
                vec![
                    acl(Topic, "t", Literal, alice, "*", Read, Allow),
                    acl(Topic, "t", Prefixed, WILDCARD_PRINCIPAL, "*", Read, Deny),
                ],
                &none,
                alice,
                "h",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            // DENY ALL refuses every operation.
            (
                vec![
                    acl(Topic, "*", Literal, alice, "*", All, Allow),
                    acl(Topic, "t", Literal, alice, "*", All, Deny),
                ],
                &none,
                alice,
                "h",
                Describe,
                topic("t"),
                Decision::Denied,
            ),
            // ALLOW ALL grants every operation.
            (
                vec![acl(Topic, "t", Literal, alice, "*", All, Allow)],
                &none,
                alice,
                "h",
                IdempotentWrite,
                topic("t"),
                Decision::Allowed,
            ),
            // User:* matches everyone; the literal "*" name every topic.
            (
                vec![acl(
                    Topic,
                    "*",
                    Literal,
                    WILDCARD_PRINCIPAL,
                    "*",
                    Read,
                    Allow,
                )],
                &none,
                bob,
                "h",
                Read,
                topic("anything"),
                Decision::Allowed,
            ),
            // A host other than the client's does not match.
            (
                vec![acl(Topic, "t", Literal, alice, "10.0.0.2", Read, Allow)],
                &none,
                alice,
                "10.0.0.1",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            (
                vec![acl(Topic, "t", Literal, alice, "10.0.0.1", Read, Allow)],
                &none,
                alice,
                "10.0.0.1",
                Read,
                topic("t"),
                Decision::Allowed,
            ),
            // PREFIXED matches names starting with the prefix, LITERAL only the exact name.
            (
                vec![acl(Topic, "orders-", Prefixed, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("orders-eu"),
                Decision::Allowed,
            ),
            (
                vec![acl(Topic, "orders-", Prefixed, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("order"),
                Decision::Denied,
            ),
            (
                vec![acl(Topic, "orders", Literal, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("orders-eu"),
                Decision::Denied,
            ),
            // A PREFIXED "*" is a prefix, not a wildcard.
            (
                vec![acl(Topic, "*", Prefixed, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            // Resource types are separate: a GROUP ACL says nothing of a TOPIC of that name.
            (
                vec![acl(Group, "t", Literal, alice, "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            // Principals compare whole: User:alice is not User:alicex.
            (
                vec![acl(Topic, "t", Literal, "User:alicex", "*", Read, Allow)],
                &none,
                alice,
                "h",
                Read,
                topic("t"),
                Decision::Denied,
            ),
            // CLUSTER resource (its name is kafka-cluster).
            (
                vec![acl(
                    Cluster,
                    "kafka-cluster",
                    Literal,
                    alice,
                    "*",
                    Alter,
                    Allow,
                )],
                &none,
                alice,
                "h",
                Alter,
                Resource {
                    resource_type: Cluster,
                    name: "kafka-cluster",
                },
                Decision::Allowed,
            ),
        ];
        for (i, (acls, settings, principal, host, op, resource, expected)) in
            rows.into_iter().enumerate()
        {
            let mut table = AclTable::default();
            for a in acls {
                table.insert(a);
            }
            assert_eq!(
                table.authorize(settings, principal, host, op, resource),
                expected,
                "row {i}: {principal} {op:?} {resource:?}"
            );
        }
    }

    #[test]
    fn insert_and_remove_keep_the_index_and_the_count() {
        let mut t = AclTable::default();
        let a = acl(Topic, "p-", Prefixed, "User:a", "*", Read, Allow);
        assert!(t.insert(a.clone()));
        assert!(!t.insert(a.clone()));
        assert_eq!(t.len(), 1);
        let s = AuthorizerSettings::default();
        assert_eq!(
            t.authorize(&s, "User:a", "h", Read, topic("p-1")),
            Decision::Allowed
        );
        assert!(t.remove(&a));
        assert!(!t.remove(&a));
        assert!(t.is_empty());
        assert_eq!(
            t.authorize(&s, "User:a", "h", Read, topic("p-1")),
            Decision::Denied
        );
        for code in 2..=14 {
            assert_eq!(
                AclOperation::from_code(code).map(AclOperation::code),
                Some(code)
            );
        }
        assert_eq!(AclOperation::from_code(1), None);
        for code in 2..=5 {
            assert_eq!(
                AclResourceType::from_code(code).map(AclResourceType::code),
                Some(code)
            );
        }
    }

    #[test]
    fn ten_thousand_acls_are_looked_up_by_probes_not_a_scan() {
        let mut t = AclTable::default();
        for i in 0..10_000 {
            t.insert(acl(
                Topic,
                &format!("topic-{i}"),
                Literal,
                "User:a",
                "*",
                Read,
                Allow,
            ));
        }
        // What a lookup touches: the literal name, the wildcard and one probe per prefix,
        // whatever the table holds.
        assert_eq!(t.matching(topic("topic-42")).count(), 1);
        assert_eq!(t.len(), 10_000);
        let s = AuthorizerSettings::default();
        assert_eq!(
            t.authorize(&s, "User:a", "h", Read, topic("topic-9999")),
            Decision::Allowed
        );
        assert_eq!(
            t.authorize(&s, "User:a", "h", Read, topic("topic-10000")),
            Decision::Denied
        );
    }

    fn filter(
        t: Option<AclResourceType>,
        name: Option<&str>,
        pattern: AclPatternFilter,
    ) -> AclFilter {
        AclFilter {
            resource_type: t,
            name: name.map(str::to_owned),
            pattern,
            principal: None,
            host: None,
            operation: None,
            permission: None,
        }
    }

    /// Kafka's `ResourcePatternFilter.matches` / `AccessControlEntryFilter.matches`.
    #[test]
    fn filters_match_as_kafkas_binding_filters() {
        use AclPatternFilter::{Any, Exactly, Match};
        let lit = acl(Topic, "orders", Literal, "User:a", "*", Read, Allow);
        let star = acl(Topic, "*", Literal, "User:a", "*", Read, Allow);
        let pre = acl(Topic, "ord", Prefixed, "User:b", "10.0.0.1", Write, Deny);
        let grp = acl(Group, "orders", Literal, "User:a", "*", Read, Allow);
        let all = [&lit, &star, &pre, &grp];
        let hits = |f: &AclFilter| -> Vec<usize> {
            all.iter()
                .enumerate()
                .filter(|(_, a)| f.matches(a))
                .map(|(i, _)| i)
                .collect()
        };
        // ANY type, ANY pattern, no name: everything.
        assert_eq!(hits(&filter(None, None, Any)), vec![0, 1, 2, 3]);
        // ANY pattern with a name: the exact name, whatever the pattern type.
        assert_eq!(hits(&filter(Some(Topic), Some("orders"), Any)), vec![0]);
        assert_eq!(hits(&filter(Some(Topic), Some("ord"), Any)), vec![2]);
        // MATCH: what applies to the topic "orders": literal, wildcard, prefix.
        assert_eq!(
            hits(&filter(Some(Topic), Some("orders"), Match)),
            vec![0, 1, 2]
        );
        assert_eq!(hits(&filter(Some(Topic), Some("other"), Match)), vec![1]);
        // MATCH without a name: every pattern type.
        assert_eq!(hits(&filter(Some(Topic), None, Match)), vec![0, 1, 2]);
        // An exact pattern type.
        assert_eq!(hits(&filter(Some(Topic), None, Exactly(Prefixed))), vec![2]);
        assert_eq!(
            hits(&filter(None, Some("orders"), Exactly(Literal))),
            vec![0, 3]
        );
        // A prefixed filter name compares whole, not as a prefix.
        assert!(hits(&filter(Some(Topic), Some("orders"), Exactly(Prefixed))).is_empty());
        // Entry filters.
        let mut f = filter(None, None, Any);
        f.principal = Some("User:b".into());
        assert_eq!(hits(&f), vec![2]);
        f.principal = None;
        f.host = Some("10.0.0.1".into());
        assert_eq!(hits(&f), vec![2]);
        f.host = None;
        f.operation = Some(Read);
        assert_eq!(hits(&f), vec![0, 1, 3]);
        f.permission = Some(Deny);
        assert!(hits(&f).is_empty());
    }

    #[test]
    fn create_checks_and_delete_answers_what_each_filter_removed() {
        use AclPatternFilter::Any;
        let mut t = AclTable::default();
        let a = acl(Topic, "t", Literal, "User:a", "*", Read, Allow);
        let b = acl(Topic, "t", Literal, "User:b", "*", Write, Allow);
        let answers = t.create(vec![
            a.clone(),
            a.clone(),
            acl(Topic, "", Literal, "User:a", "*", Read, Allow),
            acl(Cluster, "c", Literal, "User:a", "*", Alter, Allow),
            acl(Topic, "t", Literal, "alice", "*", Read, Allow),
            b.clone(),
        ]);
        assert_eq!(answers[0], Ok(()));
        assert_eq!(answers[1], Ok(()), "an existing ACL is a success");
        assert_eq!(
            answers[2],
            Err("Resource name should not be empty".to_owned())
        );
        assert_eq!(
            answers[3],
            Err("The only valid name for the CLUSTER resource is kafka-cluster".to_owned())
        );
        assert!(answers[4].as_ref().is_err_and(|e| e.contains("alice")));
        assert_eq!(answers[5], Ok(()));
        assert_eq!(t.len(), 2);
        let mut only_a = filter(Some(Topic), Some("t"), Any);
        only_a.principal = Some("User:a".into());
        let everything = filter(None, None, Any);
        let removed = t.delete(&[only_a, everything, filter(Some(Group), None, Any)]);
        assert_eq!(removed, vec![vec![a.clone()], vec![a, b], vec![]]);
        assert!(t.is_empty());
        assert_eq!(
            t.authorize(
                &AuthorizerSettings::default(),
                "User:a",
                "h",
                Read,
                topic("t")
            ),
            Decision::Denied
        );
    }

    #[test]
    fn by_resource_type_needs_an_allow_no_deny_covers() {
        let s = AuthorizerSettings::default();
        let mut t = AclTable::default();
        let by_type =
            |t: &AclTable, who: &str| t.authorize_by_resource_type(&s, who, "h", Write, Topic);
        assert_eq!(by_type(&t, "User:a"), Decision::Denied);
        t.insert(acl(Topic, "orders", Literal, "User:a", "*", Write, Allow));
        assert_eq!(by_type(&t, "User:a"), Decision::Allowed);
        assert_eq!(by_type(&t, "User:b"), Decision::Denied);
        t.insert(acl(Topic, "ord", Prefixed, "User:a", "*", Write, Deny));
        assert_eq!(
            by_type(&t, "User:a"),
            Decision::Denied,
            "a prefixed deny covers it"
        );
        t.insert(acl(
            Topic,
            "logs",
            Prefixed,
            WILDCARD_PRINCIPAL,
            "*",
            All,
            Allow,
        ));
        assert_eq!(by_type(&t, "User:a"), Decision::Allowed);
        t.insert(acl(Topic, "*", Literal, "User:a", "*", Write, Deny));
        assert_eq!(
            by_type(&t, "User:a"),
            Decision::Denied,
            "a wildcard deny covers all"
        );
        let su = AuthorizerSettings {
            super_users: ["User:a".to_owned()].into(),
            allow_if_no_acl: false,
        };
        assert_eq!(
            t.authorize_by_resource_type(&su, "User:a", "h", Write, Topic),
            Decision::Allowed
        );
    }
}
