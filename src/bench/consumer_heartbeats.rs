//! `cohort bench consumer-heartbeats`: members of the consumer protocol (KIP-848)
//! heartbeating at the broker's interval, against the same members heartbeating with the
//! classic protocol's Heartbeat in the same run, each on a broker of its own. The figure is
//! the broker's CPU per heartbeat, and that a steady heartbeat writes nothing to Raft.
//!
//! ```text
//!  for protocol in [consumer, classic]:
//!    start a `cohort serve` (or use --bootstrap-server) ─ create the topic ─ find the coordinator
//!    consumer: members join by ConsumerGroupHeartbeat during the warm-up, reconcile, then
//!              heartbeat at the interval the broker returns (consumer_load)
//!    classic:  JoinGroup/SyncGroup, then Heartbeat every --heartbeat-interval-ms (load)
//!    window: heartbeats/s, latency, errors, Raft entries, broker CPU (/proc/<pid>/stat)
//!  print one table and the ratio consumer / classic of broker CPU per heartbeat
//! ```

use std::fmt::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kafka_protocol::messages::ApiKey;

use super::broker::{self, Launched};
use super::consumer_load::{self, ConsumerResult, ConsumerSpec, CONSUMER_GROUP_HEARTBEAT_VERSION};
use super::load::{self, LoadResult, LoadSpec};
use super::members::{self, FormSpec};
use super::report::{command_line, today};
use super::setup;
use super::stats::{ms, Op};
use super::BenchError;

/// Flags of `cohort bench consumer-heartbeats`.
#[derive(Debug, Clone, Args)]
pub struct ConsumerHeartbeatsArgs {
    /// Drive this running broker (`host:port`) instead of starting one per protocol; both
    /// protocols then run against it, one after the other.
    #[arg(long, value_delimiter = ',')]
    pub bootstrap_server: Vec<String>,
    /// Simulated members (of each protocol).
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub members: u32,
    /// Groups the members are spread over.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub groups: u32,
    /// Partitions of the topic per member of the largest group (all groups subscribe to it).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub partitions_per_member: u32,
    /// Connections the members share (default: one per member, as consumers have).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub connections: Option<u32>,
    /// The classic members' `heartbeat.interval.ms`, and how long the consumer members'
    /// joins are spread over. Consumer members heartbeat at the interval the broker returns
    /// (`group.consumer.heartbeat.interval.ms`, 5,000 by default).
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub heartbeat_interval_ms: u64,
    /// Measured seconds (after the warm-up).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration_secs: u64,
    /// Seconds of load before measuring: the consumer members join and converge in it.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub warmup_secs: u64,
    /// Measure the classic protocol's Heartbeat too (the baseline).
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub baseline: bool,
    /// Where started brokers keep their data (default: the system's temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The classic members' `session.timeout.ms`.
    #[arg(long, default_value_t = 45_000)]
    pub session_timeout_ms: i32,
    /// Classic members joining at once while their groups form (each on its own connection).
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub form_concurrency: u32,
    /// Topic the members subscribe to (created if missing).
    #[arg(long, default_value = "cohort-bench-heartbeats")]
    pub topic: String,
    /// Extra `cohort serve` flag for started brokers (repeat for each word).
    #[arg(long = "broker-arg", allow_hyphen_values = true)]
    pub broker_args: Vec<String>,
}

/// One protocol's measurement.
#[derive(Debug)]
enum Measured {
    Consumer(ConsumerResult),
    Classic(LoadResult),
}

impl Measured {
    fn label(&self) -> &'static str {
        match self {
            Measured::Consumer(_) => "consumer (ConsumerGroupHeartbeat)",
            Measured::Classic(_) => "classic (Heartbeat), baseline",
        }
    }

    fn load(&self) -> &LoadResult {
        match self {
            Measured::Consumer(c) => &c.load,
            Measured::Classic(l) => l,
        }
    }

    fn op(&self) -> Op {
        match self {
            Measured::Consumer(_) => Op::ConsumerHeartbeat,
            Measured::Classic(_) => Op::Heartbeat,
        }
    }

    /// Heartbeats answered in the window.
    fn heartbeats(&self) -> u64 {
        self.load().op(self.op()).map_or(0, |s| s.ok + s.failed)
    }

    /// Broker CPU per heartbeat, µs.
    fn broker_us(&self) -> Option<f64> {
        let n = self.heartbeats();
        let cpu = self.load().broker_cpu?;
        (n > 0).then(|| cpu.as_secs_f64() * 1e6 / n as f64)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Consumer,
    Classic,
}

