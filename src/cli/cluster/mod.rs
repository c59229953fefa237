//! `cohort cluster`: the Raft side of a Cohort cluster, asked over any node's Raft port.
//!
//! ```text
//!  status        ─► first --bootstrap node that answers ─► membership
//!                   └─► every member: Raft status (peer port) + Metadata (Kafka port) ─► table
//!  add-voter     ─► leader (from a bootstrap node's status) ─► add learner, wait for it to catch
//!                   up, promote to voter ─► new membership
//!  remove-voter  ─► leader ─► remove from the voters and the cluster ─► new membership
//! ```
//!
//! Exit codes: 0 success (for `status`: a leader every member agrees on, every member answering
//! on both ports); 1 nothing reachable, or the change refused or failed; 2 usage; 3 the cluster
//! has no leader; 4 a leader is known but some member is down or out of step.

pub mod format;
pub mod report;

use std::io::Write;
use std::time::Duration;

use clap::{Args, Subcommand};
use raft_meta::network::admin::{self, AdminError};
use raft_meta::network::PeerAuth;
use raft_meta::{ClusterStatus, NodeId, NodeInfo};

use format::{exit, health, render_membership, render_status};

/// `cohort cluster` and its subcommands.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Leader, term, voters, learners, commit and applied index, and per node its role, Raft and
    /// Kafka address and what its Kafka listener answers.
    Status(StatusArgs),
    /// Adds a node (started with `cohort serve --join`) as a voter: first a learner, promoted
    /// once it has caught up with the log.
    AddVoter(AddVoterArgs),
    /// Removes a voter from the cluster.
    RemoveVoter(RemoveVoterArgs),
}

/// Where to ask.
#[derive(Debug, Clone, Args)]
pub struct Contact {
    /// Raft address(es) of any node(s), `host:port[,host:port...]`; the first that answers is
    /// used.
    #[arg(long, alias = "raft-addr", value_delimiter = ',', required = true)]
    pub bootstrap: Vec<String>,
    /// The cluster secret the nodes were started with (`cohort serve --cluster-secret-file`):
    /// proven to the node, never sent. Without it, only a node with an open Raft port answers.
    #[arg(long)]
    pub cluster_secret_file: Option<std::path::PathBuf>,
}

impl Contact {
    /// How to authenticate to the nodes; a bad secret file is a usage error.
    fn auth(&self, command: &str, err: &mut dyn Write) -> Result<PeerAuth, i32> {
        PeerAuth::from_file(self.cluster_secret_file.as_deref()).map_err(|e| {
            let _ = writeln!(err, "cohort cluster {command}: --cluster-secret-file {e}");
            exit::USAGE
        })
    }
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub contact: Contact,
    /// Deadline of each request, in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    pub timeout_ms: u64,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Client properties for the Kafka probe, as the other client commands take them
    /// (`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.*`,
    /// `ssl.keystore.*`): needed when the nodes' Kafka addresses are TLS or SASL listeners.
    #[arg(long)]
    pub command_config: Option<String>,
}

#[derive(Debug, Args)]
pub struct AddVoterArgs {
    #[command(flatten)]
    pub contact: Contact,
    /// The new node's id (its `--node-id`).
    #[arg(long)]
    pub node_id: NodeId,
    /// The new node's Raft address, as peers dial it.
    #[arg(long)]
    pub node_raft: String,
    /// The new node's Kafka address, as clients reach it.
    #[arg(long)]
    pub node_kafka: String,
    /// How long the node may take to catch up and be promoted, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    pub timeout_ms: u64,
}

#[derive(Debug, Args)]
pub struct RemoveVoterArgs {
    #[command(flatten)]
    pub contact: Contact,
    /// The voter to remove.
    #[arg(long)]
    pub node_id: NodeId,
    /// Deadline of the change, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub timeout_ms: u64,
}

/// Runs `cohort cluster` on the process's stdout and stderr; returns the exit code.
pub fn main(args: ClusterArgs) -> i32 {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "cohort cluster: cannot start the async runtime: {e}");
            return exit::FAILED;
        }
    };
    runtime.block_on(run(args, &mut out, &mut err))
}

/// Runs `cohort cluster`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: ClusterArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match args.command {
        ClusterCommand::Status(a) => status(a, out, err).await,
        ClusterCommand::AddVoter(a) => {
            let info = NodeInfo {
                raft_addr: a.node_raft.clone(),
                kafka_addr: a.node_kafka.clone(),
                listeners: Vec::new(),
            };
            if let Err(problem) = check_addr(&info.raft_addr).and(check_addr(&info.kafka_addr)) {
                let _ = writeln!(err, "cohort cluster add-voter: {problem}");
                return exit::USAGE;
            }
            let auth = match a.contact.auth("add-voter", err) {
                Ok(auth) => auth,
                Err(code) => return code,
            };
            let timeout = Duration::from_millis(a.timeout_ms);
            let node_id = a.node_id;
            let outcome = on_leader(&a.contact, &auth, timeout, |leader_raft| {
                let (info, auth) = (info.clone(), auth.clone());
                async move { admin::add_voter(&leader_raft, &auth, node_id, info, timeout).await }
            })
            .await;
            membership_changed(
                outcome,
                &format!("Node {node_id} is a voter."),
                "add-voter",
                out,
                err,
            )
        }
        ClusterCommand::RemoveVoter(a) => {
            let auth = match a.contact.auth("remove-voter", err) {
                Ok(auth) => auth,
                Err(code) => return code,
            };
            let timeout = Duration::from_millis(a.timeout_ms);
            let node_id = a.node_id;
            let outcome = on_leader(&a.contact, &auth, timeout, |leader_raft| {
                let auth = auth.clone();
                async move { admin::remove_voter(&leader_raft, &auth, node_id, timeout).await }
            })
            .await;
            membership_changed(
                outcome,
                &format!("Node {node_id} is no longer a member."),
                "remove-voter",
                out,
                err,
            )
        }
    }
}

