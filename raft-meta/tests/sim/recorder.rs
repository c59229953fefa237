//! The application each simulated node runs: the real `CohortApp`, wrapped so every command it
//! applies is reported to the checker (position and hash) and every offset commit is checked
//! for a backwards move. The wrapper changes nothing the application decides or replies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use coordinator::{PartitionIndex, WriteCommand};
use raft_meta::app::{Application, Record, RestoreError, Undecodable};
use raft_meta::cohort_app::{Body, CohortApp, Envelope};
use raft_meta::{LogIndex, NodeId};

use super::checker::{hash_of, Checker};

/// The metadata a workload admin reset carries: the only commit allowed to move an offset back.
pub const ADMIN_RESET: &str = "admin-reset";

pub struct Recorder {
    node: NodeId,
    pub app: CohortApp,
    checker: Checker,
    /// False once this incarnation crashed: what its leftover tasks still apply is not the
    /// cluster's history any more.
    alive: Arc<AtomicBool>,
    last: Option<(u64, u32)>,
}

impl Recorder {
    pub fn new(node: NodeId, app: CohortApp, checker: Checker, alive: Arc<AtomicBool>) -> Self {
        Self {
            node,
            app,
            checker,
            alive,
            last: None,
        }
    }
}

/// (group, topic, partition, offset, is an admin reset) of each partition a commit names.
fn commits(envelope: &Envelope) -> Vec<(coordinator::GroupId, String, PartitionIndex, i64, bool)> {
    let Body::Group(WriteCommand::CommitOffsets(c)) = &envelope.body else {
        return Vec::new();
    };
    c.topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| {
                (
                    c.group_id.clone(),
                    t.name.as_str().to_owned(),
                    p.partition,
                    p.offset.0,
                    p.metadata.as_deref() == Some(ADMIN_RESET),
                )
            })
        })
        .collect()
}

impl Application for Recorder {
    type Command = (u64, Envelope);

    fn admit(command: &[u8]) -> Result<(), Undecodable> {
        CohortApp::admit(command)
    }

    fn decode(command: &[u8]) -> Result<Self::Command, Undecodable> {
        Ok((hash_of(command), CohortApp::decode(command)?))
    }

    fn apply(&mut self, index: LogIndex, (hash, envelope): Self::Command) -> Bytes {
        let at = match self.last {
            Some((i, pos)) if i == index.0 => (i, pos + 1),
            _ => (index.0, 0),
        };
        let alive = self.alive.load(Ordering::Relaxed);
        if alive {
            if let Some(last) = self.last {
                if at <= last {
                    self.checker.violation(format!(
                        "node {} applied {at:?} after {last:?}: out of log order",
                        self.node
                    ));
                }
            }
            self.checker.applied(self.node, at, hash);
        }
        self.last = Some(at);
        let touched = commits(&envelope);
        let before: Vec<Option<i64>> = touched
            .iter()
            .map(|(g, t, p, _, _)| {
                self.app
                    .coordinator()
                    .committed_offset(g, t, *p)
                    .map(|v| v.offset.0)
            })
            .collect();
        let reply = self.app.apply(index, envelope);
        if alive {
            for ((g, t, p, _, reset), before) in touched.iter().zip(before) {
                let after = self
                    .app
                    .coordinator()
                    .committed_offset(g, t, *p)
                    .map(|v| v.offset.0);
                if let (Some(b), Some(a)) = (before, after) {
                    if a < b && !reset {
                        self.checker.violation(format!(
                            "node {}: offset of {g:?} {t}-{} moved back from {b} to {a} at \
                             index {} without an admin reset",
                            self.node, p.0, index.0
                        ));
                    }
                }
            }
        }
        reply
    }

    fn snapshot_records(&self) -> Vec<Record> {
        self.app.snapshot_records()
    }

    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError> {
        self.last = None;
        self.app.restore(records)
    }
}
