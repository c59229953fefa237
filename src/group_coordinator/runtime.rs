//! The coordinator runtime: one task per node owning all of the leader's soft state.
//!
//! ```text
//!  handler ─Register(token, responder)─┐            (sent before the command is submitted)
//!  CohortApp::apply ─Effect (log order)─┼─► one channel ─► Runtime task
//!  handler ─Heartbeat(cmd, responder)──┘                    ├─ waiting: token → responder
//!                                                           ├─ parked: (group, member, kind) → responder
//!  leader watch ─────────────────────────────────────────► ├─ timers: TimerWheel ─due─► TimerFired via Raft
//!  background write failed ─WriteFailed(token)─────────────► ├─ fired: firings in flight, members expiring
//!                                                           ├─ member_writes: writes in flight per member, deferred member timers
//!                                                           └─ role: Follower → Loading → Active
//! ```
//!
//! A fired timer is submitted with a token of its own, like a client request: its effect says
//! when it applied (the expiring member's waiting requests are answered then), and a failed
//! write comes back as `WriteFailed` and is re-armed after a backoff while this node still
//! leads in the same term (see [`super::fired`]). A member's timer (session, revocation,
//! classic join or sync deadline) that comes due while a write of that member is in flight is
//! deferred until the write applies, and dropped if its outcome re-armed or cancelled it (see
//! [`super::member_writes`]).
//!
//! Registration and effects share one FIFO channel, so a command's effect can never be seen
//! before its registration; effects are consumed in apply order, so a member reply never
//! overtakes the parking of the request it completes. Only an Active (leading, caught-up)
//! runtime acts on effects; otherwise they are dropped at the sink.

use crate::group_coordinator::maps::Map;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use coordinator::{
    AssignmentNeeded, ErrorKind, GroupId, MemberId, Outcome, ParkedKind, ReadCommand, Reply,
    TimerKey, TimerOp, WriteCommand,
};
use raft_meta::cohort_app::{Body, CohortApp, Effect, Envelope, RequestToken, TopicMeta};
use raft_meta::{MetaNode, WriteError};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::error::GroupError;
use super::fired::{FiredTimers, NotQueued};
use super::leadership::{Leadership, Observed};
use super::member_writes::{Due, Member, MemberWrites, Op};
use super::metrics as m;
use super::timers::TimerWheel;
use super::trace;
use super::{Role, TokenSource};

/// Where a waiting request's answer goes.
pub(crate) type Responder = oneshot::Sender<Result<Reply, GroupError>>;

pub(crate) enum RuntimeMsg {
    /// A handler is about to submit the command tagged `token`; `member` is the member whose
    /// session the command may refresh (a commit, join, sync or leave of a known member).
    Register {
        token: RequestToken,
        member: Option<Member>,
        responder: Responder,
    },
    /// The submission failed; nothing will come for `token` (or it no longer matters).
    Forget { token: RequestToken },
    /// From the application, in apply order.
    /// Boxed: an outcome is large next to the other messages.
    Effect(Box<Effect>),
    Heartbeat {
        command: coordinator::Heartbeat,
        responder: Responder,
    },
    /// A JoinGroup or SyncGroup about to be answered from applied state: answered once the
    /// member's expiry, if one is on its way, has applied.
    AwaitMember {
        group_id: GroupId,
        member_id: MemberId,
        ready: oneshot::Sender<MemberReady>,
    },
    /// A consumer heartbeat answered from applied state: its member's session moves.
    ArmTimers(Vec<TimerOp>),
    /// A consumer group's off-path assignment was not committed: run it again on the state
    /// as it is now (if this node still leads).
    RunAssignment(GroupId),
    /// A background command tagged `token` was not committed.
    WriteFailed {
        token: RequestToken,
        error: WriteError,
    },
    /// Pass `mark` along the topic events, behind every effect applied before it was sent.
    TopicEventsMark(Arc<tokio::sync::Notify>),
}

/// The answer to [`RuntimeMsg::AwaitMember`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemberReady {
    /// No expiry of the member is on its way (any more): decide on applied state.
    Proceed,
    /// Too many of the member's requests wait on its expiry: answer UNKNOWN_MEMBER_ID, as
    /// Kafka answers a member whose session expired.
    AnswerExpired,
}

/// A request of an expiring member (see [`super::fired`]).
pub(crate) enum Waiter {
    Heartbeat {
        command: coordinator::Heartbeat,
        responder: Responder,
    },
    Member(oneshot::Sender<MemberReady>),
}

