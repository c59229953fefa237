//! The data plane driven by real clients: librdkafka (confluent-kafka), kafka-python and
//! kafkajs produce; librdkafka and kafka-python consume and check every record byte for byte
//! (`tests/clients/python/records.py` defines them). Plus what no library exposes directly:
//! sequence rules, the long poll, the max-timestamp lookup, retention, and kill -9.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::raw::{batches::batch, RawClient};
use common::{node_script, python, python_script, repo_root, Cohort};

const LIMIT: Duration = Duration::from_secs(180);

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {}\nstderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn produce(
    client: &str,
    broker: &Cohort,
    topic: &str,
    count: usize,
    partitions: i32,
    extra: &[&str],
) {
    let (count_s, parts_s) = (count.to_string(), partitions.to_string());
    let mut args = vec![client, &broker.kafka_str, topic, topic, &count_s, &parts_s];
    args.extend_from_slice(extra);
    let out = python_script("produce.py", &args, LIMIT);
    let got = json(&out);
    assert_eq!(got["acked"], count, "{client} {topic} {extra:?}: {got}");
    assert_eq!(got["errors"], serde_json::json!([]), "{got}");
}

fn consume_ok(client: &str, broker: &Cohort, topic: &str, count: usize, partitions: i32) {
    let (count_s, parts_s) = (count.to_string(), partitions.to_string());
    let out = python_script(
        "consume.py",
        &[client, &broker.kafka_str, topic, topic, &count_s, &parts_s],
        LIMIT,
    );
    let got = json(&out);
    assert_eq!(
        got,
        serde_json::json!({"count": count, "mismatches": [], "duplicates": 0, "missing": 0}),
        "{client} consuming {topic}; log:\n{}",
        broker.log()
    );
}

#[test]
fn ten_thousand_records_on_three_partitions_read_back_byte_exact_by_two_clients() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut admin = RawClient::connect(broker.kafka);
    assert_eq!(admin.create_topic("big", 3, &[]), 0);
    produce("confluent", &broker, "big", 10_000, 3, &[]);
    consume_ok("confluent", &broker, "big", 10_000, 3);
    consume_ok("kafka-python", &broker, "big", 10_000, 3);
    // A third, independent client writes; both read it back.
    assert_eq!(admin.create_topic("bigjs", 3, &[]), 0);
    let out = node_script(
        "produce.js",
        &[&broker.kafka_str, "bigjs", "bigjs", "3000", "3", "none"],
        LIMIT,
    );
    assert_eq!(json(&out)["acked"], 3000);
    consume_ok("kafka-python", &broker, "bigjs", 3000, 3);
    consume_ok("confluent", &broker, "bigjs", 3000, 3);
}

#[test]
fn every_compression_codec_is_stored_as_sent_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut admin = RawClient::connect(broker.kafka);
    for codec in ["gzip", "snappy", "lz4", "zstd"] {
        for client in ["confluent", "kafka-python"] {
            let topic = format!("{client}-{codec}");
            assert_eq!(admin.create_topic(&topic, 2, &[]), 0);
            produce(client, &broker, &topic, 600, 2, &["--compression", codec]);
            consume_ok("confluent", &broker, &topic, 600, 2);
            consume_ok("kafka-python", &broker, &topic, 600, 2);
        }
    }
    // kafkajs with its pure-JS codecs (it has no zstd compressor).
    for codec in ["gzip", "snappy", "lz4"] {
        let topic = format!("kafkajs-{codec}");
        assert_eq!(admin.create_topic(&topic, 2, &[]), 0);
        let out = node_script(
            "produce.js",
            &[&broker.kafka_str, &topic, &topic, "600", "2", codec],
            LIMIT,
        );
        assert_eq!(json(&out)["acked"], 600);
        consume_ok("kafka-python", &broker, &topic, 600, 2);
        consume_ok("confluent", &broker, &topic, 600, 2);
    }
}

