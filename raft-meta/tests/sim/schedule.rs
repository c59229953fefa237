//! The fault schedule: a list of timed faults drawn from the seed before the run starts, so it
//! is a pure function of the seed whatever the nodes do.

use std::collections::BTreeSet;

use raft_meta::NodeId;

use super::rng::SimRng;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fault {
    /// These directed links deliver nothing (replaces the previous cut).
    Cut(BTreeSet<(NodeId, NodeId)>),
    /// Every link delivers again.
    Heal,
    /// Each message (request or response) is lost with this probability, in per mille.
    Loss(u64),
    /// The node's process dies; its disk keeps only what was synced.
    Crash(NodeId),
    Restart(NodeId),
    /// Every node loses power at once.
    CrashAll,
    RestartAll,
}

pub const NODES: [NodeId; 3] = [1, 2, 3];

fn isolate(node: NodeId) -> BTreeSet<(NodeId, NodeId)> {
    NODES
        .iter()
        .filter(|&&other| other != node)
        .flat_map(|&other| [(node, other), (other, node)])
        .collect()
}

/// Faults over `fault_ms` of simulated time, in time order: episodes start every 50–400 ms and
/// last 50–900 ms; they may overlap.
pub fn generate(rng: &mut SimRng, fault_ms: u64) -> Vec<(u64, Fault)> {
    let mut faults = Vec::new();
    let mut at = rng.range(50, 300);
    while at < fault_ms {
        let lasts = rng.range(50, 900);
        let node = NODES[rng.below(3) as usize];
        let (start, end) = match rng.below(100) {
            0..=24 => (Fault::Crash(node), Fault::Restart(node)),
            25..=44 => (Fault::Cut(isolate(node)), Fault::Heal),
            45..=59 => {
                // One direction only: the node hears the others, they never hear it.
                let cut = NODES
                    .iter()
                    .filter(|&&o| o != node)
                    .map(|&o| (node, o))
                    .collect();
                (Fault::Cut(cut), Fault::Heal)
            }
            60..=79 => (Fault::Loss(rng.range(50, 400)), Fault::Loss(0)),
            80..=89 => (Fault::CrashAll, Fault::RestartAll),
            _ => {
                // Two nodes that cannot talk to each other, both still reaching the third.
                let other = NODES[(NODES.iter().position(|&n| n == node).unwrap_or(0) + 1) % 3];
                let cut = BTreeSet::from([(node, other), (other, node)]);
                (Fault::Cut(cut), Fault::Heal)
            }
        };
        faults.push((at, start));
        faults.push((at + lasts, end));
        at += rng.range(50, 400);
    }
    faults.sort_by_key(|(at, _)| *at);
    faults
}