/// A write submitted by the runtime itself, outside any client request.
pub(crate) type WriteFuture = Pin<Box<dyn Future<Output = Result<Bytes, WriteError>> + Send>>;

/// The Raft node's write path, as the handle (client requests) and the runtime (timer
/// firings, the cluster id) use it: a test may wrap it to hold or fail writes.
pub(crate) type BackgroundWrites = Arc<dyn Fn(Bytes) -> WriteFuture + Send + Sync>;

/// The production [`BackgroundWrites`]: straight to the Raft node.
pub(crate) fn raft_writes(node: Arc<MetaNode<CohortApp>>) -> BackgroundWrites {
    Arc::new(move |command| {
        let node = node.clone();
        Box::pin(async move { node.write(command).await })
    })
}

/// Topics appeared or disappeared (what the data plane reconciles its partition logs from).
#[derive(Debug, Clone)]
pub struct TopicsChanged {
    pub created: Vec<Arc<TopicMeta>>,
    pub deleted: Vec<Arc<TopicMeta>>,
    /// A snapshot replaced the whole state: topics may have gone without a deletion event.
    pub restored: bool,
    /// A mark, no change: the deletions follower notifies it once it has acted on every event
    /// before it (see [`super::GroupCoordinator::topic_events_handled`]).
    pub mark: Option<Arc<tokio::sync::Notify>>,
}

/// Longest an EndTxn answer waits for its transaction's markers and completion (decision
/// 0152): past it (an owner down, a disk full) the client is answered anyway, the commit or
/// abort being decided and replicated, and the writer keeps going.
const END_TXN_WAIT_MAX: Duration = Duration::from_secs(5);

/// Sends `reply` once `completed` fires, is dropped (leadership ended: the next leader
/// completes the transaction) or [`END_TXN_WAIT_MAX`] passes, whichever is first. The number
/// of such answers waiting is bounded by the handle's in-flight permits.
fn answer_when_completed(completed: oneshot::Receiver<()>, responder: Responder, reply: Reply) {
    tokio::spawn(async move {
        if tokio::time::timeout(END_TXN_WAIT_MAX, completed)
            .await
            .is_err()
        {
            metrics::counter!(m::TXN_END_ANSWERED_BEFORE_COMPLETION_TOTAL).increment(1);
            tracing::info!(
                wait_ms = END_TXN_WAIT_MAX.as_millis() as u64,
                "EndTxn answered before its markers were all written"
            );
        }
        let _ = responder.send(Ok(reply));
    });
}

/// How long an off-path assignment that was not committed waits before it runs again.
const ASSIGNMENT_RETRY: Duration = Duration::from_millis(200);

/// Messages handled per turn of the runtime's loop before it looks at its timers and watchers.
const DRAIN_PER_TURN: usize = 256;

/// How often a new leader checks whether it has applied what was committed before it led.
const LOAD_POLL: Duration = Duration::from_millis(20);

pub(crate) struct Runtime {
    pub node: Arc<MetaNode<CohortApp>>,
    pub rx: mpsc::UnboundedReceiver<RuntimeMsg>,
    pub role_tx: watch::Sender<Role>,
    /// Read by the application's sink: effects are worth sending only while this node leads.
    pub effects_wanted: Arc<AtomicBool>,
    pub topic_events: broadcast::Sender<TopicsChanged>,
    pub waiting: Map<RequestToken, Responder>,
    pub parked: Map<(GroupId, MemberId, ParkedKind), Responder>,
    pub timers: TimerWheel,
    /// The role with the Raft term it belongs to (see [`Leadership`]).
    pub leadership: Leadership,
    /// The lag tracker this node exports while it is the active coordinator.
    pub lag: Option<Arc<crate::lag::LagFeed>>,
    /// Timer firings in flight and the requests of expiring members.
    pub fired: FiredTimers<Waiter>,
    /// Members' writes in flight, and the session expiries deferred behind them.
    pub member_writes: MemberWrites,
    /// How many members are expiring, for [`super::GroupCoordinator`] to skip asking when none is.
    pub expiring_members: Arc<AtomicUsize>,
    /// Tokens for the runtime's own commands (shared with the handle's).
    pub tokens: Arc<TokenSource>,
    pub background_writes: BackgroundWrites,
    /// To report a failed background write; weak, so the runtime ends with the handle.
    pub to_self: mpsc::WeakUnboundedSender<RuntimeMsg>,
    /// Writes the markers of transactions that entered a Prepare state (issue 13).
    pub markers: super::txn_markers::MarkerWriter,
}