#[test]
fn idempotent_producers_write_each_record_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut admin = RawClient::connect(broker.kafka);
    for client in ["confluent", "kafka-python"] {
        let topic = format!("idem-{client}");
        assert_eq!(admin.create_topic(&topic, 3, &[]), 0);
        produce(
            client,
            &broker,
            &topic,
            3000,
            3,
            &["--idempotent", "--compression", "lz4"],
        );
        consume_ok("confluent", &broker, &topic, 3000, 3);
        let mut c = RawClient::connect(broker.kafka);
        let ends: Vec<i64> = (0..3).map(|p| c.list_offset(&topic, p, -1).1).collect();
        assert_eq!(
            ends,
            vec![1000, 1000, 1000],
            "{client}: no record written twice"
        );
    }
}

#[test]
fn sequence_rules_are_kafkas() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(c.create_topic("seq", 1, &[]), 0);
    let first = batch(&[b"a", b"b", b"c"], 1000, Some((42, 0, 0)));
    let r = c.produce("seq", 0, first.clone());
    assert_eq!((r.error_code, r.base_offset), (0, 0));
    // A resend (the producer did not get the ack): acknowledged again, not written again.
    let r = c.produce("seq", 0, first);
    assert_eq!((r.error_code, r.base_offset), (0, 0));
    let r = c.produce("seq", 0, batch(&[b"d"], 1003, Some((42, 0, 3))));
    assert_eq!((r.error_code, r.base_offset), (0, 3));
    // A gap.
    let r = c.produce("seq", 0, batch(&[b"f"], 1005, Some((42, 0, 5))));
    assert_eq!(r.error_code, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER");
    // An older epoch after a newer one.
    let r = c.produce("seq", 0, batch(&[b"x"], 1006, Some((42, 1, 0))));
    assert_eq!((r.error_code, r.base_offset), (0, 4));
    let r = c.produce("seq", 0, batch(&[b"y"], 1007, Some((42, 0, 4))));
    assert_eq!(r.error_code, 47, "INVALID_PRODUCER_EPOCH");
    // A new epoch must restart at sequence 0.
    let r = c.produce("seq", 0, batch(&[b"z"], 1008, Some((42, 2, 7))));
    assert_eq!(r.error_code, 45);
    assert_eq!(
        c.list_offset("seq", 0, -1).1,
        5,
        "only accepted batches were written"
    );

    // The state survives a restart: the resend of the last batch is still a duplicate.
    drop(c);
    let mut broker = broker;
    assert_eq!(broker.terminate().code(), Some(0));
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    let r = c.produce("seq", 0, batch(&[b"x"], 1006, Some((42, 1, 0))));
    assert_eq!((r.error_code, r.base_offset), (0, 4));
    let r = c.produce("seq", 0, batch(&[b"w"], 1009, Some((42, 1, 1))));
    assert_eq!((r.error_code, r.base_offset), (0, 5));
}

#[test]
fn pipelined_produces_are_written_and_answered_in_order() {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ApiKey, ProduceRequest, RequestKind, ResponseKind, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(c.create_topic("pipe", 2, &[]), 0);
    // 40 requests sent before reading any answer, alternating partitions, with an
    // ApiVersions in the middle that must be answered after the produces before it.
    let mut expected = Vec::new();
    let mut wire = Vec::new();
    for i in 0..40i32 {
        if i == 20 {
            let (id, frame) = c.frame(
                ApiKey::ApiVersions,
                3,
                &RequestKind::ApiVersions(
                    kafka_protocol::messages::ApiVersionsRequest::default()
                        .with_client_software_name(StrBytes::from_static_str("pipe"))
                        .with_client_software_version(StrBytes::from_static_str("1")),
                ),
            );
            wire.extend(frame);
            expected.push((id, None));
        }
        let req = ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(-1)
            .with_timeout_ms(10_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str("pipe")))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(i % 2)
                    .with_records(Some(batch(&[format!("r{i}").as_bytes()], 0, None)))])]);
        let (id, frame) = c.frame(ApiKey::Produce, 9, &RequestKind::Produce(req));
        wire.extend(frame);
        expected.push((id, Some((i % 2, i64::from(i / 2)))));
    }
    std::io::Write::write_all(&mut c.stream, &wire).unwrap();
    for (id, produce) in expected {
        match produce {
            None => {
                let (got, _) = c.read_response(ApiKey::ApiVersions, 3);
                assert_eq!(got, id, "ApiVersions answered in its turn");
            }
            Some((partition, offset)) => {
                let (got, body) = c.read_response(ApiKey::Produce, 9);
                assert_eq!(got, id, "answers come in request order");
                let ResponseKind::Produce(r) = body else {
                    panic!("{body:?}")
                };
                let p = &r.responses[0].partition_responses[0];
                assert_eq!(
                    (p.index, p.error_code, p.base_offset),
                    (partition, 0, offset)
                );
            }
        }
    }
}

