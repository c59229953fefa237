//! `cohort bench produce|fetch`: data-plane throughput with 1 KiB records on one node, as
//! ratios against the physical limit measured in the same run on the same disk.
//!
//! ```text
//!  produce: raw  = write(batch) + fdatasync, one after the other, same bytes, same batch size
//!           ours = an in-process broker; each connection sends Produce(acks=-1) of one batch
//!                  and waits for the answer (the broker fsyncs before answering)
//!  fetch:   raw  = sequential read of the partition's segment files (page cache warm)
//!           ours = Fetch requests from offset 0 to the end over one connection
//! ```
//!
//! With `--command-config` naming `security.protocol=SSL` (and `--ssl-cert`/`--ssl-key` for
//! the broker), the broker also listens on SSL and every round measures the same load over TLS
//! right after plaintext: the ratio TLS/plaintext is printed too.
//!
//! It is a benchmark, not a test: it prints figures (see `docs/BENCHMARKS.md`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use clap::Args;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, FetchRequest, ProduceRequest, RequestHeader, RequestKind,
    ResponseHeader, ResponseKind, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use crate::config::ServeArgs;
use crate::server::Server;

/// Shape of the run.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Directory on the disk to measure (a scratch directory is made inside and removed).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Bytes of each record value.
    #[arg(long, default_value_t = 1024)]
    record_bytes: usize,
    /// Records per batch (one batch per Produce request).
    #[arg(long, default_value_t = 64)]
    batch_records: usize,
    /// MiB written in total.
    #[arg(long, default_value_t = 256)]
    total_mib: usize,
    /// Producer connections (one partition each).
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Produce requests each connection keeps in flight (the Java client's default is 5).
    #[arg(long, default_value_t = 5)]
    in_flight: usize,
    /// Per-partition fetch size (Kafka's `max.partition.fetch.bytes`).
    #[arg(long, default_value_t = 8 << 20)]
    fetch_bytes: i32,
    /// Times the whole partition is fetched (and read raw); the best round counts.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// `fetch` only: fill the partition with transactions of this many batches each (every
    /// tenth aborted) and measure read_committed against read_uncommitted on that log.
    #[arg(long, default_value_t = 0)]
    txn_batches: usize,
    /// Client properties (`--command-config` syntax) with `security.protocol=SSL` and its
    /// truststore: the load is then measured over TLS too, round by round after plaintext.
    #[arg(long)]
    command_config: Option<String>,
    /// The broker's certificate chain (PEM), with `--command-config`.
    #[arg(long)]
    ssl_cert: Option<PathBuf>,
    /// The broker's private key (PEM), with `--command-config`.
    #[arg(long)]
    ssl_key: Option<PathBuf>,
}

/// Where a load connection goes: an address, over TLS when `tls` is set.
#[derive(Clone)]
struct Target {
    addr: SocketAddr,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl Target {
    fn plain(addr: SocketAddr) -> Target {
        Target { addr, tls: None }
    }
}

/// The TLS side of a run: the client's rustls settings from `--command-config`, and the broker
/// flags that add an SSL listener.
type TlsSide = (Arc<rustls::ClientConfig>, Vec<String>);

fn tls_side(a: &DataArgs) -> BenchResult<Option<TlsSide>> {
    use crate::security::listeners::SecurityProtocol;
    let Some(path) = &a.command_config else {
        return Ok(None);
    };
    let props = crate::client::config::read_properties_file(path).map_err(|e| e.to_string())?;
    let security = crate::client::auth::ClientSecurity::from_properties(&props)
        .map_err(|e| e.java_message())?;
    let tls = match (security.protocol, security.tls) {
        (SecurityProtocol::Ssl, Some(tls)) => tls,
        (other, _) => {
            return Err(format!(
                "--command-config says security.protocol={other}; produce and fetch measure \
                 SSL against PLAINTEXT"
            ))
        }
    };
    let (Some(cert), Some(key)) = (&a.ssl_cert, &a.ssl_key) else {
        return Err("--command-config needs --ssl-cert and --ssl-key for the broker".into());
    };
    let flags = vec![
        "--listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0".to_string(),
        "--ssl-cert".to_string(),
        cert.display().to_string(),
        "--ssl-key".to_string(),
        key.display().to_string(),
    ];
    Ok(Some((tls.rustls_config(), flags)))
}

/// The broker's SSL listener.
fn ssl_addr(server: &Server) -> BenchResult<SocketAddr> {
    server
        .listeners()
        .iter()
        .find(|(p, _)| *p == crate::security::listeners::SecurityProtocol::Ssl)
        .map(|(_, a)| *a)
        .ok_or_else(|| "the broker has no SSL listener".to_string())
}

pub type BenchResult<T> = Result<T, String>;

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(dir: &Path) -> BenchResult<Scratch> {
    let path = dir.join(format!("cohort-bench-{}", std::process::id()));
    std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Scratch(path))
}