impl Runtime {
    pub(crate) async fn run(mut self) {
        let mut leader = self.node.leader_watch();
        // The runtime re-reads its leadership when Raft's server metrics (role, leader, vote)
        // change, and while Loading also when its data metrics (log and apply indexes) do
        // (and on a slow tick, in case the last change came before it started looking). Not
        // on Raft's whole metrics: openraft sends those on every turn of its loop, several
        // times per commit, and an Active runtime has nothing to learn from them (0131).
        let mut server_metrics = self.node.raft().server_metrics();
        let mut data_metrics = self.node.raft().data_metrics();
        let mut load_tick = tokio::time::interval(LOAD_POLL);
        load_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.observe();
        loop {
            let role = *self.role_tx.borrow();
            let deadline = match role {
                Role::Active => self.timers.next_deadline(),
                _ => None,
            };
            let sleep = deadline.map(|at| {
                let wait_ms = u64::try_from(at.0 - crate::clock::now().0).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(wait_ms))
            });
            tokio::select! {
                msg = self.rx.recv() => match msg {
                    Some(msg) => {
                        self.on_msg(msg);
                        // What else is already queued is handled before the next select: under
                        // load one turn of this loop (a fresh timer, the watchers polled) then
                        // serves many messages instead of one.
                        for _ in 1..DRAIN_PER_TURN {
                            match self.rx.try_recv() {
                                Ok(msg) => self.on_msg(msg),
                                Err(_) => break,
                            }
                        }
                        self.publish_expiring();
                    }
                    None => return,
                },
                changed = leader.changed() => {
                    if changed.is_err() {
                        self.step_down();
                        return;
                    }
                    leader.borrow_and_update();
                    self.observe();
                }
                changed = server_metrics.changed() => {
                    if changed.is_err() {
                        self.step_down();
                        return;
                    }
                    server_metrics.borrow_and_update();
                    self.observe();
                }
                changed = data_metrics.changed(), if role == Role::Loading => {
                    if changed.is_err() {
                        self.step_down();
                        return;
                    }
                    data_metrics.borrow_and_update();
                    self.observe();
                }
                _ = async { if let Some(s) = sleep { s.await } }, if deadline.is_some() => {
                    self.fire_due();
                }
                _ = load_tick.tick(), if role == Role::Loading => {
                    self.observe();
                }
            }
        }
    }

    /// Re-reads leadership from Raft and acts on the transition: a lost leadership (or one
    /// re-won in a new term) drops the soft state; a finished load arms the timers and serves.
    fn observe(&mut self) {
        let observed = {
            // Server metrics first: openraft publishes the data metrics before them, so the
            // indexes read next are at least as new as the role (a leader's load target is
            // never an older log end than the one it took office with).
            let (leader, term) = {
                let server = self.node.raft().server_metrics();
                let m = server.borrow();
                (m.current_leader, m.vote.leader_id().get_term())
            };
            let (last_log_index, applied_index) = {
                let data = self.node.raft().data_metrics();
                let d = data.borrow();
                (
                    d.last_log.map_or(0, |l| l.index),
                    d.last_applied.map_or(0, |l| l.index),
                )
            };
            let running = self.node.raft().metrics().borrow().running_state.is_ok();
            Observed {
                // A stopped Raft (a halted apply loop included) keeps its last leader in the
                // metrics: it leads nothing.
                leads: leader == Some(self.node.node_id())
                    && running
                    && self.node.apply_halted().is_none(),
                term,
                last_log_index,
                applied_index,
            }
        };
        let before = self.leadership;
        let step = before.observe(observed);
        if step.step_down {
            self.step_down();
        }
        self.leadership = step.next;
        let unchanged = !step.step_down
            && matches!(
                (before, step.next),
                (Leadership::Loading { .. }, Leadership::Loading { .. })
                    | (Leadership::Active { .. }, Leadership::Active { .. })
                    | (Leadership::Follower, Leadership::Follower)
            );
        if unchanged {
            return;
        }
        match step.next {
            Leadership::Loading { term, target } => {
                self.effects_wanted.store(true, Ordering::SeqCst);
                tracing::info!(
                    term,
                    target_index = target,
                    "leading: loading the coordinator"
                );
                self.set_role(Role::Loading);
            }
            Leadership::Active { term } => {
                self.effects_wanted.store(true, Ordering::SeqCst);
                self.activate(term, observed.applied_index);
            }
            Leadership::Follower => {}
        }
    }

    fn set_role(&self, role: Role) {
        self.role_tx.send_if_modified(|r| {
            let changed = *r != role;
            *r = role;
            changed
        });
        metrics::gauge!(m::GROUP_COORDINATOR_ACTIVE).set(if role == Role::Active {
            1.0
        } else {
            0.0
        });
    }

    /// The load is done: arm the timers the applied state implies and serve.
    fn activate(&mut self, term: u64, applied: u64) {
        let now = crate::clock::now();
        let (timers, has_cluster_id, config_init, scram_init) = self.node.read_local(|a| {
            (
                a.app.coordinator().timers_to_arm(now),
                a.app.cluster().cluster_id.is_some(),
                static_config_to_propose(&a.app, self.sole_voter()),
                a.app.scram_bootstrap_to_propose(),
            )
        });
        // Before any client command this leader accepts: every group command after it in the
        // log is decided with the replicated values.
        if let Some(body) = config_init {
            self.submit_background(None, body);
        }
        // A cluster never bootstrapped gets this leader's `--scram-user` credentials (applied
        // once: a later leader's proposal is ignored by every replica).
        if let Some(body) = scram_init {
            self.submit_background(None, body);
        }
        self.timers.clear();
        for op in timers {
            self.timers.apply(op);
        }
        // The previous leader's assignor runs died with it.
        let behind = self
            .node
            .read_local(|a| a.app.coordinator().assignments_to_run());
        tracing::info!(
            term,
            timers = self.timers.len(),
            applied,
            "coordinator active"
        );
        self.start_lag_export();
        self.set_role(Role::Active);
        self.run_assignments(behind.into_iter().map(|a: AssignmentNeeded| a.group_id));
        // The previous leader's marker writes died with it: re-drive every prepared one.
        let prepared = self
            .node
            .read_local(|a| a.app.coordinator().txn_markers_to_redrive());
        self.markers.activate(term);
        self.markers.write(term, prepared);
        if !has_cluster_id {
            let cluster_id = new_cluster_id();
            self.submit_background(None, Body::InitCluster { cluster_id });
        }
    }

    /// Whether this node is the cluster's only voter (its flags then are the static layer).
    fn sole_voter(&self) -> bool {
        let metrics = self.node.raft().metrics();
        let m = metrics.borrow();
        let mut voters = m.membership_config.membership().voter_ids();
        voters.next() == Some(self.node.node_id()) && voters.next().is_none()
    }

    /// Seeds the lag tracker from the applied state and starts exporting group figures.
    fn start_lag_export(&self) {
        if let Some(lag) = &self.lag {
            self.node
                .read_local(|a| lag.start_exporting(a.app.coordinator()));
        }
    }

    /// Leadership lost: everything waiting is answered NOT_COORDINATOR (clients look the
    /// coordinator up again and retry), timers stop.
    fn step_down(&mut self) {
        self.effects_wanted.store(false, Ordering::SeqCst);
        self.markers.step_down();
        for (_, responder) in self.waiting.drain() {
            let _ = responder.send(Err(GroupError::NotCoordinator));
        }
        for (_, responder) in self.parked.drain() {
            let _ = responder.send(Err(GroupError::NotCoordinator));
        }
        // Dropping a member's sender answers its JoinGroup/SyncGroup NOT_COORDINATOR too.
        for waiter in self.fired.drain() {
            if let Waiter::Heartbeat { responder, .. } = waiter {
                let _ = responder.send(Err(GroupError::NotCoordinator));
            }
        }
        self.member_writes.clear();
        self.publish_expiring();
        self.timers.clear();
        if let Some(lag) = &self.lag {
            lag.stop_exporting();
        }
        if *self.role_tx.borrow() != Role::Follower {
            tracing::info!("no longer leading: coordinator inactive");
        }
        self.set_role(Role::Follower);
    }

    fn on_msg(&mut self, msg: RuntimeMsg) {
        match msg {
            RuntimeMsg::Register {
                token,
                member,
                responder,
            } => {
                if *self.role_tx.borrow() == Role::Active {
                    self.waiting.insert(token, responder);
                    if let Some(member) = member {
                        self.member_writes.registered(token, member);
                    }
                } else {
                    let _ = responder.send(Err(GroupError::NotCoordinator));
                }
            }
            RuntimeMsg::Forget { token } => {
                self.waiting.remove(&token);
                self.member_write_done(&token);
            }
            RuntimeMsg::Effect(effect) => self.on_effect(*effect),
            RuntimeMsg::Heartbeat { command, responder } => {
                if *self.role_tx.borrow() != Role::Active {
                    let _ = responder.send(Err(GroupError::NotCoordinator));
                    return;
                }
                let (group_id, member_id) = (command.group_id.clone(), command.member_id.clone());
                match self.fired.wait(
                    &group_id,
                    &member_id,
                    Waiter::Heartbeat { command, responder },
                ) {
                    Ok(()) => {
                        tracing::debug!(
                            group = group_id.as_str(),
                            member = member_id.as_str(),
                            "heartbeat waits for the member's expiry"
                        );
                    }
                    Err(NotQueued::NotExpiring(waiter)) => self.answer(waiter),
                    Err(NotQueued::Full(Waiter::Heartbeat { responder, .. })) => {
                        let _ =
                            responder.send(Ok(Reply::Heartbeat(Err(ErrorKind::UnknownMemberId))));
                    }
                    Err(NotQueued::Full(Waiter::Member(ready))) => {
                        let _ = ready.send(MemberReady::AnswerExpired);
                    }
                }
            }
            RuntimeMsg::AwaitMember {
                group_id,
                member_id,
                ready,
            } => {
                if *self.role_tx.borrow() != Role::Active {
                    // Dropped: the handle answers NOT_COORDINATOR.
                    return;
                }
                match self
                    .fired
                    .wait(&group_id, &member_id, Waiter::Member(ready))
                {
                    Ok(()) => {
                        tracing::debug!(
                            group = group_id.as_str(),
                            member = member_id.as_str(),
                            "join or sync waits for the member's expiry"
                        );
                    }
                    Err(NotQueued::NotExpiring(waiter)) => self.answer(waiter),
                    Err(NotQueued::Full(waiter)) => {
                        if let Waiter::Member(ready) = waiter {
                            let _ = ready.send(MemberReady::AnswerExpired);
                        }
                    }
                }
            }
            RuntimeMsg::ArmTimers(timers) => {
                if *self.role_tx.borrow() == Role::Active {
                    self.apply_timers(timers);
                }
            }
            RuntimeMsg::RunAssignment(group_id) => {
                if *self.role_tx.borrow() == Role::Active {
                    self.run_assignments([group_id]);
                }
            }
            RuntimeMsg::WriteFailed { token, error } => self.on_write_failed(token, &error),
            RuntimeMsg::TopicEventsMark(mark) => {
                let event = TopicsChanged {
                    created: Vec::new(),
                    deleted: Vec::new(),
                    restored: false,
                    mark: Some(mark.clone()),
                };
                if self.topic_events.send(event).is_err() {
                    // Nobody follows the events: nothing is left to act on.
                    mark.notify_one();
                }
            }
        }
    }

    /// Answers a request of a member from the applied state as it is now.
    fn answer(&mut self, waiter: Waiter) {
        match waiter {
            Waiter::Member(ready) => {
                let _ = ready.send(MemberReady::Proceed);
            }
            Waiter::Heartbeat {
                mut command,
                responder,
            } => {
                // Checked again here, where the applied state is read: the heartbeat may
                // have queued behind other messages since the handle checked.
                if let Err(e) = super::lease_check(&self.node) {
                    let _ = responder.send(Err(e));
                    return;
                }
                // A heartbeat that waited re-arms the session from now, not from its arrival.
                command.now_ms = command.now_ms.max(crate::clock::now());
                let command = ReadCommand::Heartbeat(command);
                let outcome = self.node.read_local(|a| a.app.coordinator().read(&command));
                if let ReadCommand::Heartbeat(h) = &command {
                    // Successful heartbeats are routine; a refused one is part of the story.
                    if matches!(outcome.reply, Reply::Heartbeat(Err(_))) {
                        tracing::debug!(
                            group = h.group_id.as_str(),
                            member = h.member_id.as_str(),
                            generation = h.generation.0,
                            "heartbeat refused: {}",
                            trace::reply(&outcome.reply)
                        );
                    } else {
                        tracing::trace!(
                            group = h.group_id.as_str(),
                            member = h.member_id.as_str(),
                            generation = h.generation.0,
                            "heartbeat"
                        );
                    }
                }
                for op in outcome.timers {
                    if self.member_writes.op(&op) == Op::Apply {
                        self.timers.apply(op);
                    }
                }
                let _ = responder.send(Ok(outcome.reply));
            }
        }
    }

    fn answer_all(&mut self, waiters: Vec<Waiter>) {
        for waiter in waiters {
            self.answer(waiter);
        }
    }

    fn publish_expiring(&self) {
        self.expiring_members
            .store(self.fired.expiring_members(), Ordering::SeqCst);
    }

    /// A background write failed. A timer firing is armed again after a backoff if this node
    /// still leads in the term that fired it (a new term re-arms every timer from state on
    /// its own); the member stays expiring until a retry applies, unless a later command has
    /// already re-armed its timer.
    fn on_write_failed(&mut self, token: RequestToken, error: &WriteError) {
        let Some(failed) = self.fired.failed(&token) else {
            tracing::debug!(error = %error, "background coordinator command not committed");
            return;
        };
        let key = failed.submitted.key.clone();
        let same_term = matches!(
            self.leadership,
            Leadership::Active { term } if term == failed.submitted.term
        );
        if !same_term {
            tracing::debug!(timer = ?key, error = %error,
                "timer firing not committed; leadership changed, the next leader re-arms it");
            return;
        }
        metrics::counter!(m::GROUP_TIMER_RETRIES_TOTAL).increment(1);
        if self.timers.is_armed(&key) {
            tracing::info!(timer = ?key, error = %error,
                "timer firing not committed; a later command re-armed it");
            let waiters = self.fired.moved(&key);
            self.answer_all(waiters);
            return;
        }
        let backoff = failed.backoff();
        tracing::warn!(timer = ?key, error = %error, attempts = failed.attempts,
            retry_in_ms = backoff.as_millis() as u64, "timer firing not committed; re-armed");
        let backoff_ms = i64::try_from(backoff.as_millis()).unwrap_or(i64::MAX);
        self.timers.apply(TimerOp::Set {
            key,
            at_ms: crate::clock::now().plus_ms(backoff_ms),
        });
    }

    fn on_effect(&mut self, effect: Effect) {
        match effect {
            Effect::Group {
                origin,
                fired,
                outcome,
                ..
            } => {
                if *self.role_tx.borrow() == Role::Active {
                    count_expirations(fired.as_ref(), &outcome);
                    crate::txn_metrics::count(fired.as_ref(), &outcome);
                    if let Some(lag) = &self.lag {
                        // Every applied commit, unchanged offsets included, and every group
                        // change; the state read is the one just applied (or a later one).
                        self.node
                            .read_local(|a| lag.apply(&outcome.records, a.app.coordinator()));
                    }
                    let released = origin.and_then(|t| self.fired.applied(&t));
                    self.on_outcome(origin, outcome);
                    if let Some(waiters) = released {
                        self.answer_all(waiters);
                    }
                    if let Some(token) = origin {
                        self.member_write_done(&token);
                    }
                }
            }
            Effect::TopicsChanged { created, deleted } => {
                let _ = self.topic_events.send(TopicsChanged {
                    created,
                    deleted,
                    restored: false,
                    mark: None,
                });
            }
            Effect::Restored => {
                // The whole state was replaced: what the lag tracker derived from it is stale.
                if *self.role_tx.borrow() == Role::Active {
                    self.start_lag_export();
                }
                let _ = self.topic_events.send(TopicsChanged {
                    created: Vec::new(),
                    deleted: Vec::new(),
                    restored: true,
                    mark: None,
                });
            }
        }
    }

    fn on_outcome(&mut self, origin: Option<RequestToken>, outcome: Outcome) {
        let Outcome {
            reply,
            member_replies,
            timers,
            records,
            assignments,
            txn_markers,
        } = outcome;
        // An EndTxn that moved its transaction to a Prepare state is answered once the markers
        // are written and the completion applied (decision 0152): the client's next
        // AddPartitionsToTxn then finds the transaction complete instead of being answered
        // CONCURRENT_TRANSACTIONS and backing off.
        let end_txn = match (&reply, txn_markers.as_slice()) {
            (Reply::Txn(Ok(())), [m]) if origin.is_some() => Some(super::txn_markers::key_of(m)),
            _ => None,
        };
        if let (false, Leadership::Active { term }) = (txn_markers.is_empty(), self.leadership) {
            self.markers.write(term, txn_markers);
        }
        let completion = end_txn.and_then(|key| self.markers.completion(&key));
        if tracing::enabled!(tracing::Level::DEBUG) {
            for (group, state) in records.iter().filter_map(trace::group_record) {
                tracing::debug!(group, seq = origin.map(|t| t.seq), "group {state}");
            }
        }
        if let Some(summary) = trace::rebalance(&member_replies) {
            metrics::counter!(m::GROUP_REBALANCES_TOTAL).increment(1);
            tracing::info!(
                group = summary.group,
                generation = summary.generation,
                members = summary.members,
                protocol = summary.protocol,
                "group rebalanced"
            );
        }
        if let Some(responder) = origin.and_then(|t| self.waiting.remove(&t)) {
            match reply {
                Reply::Parked {
                    group_id,
                    member_id,
                    kind,
                } => {
                    // A newer request of the same member and kind supersedes the older one,
                    // whose client has given up on it: dropping its responder answers it
                    // NOT_COORDINATOR, so a client that is still there looks up and retries.
                    tracing::debug!(
                        group = group_id.as_str(),
                        member = member_id.as_str(),
                        ?kind,
                        "parked"
                    );
                    let key = (group_id, member_id, kind);
                    if self.parked.insert(key.clone(), responder).is_some() {
                        tracing::debug!(
                            group = key.0.as_str(),
                            member = key.1.as_str(),
                            ?kind,
                            "an older parked request of the member was superseded"
                        );
                    }
                }
                reply => match completion {
                    Some(completed) => answer_when_completed(completed, responder, reply),
                    None => {
                        let _ = responder.send(Ok(reply));
                    }
                },
            }
        }
        for r in member_replies {
            let key = (r.group_id, r.member_id, r.kind);
            let responder = self.parked.remove(&key);
            tracing::debug!(
                group = key.0.as_str(),
                member = key.1.as_str(),
                kind = ?key.2,
                waiting = responder.is_some(),
                "parked request completed: {}",
                trace::reply(&r.reply)
            );
            if let Some(responder) = responder {
                if responder.send(Ok(r.reply)).is_err() {
                    tracing::debug!(
                        group = key.0.as_str(),
                        member = key.1.as_str(),
                        "the parked request's connection was gone"
                    );
                }
            }
        }
        self.apply_timers(timers);
        self.run_assignments(assignments.into_iter().map(|a| a.group_id));
    }

    /// Arms or cancels timers, releasing the requests that waited on a timer that moved.
    fn apply_timers(&mut self, timers: Vec<TimerOp>) {
        for op in timers {
            if self.member_writes.op(&op) == Op::Ignore {
                continue;
            }
            let key = op.key().clone();
            self.timers.apply(op);
            let waiters = self.fired.moved(&key);
            self.answer_all(waiters);
        }
    }

    /// Runs the assignor of each consumer group too large to assign inline, off the runtime
    /// (a blocking thread), and submits the result; `decide` installs it only if the group is
    /// still at the epoch it was computed for. A run that is not committed is taken again
    /// from the state of the moment; a new leader runs what is left (`activate`).
    /// The job is taken from the state as it is now, whatever epoch asked for it.
    fn run_assignments(&self, groups: impl IntoIterator<Item = GroupId>) {
        for group_id in groups {
            let Some(job) = self
                .node
                .read_local(|a| a.app.coordinator().assignment_job(&group_id))
            else {
                continue;
            };
            let writes = self.background_writes.clone();
            let to_self = self.to_self.clone();
            tokio::spawn(async move {
                let install = match tokio::task::spawn_blocking(move || {
                    job.run(crate::clock::now())
                })
                .await
                {
                    Ok(install) => install,
                    Err(e) => {
                        tracing::error!(group = group_id.as_str(), error = %e, "assignor run failed");
                        return;
                    }
                };
                tracing::debug!(
                    group = group_id.as_str(),
                    epoch = install.epoch,
                    members = install.members.len(),
                    "off-path assignment computed"
                );
                let body = Body::Group(WriteCommand::InstallTargetAssignment(install));
                if let Err(error) = writes(Envelope { origin: None, body }.encode()).await {
                    tracing::debug!(group = group_id.as_str(), error = %error,
                        "off-path assignment not committed; run again");
                    tokio::time::sleep(ASSIGNMENT_RETRY).await;
                    if let Some(tx) = to_self.upgrade() {
                        let _ = tx.send(RuntimeMsg::RunAssignment(group_id));
                    }
                }
            });
        }
    }

    fn fire_due(&mut self) {
        let Leadership::Active { term } = self.leadership else {
            return;
        };
        let now = crate::clock::now();
        for key in self.timers.take_due(now) {
            if self.member_writes.due(&key) == Due::Deferred {
                tracing::debug!(timer = ?key, "due with the member's writes in flight: firing deferred");
                if let TimerKey::MemberHeartbeat {
                    group_id,
                    member_id,
                } = &key
                {
                    self.fired.deferred(group_id, member_id);
                }
                continue;
            }
            self.fire(key, term, now);
        }
        self.publish_expiring();
    }

    /// Submits `key`'s `TimerFired` through Raft, tagged so its effect or failure comes back.
    fn fire(&mut self, key: TimerKey, term: u64, now: coordinator::TimestampMs) {
        let label = match &key {
            TimerKey::JoinPhase { .. } => "join_phase",
            TimerKey::SyncPhase { .. } => "sync_phase",
            TimerKey::MemberHeartbeat { .. } => "member_session",
            TimerKey::OffsetsRetention => "offsets_retention",
            TimerKey::ConsumerRebalance { .. } => "consumer_revocation",
            TimerKey::TransactionTimeout { .. } => "transaction_timeout",
            TimerKey::ClassicMemberJoin { .. } => "classic_member_join",
            TimerKey::ClassicMemberSync { .. } => "classic_member_sync",
        };
        metrics::counter!(m::GROUP_TIMERS_FIRED_TOTAL, "timer" => label).increment(1);
        tracing::debug!(timer = ?key, "timer fired");
        let token = self.tokens.next();
        self.fired.fired(token, key.clone(), term);
        self.submit_background(
            Some(token),
            Body::Group(WriteCommand::TimerFired { key, now_ms: now }),
        );
    }

    /// A member's write tagged `token` was applied or will not be seen; if a timer of the
    /// member was deferred behind it and nothing else, the deferral ends. An outcome that
    /// re-armed or cancelled the key decided it already (a refreshed session: the member
    /// stays, its requests were released when the timer moved; a JoinGroup or SyncGroup that
    /// cancelled its deadline); a key no outcome touched fires now and the state it is applied
    /// to re-evaluates it.
    fn member_write_done(&mut self, token: &RequestToken) {
        for key in self.member_writes.done(token) {
            if self.timers.is_armed(&key) {
                tracing::debug!(timer = ?key, "deferred firing dropped: the member's write re-armed it");
                let waiters = self.fired.moved(&key);
                self.answer_all(waiters);
                continue;
            }
            // Writes are forgotten on step-down, so this runs only while leading; a new leader
            // arms every member timer from its state on its own.
            if let Leadership::Active { term } = self.leadership {
                self.fire(key, term, crate::clock::now());
            }
        }
    }

    /// Submits a command no client waits on. A tagged one that fails comes back as
    /// `WriteFailed`; an untagged one (the cluster id) is proposed again by the next leader.
    fn submit_background(&self, origin: Option<RequestToken>, body: Body) {
        let write = (self.background_writes)(Envelope { origin, body }.encode());
        let to_self = self.to_self.clone();
        tokio::spawn(async move {
            let Err(error) = write.await else {
                return;
            };
            match (origin, to_self.upgrade()) {
                (Some(token), Some(tx)) => {
                    let _ = tx.send(RuntimeMsg::WriteFailed { token, error });
                }
                _ => {
                    tracing::debug!(error = %error, "background coordinator command not committed")
                }
            }
        });
    }
}

