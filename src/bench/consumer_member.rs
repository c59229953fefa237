//! One simulated consumer-protocol member (KIP-848) as a real consumer keeps it: what its next
//! ConsumerGroupHeartbeat carries, and how it reconciles the assignment an answer brings.
//!
//! ```text
//!  joining (epoch 0)  every field: subscription, rebalance timeout, TopicPartitions = []
//!  answer             epoch, interval; an assignment (only when it changed) is reconciled at
//!                     once: partitions lost are revoked, partitions gained are taken
//!  owned changed      the next heartbeat goes out now and carries TopicPartitions (the ack)
//!  otherwise          every field the broker already has is null: a steady heartbeat is
//!                     group id, member id and epoch only
//!  error              counted; fenced / unknown member: give up everything, rejoin with epoch 0
//! ```
//!
//! Like Java's `ConsumerHeartbeatRequestManager.HeartbeatState`, a field counts as sent when
//! the request is built, and a failed answer makes the next request carry every field again.

use std::time::Duration;

use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, GroupId, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

/// Kafka's `max.poll.interval.ms` default, sent as the rebalance timeout on joining.
const REBALANCE_TIMEOUT_MS: i32 = 300_000;
const UNKNOWN_MEMBER_ID: i16 = 25;
const FENCED_MEMBER_EPOCH: i16 = 110;

/// The partitions a member owns, by topic id, each list sorted: what its heartbeats report.
pub type Owned = Vec<(Uuid, Vec<i32>)>;

/// What a heartbeat carried, for telling a steady heartbeat from one that changes something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// Epoch 0 with every field.
    Join,
    /// Owned partitions that changed since the broker last heard them.
    Ack,
    /// Nothing but the member's identity and epoch.
    Steady,
}

/// What the member does after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Heartbeat again at the interval.
    AtInterval,
    /// Heartbeat now: the owned partitions changed (the ack), or it must rejoin.
    Now,
}

/// One member's protocol state.
#[derive(Debug, Clone)]
pub struct ConsumerMember {
    group_id: GroupId,
    member_id: StrBytes,
    topic: TopicName,
    epoch: i32,
    owned: Owned,
    /// Whether the broker has heard `owned` (false until the first heartbeat after a change).
    owned_sent: bool,
    /// The interval the broker last gave (Kafka's `heartbeat_interval_ms`).
    pub interval: Duration,
}

impl ConsumerMember {
    /// A member of `group_id` subscribed to `topic`; KIP-1082 (v1) has the client pick its id.
    pub fn new(group_id: &str, member_id: Uuid, topic: &str, interval: Duration) -> Self {
        ConsumerMember {
            group_id: GroupId(StrBytes::from_string(group_id.to_string())),
            member_id: StrBytes::from_string(member_id.to_string()),
            topic: TopicName(StrBytes::from_string(topic.to_string())),
            epoch: 0,
            owned: Vec::new(),
            owned_sent: false,
            interval,
        }
    }

    pub fn owned(&self) -> &Owned {
        &self.owned
    }

    /// The next heartbeat, and what it carries. Null fields are the ones the broker has.
    pub fn request(&mut self) -> (ConsumerGroupHeartbeatRequest, Sent) {
        let base = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(self.group_id.clone())
            .with_member_id(self.member_id.clone())
            .with_member_epoch(self.epoch)
            .with_rebalance_timeout_ms(-1)
            .with_subscribed_topic_names(None)
            .with_topic_partitions(None);
        if self.epoch == 0 {
            self.owned_sent = true;
            let join = base
                .with_rebalance_timeout_ms(REBALANCE_TIMEOUT_MS)
                .with_subscribed_topic_names(Some(vec![self.topic.clone()]))
                .with_topic_partitions(Some(Vec::new()));
            return (join, Sent::Join);
        }
        if self.owned_sent {
            return (base, Sent::Steady);
        }
        self.owned_sent = true;
        let owned = self
            .owned
            .iter()
            .map(|(topic_id, partitions)| {
                TopicPartitions::default()
                    .with_topic_id(*topic_id)
                    .with_partitions(partitions.clone())
            })
            .collect();
        (base.with_topic_partitions(Some(owned)), Sent::Ack)
    }

    /// Takes an answer in: the epoch, the interval, and any new assignment (reconciled at
    /// once). Returns what to do next and whether the answer changed the owned partitions.
    pub fn on_response(&mut self, r: &ConsumerGroupHeartbeatResponse) -> (Next, bool) {
        if r.error_code != 0 {
            // Whatever was sent is not known to have arrived: send it all again.
            self.owned_sent = false;
            if matches!(r.error_code, UNKNOWN_MEMBER_ID | FENCED_MEMBER_EPOCH) {
                let had = !self.owned.is_empty();
                self.owned.clear();
                self.epoch = 0;
                return (Next::Now, had);
            }
            return (Next::AtInterval, false);
        }
        self.epoch = r.member_epoch;
        if r.heartbeat_interval_ms > 0 {
            self.interval = Duration::from_millis(r.heartbeat_interval_ms.unsigned_abs().into());
        }
        let Some(assignment) = &r.assignment else {
            return (Next::AtInterval, false);
        };
        let target = normalized(
            assignment
                .topic_partitions
                .iter()
                .map(|t| (t.topic_id, t.partitions.clone())),
        );
        if target == self.owned {
            return (Next::AtInterval, false);
        }
        // Revoking what is lost and taking what is gained leaves exactly the target.
        self.owned = target;
        self.owned_sent = false;
        (Next::Now, true)
    }
}

