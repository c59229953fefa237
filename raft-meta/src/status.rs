//! What `cohort cluster status` prints and what the binary needs to know about leadership.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{NodeId, NodeInfo};

/// The current leader as the binary needs it: who, and where Kafka clients should go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderInfo {
    pub node_id: NodeId,
    pub info: NodeInfo,
}

/// Why this node stopped applying the log: the first committed entry (or the snapshot) it
/// could not apply, and what was wrong with it. Once set, the node serves nothing from its
/// applied state; an operator upgrades the binary (or repairs the entry) and restarts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyHalted {
    /// Log index of the entry, or the last index a refused snapshot covers.
    pub index: u64,
    pub reason: String,
}

impl fmt::Display for ApplyHalted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "apply halted at log index {}: {}",
            self.index, self.reason
        )
    }
}

/// A node's view of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterStatus {
    pub node_id: NodeId,
    /// leader, follower, candidate, learner or shutdown.
    pub role: String,
    pub term: u64,
    pub leader: Option<LeaderInfo>,
    pub voters: Vec<(NodeId, NodeInfo)>,
    pub learners: Vec<(NodeId, NodeInfo)>,
    pub last_log_index: Option<u64>,
    pub commit_index: Option<u64>,
    pub applied_index: Option<u64>,
    pub snapshot_index: Option<u64>,
    pub purged_index: Option<u64>,
    /// Set once the node stopped applying (see [`ApplyHalted`]).
    pub halted: Option<ApplyHalted>,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

impl fmt::Display for ClusterStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "node      {} ({})", self.node_id, self.role)?;
        match &self.leader {
            Some(l) => writeln!(f, "leader    {} ({})", l.node_id, l.info)?,
            None => writeln!(f, "leader    none")?,
        }
        writeln!(f, "term      {}", self.term)?;
        for (id, info) in &self.voters {
            writeln!(f, "voter     {id} ({info})")?;
        }
        for (id, info) in &self.learners {
            writeln!(f, "learner   {id} ({info})")?;
        }
        writeln!(f, "last_log  {}", opt(self.last_log_index))?;
        writeln!(f, "commit    {}", opt(self.commit_index))?;
        writeln!(f, "applied   {}", opt(self.applied_index))?;
        writeln!(f, "snapshot  {}", opt(self.snapshot_index))?;
        write!(f, "purged    {}", opt(self.purged_index))?;
        if let Some(h) = &self.halted {
            write!(f, "\nHALTED    {h}")?;
        }
        Ok(())
    }
}
