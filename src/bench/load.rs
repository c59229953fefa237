//! The steady-state load: formed members spread over connections, each connection a task
//! that keeps requests flowing and times every response.
//!
//! ```text
//!  per connection (members c, c+C, c+2C, ...):
//!    closed loop: keep `depth` requests of one kind in flight, round-robin over its members
//!    periodic:    each member commits / heartbeats every interval, phases spread evenly;
//!                 latency counts from the scheduled time, so a late send is not hidden
//!    send everything due in one write ─► wait for a response or the next due time
//!  window: [start + warmup, start + warmup + duration); responses completing in it count
//! ```
//!
//! Kafka answers a connection's requests one at a time and in order, so `depth` above 1 only
//! hides the client's turnaround; concurrency at the broker comes from connections.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, GroupId, HeartbeatRequest, OffsetCommitRequest, OffsetFetchRequest,
    RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use tokio::task::JoinSet;

use super::broker::{cpu_time, BrokerWatch};
use super::members::Member;
use super::raft_counters::{self, RaftCounters};
use super::setup::versions;
use super::stats::{ErrorCounts, Latencies, Op, Summary};
use super::wire::Conn;
use super::BenchError;

/// How long requests still in flight at the end of the window may take to be answered.
pub(super) const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Spreads periodic phases evenly over an interval (the golden ratio's fractional part).
pub(super) const PHASE_STEP: f64 = 0.618_033_988_749_894_9;

/// Requests of one kind kept in flight on every connection, as fast as the broker answers.
#[derive(Debug, Clone, Copy)]
pub struct ClosedLoop {
    pub op: Op,
    pub depth: usize,
}

/// What to send, how long, over how many connections.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub topic: String,
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
    pub closed: Option<ClosedLoop>,
    /// Each member commits every this often (Kafka's `auto.commit.interval.ms`).
    pub commit_every: Option<Duration>,
    /// Each member heartbeats every this often (Kafka's `heartbeat.interval.ms`).
    pub heartbeat_every: Option<Duration>,
    /// Most requests in flight on one connection; periodic sends wait (and count late) past it.
    pub in_flight_max: usize,
}

/// One kind of request's results over the window.
#[derive(Debug, Clone, Copy)]
pub struct OpStats {
    /// Answered without error.
    pub ok: u64,
    /// Answered with an error code.
    pub failed: u64,
    /// Partitions committed (OffsetCommit) or read back (OffsetFetch) without error.
    pub partitions: u64,
    /// Every answered request, failed ones included.
    pub latency: Summary,
}

/// A load's results.
#[derive(Debug, Clone)]
pub struct LoadResult {
    pub window: Duration,
    pub ops: BTreeMap<Op, OpStats>,
    pub errors: ErrorCounts,
    /// OffsetFetch answers that lacked an offset the setup had committed.
    pub missing_offsets: u64,
    /// Requests still unanswered [`DRAIN_TIMEOUT`] after the window closed.
    pub unanswered: u64,
    /// Latest a periodic request was sent after its scheduled time.
    pub send_lag_max: Duration,
    /// CPU used over the window by this process (the load generator) and by the brokers.
    pub client_cpu: Option<Duration>,
    pub broker_cpu: Option<Duration>,
    /// What Raft did over the window (started brokers only).
    pub raft: Option<RaftCounters>,
}

