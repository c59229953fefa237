//! Response encoding: a whole frame (length prefix, response header, body) ready to write.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{ApiKey, ApiVersionsResponse, ProduceRequest, ResponseHeader};
use kafka_protocol::messages::{ResponseKind, TopicName};
use kafka_protocol::protocol::Encodable;

use crate::apis::ApiRange;
use crate::error_code::ErrorCode;
use crate::frame::LENGTH_PREFIX_BYTES;

/// A response that the codec refuses to encode (a field out of range for the version). This is
/// a bug in the handler that built it, never the client's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{api_key:?} v{version} response does not encode: {reason}")]
pub struct EncodeError {
    /// The API.
    pub api_key: ApiKey,
    /// The version asked for.
    pub version: i16,
    /// What the encoder said.
    pub reason: String,
}

/// Encodes `body` behind the response header the version calls for, and the length prefix.
pub fn encode_response(
    correlation_id: i32,
    api_key: ApiKey,
    version: i16,
    body: &ResponseKind,
) -> Result<Bytes, EncodeError> {
    let fail = |reason: String| EncodeError {
        api_key,
        version,
        reason,
    };
    let mut out = BytesMut::with_capacity(size_hint(body));
    // The length is patched in below. ApiVersions always answers with header v0 (no tagged
    // fields), which `response_header_version` already knows.
    out.put_i32(0);
    let header_version = api_key.response_header_version(version);
    ResponseHeader::default()
        .with_correlation_id(correlation_id)
        .encode(&mut out, header_version)
        .map_err(|e| fail(format!("header: {e}")))?;
    body.encode(&mut out, version)
        .map_err(|e| fail(format!("body: {e}")))?;
    patch_length(&mut out).map_err(fail)?;
    Ok(out.freeze())
}

/// Bytes to reserve for a response, so large Fetch answers are not copied while the buffer
/// grows.
fn size_hint(body: &ResponseKind) -> usize {
    const SMALL: usize = 256;
    match body {
        ResponseKind::Fetch(f) => {
            let records: usize = f
                .responses
                .iter()
                .flat_map(|t| t.partitions.iter())
                .map(|p| p.records.as_ref().map_or(0, |r| r.len()) + 64)
                .sum();
            records + SMALL
        }
        _ => SMALL,
    }
}

fn patch_length(out: &mut BytesMut) -> Result<(), String> {
    let size = i32::try_from(out.len() - LENGTH_PREFIX_BYTES)
        .map_err(|_| format!("{} bytes do not fit a frame", out.len()))?;
    out[..LENGTH_PREFIX_BYTES].copy_from_slice(&size.to_be_bytes());
    Ok(())
}

/// The ApiVersions body listing `table`.
pub fn api_versions_body(table: &[ApiRange], error: ErrorCode) -> ApiVersionsResponse {
    ApiVersionsResponse::default()
        .with_error_code(error.code())
        .with_api_keys(
            table
                .iter()
                .map(|r| {
                    ApiVersion::default()
                        .with_api_key(r.key as i16)
                        .with_min_version(r.min)
                        .with_max_version(r.max)
                })
                .collect(),
        )
}

/// Kafka's answer to an ApiVersions request newer than it knows (KIP-511): a v0 body (which
/// every client can read) with UNSUPPORTED_VERSION and the served ranges, so the client retries
/// with the highest version both sides know.
pub fn api_versions_too_new_response(
    correlation_id: i32,
    table: &[ApiRange],
) -> Result<Bytes, EncodeError> {
    let body = api_versions_body(table, ErrorCode::UnsupportedVersion);
    encode_response(
        correlation_id,
        ApiKey::ApiVersions,
        0,
        &ResponseKind::ApiVersions(body),
    )
}

