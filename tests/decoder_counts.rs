//! Forged counts and lengths over a real socket: for several APIs and at every nesting level,
//! an array count (or a bytes length) far beyond what the frame holds gets a decode error and
//! a closed connection — never an allocation sized from the wire. Other connections keep being
//! served, the broker stays up and its peak memory stays small.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::time::Duration;

use common::raw::RawClient;
use common::Cohort;

const JOIN_GROUP: i16 = 11;
const METADATA: i16 = 3;
const OFFSET_COMMIT: i16 = 8;
const PRODUCE: i16 = 0;

/// The body of a request after its header fields, built field by field.
#[derive(Default, Clone)]
struct Body(Vec<u8>);

impl Body {
    fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// An unsigned varint (compact lengths and counts are n + 1).
    fn uvarint(mut self, mut v: u32) -> Self {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    /// A non-compact string.
    fn string(self, s: &str) -> Self {
        let mut b = self.i16(s.len() as i16);
        b.0.extend_from_slice(s.as_bytes());
        b
    }
    /// A compact string.
    fn compact_string(self, s: &str) -> Self {
        let mut b = self.uvarint(s.len() as u32 + 1);
        b.0.extend_from_slice(s.as_bytes());
        b
    }
    /// A few bytes of padding, so "count > bytes left" is the only thing wrong.
    fn tail(mut self) -> Self {
        self.0.extend_from_slice(&[0; 16]);
        self
    }
}

/// A whole frame: length prefix, header (v1, or v2 with empty tagged fields when `flexible`),
/// body.
fn frame(api_key: i16, version: i16, flexible: bool, body: &Body) -> Vec<u8> {
    let mut h = Body::default()
        .i16(api_key)
        .i16(version)
        .i32(7)
        .string("forged");
    if flexible {
        h = h.uvarint(0);
    }
    let mut out = ((h.0.len() + body.0.len()) as i32).to_be_bytes().to_vec();
    out.extend(h.0);
    out.extend_from_slice(&body.0);
    out
}

/// The broker answered with a response frame (any error code) or closed the connection.
fn answered_or_closed(broker: &Cohort, bytes: &[u8], what: &str) -> &'static str {
    let mut c = RawClient::connect(broker.kafka);
    c.stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    c.stream.write_all(bytes).unwrap();
    let mut size = [0u8; 4];
    match c.stream.read(&mut size) {
        Ok(0) => "closed",
        Ok(_) => {
            let mut rest = Vec::new();
            let _ = c.stream.read_to_end(&mut rest);
            "answered"
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "closed",
        Err(e) => panic!("{what}: neither an answer nor a close: {e}"),
    }
}

/// Peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[test]
fn forged_counts_in_metadata_offset_commit_join_group_and_produce_never_allocate_from_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut witness = RawClient::connect(broker.kafka);
    assert_eq!(witness.api_versions().error_code, 0);

    const HUGE: i32 = i32::MAX;
    // Compact counts are n + 1: u32::MAX announces 4 294 967 294 elements.
    const HUGE_COMPACT: u32 = u32::MAX;

