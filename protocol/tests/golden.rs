//! Golden bytes: the first ApiVersions and Metadata frames real clients sent, recorded with
//! `tests/golden/capture.py` (a proxy in front of `cohort serve`):
//!
//! | file prefix  | client                                              |
//! |--------------|-----------------------------------------------------|
//! | `kcat`       | kcat 1.7.1 on Debian's librdkafka 2.0.2 (`kcat -L`) |
//! | `confluent`  | confluent-kafka 2.16.1 (librdkafka 2.16.0), Python  |
//! | `kafkapython`| kafka-python 3.0.12                                 |
//! | `kafkajs`    | kafkajs 2.2.4                                       |
//!
//! Each must decode to what the client meant and re-encode to the very same bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind};
use kafka_protocol::protocol::Encodable;
use protocol::{decode_request, Request};

fn golden(name: &str) -> Bytes {
    let path = format!("{}/tests/golden/{name}.bin", env!("CARGO_MANIFEST_DIR"));
    Bytes::from(std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

fn decode(name: &str) -> (Request, Bytes) {
    let bytes = golden(name);
    let req = decode_request(bytes.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    (req, bytes)
}

fn reencode(req: &Request) -> Bytes {
    let mut buf = BytesMut::new();
    req.header
        .encode(&mut buf, req.api_key.request_header_version(req.version()))
        .unwrap();
    req.body.encode(&mut buf, req.version()).unwrap();
    buf.freeze()
}

struct Expect {
    file: &'static str,
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    client_id: &'static str,
}

const EXPECTED: &[Expect] = &[
    Expect {
        file: "kcat-18-v3",
        api_key: ApiKey::ApiVersions,
        version: 3,
        correlation_id: 1,
        client_id: "rdkafka",
    },
    Expect {
        file: "kcat-3-v4",
        api_key: ApiKey::Metadata,
        version: 4,
        correlation_id: 2,
        client_id: "rdkafka",
    },
    Expect {
        file: "confluent-18-v3",
        api_key: ApiKey::ApiVersions,
        version: 3,
        correlation_id: 1,
        client_id: "rdkafka",
    },
    Expect {
        file: "confluent-3-v12",
        api_key: ApiKey::Metadata,
        version: 12,
        correlation_id: 2,
        client_id: "rdkafka",
    },
    Expect {
        file: "kafkapython-18-v4",
        api_key: ApiKey::ApiVersions,
        version: 4,
        correlation_id: 1,
        client_id: "kafka-python-3.0.12",
    },
    Expect {
        file: "kafkapython-3-v12",
        api_key: ApiKey::Metadata,
        version: 12,
        correlation_id: 2,
        client_id: "kafka-python-3.0.12",
    },
    Expect {
        file: "kafkajs-18-v2",
        api_key: ApiKey::ApiVersions,
        version: 2,
        correlation_id: 0,
        client_id: "golden-kafkajs",
    },
    Expect {
        file: "kafkajs-3-v6",
        api_key: ApiKey::Metadata,
        version: 6,
        correlation_id: 1,
        client_id: "golden-kafkajs",
    },
];

#[test]
fn real_client_frames_decode_and_reencode_byte_for_byte() {
    for e in EXPECTED {
        let (req, bytes) = decode(e.file);
        assert_eq!(req.api_key, e.api_key, "{}", e.file);
        assert_eq!(req.version(), e.version, "{}", e.file);
        assert_eq!(req.correlation_id(), e.correlation_id, "{}", e.file);
        assert_eq!(req.client_id(), e.client_id, "{}", e.file);
        assert_eq!(reencode(&req), bytes, "{}: re-encoded bytes differ", e.file);
    }
}

#[test]
fn api_versions_carry_the_client_software() {
    let software = |file: &str| match decode(file).0.body {
        RequestKind::ApiVersions(r) => (
            r.client_software_name.to_string(),
            r.client_software_version.to_string(),
        ),
        other => panic!("{file}: {other:?}"),
    };
    assert_eq!(
        software("kcat-18-v3"),
        ("librdkafka".into(), "2.0.2".into())
    );
    assert_eq!(
        software("confluent-18-v3"),
        (
            "confluent-kafka-python".into(),
            "2.16.1-rdkafka-2.16.0".into()
        )
    );
    assert_eq!(
        software("kafkapython-18-v4"),
        ("kafka-python".into(), "3.0.12".into())
    );
}

#[test]
fn metadata_requests_name_the_topic_asked_for() {
    let topics = |file: &str| match decode(file).0.body {
        RequestKind::Metadata(r) => r.topics.map(|t| {
            t.into_iter()
                .map(|t| t.name.map(|n| n.0.to_string()).unwrap_or_default())
                .collect::<Vec<_>>()
        }),
        other => panic!("{file}: {other:?}"),
    };
    assert_eq!(topics("kcat-3-v4"), Some(vec!["golden".to_string()]));
    assert_eq!(topics("confluent-3-v12"), Some(vec!["golden".to_string()]));
    assert_eq!(topics("kafkajs-3-v6"), Some(vec!["golden".to_string()]));
    // kafka-python's consumer first asks for no topic at all: brokers and cluster id only.
    assert_eq!(topics("kafkapython-3-v12"), Some(vec![]));
}

#[test]
fn the_served_answer_to_each_api_versions_encodes() {
    for e in EXPECTED.iter().filter(|e| e.api_key == ApiKey::ApiVersions) {
        let body = protocol::response::api_versions_body(
            protocol::SUPPORTED_APIS,
            protocol::ErrorCode::None,
        );
        let frame = protocol::encode_response(
            e.correlation_id,
            ApiKey::ApiVersions,
            e.version,
            &kafka_protocol::messages::ResponseKind::ApiVersions(body),
        )
        .unwrap();
        // Header v0: the correlation id straight after the size, then error code 0.
        assert_eq!(&frame[4..8], &e.correlation_id.to_be_bytes(), "{}", e.file);
        assert_eq!(&frame[8..10], &[0, 0], "{}", e.file);
    }
}
