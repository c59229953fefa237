//! The one table of served APIs and version ranges. ApiVersions is answered from it, and the
//! request decoder refuses anything outside it, so what we advertise is exactly what we serve.
//!
//! Add a row only together with its handler: clients use an advertised API at once (the Admin
//! client prefers DescribeTopicPartitions, Java uses OffsetForLeaderEpoch when advertised, Fetch
//! v13+ switches to topic ids).

use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Message, VersionRange};

/// One served API and the versions served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRange {
    /// The API.
    pub key: ApiKey,
    /// Lowest version served.
    pub min: i16,
    /// Highest version served.
    pub max: i16,
}

impl ApiRange {
    /// Whether `version` is inside the range.
    pub fn contains(&self, version: i16) -> bool {
        (self.min..=self.max).contains(&version)
    }
}

/// Produce versions below this are advertised but answered with UNSUPPORTED_VERSION: record
/// batch v2 needs Produce v3. Kafka 4.0 advertises Produce from v0 (KAFKA-18659) because older
/// librdkafka only enables compression when the broker's Produce range includes v0.
pub const PRODUCE_MIN_DECODABLE_VERSION: i16 = 3;

/// Whether the transaction coordinator is served (issue 13, decisions 0119 and 0125): the one
/// switch for the five transaction APIs below ([`TRANSACTION_APIS`]), FindCoordinator's
/// TRANSACTION key type and InitProducerId with a transactional id. Off, none of them is
/// advertised and their requests do not decode (UNSUPPORTED_VERSION), as before.
pub const TRANSACTIONS_SERVED: bool = true;

/// The transaction APIs (transactions v1, KIP-98/KIP-447): the client's AddPartitionsToTxn
/// (v4+ is KIP-890's broker-to-broker batch), and AddOffsetsToTxn, EndTxn and TxnOffsetCommit
/// up to v3 (v4+ is KIP-890's TRANSACTION_ABORTABLE and transactions v2, not served: no
/// `transaction.version` feature is advertised); WriteTxnMarkers v1, which the coordinator
/// sends to a partition's owner.
pub const TRANSACTION_APIS: &[ApiRange] = SERVED_APIS.split_at(SERVED_APIS.len() - 5).1;

/// What Cohort serves: [`SERVED_APIS`], without [`TRANSACTION_APIS`] unless
/// [`TRANSACTIONS_SERVED`].
pub const SUPPORTED_APIS: &[ApiRange] = if TRANSACTIONS_SERVED {
    SERVED_APIS
} else {
    SERVED_APIS
        .split_at(SERVED_APIS.len() - TRANSACTION_APIS.len())
        .0
};