pub async fn run(args: ConsumerHeartbeatsArgs) -> Result<(), BenchError> {
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let external = setup::resolve_all(&args.bootstrap_server)?;
    let load_before = broker::load_average();
    let mut protocols = vec![Protocol::Consumer];
    if args.baseline {
        protocols.push(Protocol::Classic);
    }
    let mut measured = Vec::new();
    for protocol in protocols {
        eprintln!("cohort bench: measuring {protocol:?}");
        let m = measure(&args, &dir, &external, protocol).await?;
        // A later failure (a classic group that does not form) must not lose this one.
        eprint!(
            "cohort bench: measured\n{}",
            report(&args, "-", "-", std::slice::from_ref(&m))
        );
        measured.push(m);
    }
    let load_after = broker::load_average();
    print!("{}", report(&args, &load_before, &load_after, &measured));
    Ok(())
}

async fn measure(
    args: &ConsumerHeartbeatsArgs,
    dir: &std::path::Path,
    external: &[SocketAddr],
    protocol: Protocol,
) -> Result<Measured, BenchError> {
    let connections = args.connections.map_or(args.members, |c| c) as usize;
    let mut launched: Option<Launched> = None;
    let bootstrap = if external.is_empty() {
        // Room for the load's connections, the classic forming ones and setup calls.
        let max_connections = connections + args.form_concurrency as usize + 64;
        let mut extra = vec!["--max-connections".to_string(), max_connections.to_string()];
        extra.extend(args.broker_args.iter().cloned());
        let name = format!("{protocol:?}").to_lowercase();
        let l = broker::launch(dir, &name, 1, &extra)?;
        let b = l.bootstrap();
        launched = Some(l);
        b
    } else {
        external.to_vec()
    };
    let watch = launched.as_ref().map(Launched::watch).unwrap_or_default();
    let outcome = drive(args, &bootstrap, connections, protocol, &watch).await;
    if let Some(l) = launched.as_mut() {
        // A broker that died under load makes the figures meaningless: say so instead.
        l.check_alive()?;
    }
    outcome
}

async fn drive(
    args: &ConsumerHeartbeatsArgs,
    bootstrap: &[SocketAddr],
    connections: usize,
    protocol: Protocol,
    watch: &broker::BrokerWatch,
) -> Result<Measured, BenchError> {
    let first = *bootstrap
        .first()
        .ok_or_else(|| BenchError::Setup("no bootstrap server".into()))?;
    let prefix = match protocol {
        Protocol::Consumer => "cohort-bench-consumer",
        Protocol::Classic => "cohort-bench-classic",
    };
    let groups = members::plan(prefix, args.groups as usize, args.members as usize);
    let per_group_max = groups.iter().map(|(_, n)| *n).max().unwrap_or(1);
    let topic_partitions = i32::try_from(per_group_max * args.partitions_per_member as usize)
        .ok()
        .filter(|n| *n <= 10_000)
        .ok_or_else(|| {
            BenchError::Setup(format!(
                "{per_group_max} members per group × {} partitions each is over a topic's 10,000 partitions",
                args.partitions_per_member
            ))
        })?;
    let group_ids: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
    let warmup = Duration::from_secs(args.warmup_secs);
    let duration = Duration::from_secs(args.duration_secs);
    let interval = Duration::from_millis(args.heartbeat_interval_ms);
    match protocol {
        Protocol::Consumer => {
            setup::check_served(
                first,
                &[(
                    ApiKey::ConsumerGroupHeartbeat,
                    CONSUMER_GROUP_HEARTBEAT_VERSION,
                )],
            )
            .await?;
            setup::create_topic(bootstrap, &args.topic, topic_partitions).await?;
            let coordinator = setup::find_coordinator(bootstrap, &group_ids).await?;
            let spec = ConsumerSpec {
                topic: args.topic.clone(),
                connections,
                warmup,
                duration,
                join_spread: interval,
            };
            Ok(Measured::Consumer(
                consumer_load::run(coordinator, &groups, &spec, watch).await?,
            ))
        }
        Protocol::Classic => {
            setup::check_versions(first).await?;
            setup::create_topic(bootstrap, &args.topic, topic_partitions).await?;
            let coordinator = setup::find_coordinator(bootstrap, &group_ids).await?;
            let formed = members::form(
                coordinator,
                &groups,
                &FormSpec {
                    topic: args.topic.clone(),
                    partitions_per_member: args.partitions_per_member as usize,
                    session_timeout_ms: args.session_timeout_ms,
                    rebalance_timeout_ms: 300_000,
                    concurrency: args.form_concurrency as usize,
                },
            )
            .await?;
            let spec = LoadSpec {
                topic: args.topic.clone(),
                connections,
                warmup,
                duration,
                closed: None,
                commit_every: None,
                heartbeat_every: Some(interval),
                in_flight_max: 64,
            };
            Ok(Measured::Classic(
                load::run(coordinator, &formed, &spec, watch).await?,
            ))
        }
    }
}

