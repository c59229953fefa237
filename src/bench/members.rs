//! Forming the simulated consumer groups the way a Kafka consumer does: JoinGroup (v4+ is
//! first answered MEMBER_ID_REQUIRED with the id to rejoin with), then SyncGroup, the leader
//! carrying an assignment in Kafka's consumer protocol.
//!
//! ```text
//!  each member, on a connection of its own (a parked JoinGroup holds its connection):
//!    JoinGroup(id "") ─► MEMBER_ID_REQUIRED(id) ─► JoinGroup(id) ─ parked until the join
//!    phase ends ─► generation, leader (the leader also gets every member's subscription)
//!    SyncGroup(leader: assignments) ─► its assignment: K partitions of the topic
//! ```
//!
//! Groups are formed in waves of whole groups, at most `concurrency` members (connections)
//! at a time. Member j of a group (members sorted by id) is assigned partitions
//! `[j*K, (j+1)*K)`, so the members of one group commit disjoint partitions.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedPartitions;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ApiKey, ConsumerProtocolAssignment, ConsumerProtocolSubscription, GroupId, JoinGroupRequest,
    JoinGroupResponse, RequestKind, ResponseKind, SyncGroupRequest, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::task::JoinSet;

use super::setup::{code_name, versions};
use super::wire::Conn;
use super::BenchError;

const PROTOCOL_TYPE: &str = "consumer";
const ASSIGNOR: &str = "range";
/// Consumer-protocol versions written into JoinGroup metadata and SyncGroup assignments.
const SUBSCRIPTION_VERSION: i16 = 1;
const ASSIGNMENT_VERSION: i16 = 1;
/// Rejoins allowed while forming (a member that joined after its group's join phase closed).
const JOIN_ATTEMPTS_MAX: usize = 5;

const MEMBER_ID_REQUIRED: i16 = 79;
const REBALANCE_IN_PROGRESS: i16 = 27;

/// A formed member: what its heartbeats and commits carry.
#[derive(Debug, Clone)]
pub struct Member {
    pub group_id: String,
    pub member_id: String,
    pub generation: i32,
    /// Partitions of the topic assigned to it.
    pub partitions: Vec<i32>,
}

/// How the groups are formed.
#[derive(Debug, Clone)]
pub struct FormSpec {
    pub topic: String,
    pub partitions_per_member: usize,
    /// Kafka consumer's `session.timeout.ms` (45 s by default).
    pub session_timeout_ms: i32,
    /// Kafka consumer's `max.poll.interval.ms` (5 min by default).
    pub rebalance_timeout_ms: i32,
    /// Members forming at once, each on its own connection.
    pub concurrency: usize,
}

