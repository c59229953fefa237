//! Gathers what `cohort cluster status` shows: the membership as one node sees it, then every
//! member's own Raft status (over its peer port) and its Kafka Metadata answer.
//!
//! ```text
//!  bootstrap addrs ─► first to answer the admin Status ─► membership (voters, learners)
//!     └─► each member, concurrently: admin Status on its Raft address
//!                                    Metadata on its Kafka address (brokers, controller)
//! ```

use std::time::Duration;

use kafka_protocol::messages::{ApiKey, MetadataRequest};
use raft_meta::network::{admin, PeerAuth};
use raft_meta::{ClusterStatus, NodeId, NodeInfo};
use serde::Serialize;

use crate::client::connection::Connection;

/// Whether a member votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Member {
    Voter,
    Learner,
}

/// What a node's Kafka listener answered to Metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KafkaView {
    /// Broker ids listed, sorted.
    pub brokers: Vec<i32>,
    /// The controller id (-1: none known).
    pub controller: i32,
}

/// One member, as it answered (or why it did not).
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    pub node_id: NodeId,
    pub member: Member,
    pub raft_addr: String,
    pub kafka_addr: String,
    /// Its own Raft status, or why it could not be had.
    pub raft: Result<ClusterStatus, String>,
    /// Its Kafka Metadata answer, or why it could not be had.
    pub kafka: Result<KafkaView, String>,
}

/// Everything `status` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterReport {
    /// The bootstrap address that answered first.
    pub asked: String,
    /// That node's view: the membership the report walks.
    pub view: ClusterStatus,
    /// Every member, voters then learners, by id.
    pub nodes: Vec<NodeReport>,
}

/// Why no report could be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no node answered at {addrs}: {last}")]
    NoNodeAnswered { addrs: String, last: String },
}

/// The status of the first of `bootstrap` that answers, with the address that did.
pub async fn first_status(
    bootstrap: &[String],
    auth: &PeerAuth,
    timeout: Duration,
) -> Result<(String, ClusterStatus), ReportError> {
    let mut last = String::from("no address given");
    for addr in bootstrap {
        match admin::status(addr, auth, timeout).await {
            Ok(status) => return Ok((addr.clone(), status)),
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    Err(ReportError::NoNodeAnswered {
        addrs: bootstrap.join(","),
        last,
    })
}

/// Asks `bootstrap` for the membership, then every member for its status and Metadata.
pub async fn gather(
    bootstrap: &[String],
    auth: &PeerAuth,
    timeout: Duration,
    security: std::sync::Arc<crate::client::auth::ClientSecurity>,
) -> Result<ClusterReport, ReportError> {
    let (asked, view) = first_status(bootstrap, auth, timeout).await?;
    let members: Vec<(NodeId, NodeInfo, Member)> = view
        .voters
        .iter()
        .map(|(id, info)| (*id, info.clone(), Member::Voter))
        .chain(
            view.learners
                .iter()
                .map(|(id, info)| (*id, info.clone(), Member::Learner)),
        )
        .collect();
    let mut probes = tokio::task::JoinSet::new();
    for (index, (node_id, info, member)) in members.into_iter().enumerate() {
        let auth = auth.clone();
        let security = security.clone();
        probes.spawn(async move {
            let (raft, kafka) = tokio::join!(
                admin::status(&info.raft_addr, &auth, timeout),
                kafka_view(&info.kafka_addr, timeout, &security)
            );
            let report = NodeReport {
                node_id,
                member,
                raft_addr: info.raft_addr,
                kafka_addr: info.kafka_addr,
                raft: raft.map_err(|e| e.to_string()),
                kafka,
            };
            (index, report)
        });
    }
    let mut nodes = Vec::new();
    while let Some(done) = probes.join_next().await {
        if let Ok(found) = done {
            nodes.push(found);
        }
    }
    nodes.sort_by_key(|(index, _)| *index);
    Ok(ClusterReport {
        asked,
        view,
        nodes: nodes.into_iter().map(|(_, n)| n).collect(),
    })
}

/// Metadata (no topics) from the broker at `addr`, connecting as `security` says.
async fn kafka_view(
    addr: &str,
    timeout: Duration,
    security: &crate::client::auth::ClientSecurity,
) -> Result<KafkaView, String> {
    let ask = async {
        let mut conn = Connection::open_with(addr, "cohort-cluster", timeout, security)
            .await
            .map_err(|e| e.to_string())?;
        let version = conn
            .versions()
            .pick(ApiKey::Metadata)
            .map_err(|e| e.to_string())?;
        let request = MetadataRequest::default().with_topics(Some(Vec::new()));
        let response = conn
            .send_at(&request, version)
            .await
            .map_err(|e| e.to_string())?;
        let mut brokers: Vec<i32> = response.brokers.iter().map(|b| b.node_id.0).collect();
        brokers.sort_unstable();
        Ok(KafkaView {
            brokers,
            controller: response.controller_id.0,
        })
    };
    match tokio::time::timeout(timeout, ask).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "no Metadata answer within {} ms",
            timeout.as_millis()
        )),
    }
}