fn per_heartbeat_us(d: Option<Duration>, n: u64) -> String {
    match d {
        Some(d) if n > 0 => format!("{:.1}", d.as_secs_f64() * 1e6 / n as f64),
        _ => "-".into(),
    }
}

fn cores(d: Option<Duration>, window: Duration) -> String {
    d.map_or_else(
        || "-".into(),
        |d| format!("{:.3}", d.as_secs_f64() / window.as_secs_f64().max(1e-9)),
    )
}

fn report(
    args: &ConsumerHeartbeatsArgs,
    load_before: &str,
    load_after: &str,
    measured: &[Measured],
) -> String {
    let mut out = String::new();
    let connections = args.connections.unwrap_or(args.members);
    let brokers = if args.bootstrap_server.is_empty() {
        "a started 1-node broker per protocol".to_string()
    } else {
        format!("the broker at {}", args.bootstrap_server.join(","))
    };
    let _ = writeln!(out, "# cohort bench consumer-heartbeats, {}", today());
    let _ = writeln!(out, "command: {}", command_line());
    let _ = writeln!(
        out,
        "shape: {brokers}; {} members in {} groups, topic of {} partition(s) per member of a group, {connections} connections; classic heartbeats every {} ms, consumer heartbeats at the broker's interval; {} s warm-up, {} s measured",
        args.members,
        args.groups,
        args.partitions_per_member,
        args.heartbeat_interval_ms,
        args.warmup_secs,
        args.duration_secs
    );
    let _ = writeln!(
        out,
        "load average (1/5/15 min): {load_before} before, {load_after} after"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| protocol | heartbeats/s | p50 ms | p99 ms | p999 ms | max ms | errors | not steady | Raft entries (commands) | broker CPU (cores) | broker µs/heartbeat | load generator µs/heartbeat |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|"
    );
    for m in measured {
        let r = m.load();
        let s = r.op(m.op());
        let n = m.heartbeats();
        let not_steady = match m {
            Measured::Consumer(c) => c.changing_in_window.to_string(),
            Measured::Classic(_) => "-".into(),
        };
        let raft = r.raft.map_or_else(
            || "-".into(),
            |raft| format!("{:.0} ({:.0})", raft.entries, raft.commands),
        );
        let _ = writeln!(
            out,
            "| {} | {:.0} | {} | {} | {} | {} | {} | {not_steady} | {raft} | {} | {} | {} |",
            m.label(),
            r.per_second(n),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p50)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p99)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p999)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.max)),
            r.errors,
            cores(r.broker_cpu, r.window),
            per_heartbeat_us(r.broker_cpu, n),
            per_heartbeat_us(r.client_cpu, n),
        );
    }
    let _ = writeln!(out);
    if let [consumer, classic, ..] = measured {
        if let (Some(a), Some(b)) = (consumer.broker_us(), classic.broker_us()) {
            let _ = writeln!(
                out,
                "broker CPU per heartbeat, consumer / classic: {:.2} ({a:.1} µs / {b:.1} µs)",
                a / b
            );
        }
    }
    for m in measured {
        if let Measured::Consumer(c) = m {
            let _ = writeln!(
                out,
                "consumer: {} members own {} partitions at the end; broker's interval {}; last join, ack or new assignment answered {} s after the start (the window opened at {} s)",
                c.members,
                c.owned_partitions,
                c.interval_ms.map_or_else(
                    || "never given".into(),
                    |(a, b)| if a == b { format!("{a} ms") } else { format!("{a}–{b} ms") }
                ),
                c.last_change
                    .map_or_else(|| "-".into(), |d| format!("{:.1}", d.as_secs_f64())),
                args.warmup_secs
            );
        }
        let r = m.load();
        if r.unanswered > 0 {
            let _ = writeln!(
                out,
                "UNANSWERED: {}: {} heartbeats had no answer 10 s after the window closed",
                m.label(),
                r.unanswered
            );
        }
        if r.send_lag_max > Duration::from_millis(100) {
            let _ = writeln!(
                out,
                "note: {}: a heartbeat went out {} ms after it was due",
                m.label(),
                ms(r.send_lag_max)
            );
        }
    }
    out
}
