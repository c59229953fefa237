//! A three-node cluster run by `scripts/cluster.sh` (the operator's way), and a fallible Kafka
//! client for talking to nodes that may be dead, stopped or just elected.
//!
//! Everything is stopped by PID: `Drop` resumes SIGSTOPped nodes and runs `cluster.sh down`,
//! which signals exactly the pids in `DIR/node-N.pid`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod proxy;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};

use crate::common::raw::encode_frame;
use crate::common::{repo_root, run};

pub const NODES: [u64; 3] = [1, 2, 3];

/// A cluster started with `scripts/cluster.sh up DIR` on a free BASE.
pub struct ScriptCluster {
    pub dir: PathBuf,
    pub base: u16,
    extra: String,
    /// Set when peers dial proxies (`up_behind_proxies`): where node N's proxy listens.
    raft_peer_base: Option<u16>,
    stopped: std::collections::BTreeSet<u64>,
}

/// Twelve free ports (Kafka, Raft, HTTP and a Raft proxy of three nodes) as the script derives
/// them from BASE (the proxies' at BASE+30+N). Below Linux's ephemeral range (32768 and up):
/// a port checked free there could be handed to any outgoing connection before the node binds
/// it (a node once failed to start with "Address already in use" on 43352).
fn free_base() -> u16 {
    let seed = u64::from(std::process::id()).wrapping_mul(2_654_435_761)
        ^ Instant::now().elapsed().as_nanos() as u64;
    for attempt in 0..200u64 {
        // BASE in 10000..=32690, so BASE+33 stays below 32768.
        let base = 10_000 + ((seed.wrapping_add(attempt * 7_919)) % 2_270) as u16 * 10;
        let ports = NODES.iter().flat_map(|n| {
            [
                base + *n as u16,
                base + 10 + *n as u16,
                base + 20 + *n as u16,
                base + 30 + *n as u16,
            ]
        });
        let held: Vec<TcpListener> = ports
            .map_while(|p| TcpListener::bind(("127.0.0.1", p)).ok())
            .collect();
        if held.len() == 12 {
            return base;
        }
    }
    panic!("no free BASE found");
}

impl ScriptCluster {
    /// `cluster.sh up` under `dir` with `extra` serve flags; panics with the logs if it fails.
    pub fn up(dir: &Path, extra: &[&str]) -> ScriptCluster {
        Self::up_on(dir, free_base(), extra, false)
    }

    /// As `up` on `base` (from `free_base`), but every node dials its peers through the
    /// proxies of `proxy_routes(base)`, which the caller starts first (`proxy::RaftProxies`).
    pub fn up_behind_proxies(dir: &Path, base: u16, extra: &[&str]) -> ScriptCluster {
        Self::up_on(dir, base, extra, true)
    }

    /// A free BASE for `up_behind_proxies`, whose proxies must listen before the nodes start.
    pub fn free_base() -> u16 {
        free_base()
    }

    /// The proxy routes of a cluster on `base`: node N's proxy on BASE+30+N to its Raft port.
    pub fn proxy_routes(base: u16) -> Vec<proxy::Route> {
        NODES
            .iter()
            .map(|n| proxy::Route {
                node: *n,
                listen: SocketAddr::from(([127, 0, 0, 1], base + 30 + *n as u16)),
                target: SocketAddr::from(([127, 0, 0, 1], base + 10 + *n as u16)),
            })
            .collect()
    }

    fn up_on(dir: &Path, base: u16, extra: &[&str], proxied: bool) -> ScriptCluster {
        let c = ScriptCluster {
            dir: dir.to_path_buf(),
            base,
            extra: serve_args(extra),
            raft_peer_base: proxied.then_some(base + 30),
            stopped: Default::default(),
        };
        let out = c.script(&["up"], Duration::from_secs(90));
        if !out.status.success() {
            panic!(
                "cluster.sh up failed ({}):\n{}\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                c.logs()
            );
        }
        c
    }

