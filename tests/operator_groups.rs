//! `cohort groups` against a live `cohort serve`, with the group state made by real clients
//! (confluent-kafka / librdkafka members and producers): the exact output of every view, every
//! number cross-checked with two independent Admin implementations (confluent-kafka's
//! AdminClient and kafka-python's KafkaAdminClient), the reset specifiers with Kafka's rules,
//! `--export` / `--from-file`, the refusal to reset an active group, and the deletes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{python, python_script, repo_root, Cohort};

/// Timestamp of record i of every setup partition: BASE_MS + i * 1000.
const BASE_MS: i64 = 1_700_000_000_000;

struct Broker {
    _dir: tempfile::TempDir,
    cohort: Cohort,
}

/// A broker with the setup state: topics `orders` (3 × 10 records) and `events` (5 records),
/// group `billing` Empty with orders-0 at 4 and orders-1 at 7.
fn broker() -> Broker {
    let dir = tempfile::tempdir().unwrap();
    let cohort = Cohort::start(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay-ms", "0"],
    );
    python_script(
        "operator_setup.py",
        &[&cohort.bootstrap()],
        Duration::from_secs(60),
    );
    Broker { _dir: dir, cohort }
}

/// A live group member (a Python process), killed by PID on drop.
struct Member {
    child: Child,
    id: String,
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn member(b: &Broker, group: &str, client_id: &str, topics: &[&str]) -> Member {
    member_speaking(b, "classic", group, client_id, topics)
}

/// A live member speaking `protocol` (`classic`, or `consumer` for KIP-848).
fn member_speaking(
    b: &Broker,
    protocol: &str,
    group: &str,
    client_id: &str,
    topics: &[&str],
) -> Member {
    let mut child = Command::new(python())
        .arg(repo_root().join("tests/clients/python/operator_hold.py"))
        .env("COHORT_GROUP_PROTOCOL", protocol)
        .arg(b.cohort.bootstrap())
        .args([group, client_id])
        .args(topics)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("member of {group} never became ready")
        });
    let id = line
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("unexpected line {line:?}"))
        .to_string();
    Member { child, id }
}

fn produce(b: &Broker, topic: &str, partition: i32, count: usize) {
    python_script(
        "operator_produce.py",
        &[
            &b.cohort.bootstrap(),
            topic,
            &partition.to_string(),
            &count.to_string(),
        ],
        Duration::from_secs(60),
    );
}

struct Ran {
    code: Option<i32>,
    out: String,
    err: String,
}

fn groups(b: &Broker, args: &[&str]) -> Ran {
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("groups")
            .args(["--bootstrap-server", &b.cohort.bootstrap()])
            .args(args),
        Duration::from_secs(60),
    );
    Ran {
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).to_string(),
        err: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// What both Python Admin clients report, as JSON.