/// Every API Cohort can serve, the transaction APIs last. Ranges reach Kafka 4.0's maxima but
/// for the transaction APIs' KIP-890 versions; decision 0161 lists every API against Kafka 4.0
/// and why a gap remains.
const SERVED_APIS: &[ApiRange] = &[
    ApiRange {
        key: ApiKey::Produce,
        min: 0,
        max: 12,
    },
    ApiRange {
        key: ApiKey::Fetch,
        min: 4,
        max: 17,
    },
    ApiRange {
        key: ApiKey::ListOffsets,
        min: 1,
        max: 10,
    },
    ApiRange {
        key: ApiKey::Metadata,
        min: 0,
        max: 13,
    },
    ApiRange {
        key: ApiKey::ApiVersions,
        min: 0,
        max: 4,
    },
    ApiRange {
        key: ApiKey::CreateTopics,
        min: 2,
        max: 7,
    },
    ApiRange {
        key: ApiKey::DeleteTopics,
        min: 1,
        max: 6,
    },
    ApiRange {
        key: ApiKey::InitProducerId,
        min: 0,
        max: 5,
    },
    // The classic group coordinator (served by the Raft leader; see src/group).
    ApiRange {
        key: ApiKey::FindCoordinator,
        min: 0,
        max: 6,
    },
    ApiRange {
        key: ApiKey::JoinGroup,
        min: 0,
        max: 9,
    },
    ApiRange {
        key: ApiKey::SyncGroup,
        min: 0,
        max: 5,
    },
    ApiRange {
        key: ApiKey::Heartbeat,
        min: 0,
        max: 4,
    },
    ApiRange {
        key: ApiKey::LeaveGroup,
        min: 0,
        max: 5,
    },
    ApiRange {
        key: ApiKey::OffsetCommit,
        min: 2,
        max: 9,
    },
    ApiRange {
        key: ApiKey::OffsetFetch,
        min: 1,
        max: 9,
    },
    ApiRange {
        key: ApiKey::OffsetDelete,
        min: 0,
        max: 0,
    },
    ApiRange {
        key: ApiKey::DeleteGroups,
        min: 0,
        max: 2,
    },
    ApiRange {
        key: ApiKey::ListGroups,
        min: 0,
        max: 5,
    },
    ApiRange {
        key: ApiKey::DescribeGroups,
        min: 0,
        max: 6,
    },
    // The consumer group protocol (KIP-848): v1 adds SubscribedTopicRegex and the member type.
    ApiRange {
        key: ApiKey::ConsumerGroupHeartbeat,
        min: 0,
        max: 1,
    },
    ApiRange {
        key: ApiKey::ConsumerGroupDescribe,
        min: 0,
        max: 1,
    },
    // Admin: topic configs (and a read-only view of the broker's); Kafka 4.0 dropped
    // DescribeConfigs v0 and the codec has none.
    ApiRange {
        key: ApiKey::DescribeConfigs,
        min: 1,
        max: 4,
    },
    ApiRange {
        key: ApiKey::AlterConfigs,
        min: 0,
        max: 2,
    },
    ApiRange {
        key: ApiKey::IncrementalAlterConfigs,
        min: 0,
        max: 1,
    },
    ApiRange {
        key: ApiKey::CreatePartitions,
        min: 0,
        max: 3,
    },
    ApiRange {
        key: ApiKey::DeleteRecords,
        min: 0,
        max: 2,
    },
    // Kafka 4.0 dropped DescribeLogDirs v0 (v1 repeats it) and the codec has none.
    ApiRange {
        key: ApiKey::DescribeLogDirs,
        min: 1,
        max: 4,
    },
    // Position validation after a leader change (KIP-320); Kafka 4.0 dropped v0-v1.
    ApiRange {
        key: ApiKey::OffsetForLeaderEpoch,
        min: 2,
        max: 4,
    },
    // v2 (Kafka 4.0, KIP-1073) adds fenced brokers; none is ever fenced here.
    ApiRange {
        key: ApiKey::DescribeCluster,
        min: 0,
        max: 2,
    },
    // What Kafka 4.x's Admin describeTopics (kafka-topics.sh --describe) asks, with paging.
    ApiRange {
        key: ApiKey::DescribeTopicPartitions,
        min: 0,
        max: 0,
    },
    // SASL (Kafka 4.0's ranges): v0 handshakes are followed by bare tokens, v1 by
    // SaslAuthenticate requests; SaslAuthenticate v1 adds the session lifetime.
    ApiRange {
        key: ApiKey::SaslHandshake,
        min: 0,
        max: 1,
    },
    ApiRange {
        key: ApiKey::SaslAuthenticate,
        min: 0,
        max: 2,
    },
    // SCRAM credentials in the replicated state (KIP-554); v0 is the only version.
    ApiRange {
        key: ApiKey::DescribeUserScramCredentials,
        min: 0,
        max: 0,
    },
    ApiRange {
        key: ApiKey::AlterUserScramCredentials,
        min: 0,
        max: 0,
    },
    // ACLs in the replicated state (KIP-140, KIP-290 prefixed patterns): Kafka 4.0 serves
    // v1-v3 (v0 removed by KIP-896); v2 is flexible, v3 adds the USER resource type (not an
    // ACL resource Cohort keeps: refused as INVALID_REQUEST).
    ApiRange {
        key: ApiKey::DescribeAcls,
        min: 1,
        max: 3,
    },
    ApiRange {
        key: ApiKey::CreateAcls,
        min: 1,
        max: 3,
    },
    ApiRange {
        key: ApiKey::DeleteAcls,
        min: 1,
        max: 3,
    },
    // The transaction operator APIs (KIP-664, decision 0143): what kafka-transactions.sh
    // uses. ListTransactions v1 adds KIP-994's duration filter; v2's id pattern is not served.
    ApiRange {
        key: ApiKey::DescribeProducers,
        min: 0,
        max: 0,
    },
    ApiRange {
        key: ApiKey::DescribeTransactions,
        min: 0,
        max: 0,
    },
    ApiRange {
        key: ApiKey::ListTransactions,
        min: 0,
        max: 1,
    },
    // The transaction APIs: keep them last and five (see TRANSACTION_APIS).
    ApiRange {
        key: ApiKey::AddPartitionsToTxn,
        min: 0,
        max: 3,
    },
    ApiRange {
        key: ApiKey::AddOffsetsToTxn,
        min: 0,
        max: 3,
    },
    ApiRange {
        key: ApiKey::EndTxn,
        min: 0,
        max: 3,
    },
    ApiRange {
        key: ApiKey::TxnOffsetCommit,
        min: 0,
        max: 3,
    },
    // Between brokers: the coordinator has a partition's owner write its marker.
    ApiRange {
        key: ApiKey::WriteTxnMarkers,
        min: 1,
        max: 1,
    },
];