#[test]
fn list_offsets_earliest_latest_by_timestamp_and_max_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(c.create_topic("times", 1, &[]), 0);
    // Compressed batches of 100 records each: a lookup must find the record inside.
    produce(
        "kafka-python",
        &broker,
        "times",
        1000,
        1,
        &["--compression", "gzip"],
    );
    let base = 1_700_000_000_000i64;
    let stamps: Vec<String> = [0, base + 1, base + 250, base + 999, base + 1000]
        .iter()
        .map(|t| t.to_string())
        .collect();
    let mut args = vec![broker.kafka_str.as_str(), "times", "0"];
    args.extend(stamps.iter().map(String::as_str));
    let got = json(&python_script("offsets.py", &args, LIMIT));
    let by_ts = |client: &str, ts: i64| got[client]["by_ts"][ts.to_string()].clone();
    for client in ["kafka-python", "confluent"] {
        assert_eq!(got[client]["earliest"], 0, "{got}");
        assert_eq!(got[client]["latest"], 1000, "{got}");
        assert_eq!(by_ts(client, 0)[0], 0, "{got}");
        assert_eq!(by_ts(client, base + 1)[0], 1, "{got}");
        assert_eq!(by_ts(client, base + 250)[0], 250, "{got}");
        assert_eq!(by_ts(client, base + 999)[0], 999, "{got}");
        assert_eq!(by_ts(client, base + 1000), serde_json::Value::Null, "{got}");
    }
    assert_eq!(by_ts("kafka-python", base + 250)[1], base + 250);
    // Max timestamp (KIP-734, v7): the record holding it, not its batch.
    assert_eq!(c.list_offset("times", 0, -3), (0, 999, base + 999));
    // An unknown partition is refused per partition.
    assert_eq!(c.list_offset("times", 7, -1).0, 3);
}

#[test]
fn a_long_polling_fetch_is_woken_by_a_produce() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(c.create_topic("poll", 1, &[]), 0);

    // Nothing arrives: the fetch answers empty after max_wait.
    let started = Instant::now();
    let empty = c.fetch("poll", 0, 0, 700, 1);
    let waited = started.elapsed();
    assert_eq!(empty.error_code, 0);
    assert!(empty.records.unwrap_or_default().is_empty());
    assert!(waited >= Duration::from_millis(650), "{waited:?}");

    // A produce 400 ms into a 20 s poll wakes it.
    let addr = broker.kafka;
    let producer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        let mut p = RawClient::connect(addr);
        p.produce("poll", 0, batch(&[b"wake up"], 5, None))
    });
    let started = Instant::now();
    let woken = c.fetch("poll", 0, 0, 20_000, 1);
    let waited = started.elapsed();
    assert_eq!(producer.join().unwrap().error_code, 0);
    assert_eq!(woken.error_code, 0);
    assert_eq!(woken.high_watermark, 1);
    let records = woken.records.unwrap_or_default();
    assert!(
        records.windows(7).any(|w| w == b"wake up"),
        "the produced batch is in the answer"
    );
    assert!(waited >= Duration::from_millis(350), "{waited:?}");
    assert!(
        waited < Duration::from_secs(5),
        "woken, not timed out: {waited:?}"
    );

    // Out of range, and at the end (an empty answer, not an error).
    assert_eq!(c.fetch("poll", 0, 5, 0, 1).error_code, 1);
    assert_eq!(c.fetch("poll", 0, 1, 0, 1).error_code, 0);
    assert_eq!(c.fetch("nope", 0, 0, 0, 1).error_code, 3);
}

