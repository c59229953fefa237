//! What connections serve through: the loading answers while the node replays its log, the
//! broker once it is ready. The listener accepts from the start, as Kafka's does while its
//! coordinators load, so a client retrying against a restarting node hears
//! COORDINATOR_LOAD_IN_PROGRESS instead of silence.

use std::sync::Arc;

use tokio::sync::{watch, Semaphore};

use super::limits::ConnectionLimits;
use super::request_memory::RequestMemory;
use crate::broker::Broker;
use crate::handlers::loading::LoadingNode;

/// Shared by every connection task.
#[derive(Debug)]
pub struct Front {
    broker: watch::Receiver<Option<Arc<Broker>>>,
    loading_as: LoadingNode,
    limits: ConnectionLimits,
    /// Bytes of requests read and not yet answered, over every connection.
    request_memory: Arc<RequestMemory>,
    /// `--max-connections`, over every listener.
    connection_permits: Arc<Semaphore>,
}

/// Held by startup: makes the broker ready (dropping it unready closes waiting connections).
#[derive(Debug)]
pub struct Publish(watch::Sender<Option<Arc<Broker>>>);

impl Publish {
    /// The node has loaded: every request is the broker's from now on.
    pub fn ready(&self, broker: Arc<Broker>) {
        self.0.send_replace(Some(broker));
    }
}

impl Front {
    pub fn new(loading_as: LoadingNode, limits: ConnectionLimits) -> (Arc<Front>, Publish) {
        let (tx, broker) = watch::channel(None);
        let front = Front {
            broker,
            loading_as,
            limits,
            request_memory: RequestMemory::new(
                limits.queued_max_request_bytes,
                limits.queued_max_request_bytes_per_connection,
            ),
            connection_permits: Arc::new(Semaphore::new(limits.max_connections)),
        };
        (Arc::new(front), Publish(tx))
    }

    /// The broker, once the node has loaded.
    pub fn broker(&self) -> Option<Arc<Broker>> {
        self.broker.borrow().clone()
    }

    /// Waits for the broker; `None` if the node stops (or fails to start) first.
    pub async fn wait_broker(&self, shutdown: &mut watch::Receiver<bool>) -> Option<Arc<Broker>> {
        if let Some(broker) = self.broker() {
            return Some(broker);
        }
        let mut ready = self.broker.clone();
        tokio::select! {
            ready = ready.wait_for(Option::is_some) => ready.ok().and_then(|b| b.clone()),
            _ = shutdown.changed() => None,
        }
    }

    /// Who this node is to group requests while it loads.
    pub fn loading_as(&self) -> &LoadingNode {
        &self.loading_as
    }

    /// Bounds every connection honours.
    pub fn limits(&self) -> ConnectionLimits {
        self.limits
    }

    /// The broker-wide request memory.
    pub fn request_memory(&self) -> &Arc<RequestMemory> {
        &self.request_memory
    }

    /// One permit per open connection, over every listener.
    pub fn connection_permits(&self) -> &Arc<Semaphore> {
        &self.connection_permits
    }

    pub fn max_connections(&self) -> usize {
        self.limits.max_connections
    }
}
