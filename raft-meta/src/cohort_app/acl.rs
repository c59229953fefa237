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

/// The ACLs of a cluster, indexed by (resource type, pattern, name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclTable {
    by_resource: HashMap<(AclResourceType, AclPatternType, String), BTreeSet<AclBinding>>,
    count: usize,
}

impl AclTable {
    /// Adds `acl`; false if it was there already.
    pub fn insert(&mut self, acl: AclBinding) -> bool {
        let key = (acl.resource_type, acl.pattern, acl.name.clone());
        let added = self.by_resource.entry(key).or_default().insert(acl);
        if added {
            self.count += 1;
        }
        added
    }

    /// Removes `acl`; false if it was not there.
    pub fn remove(&mut self, acl: &AclBinding) -> bool {
        let key = (acl.resource_type, acl.pattern, acl.name.clone());
        let Some(set) = self.by_resource.get_mut(&key) else {
            return false;
        };
        let removed = set.remove(acl);
        if set.is_empty() {
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
        let mut all: Vec<&AclBinding> = self.by_resource.values().flatten().collect();
        all.sort();
        all.into_iter()
    }

    /// The ACLs whose pattern matches `resource`: its literal name, the literal wildcard, and
    /// a PREFIXED pattern for every prefix of its name (one probe per prefix).
    fn matching<'a>(&'a self, resource: Resource<'a>) -> impl Iterator<Item = &'a AclBinding> {
        let t = resource.resource_type;
        let literal = [resource.name, WILDCARD].into_iter().filter_map(move |n| {
            self.by_resource
                .get(&(t, AclPatternType::Literal, n.to_owned()))
        });
        let prefixes = resource
            .name
            .char_indices()
            .map(|(i, c)| &resource.name[..i + c.len_utf8()])
            .filter_map(move |p| {
                self.by_resource
                    .get(&(t, AclPatternType::Prefixed, p.to_owned()))
            });
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
}
