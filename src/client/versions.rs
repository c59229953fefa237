//! Which version of each API this client speaks, and the pick against a broker's ApiVersions
//! answer: the highest version both sides support, as Kafka's clients do.

use std::collections::HashMap;

use kafka_protocol::messages::ApiKey;

use super::error::{ClientError, ClientResult};

/// The version range this client implements for `key`, or `None` for APIs it never sends.
///
/// Upper bounds are where the request semantics we rely on stop changing for an admin client
/// (e.g. ListOffsets v8+ only adds timestamp kinds we never ask for; DescribeGroups v6 reports a
/// missing group as GROUP_ID_NOT_FOUND exactly as Kafka 4.0's tool sees it).
pub fn ours(key: ApiKey) -> Option<(i16, i16)> {
    Some(match key {
        ApiKey::ApiVersions => (0, 4),
        ApiKey::Metadata => (1, 12),
        ApiKey::FindCoordinator => (0, 4),
        ApiKey::ListGroups => (0, 5),
        ApiKey::DescribeGroups => (0, 6),
        ApiKey::ConsumerGroupDescribe => (0, 1),
        ApiKey::OffsetFetch => (2, 9),
        ApiKey::ListOffsets => (1, 7),
        ApiKey::OffsetCommit => (2, 9),
        ApiKey::OffsetDelete => (0, 0),
        ApiKey::DeleteGroups => (0, 2),
        ApiKey::CreateTopics => (2, 7),
        ApiKey::DeleteTopics => (1, 6),
        ApiKey::DescribeConfigs => (1, 4),
        ApiKey::IncrementalAlterConfigs => (0, 1),
        ApiKey::AlterConfigs => (0, 2),
        ApiKey::CreatePartitions => (0, 3),
        ApiKey::DeleteRecords => (0, 2),
        // Topic names (v13+ speaks topic ids); one batch read for a record's timestamp.
        ApiKey::Fetch => (4, 12),
        ApiKey::DescribeCluster => (0, 2),
        ApiKey::DescribeLogDirs => (1, 4),
        ApiKey::DescribeTopicPartitions => (0, 0),
        ApiKey::DescribeUserScramCredentials => (0, 0),
        ApiKey::AlterUserScramCredentials => (0, 0),
        ApiKey::DescribeAcls => (1, 3),
        ApiKey::CreateAcls => (1, 3),
        ApiKey::DeleteAcls => (1, 3),
        // kafka-transactions.sh's calls; ListTransactions v1 carries the duration filter
        // (the codec has WriteTxnMarkers v1 only).
        ApiKey::DescribeTransactions => (0, 0),
        ApiKey::ListTransactions => (0, 1),
        ApiKey::DescribeProducers => (0, 0),
        ApiKey::WriteTxnMarkers => (1, 1),
        // A SASL connection's first requests (KIP-152: v1 handshakes, then SaslAuthenticate).
        ApiKey::SaslHandshake => (1, 1),
        ApiKey::SaslAuthenticate => (0, 2),
        _ => return None,
    })
}

/// The API ranges one broker advertised in its ApiVersions response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerVersions {
    ranges: HashMap<i16, (i16, i16)>,
}

impl BrokerVersions {
    /// Ranges keyed by API key.
    pub fn new(ranges: HashMap<i16, (i16, i16)>) -> Self {
        BrokerVersions { ranges }
    }

    /// The broker's range for `key`, if it advertises the API.
    pub fn range(&self, key: ApiKey) -> Option<(i16, i16)> {
        self.ranges.get(&(key as i16)).copied()
    }

    /// The version to use for `key`: min(our max, broker max), if that is within both ranges.
    pub fn pick(&self, key: ApiKey) -> ClientResult<i16> {
        let (our_min, our_max) = ours(key).ok_or_else(|| {
            ClientError::UnsupportedVersion(format!("the client does not implement {key:?}"))
        })?;
        let name = java_name(key);
        let (broker_min, broker_max) = self.range(key).ok_or_else(|| {
            ClientError::UnsupportedVersion(format!("The node does not support {name}"))
        })?;
        let version = our_max.min(broker_max);
        if version < our_min || version < broker_min {
            return Err(ClientError::UnsupportedVersion(format!(
                "The node does not support {name} with version in range [{our_min},{our_max}]. The supported range is [{broker_min},{broker_max}]."
            )));
        }
        Ok(version)
    }
}

/// The API's name in Kafka's `ApiKeys` enum (`FIND_COORDINATOR`), as Kafka's messages print it.
pub fn java_name(key: ApiKey) -> String {
    let debug = format!("{key:?}");
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker(pairs: &[(ApiKey, i16, i16)]) -> BrokerVersions {
        BrokerVersions::new(
            pairs
                .iter()
                .map(|(k, lo, hi)| (*k as i16, (*lo, *hi)))
                .collect(),
        )
    }

    #[test]
    fn picks_the_highest_common_version() {
        let b = broker(&[
            (ApiKey::Metadata, 0, 13),
            (ApiKey::FindCoordinator, 0, 2),
            (ApiKey::ListOffsets, 1, 10),
        ]);
        assert_eq!(b.pick(ApiKey::Metadata).unwrap(), 12);
        assert_eq!(b.pick(ApiKey::FindCoordinator).unwrap(), 2);
        assert_eq!(b.pick(ApiKey::ListOffsets).unwrap(), 7);
    }

    #[test]
    fn refuses_disjoint_ranges_and_missing_apis() {
        let b = broker(&[(ApiKey::OffsetCommit, 0, 1), (ApiKey::Metadata, 13, 14)]);
        assert!(b.pick(ApiKey::OffsetCommit).is_err());
        assert!(b.pick(ApiKey::OffsetDelete).is_err());
        assert!(b.pick(ApiKey::Metadata).is_err());
        assert!(b.pick(ApiKey::Produce).is_err());
    }

    #[test]
    fn refusals_read_like_kafkas() {
        let b = broker(&[(ApiKey::OffsetCommit, 0, 1)]);
        assert_eq!(
            b.pick(ApiKey::FindCoordinator).unwrap_err().to_string(),
            "The node does not support FIND_COORDINATOR"
        );
        assert_eq!(
            b.pick(ApiKey::OffsetCommit).unwrap_err().to_string(),
            "The node does not support OFFSET_COMMIT with version in range [2,9]. The supported range is [0,1]."
        );
        assert_eq!(java_name(ApiKey::ApiVersions), "API_VERSIONS");
    }

    #[test]
    fn our_ranges_are_within_what_the_codec_supports() {
        for key in ApiKey::iter() {
            if let Some((lo, hi)) = ours(key) {
                let codec = key.valid_versions();
                assert!(lo <= hi, "{key:?}");
                assert!(
                    codec.min <= lo && hi <= codec.max,
                    "{key:?} {lo}..{hi} vs {codec}"
                );
            }
        }
    }
}
