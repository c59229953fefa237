//! What a classic-group handler gathers while it mutates its scratch copy of a group:
//! answers to parked requests and timers, turned into an `Outcome` at the end (with the
//! group's record when the copy changed). Shared by membership and offset commits, which
//! re-arm a member's session.

use crate::config::Config;
use crate::group::ClassicGroup;
use crate::ids::{GroupId, MemberId, TimestampMs};
use crate::outcome::{MemberReply, Outcome};
use crate::record::Record;
use crate::reply::ParkedKind;
use crate::reply::{ErrorKind, JoinResponse, Reply, SyncResponse};
use crate::timer::{TimerKey, TimerOp};

/// Side effects gathered while a handler mutates its scratch group.
pub(crate) struct Effects<'a> {
    pub(crate) group_id: &'a GroupId,
    pub(crate) now: TimestampMs,
    pub(crate) config: &'a Config,
    member_replies: Vec<MemberReply>,
    timers: Vec<TimerOp>,
}

impl<'a> Effects<'a> {
    pub(crate) fn new(group_id: &'a GroupId, now: TimestampMs, config: &'a Config) -> Self {
        Effects {
            group_id,
            now,
            config,
            member_replies: Vec::new(),
            timers: Vec::new(),
        }
    }

    pub(crate) fn reply_join(&mut self, member_id: &MemberId, response: JoinResponse) {
        self.member_replies.push(MemberReply {
            group_id: self.group_id.clone(),
            member_id: member_id.clone(),
            kind: ParkedKind::Join,
            reply: Reply::Join(response),
        });
    }

    pub(crate) fn reply_sync(&mut self, member_id: &MemberId, response: SyncResponse) {
        self.member_replies.push(MemberReply {
            group_id: self.group_id.clone(),
            member_id: member_id.clone(),
            kind: ParkedKind::Sync,
            reply: Reply::Sync(response),
        });
    }

    /// Answers a parked JoinGroup of a member that is being removed.
    pub(crate) fn fail_join(
        &mut self,
        member_id: &MemberId,
        error: ErrorKind,
        id_in_reply: MemberId,
    ) {
        self.reply_join(member_id, JoinResponse::error(error, id_in_reply));
    }

    pub(crate) fn set_heartbeat(&mut self, member_id: &MemberId, timeout_ms: i32) {
        self.timers.push(TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: self.group_id.clone(),
                member_id: member_id.clone(),
            },
            at_ms: self.now.plus_ms(i64::from(timeout_ms)),
        });
    }

    pub(crate) fn cancel_heartbeat(&mut self, member_id: &MemberId) {
        self.timers.push(TimerOp::Cancel {
            key: TimerKey::MemberHeartbeat {
                group_id: self.group_id.clone(),
                member_id: member_id.clone(),
            },
        });
    }

    pub(crate) fn timer(&mut self, op: TimerOp) {
        self.timers.push(op);
    }

    /// Builds the outcome: the group record when the scratch copy differs from where it
    /// started, and the request's own answer taken out of the member replies when this very
    /// command completed it.
    pub(crate) fn finish(self, start: &ClassicGroup, group: ClassicGroup, reply: Reply) -> Outcome {
        let mut records = Vec::new();
        if *start != group {
            records.push(Record::GroupMetadata {
                group_id: self.group_id.clone(),
                value: Some(Box::new(group)),
            });
        }
        self.finish_with_records(records, reply)
    }

    pub(crate) fn finish_with_records(self, records: Vec<Record>, reply: Reply) -> Outcome {
        let mut member_replies = self.member_replies;
        let mut reply = reply;
        if let Reply::Parked {
            group_id,
            member_id,
            kind,
        } = &reply
        {
            if let Some(pos) = member_replies.iter().rposition(|r| {
                &r.group_id == group_id && &r.member_id == member_id && r.kind == *kind
            }) {
                reply = member_replies.remove(pos).reply;
            }
        }
        Outcome {
            records,
            reply,
            member_replies,
            timers: self.timers,
            assignments: Vec::new(),
            txn_markers: Vec::new(),
        }
    }
}

/// Checks the length of a client-supplied string against `field_max_bytes`.
pub(crate) fn field_too_long(config: &Config, value: &str) -> bool {
    value.len() > config.field_max_bytes
}

/// Kafka's group-id rule for the membership APIs: non-empty; and Cohort's length limit.
pub(crate) fn invalid_member_api_group_id(config: &Config, group_id: &GroupId) -> bool {
    group_id.is_empty() || group_id.as_str().len() > config.group_id_max_bytes
}