    /// Runs `scripts/cluster.sh ARGS... ` with this cluster's environment.
    pub fn script(&self, args: &[&str], limit: Duration) -> Output {
        let (cmd, rest) = args.split_first().unwrap();
        let mut command = Command::new(repo_root().join("scripts/cluster.sh"));
        if let Some(peer_base) = self.raft_peer_base {
            command.env("RAFT_PEER_BASE", peer_base.to_string());
        }
        run(
            command
                .arg(cmd)
                .arg(&self.dir)
                .args(rest)
                .env("BASE", self.base.to_string())
                .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort"))
                .env("COHORT_SERVE_ARGS", &self.extra)
                .env("RUST_LOG", "info"),
            limit,
        )
    }

    pub fn kafka(&self, n: u64) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.base + n as u16))
    }

    pub fn raft(&self, n: u64) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.base + 10 + n as u16))
    }

    pub fn pid(&self, n: u64) -> Option<u32> {
        std::fs::read_to_string(self.dir.join(format!("node-{n}.pid")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    fn signal(&self, n: u64, sig: &str) {
        let pid = self
            .pid(n)
            .unwrap_or_else(|| panic!("node {n} has no pid file"));
        let status = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {sig} {pid} failed");
    }

    /// SIGKILL node `n` and wait until its process is gone (its pid file stays, as after a
    /// crash; `start` replaces it).
    pub fn kill9(&mut self, n: u64) {
        let pid = self.pid(n).unwrap();
        self.signal(n, "-KILL");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid) {
            assert!(Instant::now() < deadline, "pid {pid} survived SIGKILL");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn sigstop(&mut self, n: u64) {
        self.signal(n, "-STOP");
        self.stopped.insert(n);
    }

    pub fn sigcont(&mut self, n: u64) {
        self.signal(n, "-CONT");
        self.stopped.remove(&n);
    }

    /// `cluster.sh start DIR N`: restarts a node on its data directory.
    pub fn start(&self, n: u64) {
        let out = self.script(&["start", &n.to_string()], Duration::from_secs(30));
        assert!(out.status.success(), "{out:?}");
    }

    /// The `cohort serve` flags every node gets from the next `start` on.
    pub fn set_serve_args(&mut self, extra: &[&str]) {
        self.extra = serve_args(extra);
    }

    /// `cluster.sh status DIR`: (exit code, stdout).
    pub fn status(&self) -> (i32, String) {
        let out = self.script(&["status"], Duration::from_secs(30));
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// Waits until `cluster.sh status` reports a healthy cluster (exit 0).
    pub fn wait_healthy(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let (code, text) = self.status();
            if code == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "not healthy within {limit:?} (exit {code}):\n{text}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The cluster secret `cluster.sh` generated; every node proves it on its Raft port.
    pub fn secret_file(&self) -> PathBuf {
        self.dir.join("cluster.secret")
    }

    /// `cohort cluster status --json` asked of node `n` only.
    pub fn raft_status(&self, n: u64) -> Option<serde_json::Value> {
        let out = run(
            Command::new(env!("CARGO_BIN_EXE_cohort"))
                .args(["cluster", "status", "--json", "--timeout-ms", "2000"])
                .arg("--cluster-secret-file")
                .arg(self.secret_file())
                .args(["--bootstrap", &self.raft(n).to_string()]),
            Duration::from_secs(20),
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .ok()
            .map(|v| v["view"].clone())
    }

    /// The leader every listed node's Metadata names as controller, once they agree.
    pub fn wait_controller(&self, among: &[u64], limit: Duration) -> u64 {
        let deadline = Instant::now() + limit;
        loop {
            let seen: Vec<Option<i32>> = among
                .iter()
                .map(|n| {
                    metadata(self.kafka(*n), &[])
                        .ok()
                        .map(|m| m.controller_id.0)
                })
                .collect();
            if let Some(Some(c)) = seen.first() {
                if *c > 0 && among.contains(&(*c as u64)) && seen.iter().all(|s| *s == Some(*c)) {
                    return *c as u64;
                }
            }
            assert!(
                Instant::now() < deadline,
                "nodes {among:?} agree on no live controller: {seen:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every node's log, for failure messages.
    pub fn logs(&self) -> String {
        NODES
            .iter()
            .map(|n| {
                let text = std::fs::read_to_string(self.dir.join(format!("node-{n}.log")))
                    .unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(60).collect();
                format!(
                    "---- node-{n}.log (last 60 lines) ----\n{}\n",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect()
    }
}

impl Drop for ScriptCluster {
    fn drop(&mut self) {
        for n in std::mem::take(&mut self.stopped) {
            self.signal(n, "-CONT");
        }
        let out = self.script(&["down"], Duration::from_secs(60));
        if !out.status.success() {
            eprintln!("cluster.sh down: {out:?}");
        }
        if std::thread::panicking() {
            let keep =
                std::env::temp_dir().join(format!("cohort-cluster-failure-{}", std::process::id()));
            for n in NODES {
                let log = format!("node-{n}.log");
                if std::fs::create_dir_all(&keep).is_ok() {
                    let _ = std::fs::copy(self.dir.join(&log), keep.join(&log));
                }
            }
            eprintln!("{}\nfull logs kept in {}", self.logs(), keep.display());
        }
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'))
        })
        .unwrap_or(true)
}

pub fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// One request on a fresh connection, every step under `timeout`: Err for anything that is
/// not an answer (refused, reset, timed out, undecodable).
pub fn try_call(
    addr: SocketAddr,
    key: ApiKey,
    version: i16,
    body: RequestKind,
    timeout: Duration,
) -> Result<ResponseKind, String> {
    let mut conn = Conn::open(addr, timeout)?;
    conn.call(key, version, body)
}

/// A connection that reports failures instead of panicking.
pub struct Conn {
    stream: TcpStream,
    next_correlation_id: i32,
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> Result<Conn, String> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(timeout))
            .map_err(|e| e.to_string())?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Conn {
            stream,
            next_correlation_id: 1,
        })
    }

    pub fn call(
        &mut self,
        key: ApiKey,
        version: i16,
        body: RequestKind,
    ) -> Result<ResponseKind, String> {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id += 1;
        let frame = encode_frame(correlation_id, "cluster-test", key, version, &body)?;
        self.stream.write_all(&frame).map_err(|e| e.to_string())?;
        let mut size = [0u8; 4];
        self.stream
            .read_exact(&mut size)
            .map_err(|e| e.to_string())?;
        let size = usize::try_from(i32::from_be_bytes(size)).map_err(|e| e.to_string())?;
        let mut body = vec![0u8; size];
        self.stream
            .read_exact(&mut body)
            .map_err(|e| e.to_string())?;
        let mut body = Bytes::from(body);
        let header = ResponseHeader::decode(&mut body, key.response_header_version(version))
            .map_err(|e| e.to_string())?;
        if header.correlation_id != correlation_id {
            return Err(format!(
                "correlation id {} for request {correlation_id}",
                header.correlation_id
            ));
        }
        ResponseKind::decode(key, &mut body, version).map_err(|e| e.to_string())
    }
}

const T: Duration = Duration::from_secs(5);

/// Metadata v9 for `topics` (none: no topics, only brokers and controller).
pub fn metadata(addr: SocketAddr, topics: &[&str]) -> Result<MetadataResponse, String> {
    let req = MetadataRequest::default()
        .with_topics(Some(
            topics
                .iter()
                .map(|t| {
                    metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(s(t))))
                })
                .collect(),
        ))
        .with_allow_auto_topic_creation(false);
    match try_call(addr, ApiKey::Metadata, 9, RequestKind::Metadata(req), T)? {
        ResponseKind::Metadata(r) => Ok(r),
        other => Err(format!("{other:?}")),
    }
}

/// CreateTopics v5 of one topic: its error code.
pub fn create_topic(addr: SocketAddr, name: &str, partitions: i32) -> Result<i16, String> {
    let req = CreateTopicsRequest::default()
        .with_topics(vec![create_topics_request::CreatableTopic::default()
            .with_name(TopicName(s(name)))
            .with_num_partitions(partitions)
            .with_replication_factor(1)])
        .with_timeout_ms(10_000);
    match try_call(
        addr,
        ApiKey::CreateTopics,
        5,
        RequestKind::CreateTopics(req),
        Duration::from_secs(15),
    )? {
        ResponseKind::CreateTopics(r) => Ok(r.topics[0].error_code),
        other => Err(format!("{other:?}")),
    }
}

/// ListGroups v4 (no filter): (error code, group ids).
pub fn list_groups(addr: SocketAddr) -> Result<(i16, Vec<String>), String> {
    match try_call(
        addr,
        ApiKey::ListGroups,
        4,
        RequestKind::ListGroups(ListGroupsRequest::default()),
        T,
    )? {
        ResponseKind::ListGroups(r) => Ok((
            r.error_code,
            r.groups.iter().map(|g| g.group_id.to_string()).collect(),
        )),
        other => Err(format!("{other:?}")),
    }
}

/// FindCoordinator v4 for one group: (error code, node id).
pub fn find_coordinator(addr: SocketAddr, group: &str) -> Result<(i16, i32), String> {
    let req = FindCoordinatorRequest::default().with_coordinator_keys(vec![s(group)]);
    match try_call(
        addr,
        ApiKey::FindCoordinator,
        4,
        RequestKind::FindCoordinator(req),
        T,
    )? {
        ResponseKind::FindCoordinator(r) => {
            let c = &r.coordinators[0];
            Ok((c.error_code, c.node_id.0))
        }
        other => Err(format!("{other:?}")),
    }
}

/// FindCoordinator v4 for one group, which must answer NONE: (node id, "HOST:PORT").
pub fn find_coordinator_endpoint(addr: SocketAddr, group: &str) -> Result<(i32, String), String> {
    let req = FindCoordinatorRequest::default().with_coordinator_keys(vec![s(group)]);
    match try_call(
        addr,
        ApiKey::FindCoordinator,
        4,
        RequestKind::FindCoordinator(req),
        T,
    )? {
        ResponseKind::FindCoordinator(r) => {
            let c = &r.coordinators[0];
            if c.error_code != 0 {
                return Err(format!("error {}", c.error_code));
            }
            Ok((c.node_id.0, format!("{}:{}", c.host, c.port)))
        }
        other => Err(format!("{other:?}")),
    }
}

/// An admin OffsetCommit v8 (generation -1, no member) of one partition: its error code.
pub fn commit(
    conn: &mut Conn,
    group: &str,
    topic: &str,
    partition: i32,
    offset: i64,
) -> Result<i16, String> {
    use offset_commit_request::*;
    let req = OffsetCommitRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_generation_id_or_member_epoch(-1)
        .with_member_id(s(""))
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(TopicName(s(topic)))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(partition)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(Some(s("")))])]);
    match conn.call(ApiKey::OffsetCommit, 8, RequestKind::OffsetCommit(req))? {
        ResponseKind::OffsetCommit(r) => Ok(r.topics[0].partitions[0].error_code),
        other => Err(format!("{other:?}")),
    }
}

/// (topic, partition, committed offset).
pub type Committed = (String, i32, i64);

/// OffsetFetch v8 of every partition of `group`: (group error code, (topic, partition, offset)).
pub fn fetch_offsets(addr: SocketAddr, group: &str) -> Result<(i16, Vec<Committed>), String> {
    use offset_fetch_request::*;
    let req = OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(None)]);
    match try_call(
        addr,
        ApiKey::OffsetFetch,
        8,
        RequestKind::OffsetFetch(req),
        T,
    )? {
        ResponseKind::OffsetFetch(r) => {
            let g = &r.groups[0];
            let mut out: Vec<Committed> = g
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| (t.name.to_string(), p.partition_index, p.committed_offset))
                })
                .collect();
            out.sort();
            Ok((g.error_code, out))
        }
        other => Err(format!("{other:?}")),
    }
}

