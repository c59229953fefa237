//! Bad input over real sockets: each kind gets Kafka's answer or a closed connection with one
//! log line, while another connection keeps being served and the broker never falls over.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::raw::batches::batch;
use common::raw::RawClient;
use common::{Cohort, Rng};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ApiKey, ProduceRequest, RequestKind, TopicName};
use kafka_protocol::protocol::StrBytes;

/// A connection that must keep working while others misbehave.
struct Witness(RawClient);

impl Witness {
    fn check(&mut self) {
        assert_eq!(
            self.0.api_versions().error_code,
            0,
            "the witness connection stopped"
        );
    }
}

fn frame(api_key: i16, version: i16, correlation_id: i32, rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&api_key.to_be_bytes());
    body.extend_from_slice(&version.to_be_bytes());
    body.extend_from_slice(&correlation_id.to_be_bytes());
    body.extend_from_slice(rest);
    let mut out = (body.len() as i32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

fn assert_closed(broker: &Cohort, bytes: &[u8], what: &str) {
    let mut c = RawClient::connect(broker.kafka);
    c.stream.write_all(bytes).unwrap();
    assert!(c.closed_by_broker(), "{what}: the connection stayed open");
}

fn count(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn oversized_negative_unknown_and_unsupported_requests_close_only_their_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut witness = Witness(RawClient::connect(broker.kafka));
    witness.check();

    // A length prefix of 2 GiB: refused on its four bytes, nothing buffered.
    assert_closed(&broker, &0x7fff_ffffu32.to_be_bytes(), "2 GiB prefix");
    witness.check();
    assert_closed(&broker, &(-1i32).to_be_bytes(), "negative prefix");
    // An api key Kafka does not define, and one Cohort does not serve (ElectLeaders).
    assert_closed(&broker, &frame(9999, 0, 1, &[0xff, 0xff]), "unknown key");
    assert_closed(&broker, &frame(43, 0, 1, &[0xff, 0xff]), "unserved key");
    witness.check();
    // Served APIs at versions outside the served range.
    assert_closed(&broker, &frame(3, 14, 1, &[0xff, 0xff, 0]), "Metadata v14");
    assert_closed(&broker, &frame(1, 3, 1, &[0xff, 0xff]), "Fetch v3");
    // A header shorter than its fixed fields, and a body cut short.
    assert_closed(&broker, &[0, 0, 0, 3, 0, 3, 0], "3-byte frame");
    assert_closed(
        &broker,
        &frame(3, 1, 1, &[0, 2, b'a', b'b', 0, 0, 0, 9]),
        "Metadata body announcing 9 topics and sending none",
    );
    // An array count of i32::MAX in a tiny frame: a decode error, not an allocation.
    assert_closed(
        &broker,
        &frame(3, 1, 1, &[0xff, 0xff, 0x7f, 0xff, 0xff, 0xff]),
        "i32::MAX topics",
    );
    witness.check();

    let log = broker.log();
    assert_eq!(count(&log, "exceeds the maximum"), 1, "{log}");
    assert_eq!(count(&log, "negative frame size"), 1, "{log}");
    assert_eq!(count(&log, "is not served"), 4, "{log}");
    assert_eq!(count(&log, "closing connection: bad request"), 9, "{log}");
    let (_, metrics) = broker.http_get("/metrics");
    assert!(
        metrics.contains("cohort_bad_requests_total{reason=\"frame_too_large\"} 1"),
        "{metrics}"
    );
}

#[test]
fn produce_below_v3_is_answered_with_unsupported_version() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut client = RawClient::connect(broker.kafka);
    // A v3 body without the transactional id is a v2 body.
    let body = ProduceRequest::default()
        .with_transactional_id(None)
        .with_acks(1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str("old")))
            .with_partition_data(
                vec![PartitionProduceData::default().with_index(0)],
            )]);
    let (_, v3) = client.frame(ApiKey::Produce, 3, &RequestKind::Produce(body));
    for version in 0..=2i16 {
        let header_len = 4 + 8 + 2 + "raw-test".len();
        let mut legacy = v3[..header_len].to_vec();
        legacy[6..8].copy_from_slice(&version.to_be_bytes());
        legacy.extend_from_slice(&v3[header_len + 2..]);
        let size = (legacy.len() - 4) as i32;
        legacy[..4].copy_from_slice(&size.to_be_bytes());
        client.stream.write_all(&legacy).unwrap();
        let frame = client.read_frame().expect("an answer");
        // correlation id, topics(1), name "old", partitions(1), index 0, error code 35
        let expect_prefix: Vec<u8> = [
            &1i32.to_be_bytes()[..],
            &1i32.to_be_bytes(),
            &3i16.to_be_bytes(),
            b"old",
            &1i32.to_be_bytes(),
            &0i32.to_be_bytes(),
            &35i16.to_be_bytes(),
        ]
        .concat();
        assert_eq!(
            &frame[..expect_prefix.len()],
            &expect_prefix[..],
            "v{version}"
        );
    }
    assert_eq!(client.api_versions().error_code, 0);
}