#[test]
fn kill_9_then_restart_keeps_every_acknowledged_record() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let mut admin = RawClient::connect(broker.kafka);
    assert_eq!(admin.create_topic("crash", 3, &[]), 0);
    // A producer that prints every acknowledgement as it arrives.
    let mut producer = Command::new(python())
        .arg(repo_root().join("tests/clients/python/produce.py"))
        .args([
            "confluent",
            &broker.kafka_str,
            "crash",
            "crash",
            "1000000",
            "3",
            "--stream",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = producer.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut acked: Vec<(i32, i64, usize)> = Vec::new();
    let deadline = Instant::now() + LIMIT;
    while acked.len() < 20_000 && Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) {
            if let Some(rest) = line.strip_prefix("ack ") {
                let f: Vec<&str> = rest.split(' ').collect();
                acked.push((
                    f[0].parse().unwrap(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                ));
            }
        }
    }
    assert!(acked.len() >= 20_000, "only {} acks", acked.len());
    broker.kill9();
    // Acks already on their way are acknowledged too: collect them until the producer gives up.
    let _ = producer.kill();
    let _ = producer.wait();
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
        if let Some(rest) = line.strip_prefix("ack ") {
            let f: Vec<&str> = rest.split(' ').collect();
            acked.push((
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            ));
        }
    }
    let _ = reader.join();

    let broker = Cohort::start(&data, &[]);
    let expect_path = dir.path().join("acked.txt");
    std::fs::write(
        &expect_path,
        acked
            .iter()
            .map(|(_, _, i)| format!("{i}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let out = python_script(
        "consume.py",
        &[
            "kafka-python",
            &broker.kafka_str,
            "crash",
            "crash",
            "0",
            "3",
            "--expect",
            expect_path.to_str().unwrap(),
            "--positions",
        ],
        LIMIT,
    );
    let got = json(&out);
    assert_eq!(
        got["missing"], 0,
        "acknowledged records lost: {}",
        got["missing"]
    );
    assert_eq!(got["mismatches"], serde_json::json!([]));
    assert_eq!(got["duplicates"], 0);
    for (partition, offset, i) in &acked {
        assert_eq!(
            got["positions"][i.to_string()],
            serde_json::json!([partition, offset]),
            "record {i} moved"
        );
    }
}

#[test]
fn retention_deletes_whole_old_segments() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &["--retention-check-ms", "200"]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(
        c.create_topic(
            "short",
            1,
            &[("segment.bytes", "1048576"), ("retention.bytes", "1048576")]
        ),
        0
    );
    let value = vec![7u8; 100 * 1024];
    for i in 0..40 {
        let r = c.produce("short", 0, batch(&[&value], i, None));
        assert_eq!(r.error_code, 0);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut earliest = 0;
    while Instant::now() < deadline {
        earliest = c.list_offset("short", 0, -2).1;
        // Retention runs every 200 ms, also while the batches were still arriving: wait for
        // the pass that sees all 40.
        if earliest >= 20 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        earliest >= 20,
        "retention kept too much: earliest {earliest}"
    );
    assert_eq!(c.list_offset("short", 0, -1).1, 40);
    // Below the start is out of range; the start itself reads.
    assert_eq!(c.fetch("short", 0, 0, 0, 1).error_code, 1);
    let first = c.fetch("short", 0, earliest, 0, 1);
    assert_eq!(first.error_code, 0);
    assert_eq!(first.log_start_offset, earliest);
    assert!(!first.records.unwrap_or_default().is_empty());
}

#[test]
fn kcat_produces_and_consumes_with_every_codec() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let mut child = Command::new("kcat")
            .args(["-P", "-b", &broker.kafka_str, "-t", "kcat", "-z", codec])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            child.stdin.as_mut().unwrap(),
            format!("{codec}-1\n{codec}-2\n").as_bytes(),
        )
        .unwrap();
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
    }
    let out = common::run_ok(
        Command::new("kcat").args([
            "-C",
            "-b",
            &broker.kafka_str,
            "-t",
            "kcat",
            "-e",
            "-o",
            "beginning",
            "-f",
            "%o %s\n",
        ]),
        LIMIT,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let expected: String = ["none", "gzip", "snappy", "lz4", "zstd"]
        .iter()
        .enumerate()
        .map(|(n, c)| format!("{} {c}-1\n{} {c}-2\n", 2 * n, 2 * n + 1))
        .collect();
    assert_eq!(text, expected);
}