impl LoadResult {
    pub fn per_second(&self, n: u64) -> f64 {
        n as f64 / self.window.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    pub fn op(&self, op: Op) -> Option<&OpStats> {
        self.ops.get(&op)
    }
}

/// What one connection task measured.
#[derive(Debug, Default)]
struct ConnStats {
    latencies: BTreeMap<Op, Latencies>,
    ok: BTreeMap<Op, u64>,
    failed: BTreeMap<Op, u64>,
    partitions: BTreeMap<Op, u64>,
    errors: ErrorCounts,
    missing_offsets: u64,
    unanswered: u64,
    send_lag_max: Duration,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub start: Instant,
    pub end: Instant,
}

impl Window {
    pub fn contains(&self, t: Instant) -> bool {
        t >= self.start && t < self.end
    }
}

/// Opens `connections` connections to `coordinator` (at least one, at most one per member of
/// `members`); returns them, when the load starts (now) and the window measured after `warmup`.
pub(super) async fn open<T>(
    coordinator: SocketAddr,
    members: usize,
    connections: usize,
    client_id: &str,
    warmup: Duration,
    duration: Duration,
) -> Result<(Vec<Conn<T>>, Instant, Window), BenchError> {
    if members == 0 {
        return Err(BenchError::Setup("no members to drive".into()));
    }
    let mut conns = Vec::with_capacity(connections.clamp(1, members));
    for _ in 0..connections.clamp(1, members) {
        conns.push(Conn::connect(coordinator, client_id).await?);
    }
    let start = Instant::now();
    let window = Window {
        start: start + warmup,
        end: start + warmup + duration,
    };
    Ok((conns, start, window))
}

/// Runs `spec` against `coordinator` with `members` (for OffsetFetch, one "member" per group
/// to read, its partitions the ones to ask for). The watched brokers are sampled for CPU and
/// Raft counters at the window's ends.
pub async fn run(
    coordinator: SocketAddr,
    members: &[Member],
    spec: &LoadSpec,
    watch: &BrokerWatch,
) -> Result<LoadResult, BenchError> {
    let (conns, start, window) = open(
        coordinator,
        members.len(),
        spec.connections,
        "cohort-bench-load",
        spec.warmup,
        spec.duration,
    )
    .await?;
    let connections = conns.len();
    let mut tasks = JoinSet::new();
    for (c, conn) in conns.into_iter().enumerate() {
        let mine: Vec<(usize, Member)> = members
            .iter()
            .enumerate()
            .skip(c)
            .step_by(connections)
            .map(|(i, m)| (i, m.clone()))
            .collect();
        let spec = spec.clone();
        tasks.spawn(async move { drive(conn, mine, &spec, start, window).await });
    }
    let cpu = sample_window(watch, window);
    let total = match join_load_tasks(tasks, merge).await {
        Ok(total) => total,
        Err(e) => {
            cpu.abort();
            return Err(e);
        }
    };
    let (client_cpu, broker_cpu, raft) = cpu.await.unwrap_or((None, None, None));
    let mut ops = BTreeMap::new();
    for (op, lat) in total.latencies {
        ops.insert(
            op,
            OpStats {
                ok: total.ok.get(&op).copied().unwrap_or(0),
                failed: total.failed.get(&op).copied().unwrap_or(0),
                partitions: total.partitions.get(&op).copied().unwrap_or(0),
                latency: lat.summary(),
            },
        );
    }
    Ok(LoadResult {
        window: spec.duration,
        ops,
        errors: total.errors,
        missing_offsets: total.missing_offsets,
        unanswered: total.unanswered,
        send_lag_max: total.send_lag_max,
        client_cpu,
        broker_cpu,
        raft,
    })
}

/// What the load generator's and the brokers' CPU and the brokers' Raft counters did between
/// the window's ends: (load generator CPU, broker CPU, Raft), each `None` if unreadable.
pub(super) type WindowSample = (Option<Duration>, Option<Duration>, Option<RaftCounters>);

/// Waits for every load task and merges what each measured; the first failure (a task's
/// error, or a task that panicked) is the result instead.
pub(super) async fn join_load_tasks<S: Default + Send + 'static>(
    mut tasks: tokio::task::JoinSet<Result<S, BenchError>>,
    merge: impl Fn(&mut S, S),
) -> Result<S, BenchError> {
    let mut total = S::default();
    let mut failure = None;
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(s)) => merge(&mut total, s),
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(e) => {
                failure.get_or_insert(BenchError::Setup(format!("a load task: {e}")));
            }
        }
    }
    failure.map_or(Ok(total), Err)
}

