//! One-line summaries of group commands, replies and state for DEBUG tracing, so that
//! `RUST_LOG=cohort::group=debug` tells a rebalance's story (who asked what at which
//! generation, what was answered, which state the group moved to) without dumping member
//! metadata or assignments, which are opaque bytes and can be large.

use std::fmt::Write as _;

use coordinator::{ClassicGroup, ErrorKind, ParkedKind, Record, Reply, WriteCommand};

/// `JoinGroup member=… instance=… v=…` and the like.
pub(crate) fn command(c: &WriteCommand) -> String {
    match c {
        WriteCommand::JoinGroup(j) => format!(
            "JoinGroup v{} member={:?} instance={:?} session_ms={} rebalance_ms={} protocols={}",
            j.api_version.0,
            j.member_id.as_str(),
            j.group_instance_id.as_ref().map(|i| i.as_str()),
            j.session_timeout_ms,
            j.rebalance_timeout_ms,
            j.protocols.len()
        ),
        WriteCommand::SyncGroup(s) => format!(
            "SyncGroup v{} member={:?} generation={} assignments={}",
            s.api_version.0,
            s.member_id.as_str(),
            s.generation.0,
            s.assignments.len()
        ),
        WriteCommand::LeaveGroup(l) => {
            let members: Vec<&str> = l.members.iter().map(|m| m.member_id.as_str()).collect();
            format!("LeaveGroup v{} members={members:?}", l.api_version.0)
        }
        WriteCommand::CommitOffsets(c) => format!(
            "OffsetCommit v{} member={:?} generation={} partitions={}",
            c.api_version.0,
            c.member_id.as_str(),
            c.generation.0,
            c.topics.iter().map(|t| t.partitions.len()).sum::<usize>()
        ),
        WriteCommand::DeleteOffsets(d) => format!("OffsetDelete topics={}", d.topics.len()),
        WriteCommand::DeleteGroups(d) => format!("DeleteGroups groups={}", d.group_ids.len()),
        WriteCommand::TimerFired { key, .. } => format!("TimerFired {key:?}"),
        WriteCommand::ExpireOffsets { .. } => "ExpireOffsets".to_owned(),
        WriteCommand::TopicsDeleted { topics, .. } => format!("TopicsDeleted {}", topics.len()),
        WriteCommand::ConsumerGroupHeartbeat(h) => format!(
            "ConsumerGroupHeartbeat v{} member={:?} epoch={}",
            h.api_version.0,
            h.member_id.as_str(),
            h.member_epoch
        ),
        WriteCommand::InstallTargetAssignment(i) => format!(
            "InstallTargetAssignment epoch={} members={}",
            i.epoch,
            i.members.len()
        ),
        WriteCommand::TopicsChanged(t) => format!(
            "TopicsChanged upserted={} deleted={}",
            t.upserted.len(),
            t.deleted.len()
        ),
        WriteCommand::InitTransactionalProducer(i) => format!(
            "InitProducerId transactional_id={:?} timeout_ms={} expected={:?}",
            i.transactional_id.as_str(),
            i.timeout_ms,
            i.expected
        ),
        WriteCommand::AddPartitionsToTxn(a) => format!(
            "AddPartitionsToTxn {} partitions={}",
            producer(&a.producer),
            a.topics.iter().map(|t| t.partitions.len()).sum::<usize>()
        ),
        WriteCommand::AddOffsetsToTxn(a) => format!(
            "AddOffsetsToTxn {} group={:?}",
            producer(&a.producer),
            a.group_id.as_str()
        ),
        WriteCommand::EndTxn(e) => format!("EndTxn {} commit={}", producer(&e.producer), e.commit),
        WriteCommand::TxnMarkersWritten(m) => format!(
            "TxnMarkersWritten {} commit={}",
            producer(&m.producer),
            m.commit
        ),
        WriteCommand::TxnOffsetCommit(c) => format!(
            "TxnOffsetCommit {} member={:?} generation={} partitions={}",
            producer(&c.producer),
            c.member_id.as_str(),
            c.generation.0,
            c.topics.iter().map(|t| t.partitions.len()).sum::<usize>()
        ),
    }
}

fn producer(p: &coordinator::TxnProducer) -> String {
    format!(
        "v{} transactional_id={:?} producer={}/{}",
        p.api_version.0,
        p.transactional_id.as_str(),
        p.producer_id.0,
        p.producer_epoch.0
    )
}

fn error(e: Option<ErrorKind>) -> String {
    e.map_or_else(|| "none".to_owned(), |e| format!("{e:?}"))
}