    let offset_commit_v2 = Body::default().string("g").i32(1).string("m").i64(-1);
    let offset_commit_v8 = Body::default()
        .compact_string("g")
        .i32(1)
        .compact_string("m")
        .uvarint(0); // group instance id: null
    let join_v5 = Body::default()
        .string("g")
        .i32(10_000)
        .i32(10_000)
        .string("")
        .i16(-1) // group instance id: null
        .string("consumer");
    let join_v6 = Body::default()
        .compact_string("g")
        .i32(10_000)
        .i32(10_000)
        .compact_string("")
        .uvarint(0)
        .compact_string("consumer");
    let produce_v3 = Body::default().i16(-1).i16(1).i32(1_000);
    let produce_v9 = Body::default().uvarint(0).i16(1).i32(1_000);

    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "Metadata v1: topics",
            frame(METADATA, 1, false, &Body::default().i32(HUGE).tail()),
        ),
        (
            "Metadata v9: topics (compact)",
            frame(
                METADATA,
                9,
                true,
                &Body::default().uvarint(HUGE_COMPACT).tail(),
            ),
        ),
        (
            "OffsetCommit v2: topics",
            frame(
                OFFSET_COMMIT,
                2,
                false,
                &offset_commit_v2.clone().i32(HUGE).tail(),
            ),
        ),
        (
            "OffsetCommit v2: partitions of a topic",
            frame(
                OFFSET_COMMIT,
                2,
                false,
                &offset_commit_v2.clone().i32(1).string("t").i32(HUGE).tail(),
            ),
        ),
        (
            "OffsetCommit v8: topics (compact)",
            frame(
                OFFSET_COMMIT,
                8,
                true,
                &offset_commit_v8.clone().uvarint(HUGE_COMPACT).tail(),
            ),
        ),
        (
            "OffsetCommit v8: partitions of a topic (compact)",
            frame(
                OFFSET_COMMIT,
                8,
                true,
                &offset_commit_v8
                    .clone()
                    .uvarint(2)
                    .compact_string("t")
                    .uvarint(HUGE_COMPACT)
                    .tail(),
            ),
        ),
        (
            "JoinGroup v5: protocols",
            frame(JOIN_GROUP, 5, false, &join_v5.clone().i32(HUGE).tail()),
        ),
        (
            "JoinGroup v5: a protocol's metadata bytes",
            frame(
                JOIN_GROUP,
                5,
                false,
                &join_v5.clone().i32(1).string("range").i32(HUGE).tail(),
            ),
        ),
        (
            "JoinGroup v6: protocols (compact)",
            frame(
                JOIN_GROUP,
                6,
                true,
                &join_v6.clone().uvarint(HUGE_COMPACT).tail(),
            ),
        ),
        (
            "JoinGroup v6: a protocol's metadata bytes (compact)",
            frame(
                JOIN_GROUP,
                6,
                true,
                &join_v6
                    .clone()
                    .uvarint(2)
                    .compact_string("range")
                    .uvarint(HUGE_COMPACT)
                    .tail(),
            ),
        ),
        (
            "Produce v3: topics",
            frame(PRODUCE, 3, false, &produce_v3.clone().i32(HUGE).tail()),
        ),
        (
            "Produce v3: partitions of a topic",
            frame(
                PRODUCE,
                3,
                false,
                &produce_v3.clone().i32(1).string("t").i32(HUGE).tail(),
            ),
        ),
        (
            "Produce v3: records length",
            frame(
                PRODUCE,
                3,
                false,
                &produce_v3
                    .clone()
                    .i32(1)
                    .string("t")
                    .i32(1)
                    .i32(0)
                    .i32(HUGE)
                    .tail(),
            ),
        ),
        (
            "Produce v9: topics (compact)",
            frame(
                PRODUCE,
                9,
                true,
                &produce_v9.clone().uvarint(HUGE_COMPACT).tail(),
            ),
        ),
        (
            "Produce v9: records length (compact)",
            frame(
                PRODUCE,
                9,
                true,
                &produce_v9
                    .clone()
                    .uvarint(2)
                    .compact_string("t")
                    .uvarint(2)
                    .i32(0)
                    .uvarint(HUGE_COMPACT)
                    .tail(),
            ),
        ),
        ("a flexible header announcing u32::MAX tagged fields", {
            let mut f = frame(METADATA, 9, false, &Body::default());
            f.extend(Body::default().uvarint(HUGE_COMPACT).tail().0);
            let len = (f.len() - 4) as i32;
            f[..4].copy_from_slice(&len.to_be_bytes());
            f
        }),
    ];
    for (what, bytes) in &cases {
        let outcome = answered_or_closed(&broker, bytes, what);
        assert_eq!(outcome, "closed", "{what}: a forged count was not refused");
        assert!(
            broker.is_running(),
            "{what}: the broker died\n{}",
            broker.log()
        );
        assert_eq!(
            witness.api_versions().error_code,
            0,
            "{what}: the witness connection stopped"
        );
    }
    let bad = broker
        .log()
        .lines()
        .filter(|l| l.contains("closing connection: bad request"))
        .count();
    assert_eq!(bad, cases.len(), "one log line per refused request");
    // Nothing was sized from a count: the broker's peak memory is what a small broker uses.
    let peak_mib = peak_rss_kib(broker.pid()) / 1024;
    eprintln!("broker peak RSS: {peak_mib} MiB");
    assert!(peak_mib < 512, "peak RSS {peak_mib} MiB");
}
