//! The key-value demo application's own rules (limits, rejected input, snapshot round trip).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::kv;

use bytes::Bytes;
use kv::{KvApp, KvCommand, KvReply, KV_VALUE_BYTES_MAX};
use raft_meta::app::Application;
use raft_meta::types::LogIndex;

fn put(k: &str, v: &str) -> KvCommand {
    KvCommand::Put {
        key: Bytes::from(k.to_owned()),
        value: Bytes::from(v.to_owned()),
    }
}

#[test]
fn put_then_delete_reports_previous_values() {
    let mut app = KvApp::new();
    let r1 = KvReply::decode(&app.apply(LogIndex(1), put("a", "1"))).unwrap();
    assert_eq!(r1, KvReply::Done { previous: None });
    let r2 = KvReply::decode(&app.apply(LogIndex(2), put("a", "2"))).unwrap();
    assert_eq!(
        r2,
        KvReply::Done {
            previous: Some(Bytes::from_static(b"1"))
        }
    );
    let del = KvCommand::Delete {
        key: Bytes::from_static(b"a"),
    };
    let r3 = KvReply::decode(&app.apply(LogIndex(3), del)).unwrap();
    assert_eq!(
        r3,
        KvReply::Done {
            previous: Some(Bytes::from_static(b"2"))
        }
    );
    assert!(app.is_empty());
}

/// Garbage no longer reaches `apply`: it fails to decode, which halts a node (fail closed).
#[test]
fn garbage_command_does_not_decode() {
    assert!(KvApp::decode(&[0xff, 0xff, 0xff]).is_err());
    assert_eq!(KvApp::decode(&put("k", "v").encode()), Ok(put("k", "v")));
}

#[test]
fn oversized_value_is_rejected() {
    let mut app = KvApp::new();
    let big = KvCommand::Put {
        key: Bytes::from_static(b"k"),
        value: Bytes::from(vec![0u8; KV_VALUE_BYTES_MAX + 1]),
    };
    let reply = KvReply::decode(&app.apply(LogIndex(1), big)).unwrap();
    assert!(matches!(reply, KvReply::Rejected { .. }));
    assert!(app.is_empty());
}

#[test]
fn restore_round_trips_snapshot_records() {
    let mut app = KvApp::new();
    for i in 0..10 {
        app.apply(LogIndex(i), put(&format!("k{i}"), &format!("v{i}")));
    }
    let mut other = KvApp::new();
    other.restore(app.snapshot_records()).unwrap();
    assert_eq!(
        other.iter().collect::<Vec<_>>(),
        app.iter().collect::<Vec<_>>()
    );
    assert_eq!(other.len(), 10);
}