/// Group ids `<prefix>-<g>` with their member counts: `members` spread over `groups` as
/// evenly as possible.
pub fn plan(prefix: &str, groups: usize, members: usize) -> Vec<(String, usize)> {
    let groups = groups.max(1);
    (0..groups)
        .map(|g| {
            let n = members / groups + usize::from(g < members % groups);
            (format!("{prefix}-{g}"), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Forms every group of `groups` at `coordinator`; fails if any member fails to join or if a
/// group's members do not end in one generation (a commit would then be fenced).
pub async fn form(
    coordinator: SocketAddr,
    groups: &[(String, usize)],
    spec: &FormSpec,
) -> Result<Vec<Member>, BenchError> {
    let mut formed = Vec::new();
    let mut wave: Vec<(String, usize)> = Vec::new();
    let mut wave_members = 0;
    for (group, n) in groups {
        if !wave.is_empty() && wave_members + n > spec.concurrency {
            formed.extend(form_wave(coordinator, &wave, spec).await?);
            wave.clear();
            wave_members = 0;
        }
        wave.push((group.clone(), *n));
        wave_members += n;
    }
    if !wave.is_empty() {
        formed.extend(form_wave(coordinator, &wave, spec).await?);
    }
    check_generations(&formed)?;
    Ok(formed)
}

async fn form_wave(
    coordinator: SocketAddr,
    wave: &[(String, usize)],
    spec: &FormSpec,
) -> Result<Vec<Member>, BenchError> {
    let mut tasks = JoinSet::new();
    for (group, n) in wave {
        for _ in 0..*n {
            let group = group.clone();
            let spec = spec.clone();
            tasks.spawn(async move { join_and_sync(coordinator, group, &spec).await });
        }
    }
    let mut members = Vec::new();
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(m)) => members.push(m),
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(BenchError::Setup(format!("a forming member's task: {e}"))),
        }
    }
    Ok(members)
}

fn check_generations(members: &[Member]) -> Result<(), BenchError> {
    let mut by_group: BTreeMap<&str, i32> = BTreeMap::new();
    for m in members {
        let g = by_group.entry(&m.group_id).or_insert(m.generation);
        if *g != m.generation {
            return Err(BenchError::Setup(format!(
                "group {} formed with members in generations {} and {}",
                m.group_id, g, m.generation
            )));
        }
    }
    Ok(())
}

async fn join_and_sync(
    coordinator: SocketAddr,
    group: String,
    spec: &FormSpec,
) -> Result<Member, BenchError> {
    let mut conn = Conn::connect(coordinator, "cohort-bench-member").await?;
    let mut member_id = String::new();
    for _ in 0..JOIN_ATTEMPTS_MAX {
        let joined = join(&mut conn, &group, &member_id, spec).await?;
        member_id = joined.member_id.to_string();
        match joined.error_code {
            0 => {}
            MEMBER_ID_REQUIRED | REBALANCE_IN_PROGRESS => continue,
            code => {
                return Err(BenchError::Setup(format!(
                    "JoinGroup {group}: {}",
                    code_name(code)
                )))
            }
        }
        let assignments = if joined.leader == joined.member_id {
            assign(&joined, spec)?
        } else {
            Vec::new()
        };
        let body = RequestKind::SyncGroup(
            SyncGroupRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(group.clone())))
                .with_generation_id(joined.generation_id)
                .with_member_id(joined.member_id.clone())
                .with_protocol_type(Some(StrBytes::from_static_str(PROTOCOL_TYPE)))
                .with_protocol_name(joined.protocol_name.clone())
                .with_assignments(assignments),
        );
        let ResponseKind::SyncGroup(synced) = conn
            .call(ApiKey::SyncGroup, versions::SYNC_GROUP, body)
            .await?
        else {
            return Err(BenchError::Setup(
                "SyncGroup answered with another body".into(),
            ));
        };
        match synced.error_code {
            0 => {}
            REBALANCE_IN_PROGRESS => continue,
            code => {
                return Err(BenchError::Setup(format!(
                    "SyncGroup {group}: {}",
                    code_name(code)
                )))
            }
        }
        let partitions = decode_assignment(&synced.assignment, &spec.topic)?;
        return Ok(Member {
            group_id: group,
            member_id,
            generation: joined.generation_id,
            partitions,
        });
    }
    Err(BenchError::Setup(format!(
        "a member of {group} did not settle in {JOIN_ATTEMPTS_MAX} joins"
    )))
}

async fn join(
    conn: &mut Conn<()>,
    group: &str,
    member_id: &str,
    spec: &FormSpec,
) -> Result<JoinGroupResponse, BenchError> {
    let body = RequestKind::JoinGroup(
        JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_session_timeout_ms(spec.session_timeout_ms)
            .with_rebalance_timeout_ms(spec.rebalance_timeout_ms)
            .with_member_id(StrBytes::from_string(member_id.to_string()))
            .with_protocol_type(StrBytes::from_static_str(PROTOCOL_TYPE))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str(ASSIGNOR))
                .with_metadata(subscription(&spec.topic)?)]),
    );
    match conn
        .call(ApiKey::JoinGroup, versions::JOIN_GROUP, body)
        .await?
    {
        ResponseKind::JoinGroup(r) => Ok(r),
        _ => Err(BenchError::Setup(
            "JoinGroup answered with another body".into(),
        )),
    }
}

