//! What the disk-full tests share (`tests/disk_full.rs` on a full tmpfs, `tests/disk_quota.rs`
//! under a btrfs quota): the records they write, reading a partition back whole, one commit,
//! waiting for writes to resume, and the byte-for-byte check after a restart. Included by each
//! with `#[path]`.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::cluster_support::{commit, fetch_records, Conn};
use crate::common::raw::{batches, RawClient};

pub const KAFKA_STORAGE_ERROR: i16 = 56;
/// Each record's size: big enough that a few hundred fill the test filesystems.
pub const VALUE_BYTES: usize = 64 * 1024;

/// The `i`-th record's value: distinct per record, so a misplaced one is caught.
pub fn value(i: usize) -> Vec<u8> {
    (0..VALUE_BYTES)
        .map(|j| (i.wrapping_mul(131).wrapping_add(j) % 251) as u8)
        .collect()
}

/// Every record of partition 0 of `topic`, in offset order: (offset, value).
pub fn read_all(addr: SocketAddr, topic: &str) -> Vec<(i64, Vec<u8>)> {
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

/// Produces the next record (`value(acked.len())`) to `t`-0; on success records it in `acked`
/// as (offset, i). The error code.
pub fn produce_next(raw: &mut RawClient, acked: &mut Vec<(i64, usize)>) -> i16 {
    let i = acked.len();
    let r = raw.produce("t", 0, batches::batch(&[&value(i)], i as i64, None));
    if r.error_code == 0 {
        acked.push((r.base_offset, i));
    }
    r.error_code
}

/// Group `g` commits `offset` for `t`-0 on a fresh connection: the error code.
pub fn commit_once(addr: SocketAddr, offset: i64) -> i16 {
    let mut conn = Conn::open(addr, Duration::from_secs(10)).unwrap();
    commit(&mut conn, "g", "t", 0, offset).unwrap()
}

/// Retries `attempt` every 10–20 ms until it succeeds, for at most `within` after `since`:
/// how long after `since` it first succeeded.
pub fn resumes(
    what: &str,
    since: Instant,
    within: Duration,
    mut attempt: impl FnMut() -> bool,
) -> Duration {
    loop {
        if attempt() {
            return since.elapsed();
        }
        assert!(since.elapsed() < within, "{what} never resumed");
        std::thread::sleep(Duration::from_millis(15));
    }
}

/// Every acknowledged record `(offset, i)` reads back at its offset with `value(i)`, and nothing
/// else is there.
pub fn assert_reads_back(addr: SocketAddr, topic: &str, acked: &[(i64, usize)]) {
    let read = read_all(addr, topic);
    assert_eq!(read.len(), acked.len(), "records after restart");
    for ((offset, v), (acked_offset, i)) in read.iter().zip(acked) {
        assert_eq!(offset, acked_offset);
        assert!(*v == value(*i), "record {i} at offset {offset} differs");
    }
}