/// Samples `watch` at both ends of `window`, in a task of its own.
pub(super) fn sample_window(
    watch: &BrokerWatch,
    window: Window,
) -> tokio::task::JoinHandle<WindowSample> {
    let watch = watch.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(window.start.into()).await;
        let before = cpu_sample(&watch.pids);
        let raft_before = raft_counters::scrape_all(&watch.http).await;
        tokio::time::sleep_until(window.end.into()).await;
        let after = cpu_sample(&watch.pids);
        let raft_after = raft_counters::scrape_all(&watch.http).await;
        (
            after.0.zip(before.0).map(|(a, b)| a.saturating_sub(b)),
            after.1.zip(before.1).map(|(a, b)| a.saturating_sub(b)),
            raft_after.zip(raft_before).map(|(a, b)| a.since(&b)),
        )
    })
}

fn cpu_sample(broker_pids: &[u32]) -> (Option<Duration>, Option<Duration>) {
    let client = cpu_time(std::process::id());
    let broker = if broker_pids.is_empty() {
        None
    } else {
        broker_pids
            .iter()
            .map(|p| cpu_time(*p))
            .sum::<Option<Duration>>()
    };
    (client, broker)
}

fn merge(total: &mut ConnStats, s: ConnStats) {
    for (op, l) in s.latencies {
        total.latencies.entry(op).or_default().merge(l);
    }
    for (into, from) in [
        (&mut total.ok, s.ok),
        (&mut total.failed, s.failed),
        (&mut total.partitions, s.partitions),
    ] {
        for (op, n) in from {
            *into.entry(op).or_default() += n;
        }
    }
    total.errors.merge(&s.errors);
    total.missing_offsets += s.missing_offsets;
    total.unanswered += s.unanswered;
    total.send_lag_max = total.send_lag_max.max(s.send_lag_max);
}

/// A request's identity on its connection: kind, index into the task's members, the time it
/// counts from.
type Tag = (Op, usize, Instant);

/// One member's prepared requests; only the committed offset changes between commits.
struct MemberRequests {
    commit: OffsetCommitRequest,
    heartbeat: HeartbeatRequest,
    fetch: OffsetFetchRequest,
    next_offset: i64,
}

impl MemberRequests {
    fn new(m: &Member, topic: &str) -> MemberRequests {
        let group = GroupId(StrBytes::from_string(m.group_id.clone()));
        let member_id = StrBytes::from_string(m.member_id.clone());
        let topic = TopicName(StrBytes::from_string(topic.to_string()));
        let commit = OffsetCommitRequest::default()
            .with_group_id(group.clone())
            .with_generation_id_or_member_epoch(m.generation)
            .with_member_id(member_id.clone())
            .with_retention_time_ms(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(topic.clone())
                .with_partitions(
                    m.partitions
                        .iter()
                        .map(|p| {
                            OffsetCommitRequestPartition::default()
                                .with_partition_index(*p)
                                .with_committed_leader_epoch(-1)
                                .with_committed_metadata(Some(StrBytes::default()))
                        })
                        .collect(),
                )]);
        let heartbeat = HeartbeatRequest::default()
            .with_group_id(group.clone())
            .with_generation_id(m.generation)
            .with_member_id(member_id);
        let fetch =
            OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
                .with_group_id(group)
                .with_member_epoch(-1)
                .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                    .with_name(topic)
                    .with_partition_indexes(m.partitions.clone())]))]);
        MemberRequests {
            commit,
            heartbeat,
            fetch,
            next_offset: 0,
        }
    }
}

pub(super) fn phase(index: usize, every: Duration) -> Duration {
    let f = (index as f64 * PHASE_STEP).fract();
    every.mul_f64(f)
}

