//! The `cohort` binary on a real full disk (decision 0112): its data directory on a tmpfs with
//! `size=` that the test mounts. Produce gets KAFKA_STORAGE_ERROR (56) — from a raw client and
//! from librdkafka — once partition data would eat into `--disk-reserve-bytes`; OffsetCommit
//! still works inside the reserve and gets COORDINATOR_NOT_AVAILABLE (15) below a quarter of
//! it; Fetch, Metadata, OffsetFetch and `/readyz` keep answering; `cohort_disk_full` says which
//! path kind is full; one log line when it fills and one when it resumes; writes resume by
//! themselves once space is freed; everything acknowledged survives SIGKILL and restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;
use crate::full_disk;
use crate::tmpfs;

use std::time::{Duration, Instant};

use cluster_support::{fetch_offsets, metadata};
use common::raw::RawClient;
use common::Cohort;
use full_disk::{
    assert_reads_back, commit_once, produce_next, read_all, resumes, KAFKA_STORAGE_ERROR,
};
use tmpfs::Tmpfs;

const COORDINATOR_NOT_AVAILABLE: i16 = 15;
const RESERVE: u64 = 4 << 20;

fn gauge(broker: &Cohort, kind: &str) -> f64 {
    let metrics = common::metrics::scrape(broker);
    *metrics
        .get(&format!("cohort_disk_full{{path_kind=\"{kind}\"}}"))
        .unwrap_or_else(|| panic!("no cohort_disk_full for {kind}"))
}

fn count_lines(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
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
        match produce_next(&mut raw, &mut acked) {
            0 => assert!(acked.len() < 1_000, "the disk never filled"),
            code => break code,
        }
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
    let first = resumes(
        "produce",
        freed,
        Duration::from_secs(10),
        || match produce_next(&mut raw, &mut acked) {
            0 => true,
            code => {
                assert_eq!(code, KAFKA_STORAGE_ERROR);
                false
            }
        },
    );
    let commit_resumed = resumes("commits", freed, Duration::from_secs(10), || {
        commit_once(addr, 3) == 0
    });
    eprintln!(
        "after space was freed: produce acknowledged in {first:?}, commit in {commit_resumed:?}"
    );
    for _ in 0..10 {
        assert_eq!(produce_next(&mut raw, &mut acked), 0);
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
    assert_reads_back(broker.kafka, "t", &acked);
    let (code, offsets) = fetch_offsets(broker.kafka, "g").unwrap();
    assert_eq!(code, 0);
    assert_eq!(offsets, vec![("t".to_owned(), 0, 3)]);
    drop(broker);
}