async fn start_broker(data_dir: &Path, extra: &[String]) -> BenchResult<Server> {
    /// `cohort serve`'s flags, parsed the same way, so every default is the real one.
    #[derive(clap::Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }
    let dir = data_dir
        .to_str()
        .ok_or("the bench directory is not UTF-8")?;
    let flags = [
        "serve",
        "--data-dir",
        dir,
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
        "--auto-create-topics=false",
    ];
    let serve = <Serve as clap::Parser>::try_parse_from(
        flags.into_iter().chain(extra.iter().map(String::as_str)),
    )
    .map_err(|e| e.to_string())?;
    Server::start(serve.args).await.map_err(|e| e.to_string())
}

/// One batch of `records` values of `bytes` each (incompressible-looking content).
fn make_batch(records: usize, bytes: usize) -> BenchResult<Bytes> {
    make_producer_batch(records, bytes, None)
}

/// [`make_batch`], transactional when `producer` is `Some((producer id, first sequence))`.
fn make_producer_batch(
    records: usize,
    bytes: usize,
    producer: Option<(i64, i32)>,
) -> BenchResult<Bytes> {
    let (pid, epoch, seq0) = match producer {
        Some((pid, seq)) => (pid, 0, seq),
        None => (-1, -1, -1),
    };
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let recs: Vec<Record> = (0..records)
        .map(|i| {
            let value: Vec<u8> = (0..bytes)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            Record {
                transactional: producer.is_some(),
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: pid,
                producer_epoch: epoch,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: if seq0 >= 0 {
                    seq0 + i as i32
                } else {
                    i as i32 - 1
                },
                timestamp: 1_700_000_000_000 + i as i64,
                key: None,
                value: Some(Bytes::from(value)),
                headers: Default::default(),
            }
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        recs.iter(),
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(buf.freeze())
}

/// A blocking byte stream: TCP, or TLS over it.
trait Duplex: Read + Write + Send {}
impl<T: Read + Write + Send> Duplex for T {}

/// A blocking Kafka connection for the load generator.
struct Conn {
    stream: Box<dyn Duplex>,
    correlation_id: i32,
    /// The last response's buffer, reused once its decoded parts are dropped (a fresh 8 MiB
    /// allocation per response costs page faults that would be charged to the broker).
    spare: Vec<u8>,
}

impl Conn {
    fn connect(target: &Target) -> BenchResult<Conn> {
        let tcp = TcpStream::connect(target.addr).map_err(|e| e.to_string())?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let stream: Box<dyn Duplex> = match &target.tls {
            None => Box::new(tcp),
            Some(config) => {
                let name = rustls::pki_types::ServerName::IpAddress(target.addr.ip().into());
                let session = rustls::ClientConnection::new(config.clone(), name)
                    .map_err(|e| e.to_string())?;
                // The handshake runs on the first write.
                Box::new(rustls::StreamOwned::new(session, tcp))
            }
        };
        Ok(Conn {
            stream,
            correlation_id: 0,
            spare: Vec::new(),
        })
    }

    fn call(&mut self, key: ApiKey, version: i16, body: &RequestKind) -> BenchResult<ResponseKind> {
        self.send(key, version, body)?;
        self.receive(key, version)
    }

    fn send(&mut self, key: ApiKey, version: i16, body: &RequestKind) -> BenchResult<()> {
        let frame = self.encode(key, version, body)?;
        self.stream.write_all(&frame).map_err(|e| e.to_string())
    }

    /// Sends a frame made by [`Conn::encode`] again under the next correlation id (the load
    /// generator should not charge its own encoding to the broker).
    fn resend(&mut self, frame: &mut [u8]) -> BenchResult<()> {
        self.correlation_id += 1;
        frame[8..12].copy_from_slice(&self.correlation_id.to_be_bytes());
        self.stream.write_all(frame).map_err(|e| e.to_string())
    }

    fn encode(&mut self, key: ApiKey, version: i16, body: &RequestKind) -> BenchResult<BytesMut> {
        self.correlation_id += 1;
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation_id)
            .with_client_id(Some(StrBytes::from_static_str("cohort-bench")));
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[0, 0, 0, 0]);
        header
            .encode(&mut buf, key.request_header_version(version))
            .map_err(|e| e.to_string())?;
        body.encode(&mut buf, version).map_err(|e| e.to_string())?;
        let size = (buf.len() - 4) as i32;
        buf[..4].copy_from_slice(&size.to_be_bytes());
        Ok(buf)
    }

    fn receive(&mut self, key: ApiKey, version: i16) -> BenchResult<ResponseKind> {
        self.receive_frame(key, version).map(|(r, _)| r)
    }

    /// Gives a response frame back for reuse (once nothing decoded from it is alive).
    fn recycle(&mut self, frame: Bytes) {
        if let Ok(buf) = frame.try_into_mut() {
            self.spare = Vec::from(buf);
        }
    }

    /// The decoded response and the frame it was decoded from.
    fn receive_frame(&mut self, key: ApiKey, version: i16) -> BenchResult<(ResponseKind, Bytes)> {
        let mut size = [0u8; 4];
        self.stream
            .read_exact(&mut size)
            .map_err(|e| e.to_string())?;
        let size = i32::from_be_bytes(size).max(0) as usize;
        // `read_to_end` fills spare capacity without zeroing it first.
        let mut frame = std::mem::take(&mut self.spare);
        frame.clear();
        frame.reserve(size);
        (&mut self.stream)
            .take(size as u64)
            .read_to_end(&mut frame)
            .map_err(|e| e.to_string())?;
        if frame.len() != size {
            return Err("connection closed mid-response".into());
        }
        let whole = Bytes::from(frame);
        let mut frame = whole.clone();
        ResponseHeader::decode(&mut frame, key.response_header_version(version))
            .map_err(|e| e.to_string())?;
        let body = ResponseKind::decode(key, &mut frame, version).map_err(|e| e.to_string())?;
        Ok((body, whole))
    }
}