/// The served range of `key`, if it is served at all.
pub fn supported_range(key: ApiKey) -> Option<ApiRange> {
    SUPPORTED_APIS.iter().copied().find(|r| r.key == key)
}

/// The versions the `kafka-protocol` crate can decode as *requests*, for the APIs a Kafka broker
/// in Cohort's position may serve. This is not `ApiKey::valid_versions()`: that one follows the
/// response side and says OffsetCommit/OffsetFetch go to v10, while their request types stop at
/// v9. `None` for APIs Cohort has no use for.
pub fn request_codec_range(key: ApiKey) -> Option<VersionRange> {
    Some(match key {
        ApiKey::Produce => ProduceRequest::VERSIONS,
        ApiKey::Fetch => FetchRequest::VERSIONS,
        ApiKey::ListOffsets => ListOffsetsRequest::VERSIONS,
        ApiKey::Metadata => MetadataRequest::VERSIONS,
        ApiKey::OffsetCommit => OffsetCommitRequest::VERSIONS,
        ApiKey::OffsetFetch => OffsetFetchRequest::VERSIONS,
        ApiKey::FindCoordinator => FindCoordinatorRequest::VERSIONS,
        ApiKey::JoinGroup => JoinGroupRequest::VERSIONS,
        ApiKey::Heartbeat => HeartbeatRequest::VERSIONS,
        ApiKey::LeaveGroup => LeaveGroupRequest::VERSIONS,
        ApiKey::SyncGroup => SyncGroupRequest::VERSIONS,
        ApiKey::DescribeGroups => DescribeGroupsRequest::VERSIONS,
        ApiKey::ListGroups => ListGroupsRequest::VERSIONS,
        ApiKey::ApiVersions => ApiVersionsRequest::VERSIONS,
        ApiKey::CreateTopics => CreateTopicsRequest::VERSIONS,
        ApiKey::DeleteTopics => DeleteTopicsRequest::VERSIONS,
        ApiKey::InitProducerId => InitProducerIdRequest::VERSIONS,
        ApiKey::DeleteGroups => DeleteGroupsRequest::VERSIONS,
        ApiKey::OffsetDelete => OffsetDeleteRequest::VERSIONS,
        ApiKey::DescribeCluster => DescribeClusterRequest::VERSIONS,
        ApiKey::DescribeConfigs => DescribeConfigsRequest::VERSIONS,
        ApiKey::AlterConfigs => AlterConfigsRequest::VERSIONS,
        ApiKey::IncrementalAlterConfigs => IncrementalAlterConfigsRequest::VERSIONS,
        ApiKey::CreatePartitions => CreatePartitionsRequest::VERSIONS,
        ApiKey::DeleteRecords => DeleteRecordsRequest::VERSIONS,
        ApiKey::DescribeLogDirs => DescribeLogDirsRequest::VERSIONS,
        ApiKey::OffsetForLeaderEpoch => OffsetForLeaderEpochRequest::VERSIONS,
        ApiKey::DescribeTopicPartitions => DescribeTopicPartitionsRequest::VERSIONS,
        ApiKey::SaslHandshake => SaslHandshakeRequest::VERSIONS,
        ApiKey::SaslAuthenticate => SaslAuthenticateRequest::VERSIONS,
        ApiKey::ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest::VERSIONS,
        ApiKey::ConsumerGroupDescribe => ConsumerGroupDescribeRequest::VERSIONS,
        ApiKey::DescribeUserScramCredentials => DescribeUserScramCredentialsRequest::VERSIONS,
        ApiKey::AlterUserScramCredentials => AlterUserScramCredentialsRequest::VERSIONS,
        ApiKey::DescribeAcls => DescribeAclsRequest::VERSIONS,
        ApiKey::CreateAcls => CreateAclsRequest::VERSIONS,
        ApiKey::DeleteAcls => DeleteAclsRequest::VERSIONS,
        ApiKey::AddPartitionsToTxn => AddPartitionsToTxnRequest::VERSIONS,
        ApiKey::AddOffsetsToTxn => AddOffsetsToTxnRequest::VERSIONS,
        ApiKey::EndTxn => EndTxnRequest::VERSIONS,
        ApiKey::TxnOffsetCommit => TxnOffsetCommitRequest::VERSIONS,
        ApiKey::WriteTxnMarkers => WriteTxnMarkersRequest::VERSIONS,
        ApiKey::DescribeProducers => DescribeProducersRequest::VERSIONS,
        ApiKey::DescribeTransactions => DescribeTransactionsRequest::VERSIONS,
        ApiKey::ListTransactions => ListTransactionsRequest::VERSIONS,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_version_is_decodable_by_the_codec() {
        for r in SUPPORTED_APIS {
            let codec = request_codec_range(r.key).unwrap();
            let low = if r.key == ApiKey::Produce {
                PRODUCE_MIN_DECODABLE_VERSION
            } else {
                r.min
            };
            assert!(
                codec.min <= low && r.max <= codec.max,
                "{:?} {}..{} not inside the codec's {codec}",
                r.key,
                r.min,
                r.max
            );
        }
    }

    #[test]
    fn each_api_appears_once() {
        for (i, a) in SUPPORTED_APIS.iter().enumerate() {
            assert!(SUPPORTED_APIS[i + 1..].iter().all(|b| b.key != a.key));
        }
    }

    #[test]
    fn the_transaction_apis_are_the_last_five_and_follow_the_switch() {
        let keys: Vec<ApiKey> = TRANSACTION_APIS.iter().map(|r| r.key).collect();
        assert_eq!(
            keys,
            [
                ApiKey::AddPartitionsToTxn,
                ApiKey::AddOffsetsToTxn,
                ApiKey::EndTxn,
                ApiKey::TxnOffsetCommit,
                ApiKey::WriteTxnMarkers
            ]
        );
        // Transactions v1 only: no KIP-890 version is served.
        assert!(TRANSACTION_APIS[..4].iter().all(|r| r.max == 3));
        for r in TRANSACTION_APIS {
            assert_eq!(supported_range(r.key).is_some(), TRANSACTIONS_SERVED);
        }
    }

    #[test]
    fn offset_commit_and_fetch_requests_stop_at_v9() {
        assert_eq!(request_codec_range(ApiKey::OffsetCommit).unwrap().max, 9);
        assert_eq!(request_codec_range(ApiKey::OffsetFetch).unwrap().max, 9);
    }
}
