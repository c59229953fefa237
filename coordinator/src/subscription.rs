//! The topics of a ConsumerProtocol subscription (the metadata a consumer sends in JoinGroup).
//!
//! Every version (v0–v3) starts with `version: i16` then `topics: [string]` (i32 count, each
//! an i16 length and UTF-8 bytes); later fields (user data, owned partitions, generation,
//! rack) are not needed, so, like Kafka, we read the v0 prefix only and ignore the rest. The
//! bytes come from clients: every length is checked against what is left before use.

use thiserror::Error;

/// Most topics one subscription may list; more is treated as undecodable.
pub const SUBSCRIPTION_TOPICS_MAX: usize = 100_000;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SubscriptionError {
    #[error("subscription truncated")]
    Truncated,
    #[error("negative subscription version {0}")]
    NegativeVersion(i16),
    #[error("invalid topic count {0}")]
    InvalidCount(i32),
    #[error("invalid topic name length {0}")]
    InvalidLength(i16),
    #[error("topic name is not UTF-8")]
    InvalidUtf8,
}

/// Decodes the subscribed topic names.
pub fn decode_topics(bytes: &[u8]) -> Result<Vec<String>, SubscriptionError> {
    let mut rest = bytes;
    let version = read_i16(&mut rest)?;
    if version < 0 {
        return Err(SubscriptionError::NegativeVersion(version));
    }
    let count = read_i32(&mut rest)?;
    let count_usize = usize::try_from(count).map_err(|_| SubscriptionError::InvalidCount(count))?;
    // Each name takes at least its 2-byte length: a count the bytes cannot hold is a lie.
    if count_usize > SUBSCRIPTION_TOPICS_MAX || count_usize > rest.len() / 2 {
        return Err(SubscriptionError::InvalidCount(count));
    }
    let mut topics = Vec::with_capacity(count_usize);
    for _ in 0..count_usize {
        let len = read_i16(&mut rest)?;
        let len_usize = usize::try_from(len).map_err(|_| SubscriptionError::InvalidLength(len))?;
        if rest.len() < len_usize {
            return Err(SubscriptionError::Truncated);
        }
        let (name, tail) = rest.split_at(len_usize);
        rest = tail;
        let name = std::str::from_utf8(name).map_err(|_| SubscriptionError::InvalidUtf8)?;
        topics.push(name.to_owned());
    }
    Ok(topics)
}

/// A whole subscription (Kafka's `ConsumerProtocolSubscription`, v0–v3): what a classic
/// member of a consumer group is reconciled from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscription {
    pub version: i16,
    pub topics: Vec<String>,
    /// v1+: what the member owns as it rejoins (cooperative clients); empty before v1.
    pub owned: Vec<(String, Vec<i32>)>,
    /// v3+.
    pub rack: Option<String>,
}

/// Decodes a subscription with its later fields. A field the version has not is left at its
/// default; bytes after the v3 fields are ignored, as Kafka's reader ignores them.
pub fn decode(bytes: &[u8]) -> Result<Subscription, SubscriptionError> {
    let topics = decode_topics(bytes)?;
    let mut rest = bytes;
    let version = read_i16(&mut rest)?;
    // Skip the topics decode_topics read.
    read_i32(&mut rest)?;
    for _ in 0..topics.len() {
        let len = read_i16(&mut rest)?;
        skip(&mut rest, usize::try_from(len).unwrap_or(0))?;
    }
    let mut subscription = Subscription {
        version,
        topics,
        owned: Vec::new(),
        rack: None,
    };
    // user_data: nullable bytes. A v0 subscription may end before it.
    if rest.is_empty() {
        return Ok(subscription);
    }
    let user_data = read_i32(&mut rest)?;
    if user_data > 0 {
        skip(&mut rest, usize::try_from(user_data).unwrap_or(0))?;
    }
    if version >= 1 {
        subscription.owned = read_topic_partitions(&mut rest)?;
    }
    if version >= 2 {
        read_i32(&mut rest)?; // generation id
    }
    if version >= 3 {
        let len = read_i16(&mut rest)?;
        if len >= 0 {
            let len = usize::try_from(len).unwrap_or(0);
            if rest.len() < len {
                return Err(SubscriptionError::Truncated);
            }
            let (rack, _) = rest.split_at(len);
            subscription.rack = Some(
                std::str::from_utf8(rack)
                    .map_err(|_| SubscriptionError::InvalidUtf8)?
                    .to_owned(),
            );
        }
    }
    Ok(subscription)
}

