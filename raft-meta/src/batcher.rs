//! Write batching: concurrent writers' commands ride in one log entry.
//!
//! ```text
//!  write(cmd) ─► bounded queue ─► [take a slot] ─► drain what is queued (≤ commands / bytes caps)
//!                                              ─► client_write(CommandBatch) ─► replies fan out
//! ```
//!
//! No linger timer: a batch closes when a slot frees up and takes whatever queued meanwhile
//! (Kafka's adaptive linger), so a lone writer pays no added latency and a crowd shares fsyncs.

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

pub(crate) async fn run(raft: Raft, mut queue: mpsc::Receiver<PendingWrite>, limits: BatchLimits) {
    let slots = Arc::new(Semaphore::new(limits.in_flight_max.max(1)));
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
        tokio::spawn(async move {
            submit(&raft, batch, limits.write_timeout).await;
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

async fn submit(raft: &Raft, batch: Vec<PendingWrite>, timeout: Duration) {
    let (commands, waiters): (Vec<Bytes>, Vec<_>) =
        batch.into_iter().map(|w| (w.command, w.reply)).unzip();
    metrics::histogram!(crate::metrics::WRITE_BATCH_COMMANDS).record(commands.len() as f64);
    let expected = commands.len();
    let outcome = tokio::time::timeout(timeout, raft.client_write(CommandBatch(commands))).await;
    let replies: Result<Vec<Bytes>, WriteError> = match outcome {
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
    };
    match replies {
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
