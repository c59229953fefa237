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

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = decode_topics(&bytes);
        }
    }
}
