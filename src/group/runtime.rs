//! The coordinator runtime: one task per node owning all of the leader's soft state.
//!
//! ```text
//!  handler ─Register(token, responder)─┐            (sent before the command is submitted)
//!  CohortApp::apply ─Effect (log order)─┼─► one channel ─► Runtime task
//!  handler ─Heartbeat(cmd, responder)──┘                    ├─ waiting: token → responder
//!                                                           ├─ parked: (group, member, kind) → responder
//!  leader watch ─────────────────────────────────────────► ├─ timers: TimerWheel ─due─► TimerFired via Raft
//!                                                           └─ role: Follower → Loading → Active
//! ```
//!
//! Registration and effects share one FIFO channel, so a command's effect can never be seen
//! before its registration; effects are consumed in apply order, so a member reply never
//! overtakes the parking of the request it completes. Only an Active (leading, caught-up)
//! runtime acts on effects; otherwise they are dropped at the sink.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coordinator::{
    GroupId, MemberId, Outcome, ParkedKind, ReadCommand, Reply, TimerKey, WriteCommand,
};
use raft_meta::cohort_app::{Body, CohortApp, Effect, Envelope, RequestToken, TopicMeta};
use raft_meta::MetaNode;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::error::GroupError;
use super::leadership::{Leadership, Observed};
use super::metrics as m;
use super::timers::TimerWheel;
use super::trace;
use super::{now_ms, Role};

/// Where a waiting request's answer goes.
pub(crate) type Responder = oneshot::Sender<Result<Reply, GroupError>>;

pub(crate) enum RuntimeMsg {
    /// A handler is about to submit the command tagged `token`.
    Register {
        token: RequestToken,
        responder: Responder,
    },
    /// The submission failed; nothing will come for `token` (or it no longer matters).
    Forget { token: RequestToken },
    /// From the application, in apply order.
    Effect(Effect),
    Heartbeat {
        command: coordinator::Heartbeat,
        responder: Responder,
    },
}

/// Topics appeared or disappeared (what the data plane reconciles its partition logs from).
#[derive(Debug, Clone)]
pub struct TopicsChanged {
    pub created: Vec<Arc<TopicMeta>>,
    pub deleted: Vec<Arc<TopicMeta>>,
}

/// How often a new leader checks whether it has applied what was committed before it led.
const LOAD_POLL: Duration = Duration::from_millis(20);

pub(crate) struct Runtime {
    pub node: Arc<MetaNode<CohortApp>>,
    pub rx: mpsc::UnboundedReceiver<RuntimeMsg>,
    pub role_tx: watch::Sender<Role>,
    /// Read by the application's sink: effects are worth sending only while this node leads.
    pub effects_wanted: Arc<AtomicBool>,
    pub topic_events: broadcast::Sender<TopicsChanged>,
    pub waiting: HashMap<RequestToken, Responder>,
    pub parked: HashMap<(GroupId, MemberId, ParkedKind), Responder>,
    pub timers: TimerWheel,
    /// The role with the Raft term it belongs to (see [`Leadership`]).
    pub leadership: Leadership,
    /// The lag tracker this node exports while it is the active coordinator.
    pub lag: Option<Arc<crate::lag::LagFeed>>,
}

