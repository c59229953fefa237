//! `cohort bench commits`: simulated consumer-group members committing offsets, against
//! Cohort as configured and against the naive baseline (one Raft entry, so one fsync, per
//! commit; no batching) in the same run.
//!
//! ```text
//!  fdatasync probe on the data disk
//!  for broker in [cohort, baseline]:
//!    start it (1 node, or a Raft cluster on loopback) ─ or use --bootstrap-server
//!    check versions ─ create the topic ─ find the coordinator ─ form the groups
//!    load: heartbeats + commits (as fast as possible, or every interval per member)
//!    CPU of broker and load generator over the window; stop it, remove its data
//!  print one table, and the ratio cohort / baseline
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::broker::{self, Launched};
use super::fsync_probe::{self, FsyncProbe};
use super::load::{self, ClosedLoop, LoadResult, LoadSpec};
use super::members::{self, FormSpec};
use super::report;
use super::setup;
use super::stats::Op;
use super::BenchError;

/// Flags the baseline broker is started with: every commit its own Raft entry, one at a time.
pub const NAIVE_BASELINE_FLAGS: [&str; 4] = [
    "--raft-batch-max-commands",
    "1",
    "--raft-batches-in-flight",
    "1",
];

/// Flags of `cohort bench commits`.
#[derive(Debug, Clone, Args)]
pub struct CommitsArgs {
    /// Drive this running cluster (`host:port,...`) instead of starting brokers.
    #[arg(long, value_delimiter = ',')]
    pub bootstrap_server: Vec<String>,
    /// A running cluster started with the baseline flags (`--raft-batch-max-commands 1
    /// --raft-batches-in-flight 1`), measured after `--bootstrap-server`.
    #[arg(long, value_delimiter = ',')]
    pub baseline_bootstrap_server: Vec<String>,
    /// Brokers to start when no `--bootstrap-server` is given: 1, or 3 for a Raft cluster
    /// on loopback.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=7))]
    pub nodes: u32,
    /// Simulated members.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub members: u32,
    /// Groups the members are spread over.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub groups: u32,
    /// Partitions in each OffsetCommit (each member owns that many).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub partitions: u32,
    /// Connections the load uses (default: one per member, as consumers have).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub connections: Option<u32>,
    /// Commits each connection keeps in flight when committing as fast as possible.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub in_flight: u32,
    /// Each member commits every this many ms (Kafka's auto-commit: 5000); 0 = as fast as
    /// the broker answers.
    #[arg(long, default_value_t = 0)]
    pub commit_interval_ms: u64,
    /// Each member heartbeats every this many ms (0 = no heartbeats).
    #[arg(long, default_value_t = 3_000)]
    pub heartbeat_interval_ms: u64,
    /// Measured seconds (after the warm-up).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration_secs: u64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub warmup_secs: u64,
    /// Measure the naive baseline too (started brokers only).
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub baseline: bool,
    /// Where started brokers keep their data and the fsync probe writes (default: the
    /// system's temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// fdatasync calls of the disk probe.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub fsync_probe_writes: u64,
    /// The members' `session.timeout.ms`.
    #[arg(long, default_value_t = 45_000)]
    pub session_timeout_ms: i32,
    /// Members joining at once while the groups form (each on its own connection).
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub form_concurrency: u32,
    /// Topic the members commit to (created if missing).
    #[arg(long, default_value = "cohort-bench-commits")]
    pub topic: String,
    /// Extra `cohort serve` flag for started brokers (repeat for each word).
    #[arg(long = "broker-arg", allow_hyphen_values = true)]
    pub broker_args: Vec<String>,
    /// Client properties every connection logs in with (`--command-config` syntax:
    /// `security.protocol`, `sasl.*`, `ssl.*`), for a `--bootstrap-server` on a TLS or SASL
    /// listener.
    #[arg(long)]
    pub command_config: Option<String>,
}

/// One measured broker configuration.
#[derive(Debug)]
pub struct Measured {
    pub label: String,
    pub result: LoadResult,
}

