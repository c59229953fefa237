//! The consumer-protocol load: members spread over connections, each joining with
//! ConsumerGroupHeartbeat, reconciling what it is given and heartbeating at the interval the
//! broker returns, one heartbeat in flight per member (as a consumer has).
//!
//! ```text
//!  per connection (members c, c+C, c+2C, ...):
//!    join at its phase within the first interval ─► answers bring epoch, interval, assignment
//!    an assignment that changed what it owns ─► the ack goes out at once
//!    otherwise the next heartbeat is due one interval after this one was
//!    send everything due in one write ─► wait for a response or the next due time
//!  window: [start + warmup, start + warmup + duration); responses completing in it count,
//!  and so does every heartbeat in it that was not steady (a join, an ack, a new assignment)
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use uuid::Uuid;

use super::broker::BrokerWatch;
use super::consumer_member::{ConsumerMember, Next, Sent};
use super::load::{self, join_load_tasks, LoadResult, OpStats, Window, DRAIN_TIMEOUT};
use super::stats::{ErrorCounts, Latencies, Op};
use super::wire::Conn;
use super::BenchError;

/// ConsumerGroupHeartbeat v1 (KIP-1082: the client picks its member id), what Kafka 4.0's
/// Java consumer sends.
pub const CONSUMER_GROUP_HEARTBEAT_VERSION: i16 = 1;

/// What to run.
#[derive(Debug, Clone)]
pub struct ConsumerSpec {
    pub topic: String,
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Joins are spread over this long; after that the broker's interval rules.
    pub join_spread: Duration,
}

/// What the consumer load adds to a [`LoadResult`].
#[derive(Debug, Clone)]
pub struct ConsumerResult {
    pub load: LoadResult,
    /// Heartbeats answered in the window that were not steady: joins, acks, or answers that
    /// changed what a member owns. A steady state has none.
    pub changing_in_window: u64,
    /// When the last non-steady heartbeat was answered, from the start of the load.
    pub last_change: Option<Duration>,
    /// Smallest and largest heartbeat interval the broker gave (ms).
    pub interval_ms: Option<(u128, u128)>,
    /// Members and the partitions they owned at the end.
    pub members: usize,
    pub owned_partitions: usize,
}

/// One connection's members and figures.
#[derive(Debug, Default)]
struct ConnStats {
    latency: Latencies,
    ok: u64,
    failed: u64,
    errors: ErrorCounts,
    changing_in_window: u64,
    last_change: Option<Instant>,
    interval_ms: Option<(u128, u128)>,
    unanswered: u64,
    send_lag_max: Duration,
    owned_partitions: usize,
}

/// A heartbeat on the wire: which member, when it was due (latency counts from then), what
/// it carried.
type Tag = (usize, Instant, Sent);

/// Members of group `groups[i].0` (`groups[i].1` of them), over `spec.connections` connections
/// to `coordinator`; `watch` is sampled for CPU and Raft at the window's ends.
pub async fn run(
    coordinator: SocketAddr,
    groups: &[(String, usize)],
    spec: &ConsumerSpec,
    watch: &BrokerWatch,
) -> Result<ConsumerResult, BenchError> {
    let members: Vec<String> = groups
        .iter()
        .flat_map(|(g, n)| std::iter::repeat_n(g.clone(), *n))
        .collect();
    let (conns, start, window) = load::open(
        coordinator,
        members.len(),
        spec.connections,
        "cohort-bench-consumer",
        spec.warmup,
        spec.duration,
    )
    .await?;
    let connections = conns.len();
    let mut tasks = tokio::task::JoinSet::new();
    for (c, conn) in conns.into_iter().enumerate() {
        let mine: Vec<(usize, ConsumerMember)> = members
            .iter()
            .enumerate()
            .skip(c)
            .step_by(connections)
            .map(|(i, g)| {
                let m = ConsumerMember::new(g, Uuid::new_v4(), &spec.topic, spec.join_spread);
                (i, m)
            })
            .collect();
        let spec = spec.clone();
        tasks.spawn(async move { drive(conn, mine, &spec, start, window).await });
    }
    let cpu = load::sample_window(watch, window);
    let total = match join_load_tasks(tasks, merge).await {
        Ok(total) => total,
        Err(e) => {
            cpu.abort();
            return Err(e);
        }
    };
    let (client_cpu, broker_cpu, raft) = cpu.await.unwrap_or((None, None, None));
    let mut ops = BTreeMap::new();
    ops.insert(
        Op::ConsumerHeartbeat,
        OpStats {
            ok: total.ok,
            failed: total.failed,
            partitions: 0,
            latency: total.latency.summary(),
        },
    );
    Ok(ConsumerResult {
        load: LoadResult {
            window: spec.duration,
            ops,
            errors: total.errors,
            missing_offsets: 0,
            unanswered: total.unanswered,
            send_lag_max: total.send_lag_max,
            client_cpu,
            broker_cpu,
            raft,
        },
        changing_in_window: total.changing_in_window,
        last_change: total
            .last_change
            .map(|t| t.saturating_duration_since(start)),
        interval_ms: total.interval_ms,
        members: members.len(),
        owned_partitions: total.owned_partitions,
    })
}