async fn drive(
    mut conn: Conn<Tag>,
    members: Vec<(usize, Member)>,
    spec: &LoadSpec,
    start: Instant,
    window: Window,
) -> Result<ConnStats, BenchError> {
    let mut requests: Vec<MemberRequests> = members
        .iter()
        .map(|(_, m)| MemberRequests::new(m, &spec.topic))
        .collect();
    let mut due: BinaryHeap<Reverse<(Instant, usize, Op)>> = BinaryHeap::new();
    for (local, (global, _)) in members.iter().enumerate() {
        for (op, every) in [
            (Op::Commit, spec.commit_every),
            (Op::Heartbeat, spec.heartbeat_every),
        ] {
            if let Some(every) = every {
                due.push(Reverse((start + phase(*global, every), local, op)));
            }
        }
    }
    let mut stats = ConnStats::default();
    let mut closed_in_flight = 0usize;
    let mut next_closed = 0usize;
    loop {
        let now = Instant::now();
        if now >= window.end {
            break;
        }
        if let Some(closed) = spec.closed {
            while closed_in_flight < closed.depth {
                let m = next_closed;
                next_closed = (next_closed + 1) % requests.len();
                queue(&mut conn, &mut requests[m], closed.op, m, now)?;
                closed_in_flight += 1;
            }
        }
        while let Some(Reverse((at, m, op))) = due.peek().copied() {
            if at > now || conn.in_flight() >= spec.in_flight_max {
                break;
            }
            due.pop();
            stats.send_lag_max = stats.send_lag_max.max(now - at);
            queue(&mut conn, &mut requests[m], op, m, at)?;
            let every = match op {
                Op::Commit => spec.commit_every,
                _ => spec.heartbeat_every,
            };
            if let Some(every) = every {
                due.push(Reverse((at + every, m, op)));
            }
        }
        conn.flush().await?;
        // With the connection full, only a response can let the next send go.
        let wake = if conn.in_flight() >= spec.in_flight_max {
            window.end
        } else {
            due.peek()
                .map_or(window.end, |Reverse((at, _, _))| *at)
                .min(window.end)
        };
        let response = if conn.in_flight() > 0 {
            tokio::select! {
                r = conn.next_response() => Some(r?),
                _ = tokio::time::sleep_until(wake.into()) => None,
            }
        } else {
            tokio::time::sleep_until(wake.into()).await;
            None
        };
        let mut next = response;
        while let Some(r) = next {
            let (op, _, _) = r.tag;
            if spec.closed.is_some_and(|c| c.op == op) {
                closed_in_flight -= 1;
            }
            account(&mut stats, r.tag, &r.body, Instant::now(), window);
            next = conn.take_buffered()?;
        }
    }
    // Answers to requests sent before the end are awaited (the connection must be left clean)
    // but not counted: they complete outside the window.
    let drain = async {
        while conn.in_flight() > 0 {
            conn.next_response().await?;
        }
        Ok::<(), BenchError>(())
    };
    match tokio::time::timeout(DRAIN_TIMEOUT, drain).await {
        Ok(r) => r?,
        // A broker that fell this far behind is a result (the report shows the count); the
        // connection is dropped with its requests.
        Err(_) => stats.unanswered += conn.in_flight() as u64,
    }
    Ok(stats)
}

fn queue(
    conn: &mut Conn<Tag>,
    r: &mut MemberRequests,
    op: Op,
    member: usize,
    counts_from: Instant,
) -> Result<(), BenchError> {
    let tag = (op, member, counts_from);
    match op {
        Op::Commit => {
            r.next_offset += 1;
            let offset = r.next_offset;
            for t in &mut r.commit.topics {
                for p in &mut t.partitions {
                    p.committed_offset = offset;
                }
            }
            let body = RequestKind::OffsetCommit(std::mem::take(&mut r.commit));
            let queued = conn.queue(ApiKey::OffsetCommit, versions::OFFSET_COMMIT, &body, tag);
            if let RequestKind::OffsetCommit(c) = body {
                r.commit = c;
            }
            queued
        }
        Op::Heartbeat => {
            let body = RequestKind::Heartbeat(std::mem::take(&mut r.heartbeat));
            let queued = conn.queue(ApiKey::Heartbeat, versions::HEARTBEAT, &body, tag);
            if let RequestKind::Heartbeat(h) = body {
                r.heartbeat = h;
            }
            queued
        }
        Op::FetchOffsets => {
            let body = RequestKind::OffsetFetch(std::mem::take(&mut r.fetch));
            let queued = conn.queue(ApiKey::OffsetFetch, versions::OFFSET_FETCH, &body, tag);
            if let RequestKind::OffsetFetch(f) = body {
                r.fetch = f;
            }
            queued
        }
        // Sent by `consumer_load`, whose members keep their own state.
        Op::ConsumerHeartbeat => Err(BenchError::Setup(
            "this load does not send ConsumerGroupHeartbeat".into(),
        )),
        Op::ApiVersions => conn.queue(
            ApiKey::ApiVersions,
            versions::API_VERSIONS,
            &RequestKind::ApiVersions(
                ApiVersionsRequest::default()
                    .with_client_software_name(StrBytes::from_static_str("cohort-bench"))
                    .with_client_software_version(StrBytes::from_static_str("1")),
            ),
            tag,
        ),
    }
}