fn create_topic(addr: SocketAddr, partitions: i32) -> BenchResult<()> {
    use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    let mut c = Conn::connect(&Target::plain(addr))?;
    let topic = CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_static_str("bench")))
        .with_num_partitions(partitions)
        .with_replication_factor(1)
        .with_configs(vec![CreatableTopicConfig::default()
            .with_name(StrBytes::from_static_str("max.message.bytes"))
            .with_value(Some(StrBytes::from_static_str("67108864")))]);
    match c.call(
        ApiKey::CreateTopics,
        7,
        &RequestKind::CreateTopics(CreateTopicsRequest::default().with_topics(vec![topic])),
    )? {
        ResponseKind::CreateTopics(r) if r.topics.first().map(|t| t.error_code) == Some(0) => {
            Ok(())
        }
        other => Err(format!("creating the topic failed: {other:?}")),
    }
}

fn produce_request(partition: i32, batch: &Bytes) -> RequestKind {
    RequestKind::Produce(
        ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str("bench")))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(batch.clone()))])]),
    )
}

/// Sends `count` Produce requests of `batch` to `partition`, keeping `in_flight` of them
/// outstanding as real clients do; per-request latencies.
fn produce_loop(
    target: &Target,
    partition: i32,
    batch: Bytes,
    count: usize,
    in_flight: usize,
) -> BenchResult<Vec<Duration>> {
    let mut c = Conn::connect(target)?;
    let mut frame = c.encode(ApiKey::Produce, 9, &produce_request(partition, &batch))?;
    let mut latencies = Vec::with_capacity(count);
    let mut sent_at = std::collections::VecDeque::with_capacity(in_flight);
    let mut sent = 0;
    while latencies.len() < count {
        while sent < count && sent_at.len() < in_flight.max(1) {
            c.resend(&mut frame)?;
            sent_at.push_back(Instant::now());
            sent += 1;
        }
        match c.receive(ApiKey::Produce, 9)? {
            ResponseKind::Produce(r) => {
                let code = r
                    .responses
                    .first()
                    .and_then(|t| t.partition_responses.first())
                    .map_or(-1, |p| p.error_code);
                if code != 0 {
                    return Err(format!("produce answered error code {code}"));
                }
            }
            other => return Err(format!("unexpected answer {other:?}")),
        }
        if let Some(t) = sent_at.pop_front() {
            latencies.push(t.elapsed());
        }
    }
    Ok(latencies)
}

