//! The cluster's SCRAM credentials as the front end sees them (decision 0133): SASL listeners
//! look users up in this node's applied state, AlterUserScramCredentials writes through the
//! leader, DescribeUserScramCredentials reads locally.
//!
//! ```text
//!   SCRAM client-first ─► ReplicatedScram::scram ─► node.read_local(ScramTable)
//!   alter  ─► AlterScramCredentials command ─► Raft ─► every replica's ScramTable
//!   `--scram-user` ─► hashed at start ─► CohortApp::with_scram_flags ─► proposed once by the
//!                     first leader (BootstrapScramCredentials)
//! ```

use std::sync::Arc;

use raft_meta::cohort_app::{
    AppReply, Body, CohortApp, Envelope, ScramChangeError, ScramCredentialRecord,
    ScramMechanismType, ScramTable, StoredScramCredential, UserScramChange,
};
use raft_meta::MetaNode;

use super::catalog::catalog_write_error;
use crate::security::credentials::{Credentials, ScramLookup};
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::topics::CatalogError;

/// The replicated type of a mechanism.
pub fn mechanism_type(m: ScramMechanism) -> ScramMechanismType {
    match m {
        ScramMechanism::Sha256 => ScramMechanismType::Sha256,
        ScramMechanism::Sha512 => ScramMechanismType::Sha512,
    }
}

/// What the replicated state keeps of `c`.
pub fn stored(c: &ScramCredential) -> StoredScramCredential {
    StoredScramCredential {
        salt: c.salt.clone(),
        stored_key: c.stored_key.clone(),
        server_key: c.server_key.clone(),
        iterations: c.iterations,
    }
}

/// This node's `--scram-user` credentials as bootstrap records.
pub fn bootstrap_records(credentials: &Credentials) -> Vec<ScramCredentialRecord> {
    credentials
        .scram_bootstrap()
        .iter()
        .map(|(user, c)| ScramCredentialRecord {
            user: user.clone(),
            mechanism: mechanism_type(c.mechanism),
            credential: stored(c),
        })
        .collect()
}

/// Reads and changes the cluster's SCRAM credentials through this node's replica.
#[derive(Clone)]
pub struct ReplicatedScram {
    node: Arc<MetaNode<CohortApp>>,
}

impl ReplicatedScram {
    pub fn new(node: Arc<MetaNode<CohortApp>>) -> Self {
        Self { node }
    }

    /// Reads the applied credentials.
    pub fn read<R>(&self, f: impl FnOnce(&ScramTable) -> R) -> R {
        self.node.read_local(|a| f(a.app.scram()))
    }

    /// Applies `changes` on every replica; one answer per change, in order.
    pub async fn alter(
        &self,
        changes: Vec<UserScramChange>,
    ) -> Result<Vec<Result<(), ScramChangeError>>, CatalogError> {
        let bytes = Envelope {
            origin: None,
            body: Body::AlterScramCredentials { changes },
        }
        .encode();
        let reply = self
            .node
            .write_via_leader(bytes)
            .await
            .map_err(catalog_write_error)?;
        match AppReply::decode(&reply).map_err(|e| CatalogError::Storage(e.to_string()))? {
            AppReply::ScramAltered(results) => Ok(results),
            other => Err(CatalogError::Storage(format!(
                "a SCRAM credential change was answered {other:?}"
            ))),
        }
    }
}

impl ScramLookup for ReplicatedScram {
    fn scram(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self.read(|t| {
            t.get(user, mechanism_type(mechanism))
                .map(|c| ScramCredential {
                    mechanism,
                    salt: c.salt.clone(),
                    stored_key: c.stored_key.clone(),
                    server_key: c.server_key.clone(),
                    iterations: c.iterations,
                })
        })
    }
}