/// Records one response if it completed inside the window.
fn account(stats: &mut ConnStats, tag: Tag, body: &ResponseKind, now: Instant, window: Window) {
    let (op, _, counts_from) = tag;
    if !window.contains(now) {
        return;
    }
    let (error, partitions, missing) = inspect(body);
    stats
        .latencies
        .entry(op)
        .or_default()
        .record(now.saturating_duration_since(counts_from));
    *stats.partitions.entry(op).or_default() += partitions;
    stats.missing_offsets += missing;
    match error {
        None => *stats.ok.entry(op).or_default() += 1,
        Some(code) => {
            *stats.failed.entry(op).or_default() += 1;
            stats.errors.add(op, code);
        }
    }
}

/// A response's first error code, the partitions it answered without error, and (for
/// OffsetFetch) partitions answered without a committed offset.
fn inspect(body: &ResponseKind) -> (Option<i16>, u64, u64) {
    fn first_error(mut codes: impl Iterator<Item = i16>) -> Option<i16> {
        codes.find(|c| *c != 0)
    }
    match body {
        ResponseKind::OffsetCommit(r) => {
            let codes = r
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code));
            let ok = codes.clone().filter(|c| *c == 0).count() as u64;
            (first_error(codes), ok, 0)
        }
        ResponseKind::Heartbeat(r) => (first_error(std::iter::once(r.error_code)), 0, 0),
        ResponseKind::OffsetFetch(r) => {
            let codes = r.groups.iter().flat_map(|g| {
                std::iter::once(g.error_code).chain(
                    g.topics
                        .iter()
                        .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
                )
            });
            let error = first_error(codes);
            let partitions = r
                .groups
                .iter()
                .flat_map(|g| g.topics.iter())
                .flat_map(|t| t.partitions.iter());
            let ok = partitions.clone().filter(|p| p.error_code == 0).count() as u64;
            let missing = partitions
                .filter(|p| p.error_code == 0 && p.committed_offset < 0)
                .count() as u64;
            (error, ok, missing)
        }
        ResponseKind::ApiVersions(r) => (first_error(std::iter::once(r.error_code)), 0, 0),
        // A response of another kind cannot come back: its API key came from the request.
        _ => (Some(-1), 0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_spread_over_the_interval() {
        let every = Duration::from_millis(5000);
        let mut phases: Vec<Duration> = (0..1000).map(|i| phase(i, every)).collect();
        assert!(phases.iter().all(|p| *p < every));
        phases.sort();
        // Evenly spread: no gap between neighbours is much wider than the average.
        let widest = phases.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(widest < every / 200, "{widest:?}");
    }

    #[test]
    fn commit_answers_count_partitions_and_the_first_error() {
        use kafka_protocol::messages::offset_commit_response::{
            OffsetCommitResponsePartition, OffsetCommitResponseTopic,
        };
        use kafka_protocol::messages::OffsetCommitResponse;
        let r = ResponseKind::OffsetCommit(OffsetCommitResponse::default().with_topics(vec![
            OffsetCommitResponseTopic::default().with_partitions(vec![
                OffsetCommitResponsePartition::default(),
                OffsetCommitResponsePartition::default().with_error_code(22),
                OffsetCommitResponsePartition::default(),
            ]),
        ]));
        assert_eq!(inspect(&r), (Some(22), 2, 0));
    }
}
