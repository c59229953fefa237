//! `cohort bench offset-fetch`: OffsetFetch of a P-partition group as fast as the broker
//! answers, beside the front end's floor measured on the same broker and connections
//! (ApiVersions, a request that touches no state).
//!
//! ```text
//!  start a broker (or use --bootstrap-server) ─ create the topic (P partitions)
//!  commit offset 42 to every partition of each group (an admin commit: generation -1)
//!  closed loop: OffsetFetch(group, P partitions) on C connections
//!  closed loop: ApiVersions on the same C connections
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::{
    ApiKey, GroupId, OffsetCommitRequest, RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::broker::{self, BrokerWatch, Launched};
use super::load::{self, ClosedLoop, LoadResult, LoadSpec};
use super::members::Member;
use super::setup::{self, code_name, versions};
use super::stats::Op;
use super::wire::Conn;
use super::{report, BenchError};

/// The offset the setup commits to every partition; fetches must read it back.
const SEEDED_OFFSET: i64 = 42;

/// Flags of `cohort bench offset-fetch`.
#[derive(Debug, Clone, Args)]
pub struct OffsetFetchArgs {
    /// Drive this running cluster (`host:port,...`) instead of starting a broker.
    #[arg(long, value_delimiter = ',')]
    pub bootstrap_server: Vec<String>,
    /// Partitions of each fetched group.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub partitions: u32,
    /// Groups fetched (round-robin); each holds offsets for every partition.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub groups: u32,
    /// Connections the load uses.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub connections: u32,
    /// Requests each connection keeps in flight.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub in_flight: u32,
    /// Measured seconds of each load (after the warm-up).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration_secs: u64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub warmup_secs: u64,
    /// Where a started broker keeps its data (default: the system's temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Topic the groups' offsets are for (created if missing).
    #[arg(long, default_value = "cohort-bench-fetch")]
    pub topic: String,
    /// Extra `cohort serve` flag for the started broker (repeat for each word).
    #[arg(long = "broker-arg", allow_hyphen_values = true)]
    pub broker_args: Vec<String>,
}

pub async fn run(args: OffsetFetchArgs) -> Result<(), BenchError> {
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let load_before = broker::load_average();
    let mut launched: Option<Launched> = None;
    let bootstrap: Vec<SocketAddr> = if args.bootstrap_server.is_empty() {
        let mut extra = vec![
            "--max-connections".to_string(),
            (args.connections as usize + 64).to_string(),
        ];
        extra.extend(args.broker_args.iter().cloned());
        let l = broker::launch(&dir, "offset-fetch", 1, &extra)?;
        let b = l.bootstrap();
        launched = Some(l);
        b
    } else {
        setup::resolve_all(&args.bootstrap_server)?
    };
    let watch = launched.as_ref().map(Launched::watch).unwrap_or_default();
    let (fetch, floor) = drive(&args, &bootstrap, &watch).await?;
    if let Some(l) = launched.as_mut() {
        l.check_alive()?;
    }
    drop(launched);
    let load_after = broker::load_average();
    let header = format!(
        "shape: {} group(s) of {} partitions, {} connections, {} in flight each, {} s warm-up, {} s measured per request kind",
        args.groups, args.partitions, args.connections, args.in_flight, args.warmup_secs, args.duration_secs
    );
    print!(
        "{}",
        report::offset_fetch(&header, &load_before, &load_after, &fetch, &floor)
    );
    Ok(())
}

async fn drive(
    args: &OffsetFetchArgs,
    bootstrap: &[SocketAddr],
    watch: &BrokerWatch,
) -> Result<(LoadResult, LoadResult), BenchError> {
    let first = *bootstrap
        .first()
        .ok_or_else(|| BenchError::Setup("no bootstrap server".into()))?;
    setup::check_versions(first).await?;
    let partitions = i32::try_from(args.partitions).unwrap_or(i32::MAX);
    setup::create_topic(bootstrap, &args.topic, partitions).await?;
    let groups: Vec<String> = (0..args.groups)
        .map(|g| format!("cohort-bench-fetch-{g}"))
        .collect();
    let coordinator = setup::find_coordinator(bootstrap, &groups).await?;
    let partition_list: Vec<i32> = (0..partitions).collect();
    for g in &groups {
        seed(coordinator, g, &args.topic, &partition_list).await?;
    }
    let targets: Vec<Member> = groups
        .iter()
        .map(|g| Member {
            group_id: g.clone(),
            member_id: String::new(),
            generation: -1,
            partitions: partition_list.clone(),
        })
        .collect();
    let spec = |op| LoadSpec {
        topic: args.topic.clone(),
        connections: args.connections as usize,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        closed: Some(ClosedLoop {
            op,
            depth: args.in_flight as usize,
        }),
        commit_every: None,
        heartbeat_every: None,
        in_flight_max: args.in_flight as usize,
    };
    // Fetch "members" are groups: spread them so every connection has one to ask for.
    let spread: Vec<Member> = targets
        .iter()
        .cycle()
        .take(targets.len().max(args.connections as usize))
        .cloned()
        .collect();
    let fetch = load::run(coordinator, &spread, &spec(Op::FetchOffsets), watch).await?;
    let floor = load::run(coordinator, &spread, &spec(Op::ApiVersions), watch).await?;
    Ok((fetch, floor))
}

/// Commits [`SEEDED_OFFSET`] to every partition of `group` as an admin commit (generation
/// -1, no member), which Kafka accepts for a group without members.
async fn seed(
    coordinator: SocketAddr,
    group: &str,
    topic: &str,
    partitions: &[i32],
) -> Result<(), BenchError> {
    let mut conn = Conn::connect(coordinator, "cohort-bench-setup").await?;
    let body = RequestKind::OffsetCommit(
        OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_generation_id_or_member_epoch(-1)
            .with_retention_time_ms(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(
                    partitions
                        .iter()
                        .map(|p| {
                            OffsetCommitRequestPartition::default()
                                .with_partition_index(*p)
                                .with_committed_offset(SEEDED_OFFSET)
                                .with_committed_leader_epoch(-1)
                        })
                        .collect(),
                )]),
    );
    let ResponseKind::OffsetCommit(r) = conn
        .call(ApiKey::OffsetCommit, versions::OFFSET_COMMIT, body)
        .await?
    else {
        return Err(BenchError::Setup(
            "OffsetCommit answered with another body".into(),
        ));
    };
    if let Some(code) = r
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| p.error_code)
        .find(|c| *c != 0)
    {
        return Err(BenchError::Setup(format!(
            "seeding {group}'s offsets: {}",
            code_name(code)
        )));
    }
    Ok(())
}