/// Raw limit: `count` appends of `batch` to `file`, each followed by fdatasync; returns the
/// time taken and each fdatasync's latency.
fn raw_write(
    file: &mut std::fs::File,
    batch: &[u8],
    count: usize,
) -> BenchResult<(Duration, Vec<Duration>)> {
    let mut syncs = Vec::with_capacity(count);
    let started = Instant::now();
    for _ in 0..count {
        file.write_all(batch).map_err(|e| e.to_string())?;
        let s = Instant::now();
        file.sync_data().map_err(|e| e.to_string())?;
        syncs.push(s.elapsed());
    }
    Ok((started.elapsed(), syncs))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn mib_per_s(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / elapsed.as_secs_f64().max(1e-9)
}

pub async fn produce(a: DataArgs) -> BenchResult<()> {
    let scratch = scratch(&a.dir)?;
    let batch = make_batch(a.batch_records, a.record_bytes)?;
    let connections = a.connections.max(1);
    let rounds = a.rounds.max(1);
    let total = a.total_mib << 20;
    // Per connection and round; raw and broker alternate round by round, so both see the same
    // machine (on a shared host the disk's fsync latency drifts over seconds).
    let per_round = (total / batch.len() / connections / rounds).max(1);
    let count = per_round * connections * rounds;
    let bytes = count * batch.len();

    let raw_path = scratch.0.join("raw-write");
    let raw_file = std::fs::File::create(&raw_path).map_err(|e| e.to_string())?;
    let raw_file = std::sync::Arc::new(std::sync::Mutex::new(raw_file));
    let tls = tls_side(&a)?;
    let broker_flags = tls.as_ref().map(|(_, f)| f.clone()).unwrap_or_default();
    let server = start_broker(&scratch.0.join("broker"), &broker_flags).await?;
    let addr = server.kafka_addr();
    let mut targets = vec![Target::plain(addr)];
    if let Some((config, _)) = &tls {
        targets.push(Target {
            addr: ssl_addr(&server)?,
            tls: Some(config.clone()),
        });
    }
    let partitions = i32::try_from(connections).unwrap_or(1);
    tokio::task::spawn_blocking(move || create_topic(addr, partitions))
        .await
        .map_err(|e| e.to_string())??;

    let mut raw_elapsed = Duration::ZERO;
    let mut elapsed = Duration::ZERO;
    let mut syncs = Vec::with_capacity(count);
    let mut latencies = Vec::with_capacity(count);
    let mut tls_elapsed = Duration::ZERO;
    let mut tls_latencies = Vec::new();
    for _ in 0..rounds {
        let file = std::sync::Arc::clone(&raw_file);
        let raw_batch = batch.clone();
        let raw_count = per_round * connections;
        let (took, round_syncs) = tokio::task::spawn_blocking(move || {
            let mut f = file
                .lock()
                .map_err(|_| "raw file lock poisoned".to_string())?;
            raw_write(&mut f, &raw_batch, raw_count)
        })
        .await
        .map_err(|e| e.to_string())??;
        raw_elapsed += took;
        syncs.extend(round_syncs);

        // Plaintext, then (with --command-config) the same load over TLS.
        for (i, target) in targets.iter().enumerate() {
            let started = Instant::now();
            let mut handles = Vec::new();
            for p in 0..partitions {
                let batch = batch.clone();
                let in_flight = a.in_flight;
                let target = target.clone();
                handles.push(tokio::task::spawn_blocking(move || {
                    produce_loop(&target, p, batch, per_round, in_flight)
                }));
            }
            let into = if i == 0 {
                &mut latencies
            } else {
                &mut tls_latencies
            };
            for h in handles {
                into.extend(h.await.map_err(|e| e.to_string())??);
            }
            if i == 0 {
                elapsed += started.elapsed();
            } else {
                tls_elapsed += started.elapsed();
            }
        }
    }
    drop(raw_file);
    let _ = std::fs::remove_file(&raw_path);
    syncs.sort();
    latencies.sort();
    tls_latencies.sort();
    let syncs_done: u64 = server
        .broker()
        .data
        .open_partitions()
        .iter()
        .map(|p| p.sync_count())
        .sum();
    server.shutdown().await;

    let ours = mib_per_s(bytes, elapsed);
    let raw = mib_per_s(bytes, raw_elapsed);
    println!(
        "produce: {} records of {} B in batches of {} ({} B per batch), {} connection(s) with {} \
         requests in flight, {:.1} MiB in {} alternating rounds",
        count * a.batch_records,
        a.record_bytes,
        a.batch_records,
        batch.len(),
        a.connections,
        a.in_flight,
        bytes as f64 / 1048576.0,
        rounds
    );
    println!(
        "  raw write+fdatasync: {raw:.1} MiB/s  fdatasync p50 {:.2} ms  p99 {:.2} ms  ({count} fdatasyncs)",
        ms(percentile(&syncs, 0.5)),
        ms(percentile(&syncs, 0.99))
    );
    println!(
        "  cohort produce:      {ours:.1} MiB/s  {:.0} records/s  request p50 {:.2} ms  p99 {:.2} ms  ({syncs_done} fdatasyncs, {:.2} requests each)",
        (count * a.batch_records) as f64 / elapsed.as_secs_f64().max(1e-9),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99)),
        count as f64 / syncs_done.max(1) as f64,
    );
    println!("  ratio produce/raw:   {:.2}", ours / raw.max(1e-9));
    if tls.is_some() {
        let over_tls = mib_per_s(bytes, tls_elapsed);
        println!(
            "  cohort produce, TLS: {over_tls:.1} MiB/s  request p50 {:.2} ms  p99 {:.2} ms  (fdatasyncs counted above cover both)",
            ms(percentile(&tls_latencies, 0.5)),
            ms(percentile(&tls_latencies, 0.99)),
        );
        println!("  ratio TLS/plaintext: {:.2}", over_tls / ours.max(1e-9));
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn fetch(a: DataArgs) -> BenchResult<()> {
    if a.txn_batches > 0 {
        return fetch_isolation(a).await;
    }
    let scratch = scratch(&a.dir)?;
    // Fill the partition with larger batches first (not measured).
    let batch = make_batch(a.batch_records, a.record_bytes)?;
    let total = a.total_mib << 20;
    let count = (total / batch.len()).max(1);
    let tls = tls_side(&a)?;
    let broker_flags = tls.as_ref().map(|(_, f)| f.clone()).unwrap_or_default();
    let server = start_broker(&scratch.0.join("broker"), &broker_flags).await?;
    let addr = server.kafka_addr();
    let tls_target = match &tls {
        Some((config, _)) => Some(Target {
            addr: ssl_addr(&server)?,
            tls: Some(config.clone()),
        }),
        None => None,
    };
    tokio::task::spawn_blocking(move || -> BenchResult<()> {
        create_topic(addr, 1)?;
        produce_loop(&Target::plain(addr), 0, batch, count, 5).map(|_| ())
    })
    .await
    .map_err(|e| e.to_string())??;
    let log_dir = scratch.0.join("broker/topics/bench-0/log");

    // Warm: raw first in each round, which also warms the page cache for both.
    let mut warm = (0.0f64, 0.0f64);
    let mut cold = (0.0f64, 0.0f64);
    let mut ours_bytes = 0usize;
    let mut requests = 0usize;
    let mut warm_tls = 0.0f64;
    for _ in 0..a.rounds.max(1) {
        for evicted in [false, true] {
            let dir = log_dir.clone();
            let (raw_bytes, raw_elapsed) = tokio::task::spawn_blocking(move || {
                if evicted {
                    evict(&dir)?;
                }
                raw_read(&dir)
            })
            .await
            .map_err(|e| e.to_string())??;
            let dir = log_dir.clone();
            if evicted {
                tokio::task::spawn_blocking(move || evict(&dir))
                    .await
                    .map_err(|e| e.to_string())??;
            }
            let fetch_bytes = a.fetch_bytes;
            let (bytes, elapsed, n) = tokio::task::spawn_blocking(move || {
                fetch_all(&Target::plain(addr), fetch_bytes, 0)
            })
            .await
            .map_err(|e| e.to_string())??;
            // Over TLS right after plaintext, page cache warm (the TLS figure is CPU's).
            if let (Some(target), false) = (tls_target.clone(), evicted) {
                let (tls_bytes, tls_elapsed, _) =
                    tokio::task::spawn_blocking(move || fetch_all(&target, fetch_bytes, 0))
                        .await
                        .map_err(|e| e.to_string())??;
                warm_tls = warm_tls.max(mib_per_s(tls_bytes, tls_elapsed));
            }
            let best = if evicted { &mut cold } else { &mut warm };
            best.0 = best.0.max(mib_per_s(raw_bytes, raw_elapsed));
            best.1 = best.1.max(mib_per_s(bytes, elapsed));
            (ours_bytes, requests) = (bytes, n);
        }
    }
    server.shutdown().await;
    println!(
        "fetch: {:.1} MiB of batches ({} records of {} B), {} B per partition fetch",
        ours_bytes as f64 / 1048576.0,
        count * a.batch_records,
        a.record_bytes,
        a.fetch_bytes
    );
    println!(
        "  {requests} fetch requests per pass; best of {} passes each",
        a.rounds
    );
    println!(
        "  cold (segment files evicted from the page cache): raw read {:.1} MiB/s, cohort fetch {:.1} MiB/s, ratio {:.2}",
        cold.0,
        cold.1,
        cold.1 / cold.0.max(1e-9)
    );
    println!(
        "  warm (page cache):                                 raw read {:.1} MiB/s, cohort fetch {:.1} MiB/s, ratio {:.2}",
        warm.0,
        warm.1,
        warm.1 / warm.0.max(1e-9)
    );
    if tls_target.is_some() {
        println!(
            "  warm over TLS:                                     cohort fetch {warm_tls:.1} MiB/s, ratio TLS/plaintext {:.2}",
            warm_tls / warm.1.max(1e-9)
        );
    }
    Ok(())
}

/// `fetch --txn-batches N`: the partition holds transactions of N batches, each closed by a
/// marker written as the marker writer does (every tenth an ABORT); the whole partition is
/// fetched read_uncommitted and read_committed alternately, page cache warm.
async fn fetch_isolation(a: DataArgs) -> BenchResult<()> {
    let scratch = scratch(&a.dir)?;
    let server = start_broker(&scratch.0.join("broker"), &[]).await?;
    let addr = server.kafka_addr();
    tokio::task::spawn_blocking(move || create_topic(addr, 1))
        .await
        .map_err(|e| e.to_string())??;
    let partition = server
        .broker()
        .data
        .partition("bench", 0)
        .await
        .map_err(|e| e.to_string())?;
    let template = make_batch(a.batch_records, a.record_bytes)?;
    let count = ((a.total_mib << 20) / template.len()).max(1);
    let (records, bytes, per_txn) = (a.batch_records, a.record_bytes, a.txn_batches);
    let txns = tokio::task::spawn_blocking(move || -> BenchResult<usize> {
        let mut txn = 0usize;
        let mut written = 0usize;
        let now = crate::clock::unix_ms();
        while written < count {
            let pid = 1_000 + txn as i64;
            for k in 0..per_txn {
                let seq = i32::try_from(k * records).map_err(|e| e.to_string())?;
                let batch = make_producer_batch(records, bytes, Some((pid, seq)))?;
                let header =
                    protocol::batch::validate_produced(&batch).map_err(|e| e.to_string())?;
                partition
                    .append_unsynced(BytesMut::from(&batch[..]), header, now)
                    .map_err(|e| e.to_string())?;
                written += 1;
            }
            let kind = if txn % 10 == 9 {
                protocol::batch::control::ControlType::Abort
            } else {
                protocol::batch::control::ControlType::Commit
            };
            let marker = protocol::batch::control::encode_control_batch(
                &protocol::batch::control::ControlMarker {
                    kind,
                    producer_id: pid,
                    producer_epoch: 0,
                    coordinator_epoch: 0,
                    timestamp_ms: now,
                },
            );
            partition
                .append_marker(&marker, now)
                .map_err(|e| e.to_string())?;
            txn += 1;
        }
        partition.flush().map_err(|e| e.to_string())?;
        Ok(txn)
    })
    .await
    .map_err(|e| e.to_string())??;
    let mut best = (0.0f64, 0.0f64);
    let mut passes = (0usize, 0usize);
    for _ in 0..a.rounds.max(1) {
        for isolation in [0i8, 1] {
            let fetch_bytes = a.fetch_bytes;
            let (bytes, elapsed, n) = tokio::task::spawn_blocking(move || {
                fetch_all(&Target::plain(addr), fetch_bytes, isolation)
            })
            .await
            .map_err(|e| e.to_string())??;
            let rate = mib_per_s(bytes, elapsed);
            if isolation == 0 {
                best.0 = best.0.max(rate);
                passes.0 = n;
            } else {
                best.1 = best.1.max(rate);
                passes.1 = n;
            }
        }
    }
    server.shutdown().await;
    println!(
        "fetch isolation: {txns} transactions of {} batches ({} records of {} B each, every tenth aborted), {} B per partition fetch, best of {} passes each",
        a.txn_batches, a.batch_records, a.record_bytes, a.fetch_bytes, a.rounds
    );
    println!(
        "  read_uncommitted {:.1} MiB/s ({} requests), read_committed {:.1} MiB/s ({} requests), ratio {:.2}",
        best.0,
        passes.0,
        best.1,
        passes.1,
        best.1 / best.0.max(1e-9)
    );
    Ok(())
}

/// Drops the segment files of `dir` from the page cache (they are clean: written and synced),
/// so the next read comes from the disk.
fn evict(dir: &Path) -> BenchResult<()> {
    for path in segment_files(dir)? {
        let file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        file.sync_data().map_err(|e| e.to_string())?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(|e| format!("fadvise {}: {e}", path.display()))?;
    }
    Ok(())
}

fn segment_files(dir: &Path) -> BenchResult<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    Ok(files)
}