#[test]
fn a_batch_with_a_wrong_crc_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(c.create_topic("crc", 1, &[]), 0);
    let good = batch(&[b"kept", b"also kept"], 10, None);
    assert_eq!(c.produce("crc", 0, good.clone()).error_code, 0);
    for at in [21, 40, good.len() - 1] {
        let mut bad = good.to_vec();
        bad[at] ^= 0x20;
        let r = c.produce("crc", 0, bytes::Bytes::from(bad));
        assert_eq!(r.error_code, 2, "CORRUPT_MESSAGE for a flip at byte {at}");
    }
    // Truncated, doubled, and an old message format: INVALID_RECORD / CORRUPT_MESSAGE.
    assert_eq!(
        c.produce("crc", 0, good.slice(..good.len() - 3)).error_code,
        2
    );
    let twice = [good.to_vec(), good.to_vec()].concat();
    assert_eq!(
        c.produce("crc", 0, bytes::Bytes::from(twice)).error_code,
        87
    );
    let mut v1 = good.to_vec();
    v1[16] = 1;
    assert_eq!(c.produce("crc", 0, bytes::Bytes::from(v1)).error_code, 87);
    // The same connection goes on, and the good batch is all there is.
    assert_eq!(c.list_offset("crc", 0, -1), (0, 2, -1));
    let read = c.fetch("crc", 0, 0, 0, 1).records.unwrap_or_default();
    assert_eq!(
        &read[16..],
        &good[16..],
        "stored as sent but for offset and leader epoch"
    );
}

#[test]
fn random_bytes_and_truncated_frames_never_take_the_broker_down() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &["--max-frame-bytes", "65536"]);
    let mut witness = Witness(RawClient::connect(broker.kafka));
    assert_eq!(witness.0.create_topic("survivor", 1, &[]), 0);
    let kept = batch(&[b"before the storm"], 1, None);
    assert_eq!(witness.0.produce("survivor", 0, kept.clone()).error_code, 0);
    let mut rng = Rng::from_env("random_bytes_and_truncated_frames");
    let good = frame(18, 0, 7, &[0, 4, b'r', b'a', b'n', b'd']);
    for round in 0..200 {
        let mut s = TcpStream::connect(broker.kafka).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let bytes = match round % 4 {
            // Pure noise.
            0 => {
                let n = 1 + rng.below(300) as usize;
                rng.bytes(n)
            }
            // A valid request cut at a random byte.
            1 => good[..rng.below(good.len() as u64) as usize].to_vec(),
            // A plausible prefix then noise.
            2 => {
                let n = 8 + rng.below(200) as usize;
                let body = rng.bytes(n);
                let mut v = (body.len() as i32).to_be_bytes().to_vec();
                v.extend(body);
                v
            }
            // A valid request with one byte flipped.
            _ => {
                let mut v = good.clone();
                let i = 4 + rng.below((v.len() - 4) as u64) as usize;
                v[i] ^= 1 << rng.below(8);
                v
            }
        };
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        // Whatever the broker answers, it ends the conversation.
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut sink);
        if round % 20 == 0 {
            witness.check();
        }
    }
    witness.check();
    let mut fresh = RawClient::connect(broker.kafka);
    assert_eq!(fresh.api_versions().error_code, 0);
    let read = fresh
        .fetch("survivor", 0, 0, 0, 1)
        .records
        .unwrap_or_default();
    assert_eq!(&read[16..], &kept[16..], "nothing lost");
}

#[test]
fn a_client_sending_one_byte_a_second_stalls_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut slow = RawClient::connect(broker.kafka);
    let (correlation_id, request) = {
        let req = kafka_protocol::messages::ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("slow"))
            .with_client_software_version(StrBytes::from_static_str("1"));
        slow.frame(ApiKey::ApiVersions, 3, &RequestKind::ApiVersions(req))
    };
    let mut witness = Witness(RawClient::connect(broker.kafka));
    let started = Instant::now();
    let mut served_meanwhile = 0;
    for b in &request[..6] {
        slow.stream.write_all(&[*b]).unwrap();
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            witness.check();
            served_meanwhile += 1;
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert!(started.elapsed() >= Duration::from_secs(6));
    assert!(served_meanwhile >= 30, "{served_meanwhile}");
    slow.stream.write_all(&request[6..]).unwrap();
    let (got, _) = slow.read_response(ApiKey::ApiVersions, 3);
    assert_eq!(
        got, correlation_id,
        "the slow client is answered in the end"
    );
}