/// The answer to a Produce v0–v2 request: every partition gets `error` (UNSUPPORTED_VERSION).
///
/// `kafka-protocol` does not encode Produce responses below v3, so this one is written out by
/// hand; the layout is Kafka's `ProduceResponse` v0–v2: `[topic name, [partition index, error
/// code, base offset, log append time (v2)]]`, then `throttle_time_ms` (v1+). v2's layout is
/// identical to v3's, which the tests use to check it against the codec.
pub fn legacy_produce_response(
    correlation_id: i32,
    version: i16,
    request: &ProduceRequest,
    error: ErrorCode,
) -> Result<Bytes, EncodeError> {
    let fail = |reason: String| EncodeError {
        api_key: ApiKey::Produce,
        version,
        reason,
    };
    if !(0..=2).contains(&version) {
        return Err(fail("only v0-v2 are written by hand".into()));
    }
    let mut out = BytesMut::with_capacity(64);
    out.put_i32(0); // patched below
    out.put_i32(correlation_id); // response header v0
    put_count(&mut out, request.topic_data.len()).map_err(fail)?;
    for topic in &request.topic_data {
        put_name(&mut out, &topic.name).map_err(fail)?;
        put_count(&mut out, topic.partition_data.len()).map_err(fail)?;
        for partition in &topic.partition_data {
            out.put_i32(partition.index);
            out.put_i16(error.code());
            out.put_i64(-1); // base offset
            if version >= 2 {
                out.put_i64(-1); // log append time
            }
        }
    }
    if version >= 1 {
        out.put_i32(0); // throttle time
    }
    patch_length(&mut out).map_err(fail)?;
    Ok(out.freeze())
}

fn put_count(out: &mut BytesMut, n: usize) -> Result<(), String> {
    out.put_i32(i32::try_from(n).map_err(|_| format!("array of {n} elements"))?);
    Ok(())
}

fn put_name(out: &mut BytesMut, name: &TopicName) -> Result<(), String> {
    let bytes = name.0.as_bytes();
    out.put_i16(i16::try_from(bytes.len()).map_err(|_| format!("name of {}", bytes.len()))?);
    out.put_slice(bytes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Buf;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ProduceResponse, ResponseHeader};
    use kafka_protocol::protocol::{Decodable, StrBytes};

    fn produce_request() -> ProduceRequest {
        ProduceRequest::default().with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str("orders")))
            .with_partition_data(vec![
                PartitionProduceData::default().with_index(0),
                PartitionProduceData::default().with_index(7),
            ])])
    }

    #[test]
    fn legacy_v2_answer_reads_back_as_the_identical_v3_layout() {
        let mut frame =
            legacy_produce_response(42, 2, &produce_request(), ErrorCode::UnsupportedVersion)
                .unwrap();
        assert_eq!(frame.get_i32() as usize, frame.len());
        let header = ResponseHeader::decode(&mut frame, 0).unwrap();
        assert_eq!(header.correlation_id, 42);
        let body = ProduceResponse::decode(&mut frame, 3).unwrap();
        assert!(!frame.has_remaining());
        let topic = &body.responses[0];
        assert_eq!(topic.name.0.as_str(), "orders");
        let got: Vec<(i32, i16)> = topic
            .partition_responses
            .iter()
            .map(|p| (p.index, p.error_code))
            .collect();
        assert_eq!(got, vec![(0, 35), (7, 35)]);
    }

    #[test]
    fn legacy_v0_and_v1_answers_have_their_exact_sizes() {
        // 4 (size) + 4 (correlation) + 4 (topics) + 2+6 (name) + 4 (partitions) + 2×14.
        let v0 = legacy_produce_response(1, 0, &produce_request(), ErrorCode::UnsupportedVersion)
            .unwrap();
        assert_eq!(v0.len(), 4 + 4 + 4 + 8 + 4 + 2 * 14);
        let v1 = legacy_produce_response(1, 1, &produce_request(), ErrorCode::UnsupportedVersion)
            .unwrap();
        assert_eq!(v1.len(), v0.len() + 4);
    }
}
