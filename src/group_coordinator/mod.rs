//! The group coordinator on this node: the handle the group handlers call and the runtime
//! task behind it that holds the leader's soft state (parked requests, timers, sessions). It
//! runs on the Raft node that `crate::replicated::start` started, whose [`CohortApp`] sends it
//! the effects of every applied entry.
//!
//! ```text
//!  handlers ─► GroupCoordinator::write(cmd) ─ Register(token) ─► runtime ◄─ effects ─ CohortApp
//!                  └─ MetaNode::write(Envelope{token, cmd}) ─► Raft (batched, fsynced) ─► apply
//!           ─► GroupCoordinator::heartbeat(cmd) ─► runtime: read applied state, re-arm the
//!                  session timer (after the member's expiry, if one is on its way)
//!           ─► GroupCoordinator::read(cmd) ─► applied state on the leader (OffsetFetch,
//!                  DescribeGroups, ListGroups)
//! ```
//!
//! Only the Raft leader coordinates (every group). A follower answers NOT_COORDINATOR; a new
//! leader answers COORDINATOR_LOAD_IN_PROGRESS until it has applied what was committed before
//! it took office.

pub mod error;
mod fired;
mod group_configs;
mod leadership;
mod maps;
mod member_writes;
pub mod metrics;
mod runtime;
#[cfg(test)]
mod runtime_tests;
pub mod timers;
mod trace;
pub mod txn_marker_log;
pub mod txn_markers;
pub mod txn_verify;

use maps::Map;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use coordinator::{
    ErrorKind, Generation, HeartbeatPath, JoinResponse, MemberId, ReadCommand, Reply, SyncResponse,
    WriteCommand,
};
use raft_meta::cohort_app::{Body, CohortApp, Effect, EffectSink, Envelope, RequestToken};
use raft_meta::{LeaderInfo, MetaNode};
use tokio::sync::{broadcast, mpsc, oneshot, watch, Semaphore};
use tokio::task::JoinHandle;

pub use error::GroupError;
pub use runtime::TopicsChanged;

/// UNKNOWN_MEMBER_ID for a JoinGroup or SyncGroup: Kafka's answer to a member whose session
/// has expired.
fn expired_reply(command: &WriteCommand, member_id: &MemberId) -> Reply {
    let error = Some(ErrorKind::UnknownMemberId);
    match command {
        WriteCommand::SyncGroup(_) => Reply::Sync(SyncResponse {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: bytes::Bytes::new(),
        }),
        _ => Reply::Join(JoinResponse {
            error,
            generation: Generation::NONE,
            protocol_type: None,
            protocol_name: None,
            leader: MemberId::default(),
            member_id: member_id.clone(),
            members: Vec::new(),
            skip_assignment: false,
        }),
    }
}

pub(crate) use runtime::BackgroundWrites;
use runtime::{MemberReady, Runtime, RuntimeMsg};

/// The member whose session a write may refresh (Kafka completes a member's heartbeat on
/// its commit, join, sync and leave): the runtime defers that member's expiry while the
/// write is in flight. `None` for admin commits, new members and batched leaves.
fn session_member(command: &WriteCommand) -> Option<member_writes::Member> {
    let (group_id, member_id) = match command {
        WriteCommand::CommitOffsets(c) => (&c.group_id, &c.member_id),
        WriteCommand::JoinGroup(c) => (&c.group_id, &c.member_id),
        WriteCommand::SyncGroup(c) => (&c.group_id, &c.member_id),
        WriteCommand::ConsumerGroupHeartbeat(c) => (&c.group_id, &c.member_id),
        WriteCommand::LeaveGroup(c) => match c.members.as_slice() {
            [one] => (&c.group_id, &one.member_id),
            _ => return None,
        },
        _ => return None,
    };
    (!member_id.as_str().is_empty()).then(|| (group_id.clone(), member_id.clone()))
}

/// Tells the runtime to forget a registered token unless disarmed (`token` taken).
struct ForgetOnDrop<'a> {
    tx: &'a mpsc::UnboundedSender<RuntimeMsg>,
    token: Option<RequestToken>,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            let _ = self.tx.send(RuntimeMsg::Forget { token });
        }
    }
}

/// Tags for the commands this process submits (the handle's and the runtime's own), so the
/// runtime can match an applied command to whoever waits on it. `incarnation` is drawn at
/// start: a restarted node replaying its log never mistakes an old command for a new one.
#[derive(Debug)]
pub(crate) struct TokenSource {
    node: u64,
    incarnation: u64,
    seq: AtomicU64,
}