/// Produce v8 of one record batch holding `value` to a partition: its error code.
pub fn produce(addr: SocketAddr, topic: &str, partition: i32, value: &[u8]) -> Result<i16, String> {
    use produce_request::*;
    let batch = crate::common::raw::batches::batch(&[value], 0, None);
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(s(topic)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(partition)
                .with_records(Some(batch))])]);
    match try_call(addr, ApiKey::Produce, 8, RequestKind::Produce(req), T)? {
        ResponseKind::Produce(r) => Ok(r.responses[0].partition_responses[0].error_code),
        other => Err(format!("{other:?}")),
    }
}

/// Retries `f` until it returns `Some` or `limit` passes (then panics with `what`).
pub fn eventually<R>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<R>) -> R {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(r) = f() {
            return r;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One partition's answer to a Fetch.
pub struct Fetched {
    pub error_code: i16,
    pub high_watermark: i64,
    /// (offset, key, value) of every record, every batch's CRC checked by the decoder.
    pub records: Vec<(i64, Vec<u8>, Vec<u8>)>,
}

/// Fetch v12 of one partition from `offset`.
pub fn fetch_records(
    addr: SocketAddr,
    topic: &str,
    partition: i32,
    offset: i64,
) -> Result<Fetched, String> {
    use fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::records::RecordBatchDecoder;
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(50 << 20)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(s(topic)))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(8 << 20)])]);
    match try_call(addr, ApiKey::Fetch, 12, RequestKind::Fetch(req), T)? {
        ResponseKind::Fetch(mut r) => {
            let p = r.responses.remove(0).partitions.remove(0);
            let mut records = p.records.unwrap_or_default();
            let sets = RecordBatchDecoder::decode_all(&mut records).map_err(|e| e.to_string())?;
            Ok(Fetched {
                error_code: p.error_code,
                high_watermark: p.high_watermark,
                records: sets
                    .into_iter()
                    .flat_map(|s| s.records)
                    .map(|r| {
                        (
                            r.offset,
                            r.key.unwrap_or_default().to_vec(),
                            r.value.unwrap_or_default().to_vec(),
                        )
                    })
                    .collect(),
            })
        }
        other => Err(format!("{other:?}")),
    }
}