/// Decodes a ConsumerProtocol assignment (any version: their layout is the same), its user
/// data ignored. Empty bytes are an empty assignment: a member that never got one.
pub fn decode_assignment(bytes: &[u8]) -> Result<Vec<(String, Vec<i32>)>, SubscriptionError> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let mut rest = bytes;
    let version = read_i16(&mut rest)?;
    if version < 0 {
        return Err(SubscriptionError::NegativeVersion(version));
    }
    read_topic_partitions(&mut rest)
}

/// Encodes an assignment at `version` (clamped to 0..=3; the layout is the same), without
/// user data.
pub fn encode_assignment(version: i16, topics: &[(&str, &[i32])]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&version.clamp(0, 3).to_be_bytes());
    push_len(&mut out, topics.len());
    for (topic, partitions) in topics {
        let bytes = topic.as_bytes();
        let len = i16::try_from(bytes.len()).unwrap_or(i16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(
            bytes
                .get(..usize::try_from(len).unwrap_or(0))
                .unwrap_or_default(),
        );
        push_len(&mut out, partitions.len());
        for p in *partitions {
            out.extend_from_slice(&p.to_be_bytes());
        }
    }
    out.extend_from_slice(&(-1i32).to_be_bytes());
    out
}

/// The version a subscription was written at (the assignment is answered at the same one,
/// as Kafka's coordinator does). `None` when the bytes do not start with one.
pub fn version_of(bytes: &[u8]) -> Option<i16> {
    let mut rest = bytes;
    read_i16(&mut rest).ok().filter(|v| *v >= 0)
}

fn push_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&i32::try_from(n).unwrap_or(i32::MAX).to_be_bytes());
}

fn skip(rest: &mut &[u8], n: usize) -> Result<(), SubscriptionError> {
    if rest.len() < n {
        return Err(SubscriptionError::Truncated);
    }
    *rest = &rest[n..];
    Ok(())
}

/// `[topic: string, partitions: [i32]]`, every count checked against the bytes left.
fn read_topic_partitions(rest: &mut &[u8]) -> Result<Vec<(String, Vec<i32>)>, SubscriptionError> {
    let count = read_i32(rest)?;
    let n = usize::try_from(count).map_err(|_| SubscriptionError::InvalidCount(count))?;
    // A topic takes at least 6 bytes (name length and partition count).
    if n > SUBSCRIPTION_TOPICS_MAX || n > rest.len() / 6 {
        return Err(SubscriptionError::InvalidCount(count));
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = read_i16(rest)?;
        let len = usize::try_from(len).map_err(|_| SubscriptionError::InvalidLength(len))?;
        if rest.len() < len {
            return Err(SubscriptionError::Truncated);
        }
        let (name, tail) = rest.split_at(len);
        *rest = tail;
        let name = std::str::from_utf8(name).map_err(|_| SubscriptionError::InvalidUtf8)?;
        let pcount = read_i32(rest)?;
        let pn = usize::try_from(pcount).map_err(|_| SubscriptionError::InvalidCount(pcount))?;
        if pn > rest.len() / 4 {
            return Err(SubscriptionError::InvalidCount(pcount));
        }
        let mut partitions = Vec::with_capacity(pn);
        for _ in 0..pn {
            partitions.push(read_i32(rest)?);
        }
        out.push((name.to_owned(), partitions));
    }
    Ok(out)
}

fn read_i16(rest: &mut &[u8]) -> Result<i16, SubscriptionError> {
    let (head, tail) = rest
        .split_first_chunk::<2>()
        .ok_or(SubscriptionError::Truncated)?;
    *rest = tail;
    Ok(i16::from_be_bytes(*head))
}

fn read_i32(rest: &mut &[u8]) -> Result<i32, SubscriptionError> {
    let (head, tail) = rest
        .split_first_chunk::<4>()
        .ok_or(SubscriptionError::Truncated)?;
    *rest = tail;
    Ok(i32::from_be_bytes(*head))
}

