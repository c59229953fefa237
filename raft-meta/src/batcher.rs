//! Write batching: concurrent writers' commands ride in one log entry.
//!
//! ```text
//!  write(cmd) ─► bounded queue ─► [take a slot] ─► drain what is queued (≤ commands / bytes caps)
//!                                              ─► client_write(CommandBatch) ─► replies fan out
//! ```
//!
//! No linger timer: a batch closes when a slot frees up and takes whatever queued meanwhile
//! (Kafka's adaptive linger), so a lone writer pays no added latency and a crowd shares fsyncs.
//!
//! A writer that finds nothing queued and a slot free skips the queue: it takes the slot and
//! submits its command itself, from its own task ([`Writes::write`]). The batcher task, its
//! spawned submitter and the reply relay are three task wake-ups a lone write does not need
//! (decision 0131); under load the slots are busy, writes queue and batch as before.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{ClientWriteError, RaftError};
use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::control::leader_of;
use crate::error::WriteError;
use crate::status::LeaderInfo;
use crate::types::{CommandBatch, NodeId, NodeInfo, Raft};

pub(crate) struct PendingWrite {
    pub command: Bytes,
    pub reply: oneshot::Sender<Result<Bytes, WriteError>>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchLimits {
    pub commands_max: usize,
    pub bytes_max: usize,
    pub in_flight_max: usize,
    pub write_timeout: Duration,
}

/// The writers' side of the batcher: the queue, and the slots it shares with the batcher task.
#[derive(Clone)]
pub(crate) struct Writes {
    raft: Raft,
    queue: mpsc::Sender<PendingWrite>,
    slots: Arc<Semaphore>,
    timeout: Duration,
    meters: Meters,
}

/// The batcher's metrics, looked up once (a lookup hashes the name and locks the registry).
#[derive(Clone)]
struct Meters {
    alone: metrics::Counter,
    batch_commands: metrics::Histogram,
}

impl Meters {
    fn new() -> Self {
        Self {
            alone: metrics::counter!(crate::metrics::WRITES_ALONE_TOTAL),
            batch_commands: metrics::histogram!(crate::metrics::WRITE_BATCH_COMMANDS),
        }
    }
}

/// The batcher's two ends: [`Writes`] for the writers, and the task [`run`] needs.
pub(crate) fn channel(raft: Raft, queue_max: usize, limits: BatchLimits) -> (Writes, Batcher) {
    let (tx, rx) = mpsc::channel(queue_max);
    let slots = Arc::new(Semaphore::new(limits.in_flight_max.max(1)));
    let writes = Writes {
        raft: raft.clone(),
        queue: tx,
        slots: slots.clone(),
        timeout: limits.write_timeout,
        meters: Meters::new(),
    };
    let batcher = Batcher {
        raft,
        queue: rx,
        slots,
        limits,
        meters: writes.meters.clone(),
    };
    (writes, batcher)
}

/// What [`run`] needs: the receiving end of the queue and the shared slots.
pub(crate) struct Batcher {
    raft: Raft,
    queue: mpsc::Receiver<PendingWrite>,
    slots: Arc<Semaphore>,
    limits: BatchLimits,
    meters: Meters,
}

impl Writes {
    /// Replicates `command` and returns its reply once committed and applied: alone when
    /// nothing is queued and a slot is free, else through the queue in the next batch.
    ///
    /// The check and the slot are not taken atomically; a command queued meanwhile waits for
    /// the batcher as it would have anyway. Concurrent writers were never ordered among
    /// themselves, and a writer's next write starts after this one returned.
    pub(crate) async fn write(&self, command: Bytes) -> Result<Bytes, WriteError> {
        if self.queue.capacity() == self.queue.max_capacity() {
            if let Ok(slot) = self.slots.clone().try_acquire_owned() {
                self.meters.alone.increment(1);
                let reply = replicate(&self.raft, vec![command], self.timeout, &self.meters)
                    .await
                    .and_then(|mut replies| {
                        replies.pop().ok_or_else(|| {
                            WriteError::Indeterminate("no reply for the command".into())
                        })
                    });
                drop(slot);
                return reply;
            }
        }
        let (reply, rx) = oneshot::channel();
        self.queue
            .send(PendingWrite { command, reply })
            .await
            .map_err(|_| WriteError::ShuttingDown)?;
        rx.await.map_err(|_| WriteError::ShuttingDown)?
    }
}

pub(crate) async fn run(batcher: Batcher) {
    let Batcher {
        raft,
        mut queue,
        slots,
        limits,
        meters,
    } = batcher;
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = queue.recv().await else {
            return;
        };
        let mut bytes = first.command.len();
        let mut batch = vec![first];
        while batch.len() < limits.commands_max && bytes < limits.bytes_max {
            match queue.try_recv() {
                Ok(next) => {
                    bytes += next.command.len();
                    batch.push(next);
                }
                Err(_) => break,
            }
        }
        let raft = raft.clone();
        let meters = meters.clone();
        tokio::spawn(async move {
            submit(&raft, batch, limits.write_timeout, &meters).await;
            drop(slot);
        });
    }
}

fn not_leader(raft: &Raft, leader_id: Option<NodeId>, leader_node: Option<NodeInfo>) -> WriteError {
    let leader = match (leader_id, leader_node) {
        (Some(node_id), Some(info)) => Some(LeaderInfo { node_id, info }),
        _ => leader_of(&raft.metrics().borrow()),
    };
    WriteError::NotLeader { leader }
}

async fn submit(raft: &Raft, batch: Vec<PendingWrite>, timeout: Duration, meters: &Meters) {
    let (commands, waiters): (Vec<Bytes>, Vec<_>) =
        batch.into_iter().map(|w| (w.command, w.reply)).unzip();
    match replicate(raft, commands, timeout, meters).await {
        Ok(replies) => {
            for (waiter, reply) in waiters.into_iter().zip(replies) {
                let _ = waiter.send(Ok(reply));
            }
        }
        Err(e) => {
            for waiter in waiters {
                let _ = waiter.send(Err(e.clone()));
            }
        }
    }
}

/// One `CommandBatch` entry through Raft: a reply per command, in order, once committed and
/// applied.
async fn replicate(
    raft: &Raft,
    commands: Vec<Bytes>,
    timeout: Duration,
    meters: &Meters,
) -> Result<Vec<Bytes>, WriteError> {
    meters.batch_commands.record(commands.len() as f64);
    let expected = commands.len();
    let outcome = tokio::time::timeout(timeout, raft.client_write(CommandBatch(commands))).await;
    match outcome {
        Ok(Ok(resp)) if resp.data.0.len() == expected => Ok(resp.data.0),
        Ok(Ok(resp)) => Err(WriteError::Indeterminate(format!(
            "{} replies for {expected} commands",
            resp.data.0.len()
        ))),
        Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => {
            Err(not_leader(raft, f.leader_id, f.leader_node))
        }
        Ok(Err(RaftError::Fatal(_))) => Err(WriteError::ShuttingDown),
        Ok(Err(other)) => Err(WriteError::Indeterminate(other.to_string())),
        Err(_) => Err(WriteError::Indeterminate(format!(
            "no commit within {} ms",
            timeout.as_millis()
        ))),
    }
}