/// Fetch v12 of one partition from `offset`: (error code, the record values).
pub fn fetch_values(
    addr: SocketAddr,
    topic: &str,
    partition: i32,
    offset: i64,
) -> Result<(i16, Vec<Vec<u8>>), String> {
    let f = fetch_records(addr, topic, partition, offset)?;
    Ok((
        f.error_code,
        f.records.into_iter().map(|(_, _, value)| value).collect(),
    ))
}

/// Each partition's leader as Metadata at `addr` names it (index = partition).
pub fn partition_leaders(addr: SocketAddr, topic: &str) -> Result<Vec<i32>, String> {
    let m = metadata(addr, &[topic])?;
    let t = m.topics.first().ok_or("no topic in the answer")?;
    if t.error_code != 0 {
        return Err(format!("topic error {}", t.error_code));
    }
    let mut leaders: Vec<(i32, i32)> = t
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.leader_id.0))
        .collect();
    leaders.sort_unstable();
    Ok(leaders.into_iter().map(|(_, l)| l).collect())
}

/// DeleteTopics v4 of one topic: its error code.
pub fn delete_topic(addr: SocketAddr, name: &str) -> Result<i16, String> {
    let req = DeleteTopicsRequest::default()
        .with_topic_names(vec![TopicName(s(name))])
        .with_timeout_ms(10_000);
    match try_call(
        addr,
        ApiKey::DeleteTopics,
        4,
        RequestKind::DeleteTopics(req),
        Duration::from_secs(15),
    )? {
        ResponseKind::DeleteTopics(r) => Ok(r.responses[0].error_code),
        other => Err(format!("{other:?}")),
    }
}

/// `COHORT_SERVE_ARGS` for the nodes: the tests' Raft timing, then the test's own flags.
fn serve_args(extra: &[&str]) -> String {
    crate::common::RAFT_TEST_TIMING
        .iter()
        .chain(extra)
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}
