//! The runtime on a real one-voter Raft node in a temp dir, with its member timers' firings
//! and the handle's offset commits (or other chosen writes) going through a gate at the write
//! seam: the test decides when a member's expiry or write reaches Raft, or makes the expiry's
//! write fail, instead of racing the clock.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitResponse, CommitTopic, ErrorKind, Generation,
    GroupId, Heartbeat, JoinGroup, JoinProtocol, LeaderEpoch, MemberId, Offset, PartitionIndex,
    Reply, SyncAssignment, SyncGroup, TimerKey, TopicName, WriteCommand,
};
use raft_meta::cohort_app::{Body, Envelope};
use raft_meta::WriteError;
use tokio::sync::{mpsc, oneshot};

use super::runtime::{BackgroundWrites, MemberReady, RuntimeMsg};
use super::GroupCoordinator;
use crate::replicated::args::{ClusterArgs, GroupArgs};

const SESSION_MS: i32 = 300;

/// What the test does with a member's expiry that reached the write seam.
enum Action {
    Write,
    Fail(WriteError),
}

/// A member's `TimerFired` stopped at the seam.
struct Held {
    key: TimerKey,
    action: oneshot::Sender<Action>,
}

/// An offset commit (or another held write) stopped at the seam (already registered with the
/// runtime).
type HeldCommit = oneshot::Sender<Action>;

/// Which client writes the gate stops.
type HoldWrite = fn(&WriteCommand) -> bool;

fn offset_commits(command: &WriteCommand) -> bool {
    matches!(command, WriteCommand::CommitOffsets(_))
}

/// Wraps the node's write path: firings of a member's timers and the writes `hold` picks are
/// handed to the test, every other command goes straight through.
fn gate(
    held: mpsc::UnboundedSender<Held>,
    commits: mpsc::UnboundedSender<HeldCommit>,
    hold: HoldWrite,
) -> impl FnOnce(BackgroundWrites) -> BackgroundWrites {
    move |inner| {
        Arc::new(move |command: Bytes| {
            let inner = inner.clone();
            let held = held.clone();
            let commits = commits.clone();
            Box::pin(async move {
                let (action, decided) = oneshot::channel();
                let stopped = match Envelope::decode(&command) {
                    Ok(Envelope {
                        body: Body::Group(WriteCommand::TimerFired { key, .. }),
                        ..
                    }) if super::member_writes::member_of(&key).is_some() => {
                        held.send(Held { key, action }).is_ok()
                    }
                    Ok(Envelope {
                        body: Body::Group(command),
                        ..
                    }) if hold(&command) => commits.send(action).is_ok(),
                    _ => return inner(command).await,
                };
                if !stopped {
                    return Err(WriteError::ShuttingDown);
                }
                match decided.await {
                    Ok(Action::Write) => inner(command).await,
                    Ok(Action::Fail(e)) => Err(e),
                    Err(_) => Err(WriteError::ShuttingDown),
                }
            })
        })
    }
}

async fn start_node(
    dir: &std::path::Path,
) -> (
    GroupCoordinator,
    mpsc::UnboundedReceiver<Held>,
    mpsc::UnboundedReceiver<HeldCommit>,
) {
    start_node_holding(dir, offset_commits).await
}

async fn start_node_holding(
    dir: &std::path::Path,
    hold: HoldWrite,
) -> (
    GroupCoordinator,
    mpsc::UnboundedReceiver<Held>,
    mpsc::UnboundedReceiver<HeldCommit>,
) {
    let cluster = ClusterArgs {
        raft_listen: "127.0.0.1:0".into(),
        advertise_raft: None,
        peers: Vec::new(),
        join: false,
        raft_store: "segments".into(),
        raft_snapshot_every_entries: 20_000,
        raft_batch_max_commands: 4096,
        raft_batches_in_flight: 2,
        raft_heartbeat_ms: raft_meta::Tuning::default().heartbeat_ms,
        raft_election_timeout_ms: raft_meta::Tuning::default().election_timeout_max_ms,
        raft_election_jitter_ms: raft_meta::Tuning::default().election_timeout_min_ms,
        cluster_secret_file: None,
        peer_port: Default::default(),
    };
    let group = GroupArgs {
        group_initial_rebalance_delay_ms: 0,
        group_min_session_timeout_ms: 100,
        group_max_session_timeout_ms: 1_800_000,
        group_max_size: i32::MAX,
        offsets_retention_minutes: 10_080,
        offsets_retention_check_interval_ms: 600_000,
        offset_metadata_max_bytes: 4096,
        groups_max: coordinator::config::GROUPS_MAX_DEFAULT,
        offsets_per_group_max: coordinator::config::OFFSETS_PER_GROUP_MAX_DEFAULT,
        group_consumer_migration_policy: coordinator::MigrationPolicy::Bidirectional,
    };
    let (tx, held) = mpsc::unbounded_channel();
    let (commits_tx, commits) = mpsc::unbounded_channel();
    let groups = crate::replicated::start_with(
        1,
        "127.0.0.1:9092".into(),
        dir,
        &cluster,
        &group,
        crate::replicated::StartExtras {
            scram_flags: Vec::new(),
            lag: None,
        },
        gate(tx, commits_tx, hold),
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), groups.wait_active())
        .await
        .unwrap();
    (groups, held, commits)
}