/// The answer as the client will see it: error, generation, member and leader ids.
pub(crate) fn reply(r: &Reply) -> String {
    match r {
        Reply::Parked { kind, .. } => format!("parked({kind:?})"),
        Reply::Join(j) => format!(
            "Join error={} generation={} member={:?} leader={:?} members={} protocol={:?}",
            error(j.error),
            j.generation.0,
            j.member_id.as_str(),
            j.leader.as_str(),
            j.members.len(),
            j.protocol_name
        ),
        Reply::Sync(s) => format!(
            "Sync error={} assignment_bytes={}",
            error(s.error),
            s.assignment.len()
        ),
        Reply::Heartbeat(h) => format!("Heartbeat error={}", error(h.err())),
        Reply::Leave(l) => format!("Leave error={}", error(l.single_error())),
        Reply::Commit(c) => {
            let errors: Vec<String> = c
                .topics
                .iter()
                .flat_map(|(_, ps)| ps.iter().filter_map(|(_, e)| e.map(|e| format!("{e:?}"))))
                .collect();
            format!("Commit errors={errors:?}")
        }
        Reply::Fetch(_) => "Fetch".to_owned(),
        Reply::DeleteOffsets(d) => format!("DeleteOffsets error={}", error(d.error)),
        Reply::DeleteGroups(d) => format!("DeleteGroups {}", d.len()),
        Reply::DescribeGroups(_) => "DescribeGroups".to_owned(),
        Reply::ListGroups(_) => "ListGroups".to_owned(),
        Reply::Done => "done".to_owned(),
        Reply::ConsumerGroupHeartbeat(h) => format!(
            "ConsumerGroupHeartbeat error={} epoch={}",
            error(h.error),
            h.member_epoch
        ),
        Reply::DescribeConsumerGroups(d) => format!("DescribeConsumerGroups {}", d.len()),
        Reply::InitProducer(r) => match r {
            Ok((id, epoch)) => format!("InitProducer producer={}/{}", id.0, epoch.0),
            Err(e) => format!("InitProducer error={e:?}"),
        },
        Reply::AddPartitionsToTxn(topics) => {
            let errors: Vec<String> = topics
                .iter()
                .flat_map(|(_, ps)| ps.iter().filter_map(|(_, e)| e.map(|e| format!("{e:?}"))))
                .collect();
            format!("AddPartitionsToTxn errors={errors:?}")
        }
        Reply::Txn(r) => format!("Txn error={}", error(r.err())),
    }
}

/// A group record's state: `Stable generation=3 leader=… members=[a*, b]` (`*` = awaiting
/// join, `+` = awaiting sync, `!` = assignment not yet received), or `deleted`.
pub(crate) fn group_record(record: &Record) -> Option<(&str, String)> {
    let Record::GroupMetadata { group_id, value } = record else {
        return None;
    };
    let summary = match value {
        None => "deleted".to_owned(),
        Some(group) => group_state(group),
    };
    Some((group_id.as_str(), summary))
}

fn group_state(g: &ClassicGroup) -> String {
    let mut out = format!(
        "{:?} generation={} leader={:?} protocol={:?} members=[",
        g.state,
        g.generation.0,
        g.leader.as_ref().map(|l| l.as_str()),
        g.protocol_name
    );
    for (i, (id, m)) in g.members.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(id.as_str());
        if m.awaiting_join {
            out.push('*');
        }
        if m.awaiting_sync {
            out.push('+');
        }
        let _ = write!(out, "({}B)", m.assignment.len());
    }
    let _ = write!(
        out,
        "] pending={} pending_sync={}",
        g.pending_members.len(),
        g.pending_sync.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordinator::{Generation, JoinResponse, MemberId, SyncResponse};

    #[test]
    fn replies_name_error_generation_and_ids() {
        let join = Reply::Join(JoinResponse {
            error: None,
            generation: Generation(3),
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            leader: MemberId::new("a"),
            member_id: MemberId::new("b"),
            members: Vec::new(),
            skip_assignment: false,
        });
        assert_eq!(
            reply(&join),
            "Join error=none generation=3 member=\"b\" leader=\"a\" members=0 protocol=Some(\"range\")"
        );
        let sync = Reply::Sync(SyncResponse {
            error: Some(ErrorKind::RebalanceInProgress),
            protocol_type: None,
            protocol_name: None,
            assignment: bytes::Bytes::new(),
        });
        assert_eq!(
            reply(&sync),
            "Sync error=RebalanceInProgress assignment_bytes=0"
        );
        assert_eq!(
            reply(&Reply::Heartbeat(Err(ErrorKind::IllegalGeneration))),
            "Heartbeat error=IllegalGeneration"
        );
    }
}

/// A completed join phase, as the INFO line names it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Rebalance<'a> {
    pub group: &'a str,
    pub generation: i32,
    /// Members answered with the new generation.
    pub members: usize,
    pub protocol: &'a str,
}

/// The rebalance that `replies` complete, if they answer JoinGroups without error (one
/// outcome completes at most one group's join phase).
pub(crate) fn rebalance(replies: &[coordinator::MemberReply]) -> Option<Rebalance<'_>> {
    let mut joins = replies.iter().filter_map(|r| match &r.reply {
        Reply::Join(j) if r.kind == ParkedKind::Join && j.error.is_none() => Some((r, j)),
        _ => None,
    });
    let (first, join) = joins.next()?;
    Some(Rebalance {
        group: first.group_id.as_str(),
        generation: join.generation.0,
        members: 1 + joins.count(),
        protocol: join.protocol_name.as_deref().unwrap_or(""),
    })
}
