//! `cohort log-dirs`: Kafka 4.0's `kafka-log-dirs.sh --describe` over Cohort's pure Kafka
//! client: the brokers of the cluster (DescribeCluster), then DescribeLogDirs on each of them
//! (or on `--broker-list`), printed as the tool prints them:
//!
//! ```text
//!  Querying brokers for log directories information
//!  Received log directory information from brokers 1,2,3
//!  {"brokers":[{"broker":1,"logDirs":[{"partitions":[...],"error":null,"logDir":...}]}, ...],"version":1}
//! ```
//!
//! `--topic-list` filters the partitions printed (the brokers are asked for every topic, as
//! Kafka's tool asks). Exit codes follow Kafka's tool: 0 on success, 1 on any error, the message
//! on stderr (a broker missing from the cluster: `ERROR: The given brokers do not exist from
//! --broker-list: ...`). Where Kafka's tool would also print a Java stack trace after an
//! unexpected exception, only the message line is printed.

pub mod format;
pub mod options;

use std::collections::HashSet;
use std::io::Write;

use crate::client::{Admin, ClientConfig, NodeId};

use super::entry::warn_unused;
use super::groups::java_order::Construction;
use options::LogDirsOptions;

/// How long each Admin call may take (Kafka's default.api.timeout.ms).
const CALL_TIMEOUT_MS: u64 = 60_000;
/// The client id Kafka's tool sets unless the command config names one.
const CLIENT_ID: &str = "log-dirs-tool";

/// Runs `cohort log-dirs` with `args` on the process's stdout and stderr; returns the exit
/// code.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// Runs `cohort log-dirs` with `args`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let options = match options::check(args).or_exit(&options::help(), out, err) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match describe(&options, out, err).await {
        Ok(()) => 0,
        Err(message) => {
            let _ = writeln!(err, "{message}");
            1
        }
    }
}

fn admin_for(options: &LogDirsOptions, err: &mut dyn Write) -> Result<Admin, String> {
    let (config, unused) = ClientConfig::for_tool(
        options.value("bootstrap-server").unwrap_or_default(),
        options.value("command-config"),
        &[("client.id", CLIENT_ID)],
    )
    .map_err(|e| e.java_message())?;
    warn_unused(err, &unused);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    Ok(admin)
}

/// Kafka's `LogDirsCommand.execute`.
async fn describe(
    options: &LogDirsOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let mut admin = admin_for(options, err)?;
    let topics: HashSet<String> = options.topics().into_iter().collect();
    let nodes: Vec<i32> = admin
        .describe_cluster()
        .await
        .map_err(|e| e.java_string())?
        .nodes
        .iter()
        .map(|n| n.id.0)
        .collect();
    // `Collectors.toSet()` of the nodes, and of the parsed --broker-list.
    let cluster = format::broker_order(Construction::Default, &nodes);
    let input = format::broker_order(Construction::Default, &options.brokers()?);
    let existing: Vec<i32> = if input.is_empty() {
        format::broker_order(Construction::HashSetOf(cluster.len()), &cluster)
    } else {
        format::broker_order(Construction::HashSetOf(input.len()), &input)
    }
    .into_iter()
    .filter(|b| cluster.contains(b))
    .collect();
    let missing: Vec<i32> = format::broker_order(Construction::HashSetOf(input.len()), &input)
        .into_iter()
        .filter(|b| !cluster.contains(b))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "ERROR: The given brokers do not exist from --broker-list: {}. Current existent brokers: {}",
            format::broker_list(&missing),
            format::broker_list(&cluster)
        ));
    }
    let _ = writeln!(out, "Querying brokers for log directories information");
    let ids: Vec<NodeId> = existing.iter().map(|b| NodeId(*b)).collect();
    let described = admin
        .describe_log_dirs(&ids)
        .await
        .map_err(|e| e.java_string())?;
    let _ = writeln!(
        out,
        "Received log directory information from brokers {}",
        format::broker_list(&existing)
    );
    let _ = writeln!(out, "{}", format::document(&existing, &described, &topics));
    Ok(())
}