fn group_id() -> GroupId {
    GroupId::new("g")
}

/// One consumer joins and syncs: a Stable group of one, its session timer armed.
async fn stable_member(groups: &GroupCoordinator) -> (MemberId, Generation) {
    let join = groups
        .write(WriteCommand::JoinGroup(JoinGroup {
            api_version: ApiVersion(3),
            now_ms: crate::clock::now(),
            nonce: 42,
            group_id: group_id(),
            member_id: MemberId::default(),
            group_instance_id: None,
            session_timeout_ms: SESSION_MS,
            rebalance_timeout_ms: 5_000,
            protocol_type: "consumer".into(),
            protocols: vec![JoinProtocol {
                name: "range".into(),
                metadata: Bytes::from_static(b"sub"),
            }],
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            reason: None,
        }))
        .await
        .unwrap();
    let Reply::Join(join) = join else {
        panic!("join answered {join:?}");
    };
    assert_eq!(join.error, None);
    let sync = groups
        .write(WriteCommand::SyncGroup(SyncGroup {
            api_version: ApiVersion(3),
            now_ms: crate::clock::now(),
            group_id: group_id(),
            generation: join.generation,
            member_id: join.member_id.clone(),
            group_instance_id: None,
            protocol_type: None,
            protocol_name: None,
            assignments: vec![SyncAssignment {
                member_id: join.member_id.clone(),
                assignment: Bytes::from_static(b"all"),
            }],
        }))
        .await
        .unwrap();
    assert!(
        matches!(sync, Reply::Sync(ref s) if s.error.is_none()),
        "{sync:?}"
    );
    (join.member_id, join.generation)
}

fn heartbeat(member_id: &MemberId, generation: Generation) -> Heartbeat {
    Heartbeat {
        api_version: ApiVersion(3),
        now_ms: crate::clock::now(),
        group_id: group_id(),
        generation,
        member_id: member_id.clone(),
        group_instance_id: None,
    }
}

/// Sends a heartbeat straight into the runtime's channel (so it is queued before whatever
/// the test sends next), returning where its answer will come.
fn send_heartbeat(
    groups: &GroupCoordinator,
    member_id: &MemberId,
    generation: Generation,
) -> oneshot::Receiver<Result<Reply, super::GroupError>> {
    let (responder, answer) = oneshot::channel();
    groups
        .tx
        .send(RuntimeMsg::Heartbeat {
            command: heartbeat(member_id, generation),
            responder,
        })
        .unwrap();
    answer
}

/// Returns once the runtime has handled every message sent before (its channel is FIFO): a
/// member with no expiry on its way is answered at once.
async fn runtime_caught_up(groups: &GroupCoordinator) {
    let (ready, answer) = oneshot::channel();
    groups
        .tx
        .send(RuntimeMsg::AwaitMember {
            group_id: group_id(),
            member_id: MemberId::new("nobody"),
            ready,
        })
        .unwrap();
    assert_eq!(answer.await.unwrap(), MemberReady::Proceed);
}

fn is_member(groups: &GroupCoordinator, member_id: &MemberId) -> bool {
    groups.node().read_local(|a| {
        a.app
            .coordinator()
            .group(&group_id())
            .is_some_and(|g| g.members.contains_key(member_id))
    })
}

async fn next_held(held: &mut mpsc::UnboundedReceiver<Held>, member_id: &MemberId) -> Held {
    let h = tokio::time::timeout(Duration::from_secs(10), held.recv())
        .await
        .expect("the member's session timer fires")
        .unwrap();
    assert_eq!(
        h.key,
        TimerKey::MemberHeartbeat {
            group_id: group_id(),
            member_id: member_id.clone()
        }
    );
    h
}

