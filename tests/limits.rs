//! Each limit of the Kafka port reached over real sockets, against the real binary as a child
//! process: the limit bites (a counter, a log line, a closed connection or a request that
//! waits), everyone else keeps being served, and the broker's memory and file descriptors,
//! read from `/proc/<pid>`, stay bounded. The group count limits are met by a real client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::metrics::scrape;
use common::procfs::{self, mib};
use common::raw::batches::batch;
use common::raw::RawClient;
use common::{python_script, Cohort};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ApiKey, FetchRequest, ProduceRequest, RequestKind, TopicName};
use kafka_protocol::protocol::StrBytes;

fn count(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
}

fn metric(broker: &Cohort, series: &str) -> f64 {
    scrape(broker).get(series).copied().unwrap_or(0.0)
}

fn produce_frame(client: &mut RawClient, topic: &str, records: bytes::Bytes) -> (i32, Vec<u8>) {
    let req = ProduceRequest::default()
        .with_transactional_id(None)
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    client.frame(ApiKey::Produce, 9, &RequestKind::Produce(req))
}

/// A connection that announces a `size`-byte request and sends `sent` bytes of it, then
/// nothing: what a client stuck (or hostile) mid-request looks like.
fn stuck_mid_request(addr: std::net::SocketAddr, size: u32, sent: usize) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s.write_all(&size.to_be_bytes()).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    let mut left = sent;
    while left > 0 {
        let n = left.min(chunk.len());
        // Once the broker stops reading, the socket buffers fill and writes time out.
        if s.write_all(&chunk[..n]).is_err() {
            break;
        }
        left -= n;
    }
    s
}