fn subscription(topic: &str) -> Result<Bytes, BenchError> {
    let s = ConsumerProtocolSubscription::default()
        .with_topics(vec![StrBytes::from_string(topic.to_string())]);
    let mut buf = BytesMut::new();
    buf.put_i16(SUBSCRIPTION_VERSION);
    s.encode(&mut buf, SUBSCRIPTION_VERSION)
        .map_err(|e| BenchError::Protocol(format!("encoding a subscription: {e}")))?;
    Ok(buf.freeze())
}

/// The leader's assignment: member j (sorted by id) gets partitions `[j*K, (j+1)*K)`.
fn assign(
    joined: &JoinGroupResponse,
    spec: &FormSpec,
) -> Result<Vec<SyncGroupRequestAssignment>, BenchError> {
    let mut ids: Vec<&StrBytes> = joined.members.iter().map(|m| &m.member_id).collect();
    ids.sort();
    ids.into_iter()
        .enumerate()
        .map(|(j, id)| {
            let first = j * spec.partitions_per_member;
            let partitions = (first..first + spec.partitions_per_member)
                .map(|p| i32::try_from(p).unwrap_or(i32::MAX))
                .collect();
            let a = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
                AssignedPartitions::default()
                    .with_topic(TopicName(StrBytes::from_string(spec.topic.clone())))
                    .with_partitions(partitions),
            ]);
            let mut buf = BytesMut::new();
            buf.put_i16(ASSIGNMENT_VERSION);
            a.encode(&mut buf, ASSIGNMENT_VERSION)
                .map_err(|e| BenchError::Protocol(format!("encoding an assignment: {e}")))?;
            Ok(SyncGroupRequestAssignment::default()
                .with_member_id(id.clone())
                .with_assignment(buf.freeze()))
        })
        .collect()
}

fn decode_assignment(bytes: &Bytes, topic: &str) -> Result<Vec<i32>, BenchError> {
    let bad = |why: String| BenchError::Protocol(format!("the assignment received: {why}"));
    let mut buf = bytes.clone();
    if buf.len() < 2 {
        return Err(bad(format!("{} bytes", buf.len())));
    }
    let version = i16::from_be_bytes([buf[0], buf[1]]);
    let _ = bytes::Buf::get_i16(&mut buf);
    let a = ConsumerProtocolAssignment::decode(&mut buf, version.clamp(0, 3))
        .map_err(|e| bad(e.to_string()))?;
    Ok(a.assigned_partitions
        .into_iter()
        .filter(|t| t.topic.0.as_str() == topic)
        .flat_map(|t| t.partitions)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;

    #[test]
    fn plan_spreads_members_evenly() {
        let p = plan("g", 3, 10);
        assert_eq!(
            p,
            vec![("g-0".into(), 4), ("g-1".into(), 3), ("g-2".into(), 3)]
        );
        assert_eq!(plan("g", 5, 2).len(), 2);
    }

    #[test]
    fn leader_assigns_disjoint_ranges_that_members_decode() {
        let spec = FormSpec {
            topic: "t".into(),
            partitions_per_member: 3,
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            concurrency: 10,
        };
        let joined = JoinGroupResponse::default().with_members(
            ["m-b", "m-a"]
                .iter()
                .map(|id| {
                    JoinGroupResponseMember::default().with_member_id(StrBytes::from_static_str(id))
                })
                .collect(),
        );
        let a = assign(&joined, &spec).unwrap();
        assert_eq!(a[0].member_id.as_str(), "m-a");
        assert_eq!(
            decode_assignment(&a[0].assignment, "t").unwrap(),
            vec![0, 1, 2]
        );
        assert_eq!(
            decode_assignment(&a[1].assignment, "t").unwrap(),
            vec![3, 4, 5]
        );
        assert!(decode_assignment(&Bytes::from_static(&[0]), "t").is_err());
    }
}