#[tokio::test]
async fn a_heartbeat_arriving_while_the_members_expiry_is_in_flight_is_answered_unknown_member() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, _commits) = start_node(dir.path()).await;
    let (member, generation) = stable_member(&groups).await;
    // Alive while it heartbeats.
    let answer = send_heartbeat(&groups, &member, generation);
    assert_eq!(answer.await.unwrap(), Ok(Reply::Heartbeat(Ok(()))));

    // It stops; its session fires and the expiry is held at the write seam, not yet in Raft.
    let expiry = next_held(&mut held, &member).await;
    assert!(
        is_member(&groups, &member),
        "not removed before the expiry is applied"
    );
    let mut late = send_heartbeat(&groups, &member, generation);
    let mut join_or_sync = {
        let (ready, answer) = oneshot::channel();
        groups
            .tx
            .send(RuntimeMsg::AwaitMember {
                group_id: group_id(),
                member_id: member.clone(),
                ready,
            })
            .unwrap();
        answer
    };
    runtime_caught_up(&groups).await;
    assert!(
        late.try_recv().is_err(),
        "a heartbeat is not answered while the member's expiry is on its way"
    );
    assert!(join_or_sync.try_recv().is_err(), "nor is a join or sync");

    expiry.action.send(Action::Write).ok().unwrap();
    assert_eq!(
        late.await.unwrap(),
        Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
    );
    assert_eq!(join_or_sync.await.unwrap(), MemberReady::Proceed);
    assert!(!is_member(&groups, &member));
    // Heartbeats after that are not held.
    let after = send_heartbeat(&groups, &member, generation);
    assert_eq!(
        after.await.unwrap(),
        Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
    );
    groups.shutdown().await;
}

#[tokio::test]
async fn requests_beyond_the_per_member_limit_are_answered_as_expired_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, _commits) = start_node(dir.path()).await;
    let (member, generation) = stable_member(&groups).await;
    let expiry = next_held(&mut held, &member).await;
    let waiting: Vec<_> = (0..super::fired::WAITERS_PER_MEMBER_MAX)
        .map(|_| send_heartbeat(&groups, &member, generation))
        .collect();
    let over = send_heartbeat(&groups, &member, generation);
    assert_eq!(
        over.await.unwrap(),
        Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
    );
    let (ready, over_join) = oneshot::channel();
    groups
        .tx
        .send(RuntimeMsg::AwaitMember {
            group_id: group_id(),
            member_id: member.clone(),
            ready,
        })
        .unwrap();
    assert_eq!(over_join.await.unwrap(), MemberReady::AnswerExpired);
    expiry.action.send(Action::Write).ok().unwrap();
    for answer in waiting {
        assert_eq!(
            answer.await.unwrap(),
            Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
        );
    }
    groups.shutdown().await;
}

#[tokio::test]
async fn a_session_expiry_whose_write_fails_while_leading_is_fired_again_and_applies() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, _commits) = start_node(dir.path()).await;
    let (member, generation) = stable_member(&groups).await;

    // The first expiry is refused by the write path (nothing written), the second too.
    let first = next_held(&mut held, &member).await;
    let waiting = send_heartbeat(&groups, &member, generation);
    first
        .action
        .send(Action::Fail(WriteError::Busy))
        .ok()
        .unwrap();
    let second = next_held(&mut held, &member).await;
    assert!(is_member(&groups, &member));
    second
        .action
        .send(Action::Fail(WriteError::Unavailable(
            "test: no quorum".into(),
        )))
        .ok()
        .unwrap();
    // The third one is written: the member is expired, and the heartbeat that waited through
    // both failures learns it.
    let third = next_held(&mut held, &member).await;
    third.action.send(Action::Write).ok().unwrap();
    assert_eq!(
        waiting.await.unwrap(),
        Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
    );
    assert!(!is_member(&groups, &member));
    groups.shutdown().await;
}

fn commit(member_id: &MemberId, generation: Generation) -> WriteCommand {
    WriteCommand::CommitOffsets(CommitOffsets {
        api_version: ApiVersion(8),
        now_ms: crate::clock::now(),
        group_id: group_id(),
        generation,
        member_id: member_id.clone(),
        group_instance_id: None,
        retention_time_ms: -1,
        topics: vec![CommitTopic {
            name: TopicName::new("t"),
            partitions: vec![CommitPartition {
                partition: PartitionIndex(0),
                offset: Offset(7),
                leader_epoch: LeaderEpoch::NONE,
                metadata: None,
                partition_known: true,
            }],
        }],
    })
}

