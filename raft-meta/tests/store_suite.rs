//! openraft's storage conformance suite on every log store, paired with our state machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::kv;

use kv::KvApp;
use openraft::testing::{StoreBuilder, Suite};
use raft_meta::store::{LogStore, RaftStore, StoreProbe};
use raft_meta::types::{StorageError, TypeConfig};
use raft_meta::StateMachine;
use tempfile::TempDir;

struct Builder(RaftStore);

impl StoreBuilder<TypeConfig, LogStore, StateMachine<KvApp>, TempDir> for Builder {
    async fn build(&self) -> Result<(TempDir, LogStore, StateMachine<KvApp>), StorageError> {
        let dir = tempfile::tempdir().unwrap();
        let log = LogStore::open(self.0, &dir.path().join("log"), StoreProbe::default()).unwrap();
        let sm = StateMachine::open(&dir.path().join("snapshots"), KvApp::new(), u64::MAX).unwrap();
        Ok((dir, log, sm))
    }
}

#[test]
fn sled_store_passes_openraft_suite() {
    Suite::test_all(Builder(RaftStore::Sled)).unwrap();
}

#[test]
fn segment_store_passes_openraft_suite() {
    Suite::test_all(Builder(RaftStore::Segments)).unwrap();
}