/// Encodes a v0 subscription with no user data: what tests and tools need to build one.
pub fn encode_v0(topics: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0i16.to_be_bytes());
    let count = i32::try_from(topics.len()).unwrap_or(i32::MAX);
    out.extend_from_slice(&count.to_be_bytes());
    for topic in topics.iter().take(usize::try_from(count).unwrap_or(0)) {
        let bytes = topic.as_bytes();
        let len = i16::try_from(bytes.len()).unwrap_or(i16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&bytes[..usize::try_from(len).unwrap_or(0)]);
    }
    // user_data: null
    out.extend_from_slice(&(-1i32).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v0_round_trips() {
        let bytes = encode_v0(&["orders", "payments"]);
        assert_eq!(decode_topics(&bytes).unwrap(), vec!["orders", "payments"]);
    }

    #[test]
    fn later_versions_are_read_through_their_v0_prefix() {
        // v3: version, topics, user data, owned partitions, generation, rack.
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&3i16.to_be_bytes());
        bytes.extend_from_slice(&1i32.to_be_bytes());
        bytes.extend_from_slice(&1i16.to_be_bytes());
        bytes.extend_from_slice(b"t");
        bytes.extend_from_slice(&(-1i32).to_be_bytes());
        bytes.extend_from_slice(&0i32.to_be_bytes());
        bytes.extend_from_slice(&7i32.to_be_bytes());
        bytes.extend_from_slice(&(-1i16).to_be_bytes());
        assert_eq!(decode_topics(&bytes).unwrap(), vec!["t"]);
    }

    #[test]
    fn a_lying_count_is_rejected_without_allocating() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&0i16.to_be_bytes());
        bytes.extend_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(
            decode_topics(&bytes),
            Err(SubscriptionError::InvalidCount(i32::MAX))
        );
    }

    #[test]
    fn truncated_and_garbage_inputs_are_errors() {
        assert_eq!(decode_topics(&[]), Err(SubscriptionError::Truncated));
        assert_eq!(
            decode_topics(&[0, 0, 0, 0, 0, 1, 0, 5, b'a']),
            Err(SubscriptionError::Truncated)
        );
        assert_eq!(
            decode_topics(&[0xff, 0xff]),
            Err(SubscriptionError::NegativeVersion(-1))
        );
        assert_eq!(
            decode_topics(&[0, 0, 0, 0, 0, 1, 0, 1, 0xff]),
            Err(SubscriptionError::InvalidUtf8)
        );
    }

    #[test]
    fn a_v3_subscription_gives_its_owned_partitions_and_rack() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&3i16.to_be_bytes());
        bytes.extend_from_slice(&1i32.to_be_bytes());
        bytes.extend_from_slice(&1i16.to_be_bytes());
        bytes.extend_from_slice(b"t");
        bytes.extend_from_slice(&2i32.to_be_bytes());
        bytes.extend_from_slice(b"ud");
        bytes.extend_from_slice(&1i32.to_be_bytes());
        bytes.extend_from_slice(&1i16.to_be_bytes());
        bytes.extend_from_slice(b"t");
        bytes.extend_from_slice(&2i32.to_be_bytes());
        bytes.extend_from_slice(&0i32.to_be_bytes());
        bytes.extend_from_slice(&4i32.to_be_bytes());
        bytes.extend_from_slice(&7i32.to_be_bytes());
        bytes.extend_from_slice(&2i16.to_be_bytes());
        bytes.extend_from_slice(b"r1");
        let s = decode(&bytes).unwrap();
        assert_eq!(s.version, 3);
        assert_eq!(s.topics, vec!["t"]);
        assert_eq!(s.owned, vec![("t".to_owned(), vec![0, 4])]);
        assert_eq!(s.rack.as_deref(), Some("r1"));
        let v0 = decode(&encode_v0(&["a"])).unwrap();
        assert!(v0.owned.is_empty() && v0.rack.is_none());
    }

    #[test]
    fn assignments_round_trip_at_the_subscription_version() {
        let bytes = encode_assignment(1, &[("t", &[0, 2]), ("u", &[1])]);
        assert_eq!(version_of(&bytes), Some(1));
        assert_eq!(
            decode_assignment(&bytes).unwrap(),
            vec![("t".to_owned(), vec![0, 2]), ("u".to_owned(), vec![1])]
        );
        assert!(decode_assignment(&[]).unwrap().is_empty());
        assert_eq!(
            decode_assignment(&[0, 0, 0x7f, 0, 0, 0]),
            Err(SubscriptionError::InvalidCount(0x7f00_0000))
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = decode_topics(&bytes);
            let _ = decode(&bytes);
            let _ = decode_assignment(&bytes);
        }
    }
}