fn commit_reply(error: Option<ErrorKind>) -> Reply {
    Reply::Commit(CommitResponse {
        topics: vec![(TopicName::new("t"), vec![(PartitionIndex(0), error)])],
    })
}

/// A stable member whose offset commit is submitted and held at the write seam (registered
/// with the runtime, not in Raft yet), with its session re-armed just before.
async fn member_with_commit_held(
    groups: &Arc<GroupCoordinator>,
    commits: &mut mpsc::UnboundedReceiver<HeldCommit>,
    fenced: bool,
) -> (
    MemberId,
    Generation,
    HeldCommit,
    tokio::task::JoinHandle<Result<Reply, super::GroupError>>,
) {
    let (member, generation) = stable_member(groups).await;
    let alive = send_heartbeat(groups, &member, generation);
    assert_eq!(alive.await.unwrap(), Ok(Reply::Heartbeat(Ok(()))));
    let committed_generation = if fenced {
        Generation(generation.0 + 1)
    } else {
        generation
    };
    let committing = tokio::spawn({
        let groups = groups.clone();
        let command = commit(&member, committed_generation);
        async move { groups.write(command).await }
    });
    let held = tokio::time::timeout(Duration::from_secs(10), commits.recv())
        .await
        .expect("the commit reaches the write seam")
        .unwrap();
    (member, generation, held, committing)
}

/// Waits until the runtime counts `n` expiring members (a deferred expiry counts).
async fn expiring_members_become(groups: &GroupCoordinator, n: usize) {
    let wait = async {
        while groups
            .expiring_members
            .load(std::sync::atomic::Ordering::SeqCst)
            != n
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the expiring members reach the count");
}

async fn shutdown(groups: Arc<GroupCoordinator>) {
    let Ok(groups) = Arc::try_unwrap(groups) else {
        panic!("a test task still holds the handle");
    };
    groups.shutdown().await;
}

#[tokio::test]
async fn a_commit_in_flight_when_the_session_comes_due_keeps_the_member() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, mut commits) = start_node(dir.path()).await;
    let groups = Arc::new(groups);
    let (member, _, commit, committing) =
        member_with_commit_held(&groups, &mut commits, false).await;

    // The session comes due while the commit is not yet in Raft: the expiry is deferred,
    // nothing is submitted.
    expiring_members_become(&groups, 1).await;
    runtime_caught_up(&groups).await;
    assert!(
        held.try_recv().is_err(),
        "no expiry submitted behind the commit"
    );

    commit.send(Action::Write).ok().unwrap();
    assert_eq!(committing.await.unwrap(), Ok(commit_reply(None)));
    runtime_caught_up(&groups).await;
    // The commit re-armed the session: the deferred expiry is dropped, never written.
    assert!(
        held.try_recv().is_err(),
        "no expiry submitted after the commit"
    );
    assert_eq!(
        groups
            .expiring_members
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    assert!(
        is_member(&groups, &member),
        "the commit refreshed the session"
    );
    shutdown(groups).await;
}

#[tokio::test]
async fn a_heartbeat_while_the_expiry_is_deferred_waits_and_is_answered_once_the_commit_refreshed_the_session(
) {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, mut commits) = start_node(dir.path()).await;
    let groups = Arc::new(groups);
    let (member, generation, commit, committing) =
        member_with_commit_held(&groups, &mut commits, false).await;
    expiring_members_become(&groups, 1).await;

    let mut waiting = send_heartbeat(&groups, &member, generation);
    runtime_caught_up(&groups).await;
    assert!(
        waiting.try_recv().is_err(),
        "a heartbeat is not answered while the member's expiry is deferred"
    );

    commit.send(Action::Write).ok().unwrap();
    assert_eq!(waiting.await.unwrap(), Ok(Reply::Heartbeat(Ok(()))));
    assert_eq!(committing.await.unwrap(), Ok(commit_reply(None)));
    assert!(held.try_recv().is_err(), "no expiry submitted");
    assert!(is_member(&groups, &member));
    shutdown(groups).await;
}

