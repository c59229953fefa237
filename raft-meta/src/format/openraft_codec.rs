//! Explicit codecs for the openraft types our files hold (log ids, votes, memberships,
//! snapshot meta): their serde layout belongs to openraft and may change with a version bump,
//! these bytes belong to us.
//!
//! ```text
//!  log id      term u64 | leader node u64 | index u64
//!  vote        term u64 | node u64 | committed 0/1
//!  membership  configs: count u32 { voters: count u32 { node u64 } }
//!              nodes:   count u32 { node u64 | raft_addr str | kafka str }
//!                       (kafka: the node record's versioned Kafka field, `node_record`)
//!  snapshot meta (tag 0x0101 v1)
//!              last_log_id opt(log id) | membership_log_id opt(log id) | membership
//!              | snapshot_id str
//! ```

use std::collections::{BTreeMap, BTreeSet};

use openraft::{CommittedLeaderId, Membership};

use crate::format::tags;
use crate::format::wire::{Reader, Writer};
use crate::format::{from_postcard, split_bare, write_header, FormatError, Framed};
use crate::types::{LogId, NodeId, NodeInfo, SnapshotMeta, StoredMembership, Vote};

/// Smallest encoding of a node entry (id, two empty strings), for count checks.
const NODE_BYTES_MIN: usize = 8 + 4 + 4;

pub fn put_log_id(w: &mut Writer, id: &LogId) {
    w.u64(id.leader_id.term);
    w.u64(id.leader_id.node_id);
    w.u64(id.index);
}

pub fn get_log_id(r: &mut Reader<'_>) -> Result<LogId, FormatError> {
    let term = r.u64("log id term")?;
    let node = r.u64("log id node")?;
    let index = r.u64("log id index")?;
    Ok(LogId::new(CommittedLeaderId::new(term, node), index))
}

pub fn put_vote(w: &mut Writer, vote: &Vote) {
    w.u64(vote.leader_id.term);
    w.u64(vote.leader_id.node_id);
    w.bool(vote.committed);
}

pub fn get_vote(r: &mut Reader<'_>) -> Result<Vote, FormatError> {
    let term = r.u64("vote term")?;
    let node = r.u64("vote node")?;
    let committed = r.bool("vote committed")?;
    Ok(if committed {
        Vote::new_committed(term, node)
    } else {
        Vote::new(term, node)
    })
}

pub fn put_membership(w: &mut Writer, m: &Membership<NodeId, NodeInfo>) {
    let configs = m.get_joint_config();
    w.len(configs.len());
    for voters in configs {
        w.len(voters.len());
        for id in voters {
            w.u64(*id);
        }
    }
    let nodes: Vec<(&NodeId, &NodeInfo)> = m.nodes().collect();
    w.len(nodes.len());
    for (id, info) in nodes {
        w.u64(*id);
        w.str(&info.raft_addr);
        w.str(&crate::node_record::kafka_field(info));
    }
}

pub fn get_membership(r: &mut Reader<'_>) -> Result<Membership<NodeId, NodeInfo>, FormatError> {
    let config_count = r.count(4, "membership configs")?;
    let mut configs = Vec::with_capacity(config_count);
    for _ in 0..config_count {
        let voter_count = r.count(8, "membership voters")?;
        let mut voters = BTreeSet::new();
        for _ in 0..voter_count {
            voters.insert(r.u64("voter id")?);
        }
        configs.push(voters);
    }
    let node_count = r.count(NODE_BYTES_MIN, "membership nodes")?;
    let mut nodes = BTreeMap::new();
    for _ in 0..node_count {
        let id = r.u64("node id")?;
        let raft_addr = r.string("raft addr")?;
        let info = crate::node_record::from_fields(raft_addr, &r.string("kafka addr")?)?;
        if nodes.insert(id, info).is_some() {
            return Err(FormatError::Malformed {
                what: "membership",
                reason: format!("node {id} listed twice"),
            });
        }
    }
    for id in configs.iter().flatten() {
        if !nodes.contains_key(id) {
            return Err(FormatError::Malformed {
                what: "membership",
                reason: format!("voter {id} has no node entry"),
            });
        }
    }
    Ok(Membership::new(configs, nodes))
}

pub fn put_stored_membership(w: &mut Writer, m: &StoredMembership) {
    w.opt(m.log_id().as_ref(), put_log_id);
    put_membership(w, m.membership());
}

pub fn get_stored_membership(r: &mut Reader<'_>) -> Result<StoredMembership, FormatError> {
    let log_id = r.opt("membership log id", get_log_id)?;
    let membership = get_membership(r)?;
    Ok(StoredMembership::new(log_id, membership))
}

/// The snapshot meta frame of a snapshot file.
pub fn encode_snapshot_meta(meta: &SnapshotMeta) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(128));
    write_header(&mut w.0, tags::SNAPSHOT_META, 1);
    w.opt(meta.last_log_id.as_ref(), put_log_id);
    put_stored_membership(&mut w, &meta.last_membership);
    w.str(&meta.snapshot_id);
    w.0
}

/// Reads a snapshot meta frame: tagged, or the bare postcard of c076aca and before.
pub fn decode_snapshot_meta(bytes: &[u8]) -> Result<SnapshotMeta, FormatError> {
    match split_bare(bytes)? {
        Framed::Untagged(raw) => from_postcard(raw, "untagged snapshot meta"),
        Framed::Tagged { tag, version, body } => {
            tags::check_exact(tag, version, tags::SNAPSHOT_META)?;
            let mut r = Reader::new(body, "snapshot meta");
            let last_log_id = r.opt("last log id", get_log_id)?;
            let last_membership = get_stored_membership(&mut r)?;
            let snapshot_id = r.string("snapshot id")?;
            r.finish()?;
            Ok(SnapshotMeta {
                last_log_id,
                last_membership,
                snapshot_id,
            })
        }
    }
}
