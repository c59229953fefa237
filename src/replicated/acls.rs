//! The cluster's ACLs as the front end sees them (decision 0140): CreateAcls and DeleteAcls
//! write through the leader, DescribeAcls and the authorizer read this node's applied state.
//!
//! ```text
//!   create/delete ─► CreateAcls / DeleteAcls command ─► Raft ─► every replica's AclTable
//!   describe, authorize ─► node.read_local(AclTable)
//! ```

use std::sync::Arc;

use raft_meta::cohort_app::{AclBinding, AclFilter, AclTable, AppReply, Body, CohortApp, Envelope};
use raft_meta::MetaNode;

use super::catalog::catalog_write_error;
use crate::topics::CatalogError;

/// Reads and changes the cluster's ACLs through this node's replica.
#[derive(Clone)]
pub struct ReplicatedAcls {
    node: Arc<MetaNode<CohortApp>>,
}

impl ReplicatedAcls {
    pub fn new(node: Arc<MetaNode<CohortApp>>) -> Self {
        Self { node }
    }

    /// Reads the applied ACLs.
    pub fn read<R>(&self, f: impl FnOnce(&AclTable) -> R) -> R {
        self.node.read_local(|a| f(a.app.acls()))
    }

    async fn write(&self, body: Body) -> Result<AppReply, CatalogError> {
        let bytes = Envelope { origin: None, body }.encode();
        let reply = self
            .node
            .write_via_leader(bytes)
            .await
            .map_err(catalog_write_error)?;
        AppReply::decode(&reply).map_err(|e| CatalogError::Storage(e.to_string()))
    }

    /// Adds `acls` on every replica; one answer per ACL, in order.
    pub async fn create(
        &self,
        acls: Vec<AclBinding>,
    ) -> Result<Vec<Result<(), String>>, CatalogError> {
        match self.write(Body::CreateAcls { acls }).await? {
            AppReply::AclsCreated(results) => Ok(results),
            other => Err(CatalogError::Storage(format!(
                "a CreateAcls command was answered {other:?}"
            ))),
        }
    }

    /// Removes what `filters` match on every replica; per filter, what it removed.
    pub async fn delete(
        &self,
        filters: Vec<AclFilter>,
    ) -> Result<Vec<Vec<AclBinding>>, CatalogError> {
        match self.write(Body::DeleteAcls { filters }).await? {
            AppReply::AclsDeleted(removed) => Ok(removed),
            other => Err(CatalogError::Storage(format!(
                "a DeleteAcls command was answered {other:?}"
            ))),
        }
    }
}