impl TokenSource {
    fn new(node: u64) -> Self {
        Self {
            node,
            incarnation: uuid::Uuid::new_v4().as_u64_pair().0,
            seq: AtomicU64::new(0),
        }
    }

    pub(crate) fn next(&self) -> RequestToken {
        RequestToken {
            node: self.node,
            incarnation: self.incarnation,
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// What this node is to the groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Not the Raft leader: group APIs answer NOT_COORDINATOR.
    Follower,
    /// Leader, still applying entries committed before it led: COORDINATOR_LOAD_IN_PROGRESS.
    Loading,
    /// Leader and caught up: serving groups.
    Active,
}

/// Group writes waiting at once on this node (parked joins and syncs included); beyond it
/// requests get COORDINATOR_NOT_AVAILABLE, which clients retry.
pub const GROUP_REQUESTS_IN_FLIGHT_MAX: usize = 100_000;

/// Randomness for a JoinGroup's member id, drawn by the leader and replicated in the command.
pub fn nonce() -> u128 {
    uuid::Uuid::new_v4().as_u128()
}

/// `Ok` while `node` holds its leader lease (one atomic load), else NOT_COORDINATOR, counted.
pub(crate) fn lease_check(node: &MetaNode<CohortApp>) -> Result<(), GroupError> {
    if node.holds_lease() {
        return Ok(());
    }
    ::metrics::counter!(metrics::GROUP_LEASE_REFUSALS_TOTAL).increment(1);
    Err(GroupError::NotCoordinator)
}

/// The handle the group handlers use.
pub struct GroupCoordinator {
    node: Arc<MetaNode<CohortApp>>,
    /// `node`'s write path (wrapped by tests to hold writes).
    writes: BackgroundWrites,
    tokens: Arc<TokenSource>,
    /// Members whose expiry is on its way (the runtime's count): while none is, a JoinGroup
    /// or SyncGroup need not ask the runtime before being answered from applied state.
    expiring_members: Arc<AtomicUsize>,
    tx: mpsc::UnboundedSender<RuntimeMsg>,
    role: watch::Receiver<Role>,
    in_flight: Arc<Semaphore>,
    topic_events: broadcast::Sender<TopicsChanged>,
    /// Subscribed before the runtime ran: every topic event this node applied, taken once.
    topic_events_from_start: std::sync::Mutex<Option<broadcast::Receiver<TopicsChanged>>>,
    runtime_task: JoinHandle<()>,
    /// The transaction marker writer the runtime drives.
    markers: txn_markers::MarkerWriter,
    /// `cohort_group_commit_seconds`, looked up once rather than by name on every commit.
    commit_seconds: ::metrics::Histogram,
}

impl std::fmt::Debug for GroupCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinator")
            .field("node_id", &self.node.node_id())
            .field("role", &*self.role.borrow())
            .finish_non_exhaustive()
    }
}

/// The channel through which the replicated application's effects reach the runtime. It is
/// made before the application, which takes its [`sink`](Self::sink), and then handed to
/// [`GroupCoordinator::launch`] with the started node.
pub(crate) struct EffectsInbox {
    tx: mpsc::UnboundedSender<RuntimeMsg>,
    rx: mpsc::UnboundedReceiver<RuntimeMsg>,
    /// Read by the sink: group effects are worth sending only while this node leads.
    effects_wanted: Arc<AtomicBool>,
}

impl EffectsInbox {
    pub(crate) fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            tx,
            rx,
            effects_wanted: Arc::new(AtomicBool::new(false)),
        }
    }

    /// What the application calls with every effect of an applied entry.
    pub(crate) fn sink(&self) -> EffectSink {
        let sink_tx = self.tx.clone();
        let sink_wanted = self.effects_wanted.clone();
        Arc::new(move |effect| {
            // Group effects matter only to a leading runtime; topic changes to every node.
            if matches!(effect, Effect::Group { .. }) && !sink_wanted.load(Ordering::SeqCst) {
                return;
            }
            let _ = sink_tx.send(RuntimeMsg::Effect(Box::new(effect)));
        })
    }
}