/// A Fetch v12 of one partition from `offset`, up to 40 MiB in one answer, sent but not read.
fn send_big_fetch(c: &mut RawClient, topic: &str, offset: i64) {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::{ApiKey, FetchRequest, RequestKind, TopicName};
    use kafka_protocol::protocol::StrBytes;
    use std::io::Write;
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(40 << 20)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_string(topic.to_string())))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(40 << 20)])]);
    let (_, frame) = c.frame(ApiKey::Fetch, 12, &RequestKind::Fetch(req));
    c.stream.write_all(&frame).unwrap();
}

/// The stalled 120-record answer arrives whole, every record with the bytes it had when the
/// fetch was answered.
fn assert_whole_race_answer(reader: &mut RawClient, len: usize) {
    let (code, got) = read_big_fetch(reader);
    assert_eq!(code, 0);
    assert_eq!(got.len(), 120, "the whole answer arrives");
    for (i, (offset, value)) in got.iter().enumerate() {
        assert_eq!(*offset, i as i64);
        assert!(
            value[..] == race_value(*offset, len)[..],
            "record {offset} differs"
        );
    }
}

/// Reads the answer of [`send_big_fetch`]: the partition's records as (offset, value), every
/// batch's CRC checked by the decoder.
fn read_big_fetch(c: &mut RawClient) -> (i16, Vec<(i64, bytes::Bytes)>) {
    use kafka_protocol::messages::{ApiKey, ResponseKind};
    use kafka_protocol::records::RecordBatchDecoder;
    let (_, resp) = c.read_response(ApiKey::Fetch, 12);
    let ResponseKind::Fetch(mut resp) = resp else {
        panic!("not a fetch answer")
    };
    let p = resp.responses.remove(0).partitions.remove(0);
    let mut records = p.records.unwrap_or_default();
    let sets = RecordBatchDecoder::decode_all(&mut records).unwrap();
    let values = sets
        .into_iter()
        .flat_map(|s| s.records)
        .map(|r| (r.offset, r.value.unwrap_or_default()))
        .collect();
    (p.error_code, values)
}

/// The value of the record at `offset` in the race tests: its offset in every byte-sized slot.
fn race_value(offset: i64, len: usize) -> Vec<u8> {
    let tag = offset.to_be_bytes();
    (0..len).map(|i| tag[i % 8] ^ (i / 8) as u8).collect()
}

fn segment_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".log"))
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_large_fetch_crosses_segment_boundaries_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(
        c.create_topic("wide", 1, &[("segment.bytes", "1048576")]),
        0
    );
    // Batches of every shape the read path distinguishes: tiny, mid-sized (read whole), large
    // (left in the file), several records per batch.
    let mut expected = Vec::new();
    let mut rng = common::Rng::from_env("a_large_fetch_crosses_segment_boundaries_byte_exact");
    let mut offset = 0i64;
    while expected
        .iter()
        .map(|(_, v): &(i64, Vec<u8>)| v.len())
        .sum::<usize>()
        < 12 << 20
    {
        let records = 1 + rng.below(3) as usize;
        let len = match rng.below(3) {
            0 => 1 + rng.below(2000) as usize,
            1 => 1 + rng.below(20_000) as usize,
            _ => 1 + rng.below(300_000) as usize,
        };
        let values: Vec<Vec<u8>> = (0..records)
            .map(|i| race_value(offset + i as i64, len))
            .collect();
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        assert_eq!(
            c.produce("wide", 0, batch(&refs, now_ms(), None))
                .error_code,
            0
        );
        for v in values {
            expected.push((offset, v));
            offset += 1;
        }
    }
    let partition_dir = broker.data_dir.join("topics").join("wide-0").join("log");
    assert!(
        segment_files(&partition_dir) >= 10,
        "the records span many segments"
    );
    // One answer holds everything, from offset 0 and from the middle of a segment.
    for from in [0usize, expected.len() / 3] {
        send_big_fetch(&mut c, "wide", from as i64);
        let (code, got) = read_big_fetch(&mut c);
        assert_eq!(code, 0);
        // Whole batches: the one holding `from` may start before it (clients skip those).
        let got: Vec<_> = got.into_iter().filter(|(o, _)| *o >= from as i64).collect();
        assert_eq!(
            got.len(),
            expected.len() - from,
            "from {from}: whole answer"
        );
        for ((o, v), (eo, ev)) in got.iter().zip(&expected[from..]) {
            assert_eq!(o, eo);
            assert!(v[..] == ev[..], "record {o} differs");
        }
    }
}

