//! Request decoding: peek the fixed header fields, check them against the served table, then
//! decode header and body through `kafka-protocol`.
//!
//! ```text
//!  frame ──peek(api key, version, correlation id)──┬─ unknown / unserved key ──> Err (close)
//!                                                  ├─ ApiVersions too new ──────> Err, caller
//!                                                  │                             answers v0 body
//!                                                  ├─ other version outside ───> Err (close)
//!                                                  └─ RequestHeader::decode + RequestKind::decode
//! ```
//!
//! The peek happens before anything else because the correlation id is needed to answer even a
//! request whose body cannot be decoded, and `kafka-protocol`'s own header peek panics on a
//! frame shorter than four bytes.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind};
use kafka_protocol::protocol::Decodable;

use crate::apis::{self, PRODUCE_MIN_DECODABLE_VERSION};

/// Bytes every request header starts with: api key (i16), api version (i16), correlation id (i32).
pub const FIXED_HEADER_BYTES: usize = 8;

/// The fixed fields at the front of every request, readable from any frame of 8+ bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPeek {
    /// Raw api key (may be one Kafka does not define).
    pub api_key: i16,
    /// Requested version.
    pub api_version: i16,
    /// Echoed back in the response header.
    pub correlation_id: i32,
}

/// A decoded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The API.
    pub api_key: ApiKey,
    /// The full header (client id, tagged fields).
    pub header: RequestHeader,
    /// The body.
    pub body: RequestKind,
}

impl Request {
    /// The version the client used (the response must use the same).
    pub fn version(&self) -> i16 {
        self.header.request_api_version
    }

    /// Echoed back in the response header.
    pub fn correlation_id(&self) -> i32 {
        self.header.correlation_id
    }

    /// The client id, or "" when absent.
    pub fn client_id(&self) -> &str {
        self.header.client_id.as_deref().unwrap_or("")
    }
}

/// Why a frame is not a request we serve. Every variant but [`RequestError::ApiVersionsTooNew`]
/// means: one log line, close the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// Fewer than the fixed header bytes.
    #[error("frame of {frame_bytes} bytes is shorter than a request header")]
    Truncated {
        /// Size of the frame.
        frame_bytes: usize,
    },
    /// An api key Kafka does not define, or one Cohort does not serve.
    #[error("api key {} is not served (correlation id {})", .peek.api_key, .peek.correlation_id)]
    UnknownApiKey {
        /// The fixed fields.
        peek: RequestPeek,
    },
    /// ApiVersions newer than served: answered with a v0 body and UNSUPPORTED_VERSION (KIP-511),
    /// so the client retries with a version we know.
    #[error("ApiVersions v{} is newer than served", .peek.api_version)]
    ApiVersionsTooNew {
        /// The fixed fields.
        peek: RequestPeek,
    },
    /// A served API at a version outside the served range.
    #[error("{api_key:?} v{} is not served (correlation id {})", .peek.api_version, .peek.correlation_id)]
    UnsupportedVersion {
        /// The API.
        api_key: ApiKey,
        /// The fixed fields.
        peek: RequestPeek,
    },
    /// The header or body does not decode.
    #[error("{api_key:?} v{} does not decode: {reason} (correlation id {})", .peek.api_version, .peek.correlation_id)]
    Malformed {
        /// The API.
        api_key: ApiKey,
        /// The fixed fields.
        peek: RequestPeek,
        /// What the decoder said.
        reason: String,
    },
}

/// Reads the fixed header fields.
pub fn peek_request(frame: &[u8]) -> Result<RequestPeek, RequestError> {
    if frame.len() < FIXED_HEADER_BYTES {
        return Err(RequestError::Truncated {
            frame_bytes: frame.len(),
        });
    }
    Ok(RequestPeek {
        api_key: i16::from_be_bytes([frame[0], frame[1]]),
        api_version: i16::from_be_bytes([frame[2], frame[3]]),
        correlation_id: i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]),
    })
}