/// Reads every segment file of `dir` sequentially in 1 MiB reads.
fn raw_read(dir: &Path) -> BenchResult<(usize, Duration)> {
    let files = segment_files(dir)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0usize;
    let started = Instant::now();
    for f in files {
        let mut file = std::fs::File::open(&f).map_err(|e| e.to_string())?;
        loop {
            let n = file.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            total += n;
        }
    }
    Ok((total, started.elapsed()))
}

/// Fetches partition 0 from offset 0 to its end (the last stable offset at isolation level
/// 1); (bytes, elapsed, requests).
fn fetch_all(
    target: &Target,
    partition_bytes: i32,
    isolation_level: i8,
) -> BenchResult<(usize, Duration, usize)> {
    let mut c = Conn::connect(target)?;
    let mut offset = 0i64;
    let mut total = 0usize;
    let mut requests = 0usize;
    let started = Instant::now();
    loop {
        let req = RequestKind::Fetch(
            FetchRequest::default()
                .with_max_wait_ms(0)
                .with_min_bytes(1)
                .with_max_bytes(64 << 20)
                .with_isolation_level(isolation_level)
                .with_session_epoch(-1)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_static_str("bench")))
                    .with_partitions(vec![FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(offset)
                        .with_partition_max_bytes(partition_bytes)])]),
        );
        requests += 1;
        c.send(ApiKey::Fetch, 12, &req)?;
        let (body, frame) = c.receive_frame(ApiKey::Fetch, 12)?;
        let p = match body {
            ResponseKind::Fetch(mut r) => r
                .responses
                .pop()
                .and_then(|mut t| t.partitions.pop())
                .ok_or("empty fetch answer")?,
            other => return Err(format!("unexpected answer {other:?}")),
        };
        if p.error_code != 0 {
            return Err(format!("fetch answered error code {}", p.error_code));
        }
        let records = p.records.unwrap_or_default();
        let end = if isolation_level == 1 {
            p.last_stable_offset
        } else {
            p.high_watermark
        };
        if records.is_empty() {
            if offset >= end {
                break;
            }
            return Err(format!("no progress at offset {offset}"));
        }
        total += records.len();
        offset = next_offset(&records).ok_or("unreadable batches")?;
        drop(records);
        c.recycle(frame);
    }
    Ok((total, started.elapsed(), requests))
}

/// The offset after the last batch in `records`.
fn next_offset(records: &Bytes) -> Option<i64> {
    let mut buf = records.clone();
    let mut next = None;
    while buf.remaining() >= protocol::batch::BATCH_HEADER_BYTES {
        let header = protocol::batch::BatchHeader::parse(&buf).ok()?;
        next = Some(header.base_offset + i64::from(header.last_offset_delta) + 1);
        let size = header.total_bytes();
        if size > buf.remaining() {
            break;
        }
        buf.advance(size);
    }
    next
}