#[test]
fn request_memory_is_bounded_and_small_requests_are_served_past_it() {
    const FRAME_MAX: usize = 4 << 20;
    const BUDGET: usize = 8 << 20;
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &[
            "--max-frame-bytes",
            &FRAME_MAX.to_string(),
            "--queued-max-request-bytes",
            &BUDGET.to_string(),
            "--queued-max-request-bytes-per-connection",
            &FRAME_MAX.to_string(),
            // Stuck requests hold their memory for the whole test.
            "--request-receive-timeout-ms",
            "600000",
        ],
    );
    let pid = broker.pid();
    let mut witness = RawClient::connect(broker.kafka);
    assert_eq!(witness.create_topic("t", 1, &[]), 0);
    let small = batch(&[b"small"], 1_000, None);
    assert_eq!(witness.produce("t", 0, small.clone()).error_code, 0);
    let rss_before = procfs::rss(pid);

    // 24 clients each announce ~4 MiB and send 3.5 MiB of it: unbounded, 84 MiB of buffers.
    const STUCK: usize = 24;
    const SENT: usize = 3_500_000;
    let stuck: Vec<TcpStream> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..STUCK)
            .map(|_| scope.spawn(|| stuck_mid_request(broker.kafka, 4_000_000, SENT)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    std::thread::sleep(Duration::from_millis(500));
    let rss_stuck = procfs::rss(pid);
    let growth = rss_stuck.saturating_sub(rss_before);
    eprintln!(
        "request memory: rss {:.1} MiB before, {:.1} MiB with {STUCK} stuck 4 MB requests \
         ({:.1} MiB sent), growth {:.1} MiB, hwm {:.1} MiB",
        mib(rss_before),
        mib(rss_stuck),
        mib((STUCK * SENT) as u64),
        mib(growth),
        mib(procfs::hwm(pid)),
    );
    assert!(
        growth < 24 << 20,
        "resident memory grew {:.1} MiB past an {} MiB budget",
        mib(growth),
        BUDGET >> 20
    );

    // Small requests never wait for request memory: metadata, produce, fetch go on.
    assert_eq!(witness.api_versions().error_code, 0);
    assert_eq!(witness.produce("t", 0, small.clone()).error_code, 0);
    assert_eq!(witness.fetch("t", 0, 0, 0, 1).error_code, 0);

    // A large produce waits: the budget is spent.
    let mut large = RawClient::connect(broker.kafka);
    let value = vec![7u8; 64 * 1024];
    let values: Vec<&[u8]> = (0..16).map(|_| &value[..]).collect();
    let (correlation_id, frame) = produce_frame(&mut large, "t", batch(&values, 2_000, None));
    assert!(frame.len() > 1 << 20);
    large.stream.write_all(&frame).unwrap();
    large
        .stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut byte = [0u8; 1];
    let early = large.stream.read(&mut byte);
    assert!(
        matches!(&early, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
            || e.kind() == std::io::ErrorKind::TimedOut),
        "the large produce was answered past the budget: {early:?}"
    );
    assert!(
        metric(
            &broker,
            "cohort_request_memory_waits_total{scope=\"broker\"}"
        ) >= 1.0
    );
    assert_eq!(
        count(&broker.log(), "request memory spent"),
        1,
        "one line, not one per wait"
    );

    // The stuck clients leave: their memory goes back and the large produce is served.
    let fds_stuck = procfs::fds(pid);
    drop(stuck);
    large
        .stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let (got, _) = large.read_response(ApiKey::Produce, 9);
    assert_eq!(got, correlation_id);
    let fds_after = procfs::fds_settle(pid, fds_stuck - STUCK, Duration::from_secs(10));
    eprintln!("request memory: fds {fds_stuck} with the stuck clients, {fds_after} after");
    assert!(fds_after <= fds_stuck - STUCK, "{fds_after} fds left");
    assert_eq!(witness.api_versions().error_code, 0);
}

#[test]
fn idle_connections_are_closed_and_active_ones_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &["--connections-max-idle-ms", "1000"],
    );
    let pid = broker.pid();
    let mut witness = RawClient::connect(broker.kafka);
    assert_eq!(witness.api_versions().error_code, 0);
    let fds_before = procfs::fds(pid);
    const IDLE: usize = 40;
    let mut idle: Vec<RawClient> = (0..IDLE)
        .map(|_| RawClient::connect(broker.kafka))
        .collect();
    // A request each, then silence.
    for c in &mut idle {
        assert_eq!(c.api_versions().error_code, 0);
    }
    let fds_open = procfs::fds(pid);
    assert!(fds_open >= fds_before + IDLE, "{fds_open}");
    // The witness keeps talking past the idle timeout.
    let until = Instant::now() + Duration::from_millis(2_500);
    while Instant::now() < until {
        assert_eq!(witness.api_versions().error_code, 0);
        std::thread::sleep(Duration::from_millis(200));
    }
    for c in &mut idle {
        c.stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert!(c.closed_by_broker(), "an idle connection stayed open");
    }
    let fds_after = procfs::fds_settle(pid, fds_before, Duration::from_secs(5));
    eprintln!("idle: fds {fds_before} before, {fds_open} with {IDLE} idle, {fds_after} after");
    assert!(fds_after <= fds_before);
    assert_eq!(
        metric(&broker, "cohort_connections_closed_total{reason=\"idle\"}"),
        IDLE as f64
    );
    assert_eq!(count(&broker.log(), "idle too long"), IDLE);
    assert_eq!(witness.api_versions().error_code, 0);
}

#[test]
fn a_client_that_stops_reading_its_answers_is_disconnected() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &["--connections-send-timeout-ms", "1000"],
    );
    let pid = broker.pid();
    let mut witness = RawClient::connect(broker.kafka);
    assert_eq!(witness.create_topic("t", 1, &[]), 0);
    let value = vec![3u8; 64 * 1024];
    let values: Vec<&[u8]> = (0..15).map(|_| &value[..]).collect();
    for i in 0..4 {
        assert_eq!(
            witness
                .produce("t", 0, batch(&values, 1_000 + i * 100, None))
                .error_code,
            0
        );
    }
    let fds_before = procfs::fds(pid);
    // 64 Fetches of ~1 MiB each, written at once and never read: the answers fill the socket
    // buffers, then the broker waits for a client that takes nothing.
    let mut deaf = RawClient::connect(broker.kafka);
    let mut wire = Vec::new();
    for _ in 0..64 {
        let req = FetchRequest::default()
            .with_max_wait_ms(0)
            .with_min_bytes(1)
            .with_max_bytes(50 << 20)
            .with_session_epoch(-1)
            .with_topics(vec![FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(0)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20)])]);
        wire.extend(deaf.frame(ApiKey::Fetch, 12, &RequestKind::Fetch(req)).1);
    }
    deaf.stream.write_all(&wire).unwrap();
    let fds_deaf = procfs::fds(pid);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(15);
    while metric(
        &broker,
        "cohort_connections_closed_total{reason=\"send_timeout\"}",
    ) < 1.0
    {
        assert!(
            Instant::now() < deadline,
            "the deaf client was never disconnected"
        );
        assert_eq!(witness.api_versions().error_code, 0, "the witness stalled");
        std::thread::sleep(Duration::from_millis(100));
    }
    let fds_after = procfs::fds_settle(pid, fds_before, Duration::from_secs(5));
    eprintln!(
        "send timeout: disconnected after {:?}; fds {fds_before} before, {fds_deaf} with the \
         deaf client, {fds_after} after",
        started.elapsed()
    );
    assert!(fds_after <= fds_before);
    assert_eq!(count(&broker.log(), "stopped reading its answers"), 1);
    assert_eq!(witness.fetch("t", 0, 0, 0, 1).error_code, 0);
}

