//! The `cohort` binary on a real full disk (decision 0112): its data directory on a tmpfs with
//! `size=` that the test mounts. Produce gets KAFKA_STORAGE_ERROR (56) — from a raw client and
//! from librdkafka — once partition data would eat into `--disk-reserve-bytes`; OffsetCommit
//! still works inside the reserve and gets COORDINATOR_NOT_AVAILABLE (15) below a quarter of
//! it; Fetch, Metadata, OffsetFetch and `/readyz` keep answering; `cohort_disk_full` says which
//! path kind is full; one log line when it fills and one when it resumes; writes resume by
//! themselves once space is freed; everything acknowledged survives SIGKILL and restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster_support;
mod common;
#[path = "../compaction/tests/support/tmpfs.rs"]
mod tmpfs;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cluster_support::{commit, fetch_offsets, fetch_records, metadata, Conn};
use common::raw::{batches, RawClient};
use common::Cohort;
use tmpfs::Tmpfs;

const KAFKA_STORAGE_ERROR: i16 = 56;
const COORDINATOR_NOT_AVAILABLE: i16 = 15;
const VALUE_BYTES: usize = 64 * 1024;
const RESERVE: u64 = 4 << 20;

fn value(i: usize) -> Vec<u8> {
    (0..VALUE_BYTES)
        .map(|j| (i.wrapping_mul(131).wrapping_add(j) % 251) as u8)
        .collect()
}

/// Every record of the partition, in offset order: (offset, value).
fn read_all(addr: SocketAddr, topic: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let f = fetch_records(addr, topic, 0, at).unwrap();
        assert_eq!(f.error_code, 0, "fetch at {at}");
        if f.records.is_empty() {
            return out;
        }
        for (offset, _, v) in f.records {
            at = offset + 1;
            out.push((offset, v));
        }
    }
}

fn gauge(broker: &Cohort, kind: &str) -> f64 {
    let metrics = common::metrics::scrape(broker);
    *metrics
        .get(&format!("cohort_disk_full{{path_kind=\"{kind}\"}}"))
        .unwrap_or_else(|| panic!("no cohort_disk_full for {kind}"))
}

fn count_lines(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
}

fn commit_once(addr: SocketAddr, offset: i64) -> i16 {
    let mut conn = Conn::open(addr, Duration::from_secs(10)).unwrap();
    commit(&mut conn, "g", "t", 0, offset).unwrap()
}

