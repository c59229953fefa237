//! Which ACL each served API needs (decision 0149): the one table the request gate
//! (`handlers::authorize`) reads, written from Kafka's "Operations and Resources on Protocols"
//! table (docs/security, Kafka 4.0) and from KafkaApis / ControllerApis for what a refusal
//! looks like on the wire.
//!
//! ```text
//!  api key ─► [Need { part, operation, resource type, on denial }]
//!     part:       which names of the request the check runs on (its topics, its group, ...)
//!     on denial:  the item answers a code | the whole request answers a code | the item is
//!                 left out (listing APIs) | a wider grant is tried first (CLUSTER, then TOPIC)
//! ```
//!
//! Implied operations (DESCRIBE by READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS by ALTER_CONFIGS)
//! are the evaluator's (`raft_meta::cohort_app::acl`), not this table's: a row names the one
//! operation Kafka checks.

use kafka_protocol::messages::ApiKey;
use protocol::ErrorCode;
use raft_meta::cohort_app::{AclOperation, AclResourceType};

/// Which names of a request a check runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The cluster, once per request.
    Cluster,
    /// A follower's request (replica id set): the cluster, once.
    Replica,
    /// Every topic the request names.
    Topics,
    /// Topics the request would create (Metadata's auto-creation).
    NewTopics,
    /// The request's group id(s).
    Groups,
    /// The request's transactional id(s).
    TransactionalIds,
    /// An idempotent producer without a transactional id.
    Idempotent,
    /// Config resources of type BROKER or BROKER_LOGGER.
    BrokerConfigs,
    /// Config resources of type TOPIC.
    TopicConfigs,
    /// Config resources of type GROUP.
    GroupConfigs,
}

/// What a principal without the grant gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// The item answers this code; the rest of the request goes on.
    Item(ErrorCode),
    /// The whole request answers this code and nothing is done.
    Request(ErrorCode),
    /// The item is left out of the answer, as if it did not exist.
    Filtered,
    /// Nothing is refused on its own: the next row of the same part decides (a CLUSTER grant
    /// tried before the per-resource one).
    TryNext,
    /// Nothing is refused; the answer's authorized operations are 0 (DescribeCluster).
    NoOperations,
}

/// One check of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// Which names.
    pub part: Part,
    /// The operation checked.
    pub operation: AclOperation,
    /// On which resource type.
    pub resource_type: AclResourceType,
    /// The answer without the grant.
    pub denied: Denied,
}

/// A row (a macro, not a function: the rows are promoted to `'static` slices).
macro_rules! need {
    ($part:expr, $operation:expr, $resource_type:expr, $denied:expr $(,)?) => {
        Need {
            part: $part,
            operation: $operation,
            resource_type: $resource_type,
            denied: $denied,
        }
    };
}

use AclOperation as Op;
use AclResourceType as Res;
use Denied::{Filtered, Item, NoOperations, Request, TryNext};
use ErrorCode as E;

const TOPIC_DENIED: ErrorCode = E::TopicAuthorizationFailed;
const GROUP_DENIED: ErrorCode = E::GroupAuthorizationFailed;
const CLUSTER_DENIED: ErrorCode = E::ClusterAuthorizationFailed;
const TXN_DENIED: ErrorCode = E::TransactionalIdAuthorizationFailed;

