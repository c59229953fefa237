//! The `consumer` embedded protocol: the bytes a classic group carries in JoinGroup metadata
//! (subscription) and SyncGroup assignments. DescribeGroups returns them opaque; the tools decode
//! them to show who owns which partition. Layout: an i16 version, then the struct at that version
//! (a newer version than we know is read as the newest we know, as Kafka's `ConsumerProtocol`
//! does, since later versions only append fields).

use bytes::{Buf, Bytes};
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::{Decodable, Message};

use super::types::TopicPartition;

/// Why embedded bytes could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsumerProtocolError {
    /// Fewer than two bytes: no version.
    #[error("consumer protocol bytes too short for a version")]
    Truncated,
    /// A negative version.
    #[error("invalid consumer protocol version {0}")]
    BadVersion(i16),
    /// The body did not decode.
    #[error("malformed consumer protocol body: {0}")]
    Malformed(String),
}

fn split_version(bytes: &Bytes, newest: i16) -> Result<(i16, Bytes), ConsumerProtocolError> {
    if bytes.len() < 2 {
        return Err(ConsumerProtocolError::Truncated);
    }
    let mut body = bytes.clone();
    let version = body.get_i16();
    if version < 0 {
        return Err(ConsumerProtocolError::BadVersion(version));
    }
    Ok((version.min(newest), body))
}

/// Walks the embedded bytes checking every length against what is left, before the codec sees
/// them: `kafka-protocol` reserves room for an array's claimed element count up front, so a
/// forged count of two billion would abort the process instead of failing the decode.
struct Scan<'a> {
    buf: &'a [u8],
}

impl Scan<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ConsumerProtocolError> {
        if self.buf.len() < n {
            return Err(ConsumerProtocolError::Malformed(format!(
                "needs {n} more bytes, {} left",
                self.buf.len()
            )));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn i16(&mut self) -> Result<i16, ConsumerProtocolError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, ConsumerProtocolError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self, nullable: bool) -> Result<(), ConsumerProtocolError> {
        let len = self.i16()?;
        if len == -1 && nullable {
            return Ok(());
        }
        let len = usize::try_from(len)
            .map_err(|_| ConsumerProtocolError::Malformed(format!("string length {len}")))?;
        self.take(len).map(|_| ())
    }

    fn bytes(&mut self) -> Result<(), ConsumerProtocolError> {
        let len = self.i32()?;
        if len == -1 {
            return Ok(());
        }
        let len = usize::try_from(len)
            .map_err(|_| ConsumerProtocolError::Malformed(format!("bytes length {len}")))?;
        self.take(len).map(|_| ())
    }

    /// An array's count, refused if even the smallest elements could not fit.
    fn count(&mut self, min_element: usize) -> Result<usize, ConsumerProtocolError> {
        let n = self.i32()?;
        let n = usize::try_from(n)
            .map_err(|_| ConsumerProtocolError::Malformed(format!("array length {n}")))?;
        if n.saturating_mul(min_element) > self.buf.len() {
            return Err(ConsumerProtocolError::Malformed(format!(
                "array of {n} elements in {} bytes",
                self.buf.len()
            )));
        }
        Ok(n)
    }

    fn topic_partitions(&mut self) -> Result<(), ConsumerProtocolError> {
        for _ in 0..self.count(6)? {
            self.string(false)?;
            let partitions = self.count(4)?;
            self.take(partitions * 4)?;
        }
        Ok(())
    }
}

fn check_assignment(body: &[u8]) -> Result<(), ConsumerProtocolError> {
    let mut s = Scan { buf: body };
    s.topic_partitions()?;
    s.bytes()
}

fn check_subscription(body: &[u8], version: i16) -> Result<(), ConsumerProtocolError> {
    let mut s = Scan { buf: body };
    for _ in 0..s.count(2)? {
        s.string(false)?;
    }
    s.bytes()?;
    if version >= 1 {
        s.topic_partitions()?;
    }
    if version >= 2 {
        s.i32()?;
    }
    if version >= 3 {
        s.string(true)?;
    }
    Ok(())
}