#[test]
fn a_full_disk_refuses_writes_keeps_reads_and_loses_nothing() {
    let Some(fs) = Tmpfs::mount(32 << 20) else {
        return;
    };
    let data_dir = fs.path().join("data");
    let reserve = RESERVE.to_string();
    let flags = ["--disk-reserve-bytes", reserve.as_str()];
    let mut broker = Cohort::start(&data_dir, &flags);
    let addr = broker.kafka;
    let mut raw = RawClient::connect(addr);
    assert_eq!(raw.create_topic("t", 1, &[]), 0);
    assert_eq!(commit_once(addr, 0), 0);
    assert_eq!(gauge(&broker, "partition-log"), 0.0);

    // Partition data fills the disk down to the reserve.
    let filler = fs.fill("filler", 10 << 20);
    let mut acked: Vec<(i64, usize)> = Vec::new();
    let refused_code = loop {
        let i = acked.len();
        let r = raw.produce("t", 0, batches::batch(&[&value(i)], i as i64, None));
        if r.error_code != 0 {
            break r.error_code;
        }
        acked.push((r.base_offset, i));
        assert!(acked.len() < 1_000, "the disk never filled");
    };
    assert_eq!(refused_code, KAFKA_STORAGE_ERROR);
    let free = fs.free_bytes();
    assert!(
        free >= RESERVE,
        "partition data ate the reserve: {free} bytes free"
    );
    eprintln!(
        "{} batches of 64 KiB acknowledged before the reserve; {free} bytes free",
        acked.len()
    );
    assert_eq!(gauge(&broker, "partition-log"), 1.0);

    // A real client sees the same code.
    let out = common::python_script(
        "disk_full_produce.py",
        &[&broker.kafka_str, "t", "5", "65536"],
        Duration::from_secs(60),
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["acked"], 0, "{report}");
    assert_eq!(report["errors"]["KAFKA_STORAGE_ERROR"], 5, "{report}");

    // Inside the reserve the replicated state still records: commits go on.
    assert_eq!(commit_once(addr, 1), 0);

    // Reads go on; the node is ready; one log line says what is full.
    let (status, body) = broker.http_get("/readyz");
    assert!(status.contains("200"), "{status}\n{body}");
    let read = read_all(addr, "t");
    assert_eq!(read.len(), acked.len());
    let m = metadata(addr, &["t"]).unwrap();
    assert_eq!(m.topics[0].error_code, 0);
    assert_eq!(count_lines(&broker.log(), "disk full on partition-log"), 1);

    // Below a quarter of the reserve, new replicated writes are refused (retriable).
    let filler2 = fs.fill("filler2", 512 << 10);
    let code = commit_once(addr, 2);
    assert_eq!(code, COORDINATOR_NOT_AVAILABLE);
    assert_eq!(gauge(&broker, "raft-log"), 1.0);
    let (code, offsets) = fetch_offsets(addr, "g").unwrap();
    assert_eq!(code, 0);
    assert_eq!(
        offsets,
        vec![("t".to_owned(), 0, 1)],
        "OffsetFetch while full"
    );
    let (status, _) = broker.http_get("/readyz");
    assert!(status.contains("200"), "{status}");
    assert_eq!(read_all(addr, "t").len(), acked.len());

    // Space freed: writes resume by themselves; one log line each.
    std::fs::remove_file(&filler2).unwrap();
    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    let first = loop {
        let i = acked.len();
        let r = raw.produce("t", 0, batches::batch(&[&value(i)], i as i64, None));
        if r.error_code == 0 {
            acked.push((r.base_offset, i));
            break freed.elapsed();
        }
        assert_eq!(r.error_code, KAFKA_STORAGE_ERROR);
        assert!(
            freed.elapsed() < Duration::from_secs(10),
            "produce never resumed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let commit_resumed = loop {
        if commit_once(addr, 3) == 0 {
            break freed.elapsed();
        }
        assert!(
            freed.elapsed() < Duration::from_secs(10),
            "commits never resumed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!(
        "after space was freed: produce acknowledged in {first:?}, commit in {commit_resumed:?}"
    );
    for _ in 0..10 {
        let i = acked.len();
        let r = raw.produce("t", 0, batches::batch(&[&value(i)], i as i64, None));
        assert_eq!(r.error_code, 0);
        acked.push((r.base_offset, i));
    }
    common::metrics::scrape_until(&broker, Duration::from_secs(5), "disk gauges at 0", |m| {
        m.get("cohort_disk_full{path_kind=\"partition-log\"}") == Some(&0.0)
            && m.get("cohort_disk_full{path_kind=\"raft-log\"}") == Some(&0.0)
    });
    let log = broker.log();
    assert_eq!(count_lines(&log, "disk full on partition-log"), 1, "{log}");
    assert_eq!(
        count_lines(&log, "disk space freed on partition-log"),
        1,
        "{log}"
    );
    assert_eq!(count_lines(&log, "disk full on raft-log"), 1, "{log}");
    assert_eq!(
        count_lines(&log, "disk space freed on raft-log"),
        1,
        "{log}"
    );

    // Everything acknowledged survives SIGKILL and a restart, in place, byte for byte.
    broker.kill9();
    let broker = Cohort::start(&data_dir, &flags);
    let read = read_all(broker.kafka, "t");
    assert_eq!(read.len(), acked.len(), "records after restart");
    for ((offset, v), (acked_offset, i)) in read.iter().zip(&acked) {
        assert_eq!(offset, acked_offset);
        assert!(*v == value(*i), "record {i} at offset {offset} differs");
    }
    let (code, offsets) = fetch_offsets(broker.kafka, "g").unwrap();
    assert_eq!(code, 0);
    assert_eq!(offsets, vec![("t".to_owned(), 0, 3)]);
    drop(broker);
}