fn merge(total: &mut ConnStats, s: ConnStats) {
    total.latency.merge(s.latency);
    total.ok += s.ok;
    total.failed += s.failed;
    total.errors.merge(&s.errors);
    total.changing_in_window += s.changing_in_window;
    total.last_change = total.last_change.max(s.last_change);
    total.interval_ms = match (total.interval_ms, s.interval_ms) {
        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        (a, b) => a.or(b),
    };
    total.unanswered += s.unanswered;
    total.send_lag_max = total.send_lag_max.max(s.send_lag_max);
    total.owned_partitions += s.owned_partitions;
}

async fn drive(
    mut conn: Conn<Tag>,
    mut members: Vec<(usize, ConsumerMember)>,
    spec: &ConsumerSpec,
    start: Instant,
    window: Window,
) -> Result<ConnStats, BenchError> {
    // (due, member): a member is in the heap only while no heartbeat of its is in flight.
    let mut due: BinaryHeap<Reverse<(Instant, usize)>> = members
        .iter()
        .enumerate()
        .map(|(local, (global, _))| {
            Reverse((start + load::phase(*global, spec.join_spread), local))
        })
        .collect();
    let mut stats = ConnStats::default();
    loop {
        let now = Instant::now();
        if now >= window.end {
            break;
        }
        while let Some(Reverse((at, m))) = due.peek().copied() {
            if at > now {
                break;
            }
            due.pop();
            stats.send_lag_max = stats.send_lag_max.max(now - at);
            let (request, sent) = members[m].1.request();
            conn.queue(
                ApiKey::ConsumerGroupHeartbeat,
                CONSUMER_GROUP_HEARTBEAT_VERSION,
                &RequestKind::ConsumerGroupHeartbeat(request),
                (m, at, sent),
            )?;
        }
        conn.flush().await?;
        let wake = due
            .peek()
            .map_or(window.end, |Reverse((at, _))| *at)
            .min(window.end);
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
            let now = Instant::now();
            let (m, at, sent) = r.tag;
            let ResponseKind::ConsumerGroupHeartbeat(body) = &r.body else {
                return Err(BenchError::Protocol(
                    "ConsumerGroupHeartbeat answered with another body".into(),
                ));
            };
            let member = &mut members[m].1;
            let (then, changed) = member.on_response(body);
            let interval = member.interval;
            if window.contains(now) {
                stats.latency.record(now.saturating_duration_since(at));
                if body.error_code == 0 {
                    stats.ok += 1;
                } else {
                    stats.failed += 1;
                    stats.errors.add(Op::ConsumerHeartbeat, body.error_code);
                }
                if changed || sent != Sent::Steady {
                    stats.changing_in_window += 1;
                }
            }
            if changed || sent != Sent::Steady {
                stats.last_change = Some(now);
            }
            if body.error_code == 0 {
                let ms = u128::from(body.heartbeat_interval_ms.unsigned_abs());
                stats.interval_ms = Some(
                    stats
                        .interval_ms
                        .map_or((ms, ms), |(a, b)| (a.min(ms), b.max(ms))),
                );
            }
            let when = match then {
                Next::Now => now,
                // The interval counts from when this heartbeat was due, so a slow answer
                // does not stretch the cadence; a very slow one makes the next go out at once.
                Next::AtInterval => (at + interval).max(now),
            };
            due.push(Reverse((when, m)));
            next = conn.take_buffered()?;
        }
    }
    let drain = async {
        while conn.in_flight() > 0 {
            conn.next_response().await?;
        }
        Ok::<(), BenchError>(())
    };
    match tokio::time::timeout(DRAIN_TIMEOUT, drain).await {
        Ok(r) => r?,
        Err(_) => stats.unanswered += conn.in_flight() as u64,
    }
    stats.owned_partitions = members
        .iter()
        .map(|(_, m)| m.owned().iter().map(|(_, p)| p.len()).sum::<usize>())
        .sum();
    Ok(stats)
}