/// The partitions of a member's assignment, in the order the leader wrote them.
pub fn decode_assignment(bytes: &Bytes) -> Result<Vec<TopicPartition>, ConsumerProtocolError> {
    let (version, mut body) = split_version(bytes, ConsumerProtocolAssignment::VERSIONS.max)?;
    check_assignment(&body)?;
    let assignment = ConsumerProtocolAssignment::decode(&mut body, version)
        .map_err(|e| ConsumerProtocolError::Malformed(e.to_string()))?;
    Ok(assignment
        .assigned_partitions
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| TopicPartition::new(t.topic.0.to_string(), *p))
        })
        .collect())
}

/// The topics a member subscribed to.
pub fn decode_subscription(bytes: &Bytes) -> Result<Vec<String>, ConsumerProtocolError> {
    let (version, mut body) = split_version(bytes, ConsumerProtocolSubscription::VERSIONS.max)?;
    check_subscription(&body, version)?;
    let subscription = ConsumerProtocolSubscription::decode(&mut body, version)
        .map_err(|e| ConsumerProtocolError::Malformed(e.to_string()))?;
    Ok(subscription.topics.iter().map(|t| t.to_string()).collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::{Encodable, StrBytes};

    /// Assignment bytes as a Java consumer leader writes them.
    pub(crate) fn assignment_bytes(version: i16, topics: &[(&str, &[i32])]) -> Bytes {
        let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
            topics
                .iter()
                .map(|(t, ps)| {
                    AssignedTopic::default()
                        .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps.to_vec())
                })
                .collect(),
        );
        let mut buf = BytesMut::new();
        buf.put_i16(version);
        a.encode(&mut buf, version).unwrap();
        buf.freeze()
    }

    #[test]
    fn decodes_assignments_of_every_version() {
        for v in 0..=3 {
            let bytes = assignment_bytes(v, &[("a", &[0, 2]), ("b", &[1])]);
            assert_eq!(
                decode_assignment(&bytes).unwrap(),
                vec![
                    TopicPartition::new("a", 0),
                    TopicPartition::new("a", 2),
                    TopicPartition::new("b", 1)
                ]
            );
        }
    }

    #[test]
    fn a_newer_version_reads_as_the_newest_known() {
        let mut bytes = BytesMut::from(&assignment_bytes(3, &[("a", &[5])])[..]);
        bytes[0..2].copy_from_slice(&7i16.to_be_bytes());
        assert_eq!(
            decode_assignment(&bytes.freeze()).unwrap(),
            vec![TopicPartition::new("a", 5)]
        );
    }

    #[test]
    fn malformed_bytes_are_errors_not_panics() {
        assert_eq!(
            decode_assignment(&Bytes::from_static(&[0])),
            Err(ConsumerProtocolError::Truncated)
        );
        assert_eq!(
            decode_assignment(&Bytes::from_static(&[0xff, 0xff])),
            Err(ConsumerProtocolError::BadVersion(-1))
        );
        assert!(decode_assignment(&Bytes::from_static(&[0, 0, 0, 0, 0, 9])).is_err());
        // Counts that claim billions of elements in a few bytes are refused, not allocated.
        assert!(decode_subscription(&Bytes::from_static(&[0, 1, 0x7f, 0xff, 0xff, 0xff])).is_err());
        assert!(
            decode_assignment(&Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0])).is_err()
        );
        assert!(decode_assignment(&Bytes::from_static(&[
            0, 0, 0, 0, 0, 1, 0, 1, b'a', 0x7f, 0xff, 0xff, 0xff
        ]))
        .is_err());
    }

    #[test]
    fn random_bytes_never_panic() {
        let seed: u64 = std::env::var("COHORT_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_cafe);
        println!("consumer protocol fuzz seed: {seed} (set COHORT_TEST_SEED to replay)");
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    // Bias towards 0x00 and 0xff so lengths and counts hit their edges.
                    match next() % 4 {
                        0 => 0,
                        1 => 0xff,
                        2 => 0x7f,
                        _ => next() as u8,
                    }
                })
                .collect();
            let b = Bytes::from(bytes);
            let _ = decode_assignment(&b);
            let _ = decode_subscription(&b);
        }
    }

    #[test]
    fn decodes_subscriptions() {
        let s = ConsumerProtocolSubscription::default().with_topics(vec![
            StrBytes::from_static_str("x"),
            StrBytes::from_static_str("y"),
        ]);
        let mut buf = BytesMut::new();
        buf.put_i16(1);
        s.encode(&mut buf, 1).unwrap();
        assert_eq!(
            decode_subscription(&buf.freeze()).unwrap(),
            vec!["x".to_string(), "y".to_string()]
        );
    }
}
