//! The cluster's replicated configuration as the front end sees it: what DescribeConfigs on
//! the BROKER resource lists and what IncrementalAlterConfigs on it changes
//! (docs/decisions/0115-replicated-cluster-config.md).
//!
//! ```text
//!   describe ─► this node's applied ClusterConfig (no round trip) ─► (key, value, source)
//!   alter    ─► AlterClusterConfig command ─► Raft ─► every replica's coordinator Config
//!   validate_only ─► the same check on the applied state, nothing written
//! ```

use std::sync::Arc;

use coordinator::config::keys::{self, Key, Source};
use coordinator::{ClusterConfig, ConfigChange, ConfigError};
use raft_meta::cohort_app::{AppReply, Body, CohortApp, Envelope};
use raft_meta::MetaNode;

use super::catalog::catalog_write_error;
use crate::topics::CatalogError;

/// One replicated setting with its effective value and where that comes from.
#[derive(Debug, Clone)]
pub struct ConfigEntry {
    pub key: &'static Key,
    pub value: i64,
    pub source: Source,
}

/// Why an alteration did not happen.
#[derive(Debug, thiserror::Error)]
pub enum AlterError {
    /// A key unknown, a value out of range, or a relation broken: INVALID_CONFIG.
    #[error(transparent)]
    Invalid(#[from] ConfigError),
    /// The command did not commit (no leader, timeout): retriable.
    #[error(transparent)]
    Unavailable(#[from] CatalogError),
}

/// Reads and changes the replicated configuration through this node's replica.
#[derive(Clone)]
pub struct ClusterConfigs {
    node: Arc<MetaNode<CohortApp>>,
}

impl ClusterConfigs {
    pub fn new(node: Arc<MetaNode<CohortApp>>) -> Self {
        Self { node }
    }

    /// Every replicated setting as this node applied it. Before the cluster's first leader
    /// has recorded its flags, this node's own flags (as static values).
    pub fn entries(&self) -> Vec<ConfigEntry> {
        self.node.read_local(|a| {
            let app = &a.app;
            let fallback;
            let config = match app.cluster_config() {
                Some(c) => c,
                None => {
                    fallback = ClusterConfig::from_flags(app.flags_config());
                    &fallback
                }
            };
            let effective = app.coordinator().config();
            keys::KEYS
                .iter()
                .map(|key| ConfigEntry {
                    key,
                    value: key.get(effective),
                    source: config.source(key.name),
                })
                .collect()
        })
    }

    /// Applies `changes` to the dynamic layer on every replica (all or none); with
    /// `validate_only`, checks them against this node's applied state and writes nothing.
    pub async fn alter(
        &self,
        changes: Vec<ConfigChange>,
        validate_only: bool,
    ) -> Result<ClusterConfig, AlterError> {
        if validate_only {
            return Ok(self.node.read_local(|a| {
                let app = &a.app;
                let current = app
                    .cluster_config()
                    .cloned()
                    .unwrap_or_else(|| ClusterConfig::from_flags(app.flags_config()));
                current.altered(&changes, app.flags_config())
            })?);
        }
        let bytes = Envelope {
            origin: None,
            body: Body::AlterClusterConfig { changes },
        }
        .encode();
        let reply = self
            .node
            .write_via_leader(bytes)
            .await
            .map_err(catalog_write_error)?;
        match AppReply::decode(&reply).map_err(|e| CatalogError::Storage(e.to_string()))? {
            AppReply::ClusterConfig(result) => Ok(result?),
            other => Err(CatalogError::Storage(format!(
                "a configuration change was answered {other:?}"
            ))
            .into()),
        }
    }
}