pub async fn run(args: CommitsArgs) -> Result<(), BenchError> {
    if let Some(path) = &args.command_config {
        super::wire::use_security(super::security_from(path)?)?;
    }
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let external = !args.bootstrap_server.is_empty();
    let probe_dir = broker::Scratch::new(&dir, "fsync")?;
    let probe: FsyncProbe =
        fsync_probe::measure(probe_dir.path(), args.fsync_probe_writes as usize, 100)?;
    drop(probe_dir);
    let load_before = broker::load_average();
    let mut measured = Vec::new();
    let runs: Vec<(&str, Target)> = if external {
        let mut r = vec![(
            "cohort",
            Target::External(setup::resolve_all(&args.bootstrap_server)?),
        )];
        if !args.baseline_bootstrap_server.is_empty() {
            r.push((
                "naive baseline",
                Target::External(setup::resolve_all(&args.baseline_bootstrap_server)?),
            ));
        }
        r
    } else {
        let mut r = vec![("cohort", Target::Start(Vec::new()))];
        if args.baseline {
            r.push((
                "naive baseline",
                Target::Start(NAIVE_BASELINE_FLAGS.iter().map(|s| s.to_string()).collect()),
            ));
        }
        r
    };
    for (label, target) in runs {
        eprintln!("cohort bench: measuring {label}");
        let result = measure(&args, &dir, label, target).await?;
        measured.push(Measured {
            label: label.to_string(),
            result,
        });
    }
    let load_after = broker::load_average();
    print!(
        "{}",
        report::commits(&args, &probe, &load_before, &load_after, &measured)
    );
    Ok(())
}

/// Where a measurement's brokers come from.
enum Target {
    /// Start brokers with these extra flags.
    Start(Vec<String>),
    /// A running cluster.
    External(Vec<SocketAddr>),
}

async fn measure(
    args: &CommitsArgs,
    dir: &std::path::Path,
    label: &str,
    target: Target,
) -> Result<LoadResult, BenchError> {
    let members_total = args.members as usize;
    let connections = args.connections.map_or(members_total, |c| c as usize);
    let mut launched: Option<Launched> = None;
    let bootstrap = match target {
        Target::External(addrs) => addrs,
        Target::Start(flags) => {
            let mut extra = flags;
            // Room for the load's connections, the forming ones and setup calls.
            let max_connections = connections + args.form_concurrency as usize + 64;
            extra.extend(["--max-connections".to_string(), max_connections.to_string()]);
            extra.extend(args.broker_args.iter().cloned());
            let name = label.replace(' ', "-");
            let l = broker::launch(dir, &name, args.nodes as usize, &extra)?;
            let b = l.bootstrap();
            launched = Some(l);
            b
        }
    };
    let outcome = drive(args, &bootstrap, connections, launched.as_ref()).await;
    if let Some(l) = launched.as_mut() {
        // A broker that died under load makes the figures meaningless: say so instead.
        l.check_alive()?;
    }
    outcome
}

async fn drive(
    args: &CommitsArgs,
    bootstrap: &[SocketAddr],
    connections: usize,
    launched: Option<&Launched>,
) -> Result<LoadResult, BenchError> {
    let first = *bootstrap
        .first()
        .ok_or_else(|| BenchError::Setup("no bootstrap server".into()))?;
    setup::check_versions(first).await?;
    let groups = members::plan("cohort-bench", args.groups as usize, args.members as usize);
    let per_group_max = groups.iter().map(|(_, n)| *n).max().unwrap_or(1);
    let topic_partitions = per_group_max * args.partitions as usize;
    let topic_partitions = i32::try_from(topic_partitions)
        .ok()
        .filter(|n| *n <= 10_000)
        .ok_or_else(|| {
            BenchError::Setup(format!(
                "{per_group_max} members per group × {} partitions each is over a topic's 10,000 partitions",
                args.partitions
            ))
        })?;
    setup::create_topic(bootstrap, &args.topic, topic_partitions).await?;
    let group_ids: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
    let coordinator = setup::find_coordinator(bootstrap, &group_ids).await?;
    let formed = members::form(
        coordinator,
        &groups,
        &FormSpec {
            topic: args.topic.clone(),
            partitions_per_member: args.partitions as usize,
            session_timeout_ms: args.session_timeout_ms,
            rebalance_timeout_ms: 300_000,
            concurrency: args.form_concurrency as usize,
        },
    )
    .await?;
    let every = |ms: u64| (ms > 0).then(|| Duration::from_millis(ms));
    let spec = LoadSpec {
        topic: args.topic.clone(),
        connections,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        closed: (args.commit_interval_ms == 0).then_some(ClosedLoop {
            op: Op::Commit,
            depth: args.in_flight as usize,
        }),
        commit_every: every(args.commit_interval_ms),
        heartbeat_every: every(args.heartbeat_interval_ms),
        in_flight_max: (args.in_flight as usize).max(64),
    };
    let watch = launched.map(Launched::watch).unwrap_or_default();
    load::run(coordinator, &formed, &spec, &watch).await
}