/// CPU seconds (user + system) the process has used: fields 14 and 15 of `/proc/<pid>/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

#[test]
fn out_of_file_descriptors_the_accept_loops_back_off_instead_of_spinning() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log_path = dir.path().join("cohort-emfile.log");
    // The broker runs under a small open-file limit (a shell sets it, then execs it: same pid).
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -n 96 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_cohort"))
        .arg("serve")
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info");
    let (mut child, line) = common::spawn_listening(cmd, &log_path).unwrap();
    let pid = child.id();
    let kafka = common::listening_field(&line, "kafka=");
    let http = common::listening_field(&line, "http=");
    // Take every descriptor left.
    let connect = |addr| TcpStream::connect_timeout(&addr, Duration::from_millis(500));
    let mut hogs = Vec::new();
    while procfs::fds(pid) < 96 && hogs.len() < 200 {
        hogs.push(connect(kafka).unwrap());
        std::thread::sleep(Duration::from_millis(2));
    }
    // More connections wait in the backlogs of both listeners, which cannot accept them.
    let waiting: Vec<TcpStream> = (0..4)
        .flat_map(|_| [connect(kafka).ok(), connect(http).ok()])
        .flatten()
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let cpu_before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(3));
    let cpu_spent = cpu_seconds(pid) - cpu_before;
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    eprintln!(
        "EMFILE: {} connections held, {cpu_spent:.2} CPU seconds in 3 s",
        hogs.len()
    );
    assert!(
        cpu_spent < 0.5,
        "the broker spun at EMFILE: {cpu_spent:.2} CPU s in 3 s\n{log}"
    );
    assert!(log.contains("accept failed; backing off"), "{log}");
    // Descriptors come back: both listeners serve again.
    drop(hogs);
    drop(waiting);
    let deadline = Instant::now() + Duration::from_secs(10);
    let served = loop {
        let mut s = TcpStream::connect(http).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut body = String::new();
        let ok = write!(s, "GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n").is_ok()
            && s.read_to_string(&mut body).is_ok()
            && body.contains("200 OK");
        if ok || Instant::now() > deadline {
            break ok;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(served, "HTTP did not recover");
    let mut client = RawClient::connect(kafka);
    assert_eq!(client.api_versions().error_code, 0);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn idle_segment_files_are_closed_past_the_budget_and_reopened_on_read() {
    const BUDGET: usize = 32;
    const PARTITIONS: i32 = 60;
    const BATCHES: i64 = 4;
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &["--open-segment-files-max", &BUDGET.to_string()],
    );
    let pid = broker.pid();
    let mut client = RawClient::connect(broker.kafka);
    // segment.ms=1: every batch rolls a new segment, so each partition has one per batch.
    assert_eq!(
        client.create_topic("many", PARTITIONS, &[("segment.ms", "1")]),
        0
    );
    for round in 0..BATCHES {
        for p in 0..PARTITIONS {
            let value = format!("partition {p} batch {round}");
            let b = batch(&[value.as_bytes()], 1_000 + round, None);
            assert_eq!(client.produce("many", p, b).error_code, 0);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let segments = PARTITIONS as usize * BATCHES as usize;
    let open = procfs::fds_to(pid, "/topics/");
    eprintln!(
        "open files: {segments}+ segment files, {open} open (budget {BUDGET}), {} fds in all",
        procfs::fds(pid)
    );
    // The active segments of idle partitions close too once synced; a few may be in use.
    assert!(open <= BUDGET + 4, "{open} topic files open");
    // Every batch of every partition reads back, each read reopening what it needs.
    for p in 0..PARTITIONS {
        let got = client.fetch("many", p, 0, 0, 1);
        assert_eq!(got.error_code, 0);
        let records = got.records.unwrap();
        for round in 0..BATCHES {
            let value = format!("partition {p} batch {round}");
            assert!(
                records.windows(value.len()).any(|w| w == value.as_bytes()),
                "partition {p} lost batch {round}"
            );
        }
    }
    let open_after = procfs::fds_to(pid, "/topics/");
    assert!(open_after <= BUDGET + 4, "{open_after} topic files open");
    let m = scrape(&broker);
    eprintln!(
        "open files: after reading everything {open_after} open; closed {}, reopened {}",
        m["cohort_segment_files_closed_total"], m["cohort_segment_files_reopened_total"]
    );
    assert!(m["cohort_segment_files_open"] <= (BUDGET + 4) as f64);
    assert!(m["cohort_segment_files_closed_total"] > 0.0);
    assert!(m["cohort_segment_files_reopened_total"] > 0.0);
}

/// `--groups-max` and `--offsets-per-group-max` as librdkafka meets them: POLICY_VIOLATION on
/// the commit that would create a group or a group's offset past its limit, on the JoinGroup
/// of a new group (handed to the application by poll()) and on its ConsumerGroupHeartbeat
/// (KIP-848: fatal to the consumer), while the groups and
/// offsets that exist keep being served; each refusal counted, the log told.
#[test]
fn group_count_limits_answer_policy_violation_to_librdkafka() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &[
            "--groups-max",
            "2",
            "--offsets-per-group-max",
            "2",
            "--group-initial-rebalance-delay-ms",
            "0",
        ],
    );
    let mut admin = RawClient::connect(broker.kafka);
    assert_eq!(admin.create_topic("counted", 3, &[]), 0);
    let started = Instant::now();
    let out = python_script(
        "group_count_limits.py",
        &[&broker.bootstrap(), "counted"],
        Duration::from_secs(60),
    );
    eprintln!("group_count_limits.py: {:?}", started.elapsed());
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            broker.log()
        )
    });
    // librdkafka's KIP-848 consumer makes a non-retriable heartbeat error fatal (_FATAL,
    // naming the broker's code): the application stops instead of retrying in silence.
    let kip848 = got["g5_consumer_protocol"].clone();
    assert_eq!(kip848[0], "_FATAL", "{got}\nlog:\n{}", broker.log());
    assert!(
        kip848[1].as_str().is_some_and(
            |t| t.contains("ConsumerGroupHeartbeat fatal error: Broker: Policy violation")
        ),
        "{got}"
    );
    let mut got = got;
    got.as_object_mut().unwrap().remove("g5_consumer_protocol");
    let expected = serde_json::json!({
        "g1_two_offsets": "",
        "g1_third_offset": "POLICY_VIOLATION",
        "g1_update_at_limit": "",
        "g2_first": "",
        "g3_commit": "POLICY_VIOLATION",
        "g4_subscribe": "POLICY_VIOLATION",
        "g4_fatal": false,
    });
    assert_eq!(got, expected, "log:\n{}", broker.log());
    assert!(
        metric(
            &broker,
            "cohort_group_limit_refusals_total{limit=\"groups\"}"
        ) >= 3.0,
        "the commit, the join and the heartbeat of a third group are counted"
    );
    assert_eq!(
        metric(
            &broker,
            "cohort_group_limit_refusals_total{limit=\"offsets_per_group\"}"
        ),
        1.0
    );
    let log = broker.log();
    assert!(count(&log, "--groups-max reached") >= 1, "log:\n{log}");
    assert_eq!(
        count(&log, "--offsets-per-group-max reached"),
        1,
        "log:\n{log}"
    );
}