#[tokio::test]
async fn a_fenced_commit_in_flight_delays_the_expiry_until_it_applies_then_the_member_expires() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, mut commits) = start_node(dir.path()).await;
    let groups = Arc::new(groups);
    let (member, generation, commit, committing) =
        member_with_commit_held(&groups, &mut commits, true).await;
    expiring_members_become(&groups, 1).await;
    let waiting = send_heartbeat(&groups, &member, generation);
    runtime_caught_up(&groups).await;
    assert!(held.try_recv().is_err(), "deferred behind the commit");

    // A commit with a wrong generation refreshes nothing: once it applied, the expiry fires.
    commit.send(Action::Write).ok().unwrap();
    assert_eq!(
        committing.await.unwrap(),
        Ok(commit_reply(Some(ErrorKind::IllegalGeneration)))
    );
    let expiry = next_held(&mut held, &member).await;
    assert!(
        is_member(&groups, &member),
        "not removed before the expiry applies"
    );
    expiry.action.send(Action::Write).ok().unwrap();
    assert_eq!(
        waiting.await.unwrap(),
        Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId)))
    );
    assert!(!is_member(&groups, &member));
    shutdown(groups).await;
}

// ---- The join and sync deadlines of a classic member of a consumer group (decision 0182):
// the SyncGroup that answers the deadline is in the Raft log when it comes due.

/// The classic member's rebalance timeout: its sync deadline after a JoinGroup.
const CLASSIC_REBALANCE_MS: i32 = 1_000;

fn classic_join(member_id: MemberId) -> WriteCommand {
    WriteCommand::JoinGroup(JoinGroup {
        api_version: ApiVersion(3),
        now_ms: crate::clock::now(),
        nonce: 43,
        group_id: group_id(),
        member_id,
        group_instance_id: None,
        // Long: only the deadlines under test come due.
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: CLASSIC_REBALANCE_MS,
        protocol_type: "consumer".into(),
        protocols: vec![JoinProtocol {
            name: "range".into(),
            metadata: Bytes::from(coordinator::subscription::encode_v0(&["t"])),
        }],
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        reason: None,
    })
}

fn classic_sync(member_id: &MemberId, generation: Generation) -> WriteCommand {
    WriteCommand::SyncGroup(SyncGroup {
        api_version: ApiVersion(3),
        now_ms: crate::clock::now(),
        group_id: group_id(),
        generation,
        member_id: member_id.clone(),
        group_instance_id: None,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments: Vec::new(),
    })
}

/// A classic member's SyncGroup to the consumer group (the classic group's own SyncGroup
/// names no protocol).
fn classic_syncs_to_the_consumer_group(command: &WriteCommand) -> bool {
    matches!(command, WriteCommand::SyncGroup(s) if s.protocol_name.is_some())
}

fn joined(reply: Reply) -> coordinator::JoinResponse {
    match reply {
        Reply::Join(join) if join.error.is_none() => join,
        other => panic!("join answered {other:?}"),
    }
}

/// A classic consumer forms a group, a consumer-protocol member joins (the group becomes a
/// consumer group) and the classic member rejoins: answered, its sync deadline armed at
/// the returned instant + its rebalance timeout. Returns (member, generation, joined at).
async fn classic_member_of_a_consumer_group(
    groups: &GroupCoordinator,
) -> (MemberId, Generation, std::time::Instant) {
    let first = joined(
        groups
            .write(classic_join(MemberId::default()))
            .await
            .unwrap(),
    );
    let sync = groups
        .write(WriteCommand::SyncGroup(SyncGroup {
            assignments: vec![SyncAssignment {
                member_id: first.member_id.clone(),
                assignment: Bytes::from(coordinator::subscription::encode_assignment(0, &[])),
            }],
            protocol_type: None,
            protocol_name: None,
            ..match classic_sync(&first.member_id, first.generation) {
                WriteCommand::SyncGroup(s) => s,
                _ => unreachable!("a sync"),
            }
        }))
        .await
        .unwrap();
    assert!(
        matches!(sync, Reply::Sync(ref s) if s.error.is_none()),
        "{sync:?}"
    );
    let upgrade = groups
        .consumer_heartbeat(coordinator::ConsumerGroupHeartbeat {
            api_version: ApiVersion(0),
            now_ms: crate::clock::now(),
            nonce: 44,
            group_id: group_id(),
            member_id: MemberId::default(),
            member_epoch: 0,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec![TopicName::new("t")]),
            subscribed_topic_regex: None,
            server_assignor: None,
            owned_partitions: Some(Vec::new()),
            client_id: "c2".into(),
            client_host: "/127.0.0.1".into(),
        })
        .await
        .unwrap();
    assert!(
        matches!(upgrade, Reply::ConsumerGroupHeartbeat(ref r) if r.error.is_none()),
        "{upgrade:?}"
    );
    let at = std::time::Instant::now();
    let rejoined = joined(
        groups
            .write(classic_join(first.member_id.clone()))
            .await
            .unwrap(),
    );
    assert_eq!(rejoined.member_id, first.member_id);
    (first.member_id, rejoined.generation, at)
}