fn report(b: &Broker, groups: &[&str]) -> serde_json::Value {
    let mut args = vec![b.cohort.bootstrap()];
    args.extend(groups.iter().map(|g| g.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = python_script("operator_report.py", &args, Duration::from_secs(60));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `f`'s first `Some`, polled every 200 ms; panics after `limit`.
fn eventually<R>(limit: Duration, mut f: impl FnMut() -> Option<R>) -> R {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(r) = f() {
            return r;
        }
        assert!(std::time::Instant::now() < deadline, "not within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Java's `%-Ns`.
fn pad(s: &str, w: usize) -> String {
    format!("{s:<w$}")
}

fn offsets_line(cols: [&str; 9], widths: [usize; 4]) -> String {
    let [g, t, c, h] = widths;
    format!(
        "\n{} {} {} {} {} {} {} {} {}",
        pad(cols[0], g),
        pad(cols[1], t),
        pad(cols[2], 10),
        pad(cols[3], 15),
        pad(cols[4], 15),
        pad(cols[5], 15),
        pad(cols[6], c),
        pad(cols[7], h),
        cols[8]
    )
}

const OFFSETS_HEADER: [&str; 9] = [
    "GROUP",
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
];

#[test]
fn golden_output_of_every_view() {
    let b = broker();
    let live = member(&b, "live", "holder", &["orders", "events"]);
    // After the member committed everything, three more records on orders-1: lag 3 there.
    produce(&b, "orders", 1, 3);

    // --list: a Java HashMap of "billing" (bucket 15) and "live" (bucket 14).
    let r = groups(&b, &["--list"]);
    assert_eq!(
        (r.code, r.out.as_str(), r.err.as_str()),
        (Some(0), "live\nbilling\n", "")
    );
    let r = groups(&b, &["--list", "--state"]);
    assert_eq!(
        r.out,
        format!(
            "{} {}\n{} {}\n{} {}\n",
            pad("GROUP", 25),
            pad("STATE", 20),
            pad("live", 25),
            pad("Stable", 20),
            pad("billing", 25),
            pad("Empty", 20)
        )
    );
    let r = groups(&b, &["--list", "--state", "empty"]);
    assert_eq!(
        r.out,
        format!(
            "{} {}\n{} {}\n",
            pad("GROUP", 25),
            pad("STATE", 20),
            pad("billing", 25),
            pad("Empty", 20)
        )
    );

    // --describe (offsets) of the Empty group: orders-0 and orders-1 (buckets 9, 10) owned by
    // nobody; the notice goes to stderr.
    let r = groups(&b, &["--describe", "--group", "billing"]);
    let w = [15, 15, 15, 15];
    let expected = [
        offsets_line(OFFSETS_HEADER, w),
        offsets_line(["billing", "orders", "0", "4", "10", "6", "-", "-", "-"], w),
        offsets_line(["billing", "orders", "1", "7", "13", "6", "-", "-", "-"], w),
    ]
    .concat()
        + "\n";
    assert_eq!(r.out, expected);
    assert_eq!(r.err, "\nConsumer group 'billing' has no active members.\n");

    // The Stable group: one member with orders-0..2 and events-0. Its rows are a HashMap of
    // the partitions sorted by index: orders-0 (bucket 9), orders-1 (10), orders-2 (11),
    // events-0 (13).
    let r = groups(&b, &["--describe", "--group", "live"]);
    let w = [15, 15, live.id.len().max(15), 15];
    let row = |t: &str, p: &str, cur: &str, end: &str, lag: &str| {
        offsets_line(
            [
                "live",
                t,
                p,
                cur,
                end,
                lag,
                &live.id,
                "/127.0.0.1",
                "holder",
            ],
            w,
        )
    };
    let expected = [
        offsets_line(OFFSETS_HEADER, w),
        row("orders", "0", "10", "10", "0"),
        row("orders", "1", "10", "13", "3"),
        row("orders", "2", "10", "10", "0"),
        row("events", "0", "5", "5", "0"),
    ]
    .concat()
        + "\n";
    assert_eq!(r.out, expected);
    assert_eq!(r.err, "");

    // --members --verbose.
    let r = groups(
        &b,
        &["--describe", "--group", "live", "--members", "--verbose"],
    );
    let c = live.id.len().max(15);
    let line = |cols: [&str; 9], a: usize| {
        format!(
            "{} {} {} {} {} {} {} {} {}",
            pad(cols[0], 15),
            pad(cols[1], c),
            pad(cols[2], 15),
            pad(cols[3], 15),
            pad(cols[4], 15),
            pad(cols[5], 15),
            pad(cols[6], a),
            pad(cols[7], 15),
            pad(cols[8], 20)
        )
    };
    let assignment = "events:0;orders:0,1,2";
    let a = assignment.len().max(20);
    assert_eq!(
        r.out,
        format!(
            "\n{}\n{}\n",
            line(
                [
                    "GROUP",
                    "CONSUMER-ID",
                    "HOST",
                    "CLIENT-ID",
                    "#PARTITIONS",
                    "CURRENT-EPOCH",
                    "CURRENT-ASSIGNMENT",
                    "TARGET-EPOCH",
                    "TARGET-ASSIGNMENT"
                ],
                a
            ),
            line(
                [
                    "live",
                    &live.id,
                    "/127.0.0.1",
                    "holder",
                    "4",
                    "-",
                    assignment,
                    "-",
                    "-"
                ],
                a
            )
        )
    );

    // --state of both groups, in id order.
    let r = groups(
        &b,
        &[
            "--describe",
            "--group",
            "live",
            "--group",
            "billing",
            "--state",
        ],
    );
    let coordinator = format!("{}  (1)", b.cohort.bootstrap());
    let cw = coordinator.len().max(25);
    let state = |g: &str, s: &str, st: &str, n: &str| {
        format!(
            "\n{} {} {} {} #MEMBERS\n{} {} {} {} {n}\n",
            pad("GROUP", 15),
            pad("COORDINATOR (ID)", cw),
            pad("ASSIGNMENT-STRATEGY", 20),
            pad("STATE", 20),
            pad(g, 15),
            pad(&coordinator, cw),
            pad(s, 20),
            pad(st, 20)
        )
    };
    assert_eq!(
        r.out,
        format!(
            "{}{}",
            state("billing", "-", "Empty", "0"),
            state("live", "range", "Stable", "1")
        )
    );
    assert_eq!(r.err, "\nConsumer group 'billing' has no active members.\n");

    // A group nobody knows: DescribeGroups v6 (KIP-1043, served as Kafka 4.0 does) answers
    // GROUP_ID_NOT_FOUND, which Kafka 4.0's tool reports as a failed command with the code's
    // default message (its Admin ignores the broker's message), not as "does not exist".
    let r = groups(&b, &["--describe", "--group", "nobody"]);
    assert_eq!(
        r.out,
        "\nError: Executing consumer group command failed due to \
         org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n"
    );
    drop(live);
}

#[test]
fn every_number_matches_two_independent_admin_clients() {
    let b = broker();
    let live = member(&b, "live", "holder", &["orders", "events"]);
    produce(&b, "orders", 2, 4);
    produce(&b, "events", 0, 2);
    let r = groups(&b, &["--describe", "--group", "billing", "--group", "live"]);
    assert_eq!(r.code, Some(0));
    // (group, topic:partition) -> (current, log end, lag, consumer id, host, client id)
    let mut rows: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for line in r
        .out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("GROUP"))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 9, "{line}");
        rows.insert(
            (f[0].to_string(), format!("{}:{}", f[1], f[2])),
            f[3..].iter().map(|s| s.to_string()).collect(),
        );
    }
    let report = report(&b, &["billing", "live"]);
    for client in ["confluent", "kafka_python"] {
        for group in ["billing", "live"] {
            let g = &report[client][group];
            let committed = g["committed"].as_object().unwrap();
            let ends = g["log_end"].as_object().unwrap();
            for (tp, offset) in committed {
                let row = &rows[&(group.to_string(), tp.clone())];
                let end = ends[tp].as_i64().unwrap();
                assert_eq!(
                    row[0],
                    offset.to_string(),
                    "{client} {group} {tp} committed"
                );
                assert_eq!(row[1], end.to_string(), "{client} {group} {tp} log end");
                assert_eq!(
                    row[2],
                    (end - offset.as_i64().unwrap()).to_string(),
                    "{client} {group} {tp} lag"
                );
            }
            let rows_of_group = rows.keys().filter(|(g, _)| g == group).count();
            assert_eq!(
                rows_of_group,
                committed.len(),
                "{client} {group}: same partitions"
            );
            let members = g["members"].as_array().unwrap();
            for m in members {
                let assignment = m[3].as_array().unwrap();
                for tp in assignment {
                    let row = &rows[&(group.to_string(), tp.as_str().unwrap().to_string())];
                    assert_eq!(row[3], m[0].as_str().unwrap(), "{client} {group} owner");
                    assert_eq!(row[4], m[2].as_str().unwrap(), "{client} {group} host");
                    assert_eq!(row[5], m[1].as_str().unwrap(), "{client} {group} client id");
                }
            }
            assert_eq!(members.len(), if group == "live" { 1 } else { 0 });
        }
        assert_eq!(report[client]["live"]["members"][0][0], live.id.as_str());
    }
    assert_eq!(report["confluent"]["live"]["state"], "STABLE");
    assert_eq!(report["kafka_python"]["live"]["state"], "Stable");
    // And the lag the tool prints is what both clients imply: orders-2 and events-0 grew.
    assert_eq!(rows[&("live".into(), "orders:2".into())][2], "4");
    assert_eq!(rows[&("live".into(), "events:0".into())][2], "2");

    // --members and --state agree with them too.
    let r = groups(&b, &["--describe", "--group", "live", "--members"]);
    let fields: Vec<&str> = r.out.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(
        fields,
        ["live", live.id.as_str(), "/127.0.0.1", "holder", "4"]
    );
    let r = groups(&b, &["--describe", "--group", "live", "--state"]);
    let fields: Vec<&str> = r.out.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(fields[fields.len() - 2..], ["Stable", "1"]);
}

fn plan(rows: &[(&str, &str, &str, &str)]) -> String {
    let mut out = format!(
        "\n{} {} {} {}",
        pad("GROUP", 30),
        pad("TOPIC", 30),
        pad("PARTITION", 10),
        pad("NEW-OFFSET", 15)
    );
    for (g, t, p, o) in rows {
        out.push_str(&format!(
            "\n{} {} {} {}",
            pad(g, 30),
            pad(t, 30),
            pad(p, 10),
            pad(o, 15)
        ));
    }
    out + "\n"
}

fn committed(b: &Broker, group: &str) -> serde_json::Value {
    report(b, &[group])["confluent"][group]["committed"].clone()
}

#[test]
fn reset_specifiers_follow_kafkas_rules() {
    let b = broker();
    let dry = |args: &[&str]| {
        let mut v = vec!["--reset-offsets", "--group", "billing"];
        v.extend_from_slice(args);
        v.push("--dry-run");
        groups(&b, &v)
    };
    // Scope --all-topics: the committed partitions orders-0, orders-1 (HashMap buckets 9, 10).
    assert_eq!(
        dry(&["--all-topics", "--to-earliest"]).out,
        plan(&[
            ("billing", "orders", "0", "0"),
            ("billing", "orders", "1", "0")
        ])
    );
    assert_eq!(
        dry(&["--all-topics", "--to-latest"]).out,
        plan(&[
            ("billing", "orders", "0", "10"),
            ("billing", "orders", "1", "10")
        ])
    );
    assert_eq!(
        dry(&["--all-topics", "--to-current"]).out,
        plan(&[
            ("billing", "orders", "0", "4"),
            ("billing", "orders", "1", "7")
        ])
    );
    // --topic t: every partition; no commit on orders-2 → --to-current uses its log end.
    assert_eq!(
        dry(&["--topic", "orders", "--to-current"]).out,
        plan(&[
            ("billing", "orders", "0", "4"),
            ("billing", "orders", "1", "7"),
            ("billing", "orders", "2", "10")
        ])
    );
    // Clamping, with Kafka's warning on stderr.
    let r = dry(&["--topic", "orders:0", "--to-offset", "50"]);
    assert_eq!(r.out, plan(&[("billing", "orders", "0", "10")]));
    assert!(r.err.contains("New offset (50) is higher than latest offset for topic partition orders-0. Value will be set to 10"), "{}", r.err);
    assert_eq!(
        dry(&["--all-topics", "--shift-by", "-5"]).out,
        plan(&[
            ("billing", "orders", "0", "0"),
            ("billing", "orders", "1", "2")
        ])
    );
    assert_eq!(
        dry(&["--all-topics", "--shift-by", "5"]).out,
        plan(&[
            ("billing", "orders", "0", "9"),
            ("billing", "orders", "1", "10")
        ])
    );
    assert_eq!(
        dry(&["--all-topics", "--shift-by", "500"]).out,
        plan(&[
            ("billing", "orders", "0", "10"),
            ("billing", "orders", "1", "10")
        ])
    );
    // --to-datetime: record i has timestamp BASE + i s; 3.5 s after BASE → offset 4. Past
    // the last record: falls back to the log end with Kafka's notice.
    let at = |ms: i64| {
        let secs = ms / 1000;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        // BASE_MS is 2023-11-14T22:13:20Z.
        format!("2023-11-14T{h:02}:{m:02}:{s:02}.{:03}", ms % 1000)
    };
    assert_eq!(at(BASE_MS), "2023-11-14T22:13:20.000");
    assert_eq!(
        dry(&["--topic", "orders:0", "--to-datetime", &at(BASE_MS + 3500)]).out,
        plan(&[("billing", "orders", "0", "4")])
    );
    let r = dry(&[
        "--topic",
        "events:0",
        "--to-datetime",
        &at(BASE_MS + 60_000),
    ]);
    assert_eq!(
        r.out,
        "\nWarn: Partition 0 from topic events is empty. Falling back to latest known offset.\n"
            .to_string()
            + &plan(&[("billing", "events", "0", "5")])
    );
    // Shifting a partition without a committed offset is a usage error (exit 1).
    let r = dry(&["--topic", "orders:2", "--shift-by", "1"]);
    assert_eq!(r.code, Some(1));
    assert!(r.err.starts_with(
        "Cannot shift offset for partition orders-2 since there is no current committed offset\n"
    ));
    // Dry runs changed nothing.
    assert_eq!(
        committed(&b, "billing"),
        serde_json::json!({"orders:0": 4, "orders:1": 7})
    );

    // --execute commits; --export then --from-file round-trips.
    let r = groups(
        &b,
        &[
            "--reset-offsets",
            "--group",
            "billing",
            "--topic",
            "orders",
            "--to-offset",
            "2",
            "--execute",
        ],
    );
    assert_eq!(r.code, Some(0));
    assert_eq!(
        committed(&b, "billing"),
        serde_json::json!({"orders:0": 2, "orders:1": 2, "orders:2": 2})
    );
    let r = groups(
        &b,
        &[
            "--reset-offsets",
            "--group",
            "billing",
            "--topic",
            "orders",
            "--shift-by",
            "3",
            "--export",
            "--dry-run",
        ],
    );
    assert_eq!(r.out, "orders,0,5\norders,1,5\norders,2,5\n\n");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.csv");
    std::fs::write(&file, &r.out).unwrap();
    let r = groups(
        &b,
        &[
            "--reset-offsets",
            "--group",
            "billing",
            "--from-file",
            file.to_str().unwrap(),
            "--execute",
        ],
    );
    assert_eq!(
        r.out,
        plan(&[
            ("billing", "orders", "0", "5"),
            ("billing", "orders", "1", "5"),
            ("billing", "orders", "2", "5")
        ])
    );
    assert_eq!(
        committed(&b, "billing"),
        serde_json::json!({"orders:0": 5, "orders:1": 5, "orders:2": 5})
    );
}

#[test]
fn resetting_an_active_group_is_refused_and_changes_nothing() {
    let b = broker();
    let _live = member(&b, "live", "holder", &["orders"]);
    let before = committed(&b, "live");
    let r = groups(
        &b,
        &[
            "--reset-offsets",
            "--group",
            "live",
            "--all-topics",
            "--to-earliest",
            "--execute",
        ],
    );
    assert_eq!(r.code, Some(0));
    assert_eq!(
        r.out,
        format!(
            "\nError: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n\n{} {} {} {}\n",
            pad("GROUP", 30),
            pad("TOPIC", 30),
            pad("PARTITION", 10),
            pad("NEW-OFFSET", 15)
        )
    );
    assert_eq!(committed(&b, "live"), before);
    assert_eq!(
        before,
        serde_json::json!({"orders:0": 10, "orders:1": 10, "orders:2": 10})
    );
}

#[test]
fn delete_offsets_and_groups() {
    let b = broker();
    let live = member(&b, "live", "holder", &["orders"]);
    // The live group is subscribed to orders: its offsets there cannot go.
    let r = groups(
        &b,
        &["--delete-offsets", "--group", "live", "--topic", "orders:0"],
    );
    assert_eq!(
        r.out,
        format!(
            "\nError: Encounter some partition level error, see the follow-up details:\n\n{} {} {}\n{} {} {}\n",
            pad("TOPIC", 30),
            pad("PARTITION", 15),
            pad("STATUS", 15),
            pad("orders", 30),
            pad("0", 15),
            "Error: :org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."
        )
    );
    // The Empty group's can.
    let r = groups(
        &b,
        &[
            "--delete-offsets",
            "--group",
            "billing",
            "--topic",
            "orders:1",
        ],
    );
    assert_eq!(
        r.out,
        format!(
            "Request succeed for deleting offsets with topic orders:1 group billing\n\n{} {} {}\n{} {} {}\n",
            pad("TOPIC", 30),
            pad("PARTITION", 15),
            pad("STATUS", 15),
            pad("orders", 30),
            pad("1", 15),
            pad("Successful", 15)
        )
    );
    assert_eq!(committed(&b, "billing"), serde_json::json!({"orders:0": 4}));
    // Deleting both groups: the live one is refused.
    let r = groups(&b, &["--delete", "--group", "billing", "--group", "live"]);
    assert_eq!(
        r.out,
        "\nError: Deletion of some consumer groups failed:\n* Group 'live' could not be deleted due to: java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n\nThese consumer groups were deleted successfully: 'billing', '\n"
    );
    drop(live);
    let r = groups(&b, &["--list"]);
    assert_eq!(
        r.out.lines().filter(|l| *l == "billing").count(),
        0,
        "{}",
        r.out
    );
}

#[test]
fn a_kafkajs_group_is_described_as_both_admin_clients_see_it() {
    let b = broker();
    let out = common::node_script(
        "operator_kafkajs.js",
        &[&b.cohort.bootstrap(), "kjs", "events", "3"],
        Duration::from_secs(60),
    );
    let made: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(made["committed"], serde_json::json!({"events:0": 3}));
    let r = groups(&b, &["--describe", "--group", "kjs"]);
    let w = [15, 15, 15, 15];
    assert_eq!(
        r.out,
        [
            offsets_line(OFFSETS_HEADER, w),
            offsets_line(["kjs", "events", "0", "3", "5", "2", "-", "-", "-"], w),
        ]
        .concat()
            + "\n"
    );
    assert_eq!(r.err, "\nConsumer group 'kjs' has no active members.\n");
    let report = report(&b, &["kjs"]);
    for client in ["confluent", "kafka_python"] {
        assert_eq!(
            report[client]["kjs"]["committed"],
            serde_json::json!({"events:0": 3})
        );
        assert_eq!(
            report[client]["kjs"]["log_end"],
            serde_json::json!({"events:0": 5})
        );
    }
}

/// A consumer-protocol group (two librdkafka members with `group.protocol=consumer`) as
/// Kafka 4.x's tool shows it, fetched with ConsumerGroupDescribe: TYPE `Consumer` in
/// `--list --type`, epochs in `--state --verbose`, each member's epoch and current and target
/// assignments in `--members --verbose`; classic groups beside it keep their `-` columns.
#[test]
fn a_consumer_protocol_group_is_described_with_its_epochs_and_assignments() {
    let b = broker();
    let _classic = member(&b, "live", "holder", &["events"]);
    let m1 = member_speaking(&b, "consumer", "kip848", "c1", &["orders"]);
    let m2 = member_speaking(&b, "consumer", "kip848", "c2", &["orders"]);

    // Wait until the second member's partitions were revoked from the first and the group is
    // Stable: every member at the group epoch, current assignment == target assignment.
    let members = eventually(Duration::from_secs(60), || {
        let r = groups(
            &b,
            &["--describe", "--group", "kip848", "--members", "--verbose"],
        );
        let rows: Vec<Vec<String>> = r
            .out
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect();
        let settled = rows.len() == 2
            && r.err.is_empty()
            && rows
                .iter()
                .all(|c| c.len() == 9 && c[6] == c[8] && c[6] != "-");
        settled.then_some((r, rows))
    });
    let (r, rows) = members;
    assert_eq!(r.code, Some(0));
    let header = r.out.lines().nth(1).unwrap();
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "GROUP",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT"
        ],
        "no UPGRADED column outside a mixed group:\n{}",
        r.out
    );
    let mut ids: Vec<&str> = rows.iter().map(|c| c[1].as_str()).collect();
    ids.sort_unstable();
    let mut want = vec![m1.id.as_str(), m2.id.as_str()];
    want.sort_unstable();
    assert_eq!(ids, want);
    // The two assignments split orders-0..2 between them, and count what they list.
    let mut owned: Vec<String> = Vec::new();
    for c in &rows {
        let (topic, parts) = c[6].split_once(':').unwrap();
        assert_eq!(topic, "orders", "{}", r.out);
        let parts: Vec<String> = parts.split(',').map(str::to_string).collect();
        assert_eq!(c[4], parts.len().to_string(), "{}", r.out);
        owned.extend(parts);
    }
    owned.sort();
    assert_eq!(owned, ["0", "1", "2"], "{}", r.out);

    // --state --verbose: the group and target assignment epochs, the members' epoch.
    let r = groups(
        &b,
        &["--describe", "--group", "kip848", "--state", "--verbose"],
    );
    let header: Vec<&str> = r.out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "GROUP",
            "COORDINATOR",
            "(ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "GROUP-EPOCH",
            "TARGET-ASSIGNMENT-EPOCH",
            "#MEMBERS"
        ],
        "{}",
        r.out
    );
    let row: Vec<&str> = r.out.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row.len(), 8, "{}", r.out);
    assert_eq!(
        (row[0], row[1], row[3], row[4], row[7]),
        (
            "kip848",
            b.cohort.bootstrap().as_str(),
            "uniform",
            "Stable",
            "2"
        ),
        "{}",
        r.out
    );
    let group_epoch: i32 = row[5].parse().unwrap();
    assert!(
        group_epoch >= 2,
        "two joins bump the epoch twice: {}",
        r.out
    );
    assert_eq!(
        row[5], row[6],
        "a Stable group's target is at its epoch: {}",
        r.out
    );
    for c in &rows {
        assert_eq!(
            (c[5].as_str(), c[7].as_str()),
            (row[5], row[6]),
            "{}",
            r.out
        );
    }

    // /metrics shows the group as the consumer-protocol group it is.
    let (_, metrics) = b.cohort.http_get("/metrics");
    for line in [
        "cohort_group_type{group=\"kip848\",type=\"consumer\"} 1".to_string(),
        "cohort_group_type{group=\"live\",type=\"classic\"} 1".to_string(),
        "cohort_group_state{group=\"kip848\",state=\"Stable\"} 1".to_string(),
        "cohort_group_members{group=\"kip848\"} 2".to_string(),
        format!("cohort_group_epoch{{group=\"kip848\"}} {}", row[5]),
        format!(
            "cohort_group_assignment_epoch{{group=\"kip848\"}} {}",
            row[6]
        ),
        "cohort_group_members_reconciling{group=\"kip848\"} 0".to_string(),
        "cohort_group_reconciling_seconds{group=\"kip848\"} 0.000".to_string(),
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line:?} in\n{metrics}"
        );
    }

    // A classic group keeps `-` for the epochs.
    let r = groups(
        &b,
        &["--describe", "--group", "live", "--state", "--verbose"],
    );
    let row: Vec<&str> = r.out.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!((row[4], row[5], row[6]), ("Stable", "-", "-"), "{}", r.out);

    // --list --type: Kafka's TYPE column, in the broker's order.
    let r = groups(&b, &["--list", "--type"]);
    let mut lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines.remove(0),
        format!("{} {}", pad("GROUP", 25), pad("TYPE", 20)),
        "{}",
        r.out
    );
    lines.sort_unstable();
    let row = |g: &str, t: &str| format!("{} {}", pad(g, 25), pad(t, 20));
    assert_eq!(
        lines,
        [
            row("billing", "Classic"),
            row("kip848", "Consumer"),
            row("live", "Classic")
        ],
        "{}",
        r.out
    );
    let r = groups(&b, &["--list", "--type", "consumer", "--state"]);
    assert_eq!(
        r.out,
        format!(
            "{} {} {}\n{} {} {}\n",
            pad("GROUP", 25),
            pad("TYPE", 20),
            pad("STATE", 20),
            pad("kip848", 25),
            pad("Consumer", 20),
            pad("Stable", 20)
        )
    );
}