/// The rows, per API key. `Some(&[])`: served without any check (the handshake APIs).
pub fn needs(key: ApiKey) -> Option<&'static [Need]> {
    Some(match key {
        // Transactional records need WRITE on the transactional id (the whole request is
        // refused), then WRITE on each topic. Kafka 4.0 no longer checks IDEMPOTENT_WRITE on
        // Produce (KIP-679): InitProducerId does.
        ApiKey::Produce => &[
            need!(
                Part::TransactionalIds,
                Op::Write,
                Res::TransactionalId,
                Request(TXN_DENIED),
            ),
            need!(Part::Topics, Op::Write, Res::Topic, Item(TOPIC_DENIED)),
        ],
        // A follower needs CLUSTER_ACTION (else every partition TOPIC_AUTHORIZATION_FAILED);
        // a consumer READ on each topic.
        ApiKey::Fetch => &[
            need!(
                Part::Replica,
                Op::ClusterAction,
                Res::Cluster,
                Item(TOPIC_DENIED),
            ),
            need!(Part::Topics, Op::Read, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::ListOffsets => &[need!(
            Part::Topics,
            Op::Describe,
            Res::Topic,
            Item(TOPIC_DENIED),
        )],
        // Asked-for topics without DESCRIBE answer TOPIC_AUTHORIZATION_FAILED; the all-topics
        // listing leaves them out; auto-creation needs CREATE on the cluster or on the topic.
        ApiKey::Metadata => &[
            need!(Part::Topics, Op::Describe, Res::Topic, Item(TOPIC_DENIED)),
            need!(Part::NewTopics, Op::Create, Res::Cluster, TryNext),
            need!(Part::NewTopics, Op::Create, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::ApiVersions | ApiKey::SaslHandshake | ApiKey::SaslAuthenticate => &[],
        // v5+ answers the new topic's configs only to who may DESCRIBE_CONFIGS it (else
        // `topic_config_error_code` says TOPIC_AUTHORIZATION_FAILED; the topic is created).
        ApiKey::CreateTopics => &[
            need!(Part::Topics, Op::Create, Res::Cluster, TryNext),
            need!(Part::Topics, Op::Create, Res::Topic, Item(TOPIC_DENIED)),
            need!(
                Part::TopicConfigs,
                Op::DescribeConfigs,
                Res::Topic,
                Item(TOPIC_DENIED),
            ),
        ],
        ApiKey::DeleteTopics => &[need!(
            Part::Topics,
            Op::Delete,
            Res::Topic,
            Item(TOPIC_DENIED),
        )],
        ApiKey::InitProducerId => &[
            need!(
                Part::TransactionalIds,
                Op::Write,
                Res::TransactionalId,
                Request(TXN_DENIED),
            ),
            need!(Part::Idempotent, Op::IdempotentWrite, Res::Cluster, TryNext),
            // KafkaApis: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic
            // (`authorizeByResourceType`).
            need!(
                Part::Idempotent,
                Op::Write,
                Res::Topic,
                Request(CLUSTER_DENIED),
            ),
        ],
        // GROUP keys need DESCRIBE on the group, TRANSACTION keys on the transactional id.
        ApiKey::FindCoordinator => &[
            need!(Part::Groups, Op::Describe, Res::Group, Item(GROUP_DENIED)),
            need!(
                Part::TransactionalIds,
                Op::Describe,
                Res::TransactionalId,
                Item(TXN_DENIED),
            ),
        ],
        ApiKey::JoinGroup | ApiKey::SyncGroup | ApiKey::Heartbeat | ApiKey::LeaveGroup => &[need!(
            Part::Groups,
            Op::Read,
            Res::Group,
            Request(GROUP_DENIED),
        )],
        // The group first (every partition GROUP_AUTHORIZATION_FAILED), then each topic.
        ApiKey::OffsetCommit => &[
            need!(Part::Groups, Op::Read, Res::Group, Request(GROUP_DENIED)),
            need!(Part::Topics, Op::Read, Res::Topic, Item(TOPIC_DENIED)),
        ],
        // v8+ names several groups: each is refused on its own. Topics asked for without
        // DESCRIBE answer TOPIC_AUTHORIZATION_FAILED; "all topics" leaves them out.
        ApiKey::OffsetFetch => &[
            need!(Part::Groups, Op::Describe, Res::Group, Item(GROUP_DENIED)),
            need!(Part::Topics, Op::Describe, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::OffsetDelete => &[
            need!(Part::Groups, Op::Delete, Res::Group, Request(GROUP_DENIED)),
            need!(Part::Topics, Op::Read, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::DeleteGroups => &[need!(
            Part::Groups,
            Op::Delete,
            Res::Group,
            Item(GROUP_DENIED),
        )],
        // DESCRIBE on the cluster lists every group; without it, groups without DESCRIBE are
        // left out (never CLUSTER_AUTHORIZATION_FAILED).
        ApiKey::ListGroups => &[
            need!(Part::Cluster, Op::Describe, Res::Cluster, TryNext),
            need!(Part::Groups, Op::Describe, Res::Group, Filtered),
        ],
        ApiKey::DescribeGroups => &[need!(
            Part::Groups,
            Op::Describe,
            Res::Group,
            Item(GROUP_DENIED),
        )],
        // KafkaApis also wants DESCRIBE on every subscribed topic.
        ApiKey::ConsumerGroupHeartbeat => &[
            need!(Part::Groups, Op::Read, Res::Group, Request(GROUP_DENIED)),
            need!(
                Part::Topics,
                Op::Describe,
                Res::Topic,
                Request(TOPIC_DENIED),
            ),
        ],
        // The docs' table says READ; KafkaApis checks DESCRIBE (which READ implies). A group
        // whose members name topics the principal may not DESCRIBE answers
        // TOPIC_AUTHORIZATION_FAILED.
        ApiKey::ConsumerGroupDescribe => &[
            need!(Part::Groups, Op::Describe, Res::Group, Item(GROUP_DENIED)),
            need!(Part::Topics, Op::Describe, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::DescribeConfigs => &[
            need!(
                Part::BrokerConfigs,
                Op::DescribeConfigs,
                Res::Cluster,
                Item(CLUSTER_DENIED),
            ),
            need!(
                Part::TopicConfigs,
                Op::DescribeConfigs,
                Res::Topic,
                Item(TOPIC_DENIED),
            ),
            need!(
                Part::GroupConfigs,
                Op::DescribeConfigs,
                Res::Group,
                Item(GROUP_DENIED),
            ),
        ],
        ApiKey::AlterConfigs | ApiKey::IncrementalAlterConfigs => &[
            need!(
                Part::BrokerConfigs,
                Op::AlterConfigs,
                Res::Cluster,
                Item(CLUSTER_DENIED),
            ),
            need!(
                Part::TopicConfigs,
                Op::AlterConfigs,
                Res::Topic,
                Item(TOPIC_DENIED),
            ),
            need!(
                Part::GroupConfigs,
                Op::AlterConfigs,
                Res::Group,
                Item(GROUP_DENIED),
            ),
        ],
        ApiKey::CreatePartitions => &[need!(
            Part::Topics,
            Op::Alter,
            Res::Topic,
            Item(TOPIC_DENIED),
        )],
        ApiKey::DeleteRecords => &[need!(
            Part::Topics,
            Op::Delete,
            Res::Topic,
            Item(TOPIC_DENIED),
        )],
        // "An empty response will be returned on authorization failure" (v3+: the top-level
        // code says why).
        ApiKey::DescribeLogDirs => &[need!(
            Part::Cluster,
            Op::Describe,
            Res::Cluster,
            Request(CLUSTER_DENIED),
        )],
        // CLUSTER_ACTION on the cluster lets a broker ask for every topic.
        ApiKey::OffsetForLeaderEpoch => &[
            need!(Part::Cluster, Op::ClusterAction, Res::Cluster, TryNext),
            need!(Part::Topics, Op::Describe, Res::Topic, Item(TOPIC_DENIED)),
        ],
        // The broker's DescribeCluster refuses nothing: without DESCRIBE the authorized
        // operations asked for are 0.
        ApiKey::DescribeCluster => &[need!(
            Part::Cluster,
            Op::Describe,
            Res::Cluster,
            NoOperations,
        )],
        // Asked-for topics answer TOPIC_AUTHORIZATION_FAILED, the listing leaves them out.
        ApiKey::DescribeTopicPartitions => &[need!(
            Part::Topics,
            Op::Describe,
            Res::Topic,
            Item(TOPIC_DENIED),
        )],
        ApiKey::DescribeUserScramCredentials => &[need!(
            Part::Cluster,
            Op::Describe,
            Res::Cluster,
            Request(CLUSTER_DENIED),
        )],
        ApiKey::AlterUserScramCredentials => &[need!(
            Part::Cluster,
            Op::Alter,
            Res::Cluster,
            Request(CLUSTER_DENIED),
        )],
        ApiKey::DescribeAcls => &[need!(
            Part::Cluster,
            Op::Describe,
            Res::Cluster,
            Request(CLUSTER_DENIED),
        )],
        ApiKey::CreateAcls | ApiKey::DeleteAcls => &[need!(
            Part::Cluster,
            Op::Alter,
            Res::Cluster,
            Request(CLUSTER_DENIED),
        )],
        ApiKey::DescribeProducers => &[need!(
            Part::Topics,
            Op::Read,
            Res::Topic,
            Item(TOPIC_DENIED)
        )],
        // Each transactional id without DESCRIBE answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        // the partitions of topics without DESCRIBE are left out.
        ApiKey::DescribeTransactions => &[
            need!(
                Part::TransactionalIds,
                Op::Describe,
                Res::TransactionalId,
                Item(TXN_DENIED),
            ),
            need!(Part::Topics, Op::Describe, Res::Topic, Filtered),
        ],
        ApiKey::ListTransactions => &[need!(
            Part::TransactionalIds,
            Op::Describe,
            Res::TransactionalId,
            Filtered,
        )],
        // The transactional id first (every partition refused); a topic without WRITE answers
        // TOPIC_AUTHORIZATION_FAILED and the others OPERATION_NOT_ATTEMPTED.
        ApiKey::AddPartitionsToTxn => &[
            need!(
                Part::TransactionalIds,
                Op::Write,
                Res::TransactionalId,
                Request(TXN_DENIED),
            ),
            need!(Part::Topics, Op::Write, Res::Topic, Item(TOPIC_DENIED)),
        ],
        ApiKey::AddOffsetsToTxn => &[
            need!(
                Part::TransactionalIds,
                Op::Write,
                Res::TransactionalId,
                Request(TXN_DENIED),
            ),
            need!(Part::Groups, Op::Read, Res::Group, Request(GROUP_DENIED)),
        ],
        ApiKey::EndTxn => &[need!(
            Part::TransactionalIds,
            Op::Write,
            Res::TransactionalId,
            Request(TXN_DENIED),
        )],
        ApiKey::TxnOffsetCommit => &[
            need!(
                Part::TransactionalIds,
                Op::Write,
                Res::TransactionalId,
                Request(TXN_DENIED),
            ),
            need!(Part::Groups, Op::Read, Res::Group, Request(GROUP_DENIED)),
            need!(Part::Topics, Op::Read, Res::Topic, Item(TOPIC_DENIED)),
        ],
        // Broker to broker: CLUSTER_ACTION, else every partition CLUSTER_AUTHORIZATION_FAILED.
        ApiKey::WriteTxnMarkers => &[need!(
            Part::Cluster,
            Op::ClusterAction,
            Res::Cluster,
            Item(CLUSTER_DENIED),
        )],
        _ => return None,
    })
}

/// The rows of `key` for `part`, in order (empty when the API has none).
pub fn needs_of(key: ApiKey, part: Part) -> impl Iterator<Item = &'static Need> {
    needs(key)
        .unwrap_or(&[])
        .iter()
        .filter(move |n| n.part == part)
}

/// The operations Kafka reports in `authorized_operations` for a resource type (Kafka 4.0's
/// `AclEntry.supportedOperations`).
pub fn reported_operations(resource_type: AclResourceType) -> &'static [AclOperation] {
    match resource_type {
        Res::Topic => &[
            Op::Read,
            Op::Write,
            Op::Create,
            Op::Delete,
            Op::Alter,
            Op::Describe,
            Op::DescribeConfigs,
            Op::AlterConfigs,
        ],
        Res::Group => &[
            Op::Read,
            Op::Delete,
            Op::Describe,
            Op::DescribeConfigs,
            Op::AlterConfigs,
        ],
        Res::Cluster => &[
            Op::Create,
            Op::Alter,
            Op::Describe,
            Op::ClusterAction,
            Op::DescribeConfigs,
            Op::AlterConfigs,
            Op::IdempotentWrite,
        ],
        Res::TransactionalId => &[Op::Describe, Op::Write],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_api_has_a_row() {
        for api in protocol::SUPPORTED_APIS {
            assert!(needs(api.key).is_some(), "{:?} has no ACL row", api.key);
        }
    }

    #[test]
    fn only_the_handshake_apis_go_unchecked() {
        let unchecked: Vec<ApiKey> = protocol::SUPPORTED_APIS
            .iter()
            .filter(|a| needs(a.key).is_some_and(<[Need]>::is_empty))
            .map(|a| a.key)
            .collect();
        assert_eq!(
            unchecked,
            vec![
                ApiKey::ApiVersions,
                ApiKey::SaslHandshake,
                ApiKey::SaslAuthenticate
            ]
        );
    }

    #[test]
    fn a_try_next_row_is_followed_by_a_row_of_its_part() {
        for api in protocol::SUPPORTED_APIS {
            let rows = needs(api.key).unwrap_or(&[]);
            for (i, n) in rows.iter().enumerate() {
                if n.denied == TryNext {
                    assert!(
                        rows[i + 1..].iter().any(|m| m.part == n.part) || n.part == Part::Cluster,
                        "{:?}: {:?} has nothing after it",
                        api.key,
                        n.part
                    );
                }
            }
        }
    }
}
