//! A node records its own Kafka listeners in the replicated membership (decision 0184): the
//! record `--peers` or `cohort cluster add-voter` made names one Kafka address and no listener,
//! and only the node knows its listeners. Once it is a member it asks the leader (itself, or
//! over the peer port) to rewrite its record, until the membership says what it listens on.

use std::time::Duration;

use openraft::ServerState;

use crate::control::{leader_of, Control};
use crate::network::{admin, PeerAuth};
use crate::types::{KafkaListener, NodeId, Raft};

/// Pause between attempts while the node is no member yet, no leader is known, or the leader
/// refused (an older binary that does not know the request, a membership change under way).
const RETRY: Duration = Duration::from_millis(500);
/// Refusals in a row before one warning: at a cluster's first start the nodes' changes meet
/// each other ("already undergoing a configuration change") and the next attempt succeeds.
const WARN_AFTER: u32 = 10;

/// Runs until `node_id`'s record lists `listeners` (or Raft stops).
pub(crate) async fn publish_listeners(
    node_id: NodeId,
    raft: Raft,
    control: Control,
    auth: PeerAuth,
    listeners: Vec<KafkaListener>,
    request_timeout: Duration,
) {
    let mut metrics = raft.metrics();
    let mut refused = 0u32;
    loop {
        let m = metrics.borrow_and_update().clone();
        if m.running_state.is_err() || m.state == ServerState::Shutdown {
            return;
        }
        let recorded = m.membership_config.membership().get_node(&node_id).cloned();
        let outcome = match (recorded, leader_of(&m)) {
            (Some(info), _) if info.listeners == listeners => {
                tracing::info!(node = node_id, record = %info, "Kafka listeners recorded in the membership");
                return;
            }
            // Not a member yet (a `--join` node before `cohort cluster add-voter`), or no leader.
            (None, _) | (_, None) => None,
            (Some(_), Some(leader)) if leader.node_id == node_id => Some(
                control
                    .publish_listeners(node_id, listeners.clone())
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            ),
            (Some(_), Some(leader)) => Some(
                admin::publish_listeners(
                    &leader.info.raft_addr,
                    &auth,
                    node_id,
                    listeners.clone(),
                    request_timeout,
                )
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            ),
        };
        if let Some(Err(e)) = outcome {
            refused += 1;
            if refused == WARN_AFTER {
                tracing::warn!(node = node_id, error = %e,
                    "cannot record this node's Kafka listeners in the membership yet; retrying");
            } else {
                tracing::debug!(node = node_id, error = %e, "listeners not recorded yet; retrying");
            }
        }
        // Wake on the next membership or leader change, or retry after a pause.
        if let Ok(Err(_)) = tokio::time::timeout(RETRY, metrics.changed()).await {
            return; // Raft is gone
        }
    }
}
