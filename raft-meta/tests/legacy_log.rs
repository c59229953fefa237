//! A node reads Raft directories written by earlier commits: the format before tagged payloads
//! (commit c076aca, `tests/testdata/legacy-c076aca/`) and the tagged format as main wrote it
//! at 6744c56 (`tests/testdata/tagged-6744c56/`): snapshots, log tail, store state and every
//! payload, each restoring exactly the state the workload gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::workload;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use raft_meta::app::Application;
use raft_meta::cohort_app::{AppReply, CohortApp, Envelope};
use raft_meta::{Bootstrap, LogIndex, MetaNode, NodeConfig, RaftStore, Tuning};

/// Index of the last entry the fixture's log holds.
const FIXTURE_LAST_INDEX: u64 = 25;

/// The fixtures, oldest first.
const FIXTURES: [&str; 2] = ["legacy-c076aca", "tagged-6744c56"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn assert_same_state(got: &CohortApp, want: &CohortApp) {
    // The workload leaves groups, offsets and topics behind: the comparison is not of empties.
    assert!(want.coordinator().group_count() > 0 && want.coordinator().offset_count() > 0);
    assert_eq!(want.topics().len(), 2);
    assert!(
        got.coordinator() == want.coordinator(),
        "coordinator state differs from the workload's"
    );
    let got_topics: Vec<_> = got.topics().iter().map(|t| (**t).clone()).collect();
    let want_topics: Vec<_> = want.topics().iter().map(|t| (**t).clone()).collect();
    assert_eq!(got_topics, want_topics);
    assert_eq!(got.cluster(), want.cluster());
}

async fn restart_from_fixture(name: &str, store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let raft_dir = tmp.path().join("raft");
    copy_dir(&fixture(name).join(store.name()), &raft_dir);
    let config = NodeConfig {
        node_id: 1,
        listen_addr: "127.0.0.1:0".to_owned(),
        advertised_raft_addr: None,
        kafka_addr: "127.0.0.1:19092".to_owned(),
        raft_dir,
        store,
        bootstrap: Bootstrap::Single,
        tuning: Tuning::default(),
        peer_auth: raft_meta::network::PeerAuth::Open,
    };
    let node = MetaNode::start(config, workload::new_app()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while node.status().applied_index < Some(FIXTURE_LAST_INDEX) {
        assert!(
            Instant::now() < deadline,
            "{name}: fixture log not applied: {}",
            node.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let want = workload::applied_state();
    node.read_local(|applied| assert_same_state(&applied.app, &want));
    node.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segments_store_of_the_previous_format_restores_the_same_state() {
    restart_from_fixture("legacy-c076aca", RaftStore::Segments).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segments_store_of_the_tagged_format_restores_the_same_state() {
    restart_from_fixture("tagged-6744c56", RaftStore::Segments).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_store_of_the_tagged_format_restores_the_same_state() {
    restart_from_fixture("tagged-6744c56", RaftStore::Sled).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_store_of_the_previous_format_restores_the_same_state() {
    restart_from_fixture("legacy-c076aca", RaftStore::Sled).await;
}

#[test]
fn every_payload_of_every_earlier_format_decodes_to_what_was_written() {
    for name in FIXTURES {
        payloads_decode(name);
    }
}

fn payloads_decode(name: &str) {
    let raw = std::fs::read_to_string(fixture(name).join("payloads.txt")).unwrap();
    let mut envelopes = Vec::new();
    let mut replies = Vec::new();
    for line in raw.lines() {
        let (kind, hex) = line.split_once(' ').unwrap();
        match kind {
            "envelope" => envelopes.push(Envelope::decode(&unhex(hex)).unwrap()),
            "reply" => replies.push(AppReply::decode(&unhex(hex)).unwrap()),
            other => panic!("unknown line kind {other}"),
        }
    }
    let w = workload::build();
    let want: Vec<Envelope> = w.all().cloned().collect();
    assert_eq!(envelopes, want, "{name}");

    let mut app = workload::new_app();
    let want_replies: Vec<AppReply> = want
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let command = CohortApp::decode(&e.encode()).unwrap();
            AppReply::decode(&app.apply(LogIndex(i as u64 + 1), command)).unwrap()
        })
        .collect();
    assert_eq!(replies, want_replies, "{name}");
}
