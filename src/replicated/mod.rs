//! This node's replica of the Raft meta service (topics, groups, producer ids) as the rest of
//! the broker sees it: the flags that start it, starting it with the group coordinator on top,
//! waiting until it has caught up, and the topic catalog and cluster view that the front end
//! reads from its applied state.
//!
//! ```text
//!   start: ClusterArgs, GroupArgs ─► CohortApp (effects ─► EffectsInbox) ─► MetaNode::start
//!              └─► group_coordinator::GroupCoordinator::launch(node, inbox)   the handle + leader runtime
//!   catalog: RaftCatalog (TopicCatalog, producer ids), RaftCluster (ClusterView) ─► node
//! ```

pub mod acls;
pub mod args;
pub mod catalog;
pub mod cluster_config;
pub mod scram;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use raft_meta::cohort_app::{CohortApp, TopicLimits};
use raft_meta::{Bootstrap, MetaNode, NodeConfig};
use tokio::sync::broadcast;

use crate::group_coordinator::{BackgroundWrites, EffectsInbox, GroupCoordinator};
use args::{ClusterArgs, GroupArgs};

/// Why this node's replicated side (Raft meta service and group coordinator) could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplicatedStartError {
    #[error(transparent)]
    Args(#[from] args::ArgsError),
    #[error("raft meta service: {0}")]
    Raft(#[from] raft_meta::StartError),
    /// The node did not apply its own committed log in time; serving from a topic list older
    /// than what it knew before it stopped would be wrong.
    #[error("the replicated state did not catch up within {0:?}")]
    NotCaughtUp(Duration),
    /// Replaying the log met an entry (or a snapshot) this binary cannot read: the node must
    /// not serve, nor prune partition data against the topic list it stopped at.
    #[error("{0} (is this node's binary older than the cluster's?)")]
    Halted(raft_meta::ApplyHalted),
}

/// Starts this node's Raft meta service and coordinator runtime. `kafka_addr` is what this
/// node advertises to Kafka clients (`host:port`); `scram_flags` are its `--scram-user`
/// credentials, hashed, which it proposes once it leads a cluster never bootstrapped. While
/// this node is the active coordinator, the runtime feeds `lag` with every applied group
/// change.
pub async fn start(
    node_id: i32,
    kafka_addr: String,
    data_dir: &Path,
    cluster: &ClusterArgs,
    group: &GroupArgs,
    scram_flags: Vec<raft_meta::cohort_app::ScramCredentialRecord>,
    lag: Option<Arc<crate::lag::LagFeed>>,
) -> Result<GroupCoordinator, ReplicatedStartError> {
    let extras = StartExtras { scram_flags, lag };
    start_with(node_id, kafka_addr, data_dir, cluster, group, extras, |w| w).await
}

/// What [`start_with`] takes besides the flags: the hashed `--scram-user` credentials and the
/// lag feed.
pub(crate) struct StartExtras {
    pub scram_flags: Vec<raft_meta::cohort_app::ScramCredentialRecord>,
    pub lag: Option<Arc<crate::lag::LagFeed>>,
}

/// [`start`], with every group write (the handle's and the runtime's own) going through
/// `wrap` of the Raft node's write path: the seam where a test holds or fails them.
pub(crate) async fn start_with(
    node_id: i32,
    kafka_addr: String,
    data_dir: &Path,
    cluster: &ClusterArgs,
    group: &GroupArgs,
    extras: StartExtras,
    wrap: impl FnOnce(BackgroundWrites) -> BackgroundWrites,
) -> Result<GroupCoordinator, ReplicatedStartError> {
    let StartExtras { scram_flags, lag } = extras;
    let node_id = u64::try_from(node_id).map_err(|_| args::ArgsError::NodeId(node_id))?;
    let bootstrap = cluster.bootstrap(node_id)?;
    let store = cluster.store()?;
    let peer_auth = cluster.peer_auth()?;
    let inbox = EffectsInbox::new();
    let app = CohortApp::new(
        group.coordinator_config(),
        TopicLimits::default(),
        Some(inbox.sink()),
    )
    .with_scram_flags(scram_flags);
    let config = NodeConfig {
        node_id,
        listen_addr: cluster.raft_listen.clone(),
        advertised_raft_addr: cluster.advertise_raft.clone(),
        kafka_addr,
        raft_dir: data_dir.join("raft"),
        store,
        bootstrap,
        tuning: cluster.tuning(),
        peer_auth,
    };
    if matches!(config.bootstrap, Bootstrap::Single) {
        tracing::info!("no peers: running as a one-voter cluster");
    }
    let node = Arc::new(MetaNode::start(config, app).await?);
    Ok(GroupCoordinator::launch(node, node_id, inbox, lag, wrap))
}

/// Waits until this node's state reflects everything it knows to be committed: for a
/// one-voter cluster, until it leads and has applied its whole log; for a cluster node,
/// until it has applied up to the commit index its log store recorded (a lazily written
/// mark, so it serves a fresher topic list; nothing is deleted on the strength of it:
/// see `data::reconcile`).
pub async fn wait_caught_up(
    groups: &GroupCoordinator,
    single: bool,
    limit: Duration,
) -> Result<(), ReplicatedStartError> {
    let mut halted = groups.node().watch_apply_halted();
    let caught_up = async {
        if single {
            groups.wait_active().await;
            return;
        }
        let mut metrics = groups.node().raft().metrics();
        loop {
            let status = groups.node().status();
            if status.applied_index >= status.commit_index {
                return;
            }
            if metrics.changed().await.is_err() {
                return;
            }
        }
    };
    let halt = async {
        // An error means the node is gone; `caught_up` ends on its own then.
        if halted.wait_for(Option::is_some).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::time::timeout(limit, async {
        tokio::select! {
            () = caught_up => {}
            () = halt => {}
        }
    })
    .await
    .map_err(|_| ReplicatedStartError::NotCaughtUp(limit))?;
    match groups.node().apply_halted() {
        Some(h) => Err(ReplicatedStartError::Halted(h)),
        None => Ok(()),
    }
}

/// Waits until the cluster's SCRAM credentials were bootstrapped (a one-voter node that
/// proposed its `--scram-user` flags on becoming active).
pub async fn wait_scram_bootstrapped(
    groups: &GroupCoordinator,
    limit: Duration,
) -> Result<(), ReplicatedStartError> {
    let node = groups.node();
    let mut metrics = node.raft().metrics();
    tokio::time::timeout(limit, async {
        while !node.read_local(|a| a.app.scram().bootstrapped()) {
            if metrics.changed().await.is_err() {
                return;
            }
        }
    })
    .await
    .map_err(|_| ReplicatedStartError::NotCaughtUp(limit))
}

/// Removes this node's partition data of topics deleted through Raft (the node that served
/// the DeleteTopics removes its own at once; every other node learns it here), from the first
/// event this node applied on: a deletion replayed at start-up is acted on too. When the state
/// was replaced by a snapshot or events were missed, the data plane sweeps again instead (which
/// moves unaccounted directories aside, never deletes them).
pub async fn follow_topic_deletions(
    groups: Arc<GroupCoordinator>,
    data: Arc<crate::data::DataPlane>,
) {
    let mut events = groups.topic_events_from_start();
    loop {
        match events.recv().await {
            Ok(change) => {
                for meta in change.deleted {
                    let spec = catalog::spec_of(&meta);
                    if let Err(e) = data.remove_topic(&spec).await {
                        tracing::warn!(topic = %spec.name, error = %e, "removing a deleted topic's data");
                    }
                }
                if change.restored {
                    crate::data::reconcile::sweep_again(&data).await;
                }
                if let Some(mark) = change.mark {
                    mark.notify_one();
                }
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(
                    missed = n,
                    "topic events lagged; directories of deleted topics are moved aside instead"
                );
                crate::data::reconcile::sweep_again(&data).await;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