/// The static layer a new leader proposes: its flags when the cluster has no configuration
/// yet, and, on a one-voter cluster, when its flags changed since (a restart with new flags
/// takes effect there, as a single Kafka broker's static configuration does). A cluster of
/// several voters keeps the first leader's flags; later changes go through
/// IncrementalAlterConfigs.
fn static_config_to_propose(app: &CohortApp, sole_voter: bool) -> Option<Body> {
    let flags = coordinator::ClusterConfig::from_flags(app.flags_config());
    let replace = match app.cluster_config() {
        None => false,
        Some(c) if sole_voter && c.static_values != flags.static_values => true,
        Some(_) => return None,
    };
    Some(Body::InitClusterConfig {
        static_values: flags.static_values,
        replace,
    })
}

fn count_expirations(fired: Option<&TimerKey>, outcome: &Outcome) {
    match fired {
        Some(TimerKey::MemberHeartbeat {
            group_id,
            member_id,
        }) if !outcome.records.is_empty() => {
            metrics::counter!(m::GROUP_MEMBER_EXPIRATIONS_TOTAL).increment(1);
            tracing::info!(
                group = group_id.as_str(),
                member = member_id.as_str(),
                "member expired: no heartbeat within its session timeout"
            );
        }
        Some(TimerKey::OffsetsRetention) => {
            let expired = outcome
                .records
                .iter()
                .filter(|r| matches!(r, coordinator::Record::OffsetCommit { value: None, .. }))
                .count();
            metrics::counter!(m::GROUP_OFFSETS_EXPIRED_TOTAL).increment(expired as u64);
            if expired > 0 {
                tracing::info!(offsets = expired, "committed offsets expired (retention)");
            }
        }
        _ => {}
    }
}

fn new_cluster_id() -> String {
    // Kafka cluster ids are 16 random bytes in URL-safe base64 without padding.
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bits = uuid::Uuid::new_v4().as_u128();
    (0..22)
        .map(|i| ALPHABET[((bits >> (i * 6)) & 63) as usize] as char)
        .collect()
}