/// Topics sorted, partitions sorted and deduplicated, topics without partitions dropped.
fn normalized(topics: impl Iterator<Item = (Uuid, Vec<i32>)>) -> Owned {
    let mut out: Owned = topics
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, mut p)| {
            p.sort_unstable();
            p.dedup();
            (t, p)
        })
        .collect();
    out.sort_by_key(|(t, _)| *t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::consumer_group_heartbeat_response::{
        Assignment, TopicPartitions as AssignedPartitions,
    };

    fn answer(epoch: i32, assignment: Option<&[(Uuid, &[i32])]>) -> ConsumerGroupHeartbeatResponse {
        ConsumerGroupHeartbeatResponse::default()
            .with_member_epoch(epoch)
            .with_heartbeat_interval_ms(5_000)
            .with_assignment(assignment.map(|topics| {
                Assignment::default().with_topic_partitions(
                    topics
                        .iter()
                        .map(|(t, p)| {
                            AssignedPartitions::default()
                                .with_topic_id(*t)
                                .with_partitions(p.to_vec())
                        })
                        .collect(),
                )
            }))
    }

    fn member() -> ConsumerMember {
        ConsumerMember::new("g", Uuid::from_u128(7), "t", Duration::from_secs(1))
    }

    #[test]
    fn joins_with_every_field_then_sends_only_identity() {
        let mut m = member();
        let (join, sent) = m.request();
        assert_eq!(sent, Sent::Join);
        assert_eq!(join.member_epoch, 0);
        assert_eq!(join.member_id.as_str(), Uuid::from_u128(7).to_string());
        assert_eq!(join.rebalance_timeout_ms, REBALANCE_TIMEOUT_MS);
        assert_eq!(join.subscribed_topic_names.as_ref().map(Vec::len), Some(1));
        assert_eq!(join.topic_partitions, Some(Vec::new()));
        // Joined with nothing assigned yet: nothing to ack, the interval comes from the broker.
        assert_eq!(
            m.on_response(&answer(3, Some(&[]))),
            (Next::AtInterval, false)
        );
        assert_eq!(m.interval, Duration::from_secs(5));
        let (hb, sent) = m.request();
        assert_eq!(sent, Sent::Steady);
        assert_eq!(hb.member_epoch, 3);
        assert_eq!(hb.rebalance_timeout_ms, -1);
        assert_eq!(hb.subscribed_topic_names, None);
        assert_eq!(hb.topic_partitions, None);
        assert_eq!(hb.server_assignor, None);
    }

    #[test]
    fn an_assignment_is_acked_once_then_revocation_is_acked_too() {
        let t = Uuid::from_u128(1);
        let mut m = member();
        let _ = m.request();
        assert_eq!(
            m.on_response(&answer(1, Some(&[(t, &[4, 2])]))),
            (Next::Now, true)
        );
        assert_eq!(m.owned(), &vec![(t, vec![2, 4])]);
        let (ack, sent) = m.request();
        assert_eq!(sent, Sent::Ack);
        let owned = ack.topic_partitions.unwrap();
        assert_eq!(
            (owned[0].topic_id, owned[0].partitions.clone()),
            (t, vec![2, 4])
        );
        // The same assignment again (or none) changes nothing: steady heartbeats follow.
        assert_eq!(
            m.on_response(&answer(1, Some(&[(t, &[2, 4])]))),
            (Next::AtInterval, false)
        );
        assert_eq!(m.request().1, Sent::Steady);
        assert_eq!(m.on_response(&answer(1, None)), (Next::AtInterval, false));
        // Losing partition 4 (another member joined) is revoked and reported at once.
        assert_eq!(
            m.on_response(&answer(1, Some(&[(t, &[2])]))),
            (Next::Now, true)
        );
        let (ack, sent) = m.request();
        assert_eq!(sent, Sent::Ack);
        assert_eq!(ack.topic_partitions.unwrap()[0].partitions, vec![2]);
        assert_eq!(m.on_response(&answer(2, None)), (Next::AtInterval, false));
        let (hb, sent) = m.request();
        assert_eq!((sent, hb.member_epoch), (Sent::Steady, 2));
    }

    #[test]
    fn errors_resend_everything_and_fencing_rejoins_empty() {
        let t = Uuid::from_u128(1);
        let mut m = member();
        let _ = m.request();
        let _ = m.on_response(&answer(1, Some(&[(t, &[0])])));
        let _ = m.request();
        // A retriable error: the owned partitions go out again on the next heartbeat.
        let busy = ConsumerGroupHeartbeatResponse::default().with_error_code(14);
        assert_eq!(m.on_response(&busy), (Next::AtInterval, false));
        assert_eq!(m.request().1, Sent::Ack);
        let fenced = ConsumerGroupHeartbeatResponse::default().with_error_code(FENCED_MEMBER_EPOCH);
        assert_eq!(m.on_response(&fenced), (Next::Now, true));
        assert!(m.owned().is_empty());
        let (join, sent) = m.request();
        assert_eq!((sent, join.member_epoch), (Sent::Join, 0));
    }
}