fn is_consumer_group_member(groups: &GroupCoordinator, member_id: &MemberId) -> bool {
    groups.node().read_local(|a| {
        a.app
            .coordinator()
            .consumer_group(&group_id())
            .is_some_and(|g| g.members.contains_key(member_id))
    })
}

/// Sleeps until `ms` after `from`, and a margin for the runtime to act on a timer due then.
async fn past_deadline(from: std::time::Instant, ms: i32) {
    let due = from + Duration::from_millis(u64::try_from(ms).unwrap_or(0) + 300);
    tokio::time::sleep_until(due.into()).await;
}

#[tokio::test]
async fn a_sync_in_the_raft_log_when_the_sync_deadline_comes_due_keeps_the_classic_member() {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, mut writes) =
        start_node_holding(dir.path(), classic_syncs_to_the_consumer_group).await;
    let groups = Arc::new(groups);
    let (member, generation, joined_at) = classic_member_of_a_consumer_group(&groups).await;
    let syncing = tokio::spawn({
        let groups = groups.clone();
        let command = classic_sync(&member, generation);
        async move { groups.write(command).await }
    });
    let sync = tokio::time::timeout(Duration::from_secs(10), writes.recv())
        .await
        .expect("the sync reaches the write seam")
        .unwrap();
    // The deadline comes due with the SyncGroup registered, not yet applied: its firing
    // waits instead of being submitted behind it.
    past_deadline(joined_at, CLASSIC_REBALANCE_MS).await;
    runtime_caught_up(&groups).await;
    assert!(
        held.try_recv().is_err(),
        "no deadline firing submitted behind the sync"
    );
    sync.send(Action::Write).ok().unwrap();
    let answered = syncing.await.unwrap().unwrap();
    assert!(
        matches!(answered, Reply::Sync(ref s) if s.error.is_none()),
        "{answered:?}"
    );
    runtime_caught_up(&groups).await;
    // The sync cancelled its deadline: the deferred firing is dropped, never written.
    tokio::time::sleep(Duration::from_millis(100)).await;
    runtime_caught_up(&groups).await;
    if let Ok(h) = held.try_recv() {
        panic!("a firing was submitted after the sync: {:?}", h.key);
    }
    assert!(
        is_consumer_group_member(&groups, &member),
        "the member synced in time"
    );
    shutdown(groups).await;
}

#[tokio::test]
async fn a_write_that_does_not_answer_the_sync_deadline_delays_its_firing_then_the_member_is_fenced(
) {
    let dir = tempfile::tempdir().unwrap();
    let (groups, mut held, mut commits) = start_node(dir.path()).await;
    let groups = Arc::new(groups);
    let (member, generation, joined_at) = classic_member_of_a_consumer_group(&groups).await;
    // An offset commit of the member is in flight when its sync deadline comes due.
    let committing = tokio::spawn({
        let groups = groups.clone();
        let command = commit(&member, generation);
        async move { groups.write(command).await }
    });
    let commit_write = tokio::time::timeout(Duration::from_secs(10), commits.recv())
        .await
        .expect("the commit reaches the write seam")
        .unwrap();
    past_deadline(joined_at, CLASSIC_REBALANCE_MS).await;
    runtime_caught_up(&groups).await;
    assert!(held.try_recv().is_err(), "deferred behind the commit");
    commit_write.send(Action::Write).ok().unwrap();
    assert_eq!(committing.await.unwrap(), Ok(commit_reply(None)));
    // The commit did not answer the deadline: once it applied, the deadline fires.
    let firing = tokio::time::timeout(Duration::from_secs(10), held.recv())
        .await
        .expect("the sync deadline fires once the commit applied")
        .unwrap();
    assert_eq!(
        firing.key,
        TimerKey::ClassicMemberSync {
            group_id: group_id(),
            member_id: member.clone(),
            member_epoch: generation.0,
        }
    );
    assert!(is_consumer_group_member(&groups, &member));
    firing.action.send(Action::Write).ok().unwrap();
    let removed = async {
        while is_consumer_group_member(&groups, &member) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), removed)
        .await
        .expect("the member is fenced at its sync deadline");
    shutdown(groups).await;
}
