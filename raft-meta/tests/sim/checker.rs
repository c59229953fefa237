//! The invariants, checked as the simulation runs:
//!
//! * election safety, in the form openraft gives it: Cohort runs openraft 0.9 in its default
//!   "advanced" mode, where a leader id is `(term, node)`, totally ordered, and one term may
//!   elect more than one leader, of which only the last elected can commit (openraft's
//!   docs/data/leader_id.md). The simulation does see two nodes leading term 1 at once (all
//!   three initialize and campaign together), so the per-term rule is checked where it must
//!   hold: at most one leader per term commits an entry of its own (`leader`: a leader whose
//!   applied log id carries its own leader id has committed in its term);
//! * leader completeness: a newly elected leader holds every commit acknowledged before its
//!   election (`leader`: acknowledgements polled before the step that first sees it lead;
//!   leaderships a restarted node restores from its vote are exempt, as they were elected
//!   before the crash and cannot commit once a newer leader exists);
//! * every node applies the same command at the same log position (`applied`: the first
//!   application of a position fixes it, every later one, on any node and after any restart,
//!   must match), and in increasing log order (`Recorder`);
//! * an acknowledged commit is never lost (`acknowledged`: the acknowledged command must be the
//!   one fixed at its position; a different one applied there later is a lost commit);
//! * a committed offset moves backwards only by an admin reset (`Recorder`, per apply).
//!
//! Every event also feeds a running trace hash, which is what "the same run" is compared by.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use raft_meta::NodeId;

/// A log position: the Raft index and the command's place in its entry.
pub type Position = (u64, u32);
/// openraft's leader id in its default mode: (term, node), ordered by term, then node.
pub type LeaderId = (u64, NodeId);

#[derive(Default)]
struct CheckState {
    /// Position → (command hash, node that applied it first).
    fixed: BTreeMap<Position, (u64, NodeId)>,
    acknowledged: BTreeMap<Position, u64>,
    /// Highest acknowledged index so far, and as of the start of the current step.
    acknowledged_max: u64,
    acknowledged_before_step: u64,
    /// Every leader id seen leading.
    leaders: BTreeMap<LeaderId, ()>,
    /// The node that committed an entry of its own leadership, per term.
    committers: BTreeMap<u64, NodeId>,
    violations: Vec<String>,
    trace: u64,
}

#[derive(Clone, Default)]
pub struct Checker(Arc<Mutex<CheckState>>);

pub fn hash_of(value: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

impl Checker {
    fn state(&self) -> MutexGuard<'_, CheckState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn trace(&self, event: impl Hash) {
        let mut s = self.state();
        s.trace = hash_of((s.trace, event));
    }

    pub fn trace_hash(&self) -> u64 {
        self.state().trace
    }

    pub fn violation(&self, what: String) {
        self.state().violations.push(what);
    }

    pub fn violations(&self) -> Vec<String> {
        self.state().violations.clone()
    }

    pub fn applied(&self, node: NodeId, at: Position, command: u64) {
        let mut s = self.state();
        s.trace = hash_of((s.trace, "apply", node, at, command));
        match s.fixed.get(&at).copied() {
            None => {
                s.fixed.insert(at, (command, node));
            }
            Some((fixed, first)) if fixed != command => {
                let what = if s.acknowledged.contains_key(&at) {
                    format!(
                        "acknowledged commit lost: node {node} applied command {command:x} at \
                         {at:?}, where node {first} applied the acknowledged {fixed:x}"
                    )
                } else {
                    format!(
                        "replicas diverge: node {node} applied command {command:x} at {at:?}, \
                         node {first} applied {fixed:x}"
                    )
                };
                s.violations.push(what);
            }
            Some(_) => {}
        }
    }

    pub fn acknowledged(&self, at: Position, by: LeaderId, command: u64) {
        let mut s = self.state();
        s.trace = hash_of((s.trace, "ack", at, by, command));
        match s.fixed.get(&at).copied() {
            Some((fixed, _)) if fixed == command => {}
            other => s.violations.push(format!(
                "commit acknowledged at {at:?} for command {command:x}, but the log holds {:?} there",
                other.map(|(c, n)| format!("{c:x} (applied first by node {n})"))
            )),
        }
        s.acknowledged.insert(at, command);
        s.acknowledged_max = s.acknowledged_max.max(at.0);
    }

    /// A driver step begins: acknowledgements so far were committed before anything elected
    /// from now on.
    pub fn begin_step(&self) {
        let mut s = self.state();
        s.acknowledged_before_step = s.acknowledged_max;
    }

    /// `id` leads at startup, restored from its saved vote (openraft restores a leader that
    /// restarts): not an election.
    pub fn leader_restored(&self, id: LeaderId) {
        self.state().leaders.entry(id).or_insert(());
    }

    /// `id` leads now with `last_log_index` in its log, and has applied up to `applied_by`'s
    /// entry (the leader id of the last applied entry).
    pub fn leader(&self, id: LeaderId, last_log_index: Option<u64>, applied_by: Option<LeaderId>) {
        let mut s = self.state();
        if s.leaders.insert(id, ()).is_none() {
            s.trace = hash_of((s.trace, "leader", id));
            let needed = s.acknowledged_before_step;
            if needed > 0 && last_log_index.is_none_or(|last| last < needed) {
                s.violations.push(format!(
                    "leader {id:?} (term, node) elected with log up to {last_log_index:?}, \
                     without index {needed} acknowledged before"
                ));
            }
        }
        if applied_by == Some(id) {
            let (term, node) = id;
            match s.committers.get(&term).copied() {
                Some(other) if other != node => s.violations.push(format!(
                    "two leaders committed in term {term}: nodes {other} and {node}"
                )),
                Some(_) => {}
                None => {
                    s.committers.insert(term, node);
                }
            }
        }
    }

    /// The highest acknowledged log index, and how many commits were acknowledged.
    pub fn acknowledged_summary(&self) -> (u64, usize) {
        let s = self.state();
        let max = s.acknowledged.keys().next_back().map_or(0, |(i, _)| *i);
        (max, s.acknowledged.len())
    }

    /// How many leader ids led at some step.
    pub fn leaderships(&self) -> usize {
        self.state().leaders.len()
    }
}