/// The Kafka probe's security settings from `--command-config`; an unreadable or unusable file
/// is a usage error, keys the probe does not use are warned about as Kafka's tools do.
fn kafka_security(
    command_config: Option<&str>,
    err: &mut dyn Write,
) -> Result<std::sync::Arc<crate::client::auth::ClientSecurity>, i32> {
    let Some(path) = command_config else {
        return Ok(std::sync::Arc::default());
    };
    let usage = |e: crate::client::ClientError, err: &mut dyn Write| {
        let _ = writeln!(
            err,
            "cohort cluster status: --command-config {}",
            e.java_message()
        );
        exit::USAGE
    };
    let props = crate::client::config::read_properties_file(path).map_err(|e| usage(e, err))?;
    let security =
        crate::client::auth::ClientSecurity::from_properties(&props).map_err(|e| usage(e, err))?;
    let unused: Vec<String> = props
        .keys()
        .filter(|k| !security.uses(k) && k.as_str() != "bootstrap.servers")
        .cloned()
        .collect();
    crate::cli::entry::warn_unused(err, &unused);
    Ok(std::sync::Arc::new(security))
}

fn check_addr(addr: &str) -> Result<(), String> {
    let ok = addr
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
    if ok {
        Ok(())
    } else {
        Err(format!("{addr:?} is not host:port"))
    }
}

async fn status(a: StatusArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let auth = match a.contact.auth("status", err) {
        Ok(auth) => auth,
        Err(code) => return code,
    };
    let timeout = Duration::from_millis(a.timeout_ms);
    let security = match kafka_security(a.command_config.as_deref(), err) {
        Ok(security) => security,
        Err(code) => return code,
    };
    let report = match report::gather(&a.contact.bootstrap, &auth, timeout, security).await {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "cohort cluster status: {e}");
            return exit::FAILED;
        }
    };
    let health = health(&report);
    if a.json {
        match serde_json::to_string(&report) {
            Ok(json) => {
                let _ = writeln!(out, "{json}");
            }
            Err(e) => {
                let _ = writeln!(err, "cohort cluster status: {e}");
                return exit::FAILED;
            }
        }
    } else {
        let _ = out.write_all(render_status(&report, &health).as_bytes());
    }
    health.exit_code()
}

/// Why a membership change did not happen.
enum ChangeFailure {
    /// Nobody to ask, or no leader.
    NoLeader(String),
    Failed(String),
}

/// Finds the leader through `contact` and runs `change` against its Raft address; follows the
/// leader once if it moved in between.
async fn on_leader<F, Fut>(
    contact: &Contact,
    auth: &PeerAuth,
    timeout: Duration,
    change: F,
) -> Result<ClusterStatus, ChangeFailure>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<ClusterStatus, AdminError>>,
{
    let ask_timeout = timeout.min(Duration::from_secs(5));
    let mut attempts = 0;
    loop {
        let (_, view) = report::first_status(&contact.bootstrap, auth, ask_timeout)
            .await
            .map_err(|e| ChangeFailure::Failed(e.to_string()))?;
        let Some(leader) = view.leader else {
            return Err(ChangeFailure::NoLeader(format!(
                "node {} knows no leader (role {}, term {})",
                view.node_id, view.role, view.term
            )));
        };
        match change(leader.info.raft_addr.clone()).await {
            Ok(status) => return Ok(status),
            Err(AdminError::Refused(reason))
                if reason.contains("not the leader") && attempts < 2 =>
            {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => {
                return Err(ChangeFailure::Failed(format!(
                    "leader {} at {}: {e}",
                    leader.node_id, leader.info.raft_addr
                )))
            }
        }
    }
}

fn membership_changed(
    outcome: Result<ClusterStatus, ChangeFailure>,
    done: &str,
    command: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match outcome {
        Ok(status) => {
            let _ = writeln!(out, "{done}");
            let _ = out.write_all(render_membership(&status).as_bytes());
            exit::OK
        }
        Err(ChangeFailure::NoLeader(m)) => {
            let _ = writeln!(err, "cohort cluster {command}: {m}");
            exit::NO_LEADER
        }
        Err(ChangeFailure::Failed(m)) => {
            let _ = writeln!(err, "cohort cluster {command}: {m}");
            exit::FAILED
        }
    }
}