impl GroupCoordinator {
    /// Starts the runtime on a started Raft node whose application sends its effects to
    /// `inbox`. While this node is the active coordinator, the runtime feeds `lag` with every
    /// applied group change. Every group write (the handle's and the runtime's own) goes
    /// through `wrap` of the node's write path: the seam where a test holds or fails them.
    pub(crate) fn launch(
        node: Arc<MetaNode<CohortApp>>,
        node_id: u64,
        inbox: EffectsInbox,
        lag: Option<Arc<crate::lag::LagFeed>>,
        wrap: impl FnOnce(BackgroundWrites) -> BackgroundWrites,
    ) -> GroupCoordinator {
        let EffectsInbox {
            tx,
            rx,
            effects_wanted,
        } = inbox;
        let (role_tx, role) = watch::channel(Role::Follower);
        let (topic_events, topic_events_from_start) = broadcast::channel(1024);
        let tokens = Arc::new(TokenSource::new(node_id));
        let expiring_members = Arc::new(AtomicUsize::new(0));
        let writes = wrap(runtime::raft_writes(node.clone()));
        let markers = txn_markers::MarkerWriter::new(writes.clone());
        let runtime = Runtime {
            markers: markers.clone(),
            background_writes: writes.clone(),
            member_writes: member_writes::MemberWrites::default(),
            to_self: tx.downgrade(),
            fired: fired::FiredTimers::default(),
            expiring_members: expiring_members.clone(),
            tokens: tokens.clone(),
            node: node.clone(),
            rx,
            role_tx,
            effects_wanted,
            topic_events: topic_events.clone(),
            waiting: Map::default(),
            parked: Map::default(),
            timers: timers::TimerWheel::default(),
            leadership: leadership::Leadership::Follower,
            lag,
        };
        let runtime_task = tokio::spawn(runtime.run());
        GroupCoordinator {
            node,
            writes,
            tokens,
            expiring_members,
            tx,
            role,
            in_flight: Arc::new(Semaphore::new(GROUP_REQUESTS_IN_FLIGHT_MAX)),
            topic_events,
            topic_events_from_start: std::sync::Mutex::new(Some(topic_events_from_start)),
            runtime_task,
            markers,
            commit_seconds: ::metrics::histogram!(metrics::GROUP_COMMIT_SECONDS),
        }
    }

    /// Where this node's transaction markers are appended (once the data plane exists; until
    /// then a prepared transaction waits).
    pub fn attach_marker_log(&self, log: std::sync::Arc<dyn txn_markers::MarkerLog>) {
        self.markers.attach(log);
    }

    /// The Raft node (topics, cluster view, status).
    pub fn node(&self) -> &Arc<MetaNode<CohortApp>> {
        &self.node
    }

    pub fn role(&self) -> Role {
        *self.role.borrow()
    }

    /// Resolves once this node is the active coordinator (tests, startup).
    pub async fn wait_active(&self) {
        let mut role = self.role.clone();
        let _ = role.wait_for(|r| *r == Role::Active).await;
    }

    /// The Raft leader as this node last heard (FindCoordinator names it).
    pub fn leader(&self) -> Option<LeaderInfo> {
        self.node.leader()
    }

    /// The coordinator FindCoordinator should name: the leader as this node last heard,
    /// except itself while it leads without a lease (cut off, it would send clients back to
    /// a coordinator that refuses them; `None` makes them ask again, elsewhere).
    pub fn coordinator(&self) -> Option<LeaderInfo> {
        let leader = self.node.leader()?;
        if leader.node_id == self.node.node_id() && !self.node.holds_lease() {
            return None;
        }
        Some(leader)
    }

    /// Topic creations and deletions as they are applied on this node, from now on.
    pub fn topic_events(&self) -> broadcast::Receiver<TopicsChanged> {
        self.topic_events.subscribe()
    }