/// Decodes one request frame (without its length prefix).
pub fn decode_request(frame: Bytes) -> Result<Request, RequestError> {
    let peek = peek_request(&frame)?;
    let api_key =
        ApiKey::try_from(peek.api_key).map_err(|()| RequestError::UnknownApiKey { peek })?;
    let range = apis::supported_range(api_key).ok_or(RequestError::UnknownApiKey { peek })?;
    if !range.contains(peek.api_version) {
        return Err(
            if api_key == ApiKey::ApiVersions && peek.api_version > range.max {
                RequestError::ApiVersionsTooNew { peek }
            } else {
                RequestError::UnsupportedVersion { api_key, peek }
            },
        );
    }
    let malformed = |reason: String| RequestError::Malformed {
        api_key,
        peek,
        reason,
    };
    let mut buf = frame;
    let header_version = api_key.request_header_version(peek.api_version);
    let header = RequestHeader::decode(&mut buf, header_version)
        .map_err(|e| malformed(format!("header: {e}")))?;
    let body = if api_key == ApiKey::Produce && peek.api_version < PRODUCE_MIN_DECODABLE_VERSION {
        decode_legacy_produce(buf).map_err(|e| malformed(format!("body: {e}")))?
    } else {
        RequestKind::decode(api_key, &mut buf, peek.api_version)
            .map_err(|e| malformed(format!("body: {e}")))?
    };
    Ok(Request {
        api_key,
        header,
        body,
    })
}

/// Produce v0–v2 bodies are the v3 body without its leading nullable `transactional_id`, so a
/// null one (length -1) in front makes them decodable as v3. The caller still sees the client's
/// version in the header and answers UNSUPPORTED_VERSION; decoding is only needed to name the
/// partitions in that answer.
fn decode_legacy_produce(body: Bytes) -> Result<RequestKind, String> {
    let mut v3 = BytesMut::with_capacity(body.len() + 2);
    v3.put_i16(-1);
    v3.put_slice(&body);
    let mut v3 = v3.freeze();
    RequestKind::decode(ApiKey::Produce, &mut v3, PRODUCE_MIN_DECODABLE_VERSION)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(api_key: i16, version: i16, correlation_id: i32, rest: &[u8]) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(api_key);
        b.put_i16(version);
        b.put_i32(correlation_id);
        b.put_slice(rest);
        b.freeze()
    }

    #[test]
    fn short_frames_are_truncated_not_a_panic() {
        for n in 0..FIXED_HEADER_BYTES {
            assert_eq!(
                decode_request(Bytes::from(vec![0u8; n])),
                Err(RequestError::Truncated { frame_bytes: n })
            );
        }
    }

    #[test]
    fn unknown_and_unserved_keys_are_refused_with_the_correlation_id() {
        let err = decode_request(frame(9999, 0, 77, &[0, 0])).unwrap_err();
        assert!(
            matches!(err, RequestError::UnknownApiKey { peek } if peek.correlation_id == 77),
            "{err:?}"
        );
        // ElectLeaders (43) exists in Kafka but is not served.
        let err = decode_request(frame(43, 0, 1, &[0, 0])).unwrap_err();
        assert!(matches!(err, RequestError::UnknownApiKey { .. }), "{err:?}");
    }

    #[test]
    fn a_too_new_api_versions_is_singled_out() {
        let err = decode_request(frame(18, 99, 5, &[])).unwrap_err();
        assert!(
            matches!(err, RequestError::ApiVersionsTooNew { peek } if peek.api_version == 99),
            "{err:?}"
        );
        let err = decode_request(frame(3, 14, 5, &[])).unwrap_err();
        assert!(
            matches!(
                err,
                RequestError::UnsupportedVersion {
                    api_key: ApiKey::Metadata,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn a_body_cut_short_is_malformed() {
        // Metadata v1 with client id "ab" and a topic array announcing 3 topics, none sent.
        let err = decode_request(frame(3, 1, 5, &[0, 2, b'a', b'b', 0, 0, 0, 3])).unwrap_err();
        assert!(matches!(err, RequestError::Malformed { .. }), "{err:?}");
    }

    #[test]
    fn an_array_count_of_i32_max_is_malformed_not_an_abort() {
        let err =
            decode_request(frame(3, 1, 5, &[0xff, 0xff, 0x7f, 0xff, 0xff, 0xff])).unwrap_err();
        assert!(matches!(err, RequestError::Malformed { .. }), "{err:?}");
    }
}