impl Runtime {
    pub(crate) async fn run(mut self) {
        let mut leader = self.node.leader_watch();
        // Raft's metrics move with every term, role and apply: the runtime re-reads its
        // leadership on each change (a Loading leader also on a slow tick, in case the last
        // change came before it started looking).
        let mut raft_metrics = self.node.raft().metrics();
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
                let wait_ms = u64::try_from(at.0 - now_ms().0).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(wait_ms))
            });
            tokio::select! {
                msg = self.rx.recv() => match msg {
                    Some(msg) => self.on_msg(msg),
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
                changed = raft_metrics.changed() => {
                    if changed.is_err() {
                        self.step_down();
                        return;
                    }
                    raft_metrics.borrow_and_update();
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
            let metrics = self.node.raft().metrics();
            let m = metrics.borrow();
            Observed {
                leads: m.current_leader == Some(self.node.node_id()),
                term: m.current_term,
                last_log_index: m.last_log_index.unwrap_or(0),
                applied_index: m.last_applied.map_or(0, |l| l.index),
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
        let now = now_ms();
        let (timers, has_cluster_id) = self.node.read_local(|a| {
            (
                a.app.coordinator().timers_to_arm(now),
                a.app.cluster().cluster_id.is_some(),
            )
        });
        self.timers.clear();
        for op in timers {
            self.timers.apply(op);
        }
        tracing::info!(
            term,
            timers = self.timers.len(),
            applied,
            "coordinator active"
        );
        self.start_lag_export();
        self.set_role(Role::Active);
        if !has_cluster_id {
            let cluster_id = new_cluster_id();
            self.submit_background(Body::InitCluster { cluster_id });
        }
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
        for (_, responder) in self.waiting.drain() {
            let _ = responder.send(Err(GroupError::NotCoordinator));
        }
        for (_, responder) in self.parked.drain() {
            let _ = responder.send(Err(GroupError::NotCoordinator));
        }
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
            RuntimeMsg::Register { token, responder } => {
                if *self.role_tx.borrow() == Role::Active {
                    self.waiting.insert(token, responder);
                } else {
                    let _ = responder.send(Err(GroupError::NotCoordinator));
                }
            }
            RuntimeMsg::Forget { token } => {
                self.waiting.remove(&token);
            }
            RuntimeMsg::Effect(effect) => self.on_effect(effect),
            RuntimeMsg::Heartbeat { command, responder } => {
                if *self.role_tx.borrow() != Role::Active {
                    let _ = responder.send(Err(GroupError::NotCoordinator));
                    return;
                }
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
                    self.timers.apply(op);
                }
                let _ = responder.send(Ok(outcome.reply));
            }
        }
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
                    if let Some(lag) = &self.lag {
                        // Every applied commit, unchanged offsets included, and every group
                        // change; the state read is the one just applied (or a later one).
                        self.node
                            .read_local(|a| lag.apply(&outcome.records, a.app.coordinator()));
                    }
                    self.on_outcome(origin, outcome);
                }
            }
            Effect::TopicsChanged { created, deleted } => {
                let _ = self.topic_events.send(TopicsChanged { created, deleted });
            }
            Effect::Restored => {
                // The whole state was replaced: what the lag tracker derived from it is stale.
                if *self.role_tx.borrow() == Role::Active {
                    self.start_lag_export();
                }
                let _ = self.topic_events.send(TopicsChanged {
                    created: Vec::new(),
                    deleted: Vec::new(),
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
        } = outcome;
        if tracing::enabled!(tracing::Level::DEBUG) {
            for (group, state) in records.iter().filter_map(trace::group_record) {
                tracing::debug!(group, seq = origin.map(|t| t.seq), "group {state}");
            }
        }
        if member_replies.iter().any(|r| {
            r.kind == ParkedKind::Join && matches!(&r.reply, Reply::Join(j) if j.error.is_none())
        }) {
            metrics::counter!(m::GROUP_REBALANCES_TOTAL).increment(1);
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
                reply => {
                    let _ = responder.send(Ok(reply));
                }
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
        for op in timers {
            self.timers.apply(op);
        }
    }

    fn fire_due(&mut self) {
        let now = now_ms();
        for key in self.timers.take_due(now) {
            let label = match &key {
                TimerKey::JoinPhase { .. } => "join_phase",
                TimerKey::SyncPhase { .. } => "sync_phase",
                TimerKey::MemberHeartbeat { .. } => "member_session",
                TimerKey::OffsetsRetention => "offsets_retention",
            };
            metrics::counter!(m::GROUP_TIMERS_FIRED_TOTAL, "timer" => label).increment(1);
            tracing::debug!(timer = ?key, "timer fired");
            self.submit_background(Body::Group(WriteCommand::TimerFired { key, now_ms: now }));
        }
    }

    /// Submits a command no client waits on. If it fails (leadership lost), the next leader
    /// re-arms its timers from state, so nothing is lost.
    fn submit_background(&self, body: Body) {
        let node = self.node.clone();
        tokio::spawn(async move {
            let command = Envelope { origin: None, body }.encode();
            if let Err(e) = node.write(command).await {
                tracing::debug!(error = %e, "background coordinator command not committed");
            }
        });
    }
}

fn count_expirations(fired: Option<&TimerKey>, outcome: &Outcome) {
    match fired {
        Some(TimerKey::MemberHeartbeat { .. }) if !outcome.records.is_empty() => {
            metrics::counter!(m::GROUP_MEMBER_EXPIRATIONS_TOTAL).increment(1);
        }
        Some(TimerKey::OffsetsRetention) => {
            let expired = outcome
                .records
                .iter()
                .filter(|r| matches!(r, coordinator::Record::OffsetCommit { value: None, .. }))
                .count();
            metrics::counter!(m::GROUP_OFFSETS_EXPIRED_TOTAL).increment(expired as u64);
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