    /// Topic events from the first one this node applied (its start-up replay included), for
    /// the one caller that must not miss a deletion; later callers get [`GroupCoordinator::topic_events`].
    pub fn topic_events_from_start(&self) -> broadcast::Receiver<TopicsChanged> {
        self.topic_events_from_start
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| self.topic_events.subscribe())
    }

    /// Resolves once the deletions follower has acted on every topic event this node had
    /// applied when it was called (their effects reach it in apply order, this mark behind
    /// them). False if the runtime is gone.
    pub async fn topic_events_handled(&self) -> bool {
        let mark = Arc::new(tokio::sync::Notify::new());
        if self
            .tx
            .send(RuntimeMsg::TopicEventsMark(mark.clone()))
            .is_err()
        {
            return false;
        }
        mark.notified().await;
        true
    }

    /// Whether this node may answer a group request now: it is the active coordinator and
    /// still holds its leader lease. A leader cut off from its peers keeps leading in
    /// openraft's eyes until it hears a higher term; past its lease another node may already
    /// lead, so what it would read (offsets, members, generations) may be stale and it
    /// answers NOT_COORDINATOR instead (the leader-lease record in `docs/decisions/`).
    fn check_active(&self) -> Result<(), GroupError> {
        match self.role() {
            Role::Active => lease_check(&self.node),
            Role::Loading => Err(GroupError::LoadInProgress),
            Role::Follower => Err(GroupError::NotCoordinator),
        }
    }

    /// Replicates a group command and returns its reply once it is committed and applied
    /// (for a parked JoinGroup/SyncGroup: once a later command completes it). A JoinGroup or
    /// SyncGroup that would change nothing is answered from the applied state instead.
    pub async fn write(&self, command: WriteCommand) -> Result<Reply, GroupError> {
        self.check_active()?;
        if let Some(reply) = self.await_member(&command).await? {
            return Ok(reply);
        }
        if let Some(reply) = self.answer_unchanged(&command)? {
            if tracing::enabled!(tracing::Level::DEBUG) {
                tracing::debug!(
                    group = command.group_id().map(|g| g.as_str()),
                    "request {} answered from applied state: {}",
                    trace::command(&command),
                    trace::reply(&reply)
                );
            }
            return Ok(reply);
        }
        let _permit =
            self.in_flight.clone().try_acquire_owned().map_err(|_| {
                GroupError::NotAvailable("too many group requests in flight".into())
            })?;
        let token = self.tokens.next();
        let (responder, answer) = oneshot::channel();
        self.tx
            .send(RuntimeMsg::Register {
                token,
                member: session_member(&command),
                responder,
            })
            .map_err(|_| GroupError::NotCoordinator)?;
        // A request abandoned before its answer (its connection closed) must not leave the
        // member counted as writing, which would defer its expiry until a step-down.
        let mut forget = ForgetOnDrop {
            tx: &self.tx,
            token: Some(token),
        };
        let started = Instant::now();
        let traced = tracing::enabled!(tracing::Level::DEBUG);
        if traced {
            tracing::debug!(
                group = command.group_id().map(|g| g.as_str()),
                seq = token.seq,
                "request {}",
                trace::command(&command)
            );
        }
        let command_bytes = Envelope {
            origin: Some(token),
            body: Body::Group(command),
        }
        .encode();
        if let Err(e) = (self.writes)(command_bytes).await {
            tracing::debug!(seq = token.seq, error = %e, "request not committed");
            return Err(e.into());
        }
        let reply = answer.await.unwrap_or(Err(GroupError::NotCoordinator));
        // Answered: the runtime handled the token's effect (or dropped it on step-down).
        forget.token = None;
        if traced {
            let answered = match &reply {
                Ok(r) => trace::reply(r),
                Err(e) => format!("failed: {e}"),
            };
            tracing::debug!(
                seq = token.seq,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "answer {answered}"
            );
        }
        if let Ok(Reply::Commit(_)) = &reply {
            self.commit_seconds.record(started.elapsed().as_secs_f64());
        }
        reply
    }

    /// The reply to a JoinGroup or SyncGroup that, decided on the applied state, writes no
    /// record, completes no parked request, moves no timer and is not parked itself: a
    /// follower of a Stable group rejoining with the same metadata, its SyncGroup in a Stable
    /// group, a retried join in CompletingRebalance, a fenced or unknown member. Kafka answers
    /// those without appending to its log; sending them through Raft cost an fsync each, and
    /// under load that made the join-and-sync round trip slow enough for kafka-python 3.0 to
    /// discard its result (it drops a JoinGroup/SyncGroup task that completes between two
    /// `poll` calls and starts another), so a consumer could loop on rejoining with no
    /// partitions for minutes.
    ///
    /// Answering from applied state orders the request before commands still in the Raft
    /// log: none of those has been acknowledged yet, and every acknowledged one is applied,
    /// so a client never sees older state than a reply it already got.
    /// A JoinGroup or SyncGroup of a member whose session timer fired waits until its
    /// expiry has applied (see `fired`): it may be answered from applied state next, which
    /// must not still show a member about to be removed. `Some` is the answer when too many
    /// of the member's requests already wait.
    async fn await_member(&self, command: &WriteCommand) -> Result<Option<Reply>, GroupError> {
        let (group_id, member_id) = match command {
            WriteCommand::JoinGroup(c) => (&c.group_id, &c.member_id),
            WriteCommand::SyncGroup(c) => (&c.group_id, &c.member_id),
            _ => return Ok(None),
        };
        if member_id.as_str().is_empty() || self.expiring_members.load(Ordering::SeqCst) == 0 {
            return Ok(None);
        }
        let (ready, answer) = oneshot::channel();
        self.tx
            .send(RuntimeMsg::AwaitMember {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                ready,
            })
            .map_err(|_| GroupError::NotCoordinator)?;
        match answer.await.map_err(|_| GroupError::NotCoordinator)? {
            MemberReady::Proceed => Ok(None),
            MemberReady::AnswerExpired => Ok(Some(expired_reply(command, member_id))),
        }
    }

    fn answer_unchanged(&self, command: &WriteCommand) -> Result<Option<Reply>, GroupError> {
        if !matches!(
            command,
            WriteCommand::JoinGroup(_) | WriteCommand::SyncGroup(_)
        ) {
            return Ok(None);
        }
        // Checked again: `await_member` may have waited since `check_active`.
        lease_check(&self.node)?;
        let outcome = self
            .node
            .read_local(|a| a.app.coordinator().decide(command));
        let unchanged = outcome.records.is_empty()
            && outcome.member_replies.is_empty()
            && outcome.timers.is_empty()
            && !matches!(outcome.reply, Reply::Parked { .. });
        Ok(unchanged.then_some(outcome.reply))
    }

    /// Answers a heartbeat and re-arms the member's session (leader soft state, no Raft).
    pub async fn heartbeat(&self, command: coordinator::Heartbeat) -> Result<Reply, GroupError> {
        self.check_active()?;
        let (responder, answer) = oneshot::channel();
        self.tx
            .send(RuntimeMsg::Heartbeat { command, responder })
            .map_err(|_| GroupError::NotCoordinator)?;
        answer.await.unwrap_or(Err(GroupError::NotCoordinator))
    }

    /// Answers a ConsumerGroupHeartbeat (KIP-848). One that changes nothing but the member's
    /// session is answered from applied state and only re-arms the session timer; any other
    /// is replicated and answered from its applied outcome. A session that fires while such
    /// a heartbeat is answered fences the member, which rejoins (as after a missed session).
    pub async fn consumer_heartbeat(
        &self,
        command: coordinator::ConsumerGroupHeartbeat,
    ) -> Result<Reply, GroupError> {
        self.check_active()?;
        let path = self
            .node
            .read_local(|a| a.app.coordinator().consumer_heartbeat(command));
        match path {
            HeartbeatPath::Answered(outcome) => {
                if !outcome.timers.is_empty() {
                    self.tx
                        .send(RuntimeMsg::ArmTimers(outcome.timers))
                        .map_err(|_| GroupError::NotCoordinator)?;
                }
                Ok(outcome.reply)
            }
            HeartbeatPath::Write(command) => self.write(command).await,
        }
    }

    /// Answers OffsetFetch, DescribeGroups and ListGroups from the leader's applied state.
    pub fn read(&self, command: &ReadCommand) -> Result<Reply, GroupError> {
        self.check_active()?;
        Ok(self
            .node
            .read_local(|a| a.app.coordinator().read(command).reply))
    }

    /// Reads the applied coordinator state on the active coordinator (the transaction
    /// operator APIs and `/metrics`); NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS elsewhere.
    pub fn read_state<R>(
        &self,
        f: impl FnOnce(&coordinator::CoordinatorState) -> R,
    ) -> Result<R, GroupError> {
        self.check_active()?;
        Ok(self.node.read_local(|a| f(a.app.coordinator())))
    }

    /// Whether `topic` exists with a partition `partition` in the replicated metadata.
    pub fn partition_known(&self, topic: &str, partition: i32) -> bool {
        self.node.read_local(|a| {
            a.app
                .topics()
                .get(topic)
                .is_some_and(|t| t.has_partition(partition))
        })
    }

    /// Whether `topic` exists in the replicated metadata.
    pub fn topic_known(&self, topic: &str) -> bool {
        self.node
            .read_local(|a| a.app.topics().get(topic).is_some())
    }

    /// Stops the runtime and the Raft node.
    pub async fn shutdown(self) {
        self.runtime_task.abort();
        let _ = self.runtime_task.await;
        drop(self.tx);
        match Arc::try_unwrap(self.node) {
            Ok(node) => node.shutdown().await,
            Err(node) => {
                // Someone still holds the node (a catalog clone): stop Raft through its handle.
                if let Err(e) = node.raft().shutdown().await {
                    tracing::warn!(error = %e, "raft shutdown");
                }
            }
        }
    }
}
