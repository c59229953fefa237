//! The `cohort` binary under a real disk quota (decision 0112): its data directory in a btrfs
//! subvolume with a qgroup limit that the test makes, so writes fail with EDQUOT while
//! `statvfs` still shows the filesystem half empty (the reserve never triggers; only the
//! errors can tell). Produce gets KAFKA_STORAGE_ERROR (56) once the quota is used up, reads
//! and OffsetFetch keep answering, one log line says which path kind is full, writes resume by
//! themselves once files under the quota are removed, and everything acknowledged survives
//! SIGKILL and restart byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;
use crate::full_disk;
use crate::quota_fs;

use std::time::{Duration, Instant};

use cluster_support::fetch_offsets;
use common::raw::{batches, RawClient};
use common::Cohort;
use full_disk::{
    assert_reads_back, commit_once, produce_next, read_all, resumes, value, KAFKA_STORAGE_ERROR,
};
use quota_fs::QuotaFs;

const QUOTA: u64 = 48 << 20;

fn free_bytes(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("stat")
        .args(["-f", "-c", "%a %S"])
        .arg(path)
        .output()
        .expect("stat -f");
    let text = String::from_utf8_lossy(&out.stdout);
    let n: Vec<u64> = text
        .split_whitespace()
        .map(|p| p.parse().expect("number"))
        .collect();
    n[0] * n[1]
}

#[test]
fn an_exhausted_quota_refuses_writes_keeps_reads_and_loses_nothing() {
    let Some(fs) = QuotaFs::mount(QUOTA) else {
        return;
    };
    // The subvolume itself is the data directory: the broker's log goes to its parent, outside
    // the quota, so it can say what happened.
    let data_dir = fs.path();
    let mut broker = Cohort::start(&data_dir, &[]);
    let addr = broker.kafka;
    let mut raw = RawClient::connect(addr);
    assert_eq!(raw.create_topic("t", 1, &[]), 0);
    assert_eq!(commit_once(addr, 0), 0);

    // A file under the same quota takes most of it; partition data takes the rest.
    let filler = fs.fill("filler", QUOTA - (12 << 20));
    let mut acked: Vec<(i64, usize)> = Vec::new();
    let refused_code = loop {
        match produce_next(&mut raw, &mut acked) {
            0 => assert!(acked.len() < 2_000, "the quota never ran out"),
            code => break code,
        }
    };
    assert_eq!(refused_code, KAFKA_STORAGE_ERROR);
    let statvfs_free = free_bytes(fs.mount_point());
    eprintln!(
        "{} batches of 64 KiB acknowledged before the quota ran out; statvfs still shows {} MiB free",
        acked.len(),
        statvfs_free >> 20
    );
    // The quota is invisible to statvfs: only EDQUOT could have stopped the writes.
    assert!(
        statvfs_free > 64 << 20,
        "statvfs shows {statvfs_free} bytes free"
    );
    // Refused again, not half-written: the partition keeps exactly what was acknowledged.
    let r = raw.produce("t", 0, batches::batch(&[&value(9_999)], 9_999, None));
    assert_eq!(r.error_code, KAFKA_STORAGE_ERROR);
    let read = read_all(addr, "t");
    assert_eq!(read.len(), acked.len());
    let (code, offsets) = fetch_offsets(addr, "g").unwrap();
    assert_eq!(code, 0);
    assert_eq!(
        offsets,
        vec![("t".to_owned(), 0, 0)],
        "OffsetFetch under quota"
    );
    let (status, body) = broker.http_get("/readyz");
    assert!(status.contains("200"), "{status}\n{body}");
    let log = broker.log();
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("disk full on partition-log"))
            .count(),
        1,
        "{log}"
    );

    // Files under the quota removed: produce and commit resume by themselves.
    std::fs::remove_file(&filler).unwrap();
    fs.sync();
    let freed = Instant::now();
    let produce_resumed = resumes(
        "produce",
        freed,
        Duration::from_secs(15),
        || match produce_next(&mut raw, &mut acked) {
            0 => true,
            code => {
                assert_eq!(code, KAFKA_STORAGE_ERROR);
                false
            }
        },
    );
    let commit_resumed = resumes("commits", freed, Duration::from_secs(15), || {
        commit_once(addr, 1) == 0
    });
    eprintln!(
        "after the quota was freed: produce acknowledged in {produce_resumed:?}, commit in {commit_resumed:?}"
    );
    for _ in 0..10 {
        assert_eq!(produce_next(&mut raw, &mut acked), 0);
    }
    assert!(broker
        .log()
        .lines()
        .any(|l| l.contains("disk space freed on partition-log")));

    // Everything acknowledged survives SIGKILL and a restart, in place, byte for byte.
    broker.kill9();
    let broker = Cohort::start(&data_dir, &[]);
    assert_reads_back(broker.kafka, "t", &acked);
    let (code, offsets) = fetch_offsets(broker.kafka, "g").unwrap();
    assert_eq!(code, 0);
    assert_eq!(offsets, vec![("t".to_owned(), 0, 1)]);
    drop(broker);
}