/// Now, in ms since the epoch: batches stamped in 1970 would fall to time retention at once.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Produces `count` batches of one `len`-byte record each, values from [`race_value`].
fn produce_race_batches(c: &mut RawClient, topic: &str, from: i64, count: i64, len: usize) {
    for offset in from..from + count {
        let value = race_value(offset, len);
        let r = c.produce(topic, 0, batch(&[&value], now_ms(), None));
        assert_eq!(r.error_code, 0);
        assert_eq!(r.base_offset, offset);
    }
}

#[test]
fn a_fetch_in_flight_keeps_its_bytes_while_retention_deletes_the_segments() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &["--retention-check-ms", "100"]);
    let mut c = RawClient::connect(broker.kafka);
    let len = 200 << 10;
    assert_eq!(
        c.create_topic(
            "race",
            1,
            &[
                ("segment.bytes", "1048576"),
                ("retention.bytes", "31457280")
            ]
        ),
        0
    );
    produce_race_batches(&mut c, "race", 0, 120, len);
    // A client asks for all 24 MiB and does not read: the broker's send stalls once the
    // socket buffers (a few MiB on loopback) are full.
    let mut reader = RawClient::connect(broker.kafka);
    send_big_fetch(&mut reader, "race", 0);
    std::thread::sleep(Duration::from_millis(300));
    // 24 MiB more: retention deletes the oldest segments, which the stalled answer is made of.
    produce_race_batches(&mut c, "race", 120, 120, len);
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.list_offset("race", 0, -2).1 < 60 {
        assert!(Instant::now() < deadline, "retention did not run");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_whole_race_answer(&mut reader, len);
    // The connection still serves.
    assert_eq!(reader.fetch("race", 0, 0, 0, 1).error_code, 1);
}

#[test]
fn a_fetch_in_flight_keeps_its_bytes_while_the_topic_is_deleted_and_recreated() {
    use kafka_protocol::messages::{ApiKey, DeleteTopicsRequest, RequestKind, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    let len = 200 << 10;
    assert_eq!(
        c.create_topic("gone", 1, &[("segment.bytes", "1048576")]),
        0
    );
    produce_race_batches(&mut c, "gone", 0, 120, len);
    let mut reader = RawClient::connect(broker.kafka);
    send_big_fetch(&mut reader, "gone", 0);
    std::thread::sleep(Duration::from_millis(300));
    let req = DeleteTopicsRequest::default()
        .with_topic_names(vec![TopicName(StrBytes::from_static_str("gone"))])
        .with_timeout_ms(30_000);
    match c.call(ApiKey::DeleteTopics, 4, RequestKind::DeleteTopics(req)) {
        kafka_protocol::messages::ResponseKind::DeleteTopics(r) => {
            assert_eq!(r.responses[0].error_code, 0)
        }
        other => panic!("{other:?}"),
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while broker.data_dir.join("topics").join("gone-0").exists() {
        assert!(Instant::now() < deadline, "the partition's files stay");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The same name again, other bytes at the same offsets (and maybe in the same inodes'
    // places on disk).
    assert_eq!(
        c.create_topic("gone", 1, &[("segment.bytes", "1048576")]),
        0
    );
    for offset in 0..40 {
        let r = c.produce("gone", 0, batch(&[&vec![0xEE; len]], now_ms(), None));
        assert_eq!(r.base_offset, offset);
        assert_eq!(r.error_code, 0);
    }
    assert_whole_race_answer(&mut reader, len);
    let fresh = reader.fetch("gone", 0, 0, 0, 1);
    assert_eq!(fresh.error_code, 0);
    assert_eq!(fresh.high_watermark, 40);
}
