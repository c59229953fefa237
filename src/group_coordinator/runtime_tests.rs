//! The runtime on a real one-voter Raft node in a temp dir, with its timer firings and the
//! handle's offset commits going through a gate at the write seam: the test decides when a
//! member's expiry or commit reaches Raft, or makes the expiry's write fail, instead of
//! racing the clock.

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

/// An offset commit stopped at the seam (already registered with the runtime).
type HeldCommit = oneshot::Sender<Action>;

/// Wraps the node's write path: member-session firings and offset commits are handed to the
/// test, every other command goes straight through.
fn gate(
    held: mpsc::UnboundedSender<Held>,
    commits: mpsc::UnboundedSender<HeldCommit>,
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
                    }) if matches!(key, TimerKey::MemberHeartbeat { .. }) => {
                        held.send(Held { key, action }).is_ok()
                    }
                    Ok(Envelope {
                        body: Body::Group(WriteCommand::CommitOffsets(_)),
                        ..
                    }) => commits.send(action).is_ok(),
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
    let cluster = ClusterArgs {
        raft_listen: "127.0.0.1:0".into(),
        advertise_raft: None,
        peers: Vec::new(),
        join: false,
        raft_store: "segments".into(),
        raft_snapshot_every_entries: 20_000,
        raft_batch_max_commands: 4096,
        raft_batches_in_flight: 2,
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
        gate(tx, commits_tx),
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
