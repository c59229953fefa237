//! Every table and message of `cohort groups`, as pure functions from rows to the exact text Kafka
//! 4.0's `kafka-consumer-groups.sh` prints: Java `printf` formats (`%-Ns` pads on the right and
//! never truncates), a leading `\n` before each line of a table, `-` for unknown values.

use crate::client::TopicPartition;

/// Kafka's placeholder for a value that is not known.
pub const MISSING: &str = "-";

/// Java's `%-{width}s`: left-aligned, padded with spaces, never cut.
pub fn pad(s: &str, width: usize) -> String {
    let len = s.chars().count();
    if len >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - len))
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| MISSING.to_string())
}

/// `printError`: a blank line, then `Error: ` and the message, on stdout.
pub fn error(message: &str) -> String {
    format!("\nError: {message}\n")
}

/// What the state gate in front of every describe table prints, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// Text for stdout (the "does not exist" errors).
    pub stdout: String,
    /// Text for stderr (no active members, rebalancing).
    pub stderr: String,
    /// Whether the table follows.
    pub print_table: bool,
}

/// Kafka's `shouldPrintMemberState`: a message per group state, and whether to print the table.
/// `rows` is `None` when there is no data for the group at all. A state Kafka does not know is an
/// error (`Err` holds the message Kafka's exception carries).
pub fn gate(group: &str, state: &str, rows: Option<usize>) -> Result<Gate, String> {
    let Some(rows) = rows else {
        return Ok(Gate {
            stdout: error(&format!("The consumer group '{group}' does not exist.")),
            stderr: String::new(),
            print_table: false,
        });
    };
    let mut g = Gate {
        stdout: String::new(),
        stderr: String::new(),
        print_table: rows > 0,
    };
    match state.to_ascii_uppercase().as_str() {
        "DEAD" => {
            g.stdout = error(&format!("Consumer group '{group}' does not exist."));
            g.print_table = false;
        }
        "EMPTY" => g.stderr = format!("\nConsumer group '{group}' has no active members.\n"),
        "PREPARINGREBALANCE" | "COMPLETINGREBALANCE" | "ASSIGNING" | "RECONCILING" => {
            g.stderr = format!("\nWarning: Consumer group '{group}' is rebalancing.\n")
        }
        "STABLE" => {}
        _ => {
            return Err(format!(
                "Expected a valid consumer group state, but found '{}'.",
                canonical_state(state)
            ))
        }
    }
    Ok(g)
}

/// A state as Kafka's `GroupState` enum prints it (`Unknown` for anything it does not know).
pub fn canonical_state(state: &str) -> &'static str {
    const STATES: &[&str] = &[
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
        "Empty",
        "Assigning",
        "Reconciling",
    ];
    STATES
        .iter()
        .find(|s| s.eq_ignore_ascii_case(state))
        .copied()
        .unwrap_or("Unknown")
}

/// A group type as Kafka's `GroupType` enum prints it.
pub fn canonical_type(group_type: &str) -> &'static str {
    const TYPES: &[&str] = &["Consumer", "Classic", "Share"];
    TYPES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(group_type))
        .copied()
        .unwrap_or("Unknown")
}

/// `--list` without filters: one group id per line.
pub fn list_plain(groups: &[String]) -> String {
    groups.iter().map(|g| format!("{g}\n")).collect()
}

/// One `--list --state/--type` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRow {
    /// Group id.
    pub group: String,
    /// Type as printed.
    pub group_type: String,
    /// State as printed.
    pub state: String,
}

/// `--list` with `--state` and/or `--type`: the group column is max(15, longest id) + 10 wide,
/// the others 20.
pub fn list_with_columns(rows: &[ListRow], with_type: bool, with_state: bool) -> String {
    let width = rows
        .iter()
        .map(|r| r.group.chars().count().max(15))
        .max()
        .unwrap_or(15)
        + 10;
    let line = |group: &str, t: &str, s: &str| {
        let mut l = pad(group, width);
        if with_type {
            l.push(' ');
            l.push_str(&pad(t, 20));
        }
        if with_state {
            l.push(' ');
            l.push_str(&pad(s, 20));
        }
        l.push('\n');
        l
    };
    let mut out = line("GROUP", "TYPE", "STATE");
    for r in rows {
        out.push_str(&line(&r.group, &r.group_type, &r.state));
    }
    out
}

/// One row of the `--offsets` table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OffsetRow {
    /// Group id.
    pub group: String,
    /// Topic, if the row has a partition.
    pub topic: Option<String>,
    /// Partition index.
    pub partition: Option<i32>,
    /// Leader epoch committed with the offset (shown with `--verbose`).
    pub leader_epoch: Option<i32>,
    /// Committed offset.
    pub current_offset: Option<i64>,
    /// Log-end offset.
    pub log_end_offset: Option<i64>,
    /// Lag.
    pub lag: Option<i64>,
    /// Owner's member id, `-` for partitions nobody owns.
    pub consumer_id: Option<String>,
    /// Owner's host.
    pub host: Option<String>,
    /// Owner's client id.
    pub client_id: Option<String>,
    /// Cohort's lag status (only printed with `--lag-status`).
    pub lag_status: Option<String>,
    /// Cohort's lag in seconds (only printed with `--lag-seconds`).
    pub lag_seconds: Option<String>,
}

/// Which of Cohort's columns an `--offsets` table adds to Kafka's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// LAG-STATUS (10 wide), after LAG.
    pub lag_status: bool,
    /// LAG-SECONDS (12 wide), after LAG (and LAG-STATUS).
    pub lag_seconds: bool,
}

/// The `--offsets` table of one group: `\n`-led lines, then a final newline. Columns GROUP,
/// TOPIC, CONSUMER-ID and HOST are max(15, widest value) wide. `--verbose` adds LEADER-EPOCH
/// after PARTITION (KIP-1099); Cohort's `--lag-status` adds LAG-STATUS (10 wide) after LAG,
/// `--lag-seconds` LAG-SECONDS (12 wide) after that.
pub fn offsets_table(rows: &[OffsetRow], verbose: bool, extras: Extras) -> String {
    let width = |f: &dyn Fn(&OffsetRow) -> usize| rows.iter().map(f).max().unwrap_or(0).max(15);
    let g = width(&|r| r.group.chars().count());
    let t = width(&|r| r.topic.as_deref().unwrap_or(MISSING).chars().count());
    let c = width(&|r| r.consumer_id.as_deref().unwrap_or(MISSING).chars().count());
    let h = width(&|r| r.host.as_deref().unwrap_or(MISSING).chars().count());
    let line = |cols: [&str; 12]| {
        let mut l = String::from("\n");
        l.push_str(&pad(cols[0], g));
        l.push(' ');
        l.push_str(&pad(cols[1], t));
        l.push(' ');
        l.push_str(&pad(cols[2], 10));
        l.push(' ');
        if verbose {
            l.push_str(&pad(cols[3], 15));
            l.push(' ');
        }
        l.push_str(&pad(cols[4], 15));
        l.push(' ');
        l.push_str(&pad(cols[5], 15));
        l.push(' ');
        l.push_str(&pad(cols[6], 15));
        l.push(' ');
        if extras.lag_status {
            l.push_str(&pad(cols[7], 10));
            l.push(' ');
        }
        if extras.lag_seconds {
            l.push_str(&pad(cols[11], 12));
            l.push(' ');
        }
        l.push_str(&pad(cols[8], c));
        l.push(' ');
        l.push_str(&pad(cols[9], h));
        l.push(' ');
        l.push_str(cols[10]);
        l
    };
    let mut out = line([
        "GROUP",
        "TOPIC",
        "PARTITION",
        "LEADER-EPOCH",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "LAG-STATUS",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "LAG-SECONDS",
    ]);
    for r in rows {
        out.push_str(&line([
            &r.group,
            r.topic.as_deref().unwrap_or(MISSING),
            &opt(&r.partition),
            &opt(&r.leader_epoch),
            &opt(&r.current_offset),
            &opt(&r.log_end_offset),
            &opt(&r.lag),
            r.lag_status.as_deref().unwrap_or(MISSING),
            r.consumer_id.as_deref().unwrap_or(MISSING),
            r.host.as_deref().unwrap_or(MISSING),
            r.client_id.as_deref().unwrap_or(MISSING),
            r.lag_seconds.as_deref().unwrap_or(MISSING),
        ]));
    }
    out.push('\n');
    out
}

/// One row of the `--members` table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberRow {
    /// Group id.
    pub group: String,
    /// Member id.
    pub consumer_id: String,
    /// Static instance id, empty when none.
    pub group_instance_id: String,
    /// Host.
    pub host: String,
    /// Client id.
    pub client_id: String,
    /// Number of assigned partitions.
    pub num_partitions: usize,
    /// Current assignment.
    pub assignment: Vec<TopicPartition>,
    /// Member epoch (consumer-protocol groups only).
    pub current_epoch: Option<i32>,
    /// Target assignment epoch (consumer-protocol groups only).
    pub target_epoch: Option<i32>,
    /// Target assignment (consumer-protocol groups only).
    pub target_assignment: Vec<TopicPartition>,
    /// Whether a member of a consumer group joined with the classic protocol.
    pub upgraded: Option<bool>,
}

/// KIP-1099's assignment rendering: `topic:p,p;topic:p`, partitions sorted (as strings, as the
/// 4.0 tool sorts them) within a topic, topics sorted.
pub fn assignment_string(assignment: &[TopicPartition]) -> String {
    let mut by_topic: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for tp in assignment {
        by_topic
            .entry(&tp.topic)
            .or_default()
            .push(tp.partition.to_string());
    }
    let mut entries: Vec<String> = by_topic
        .into_iter()
        .map(|(topic, mut parts)| {
            parts.sort();
            format!("{topic}:{}", parts.join(","))
        })
        .collect();
    entries.sort();
    entries.join(";")
}

/// The `--members` table of one group. The header is printed even when the gate said no table
/// (as Kafka does); GROUP-INSTANCE-ID appears only if some member has one.
pub fn members_table(rows: &[MemberRow], verbose: bool) -> String {
    let w = |f: &dyn Fn(&MemberRow) -> usize, min: usize| {
        rows.iter().map(f).max().unwrap_or(0).max(min)
    };
    let g = w(&|r| r.group.chars().count(), 15);
    let c = w(&|r| r.consumer_id.chars().count(), 15);
    let i = w(&|r| r.group_instance_id.chars().count(), 17);
    let h = w(&|r| r.host.chars().count(), 15);
    let cl = w(&|r| r.client_id.chars().count(), 15);
    let with_instance = rows.iter().any(|r| !r.group_instance_id.is_empty());
    let current = |r: &MemberRow| {
        if r.assignment.is_empty() {
            MISSING.to_string()
        } else {
            assignment_string(&r.assignment)
        }
    };
    let target = |r: &MemberRow| {
        if r.target_assignment.is_empty() {
            MISSING.to_string()
        } else {
            assignment_string(&r.target_assignment)
        }
    };
    let cur_w = w(&|r| current(r).chars().count(), 20);
    let tgt_w = w(&|r| target(r).chars().count(), 20);
    let has_classic = rows.iter().any(|r| r.upgraded == Some(false));
    let has_consumer = rows.iter().any(|r| r.upgraded == Some(true));
    let migration = has_classic && has_consumer;
    let base = |cols: [&str; 6]| {
        let mut l = pad(cols[0], g) + " " + &pad(cols[1], c) + " ";
        if with_instance {
            l.push_str(&pad(cols[2], i));
            l.push(' ');
        }
        l.push_str(&pad(cols[3], h));
        l.push(' ');
        l.push_str(&pad(cols[4], cl));
        l.push(' ');
        l.push_str(&pad(cols[5], 15));
        l.push(' ');
        l
    };
    let extra = |cols: [&str; 5]| {
        let mut l = pad(cols[0], 15) + " " + &pad(cols[1], cur_w) + " " + &pad(cols[2], 15) + " ";
        if migration {
            l.push_str(&pad(cols[3], tgt_w));
            l.push(' ');
            l.push_str(cols[4]);
        } else {
            l.push_str(&pad(cols[3], tgt_w));
        }
        l
    };
    let mut out = String::from("\n");
    out.push_str(&base([
        "GROUP",
        "CONSUMER-ID",
        "GROUP-INSTANCE-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
    ]));
    if verbose {
        out.push_str(&extra([
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
            "UPGRADED",
        ]));
    }
    out.push('\n');
    for r in rows {
        out.push_str(&base([
            &r.group,
            &r.consumer_id,
            &r.group_instance_id,
            &r.host,
            &r.client_id,
            &r.num_partitions.to_string(),
        ]));
        if verbose {
            out.push_str(&extra([
                &opt(&r.current_epoch),
                &current(r),
                &opt(&r.target_epoch),
                &target(r),
                &opt(&r.upgraded),
            ]));
        }
        out.push('\n');
    }
    out
}

/// The `--state` row of one group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateRow {
    /// Group id.
    pub group: String,
    /// `host:port  (id)` of the coordinator (two spaces, as Kafka prints it).
    pub coordinator: String,
    /// Selected assignor; empty unless Stable.
    pub assignment_strategy: String,
    /// State.
    pub state: String,
    /// Group epoch (consumer-protocol groups only).
    pub group_epoch: Option<i32>,
    /// Target assignment epoch (consumer-protocol groups only).
    pub target_assignment_epoch: Option<i32>,
    /// Number of members.
    pub num_members: usize,
}

/// The coordinator column's text.
pub fn coordinator_string(host: &str, port: i32, id: i32) -> String {
    format!("{host}:{port}  ({id})")
}

/// The `--state` table of one group (KIP-1099 layout: GROUP max(15, len), COORDINATOR (ID)
/// max(25, len), ASSIGNMENT-STRATEGY and STATE 20, `-` for an empty strategy).
pub fn state_table(row: &StateRow, verbose: bool) -> String {
    let g = row.group.chars().count().max(15);
    let c = row.coordinator.chars().count().max(25);
    let strategy = if row.assignment_strategy.is_empty() {
        MISSING
    } else {
        row.assignment_strategy.as_str()
    };
    let line = |cols: [&str; 7]| {
        let mut l = String::from("\n");
        l.push_str(&pad(cols[0], g));
        l.push(' ');
        l.push_str(&pad(cols[1], c));
        l.push(' ');
        l.push_str(&pad(cols[2], 20));
        l.push(' ');
        l.push_str(&pad(cols[3], 20));
        l.push(' ');
        if verbose {
            l.push_str(&pad(cols[4], 15));
            l.push(' ');
            l.push_str(&pad(cols[5], 25));
            l.push(' ');
        }
        l.push_str(cols[6]);
        l
    };
    let mut out = line([
        "GROUP",
        "COORDINATOR (ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        "#MEMBERS",
    ]);
    out.push_str(&line([
        &row.group,
        &row.coordinator,
        strategy,
        &row.state,
        &opt(&row.group_epoch),
        &opt(&row.target_assignment_epoch),
        &row.num_members.to_string(),
    ]));
    out.push('\n');
    out
}

/// A reset plan: per group (in print order), partitions and new offsets (in print order).
pub type ResetPlan = Vec<(String, Vec<(TopicPartition, i64)>)>;

/// The reset plan table (`%-30s %-30s %-10s %-15s`), header only if the plan names any group.
pub fn reset_plan_table(plan: &ResetPlan) -> String {
    let line = |g: &str, t: &str, p: &str, o: &str| {
        format!(
            "\n{} {} {} {}",
            pad(g, 30),
            pad(t, 30),
            pad(p, 10),
            pad(o, 15)
        )
    };
    let mut out = String::new();
    if !plan.is_empty() {
        out.push_str(&line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"));
    }
    for (group, offsets) in plan {
        for (tp, offset) in offsets {
            out.push_str(&line(
                group,
                &tp.topic,
                &tp.partition.to_string(),
                &offset.to_string(),
            ));
        }
    }
    out.push('\n');
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `--export`: CSV lines `topic,partition,offset` (one `--group`) or `group,topic,partition,offset`,
/// then the extra newline of Kafka's `println`.
pub fn export_csv(plan: &ResetPlan, single_group: bool) -> String {
    let mut out = String::new();
    for (group, offsets) in plan {
        for (tp, offset) in offsets {
            if !single_group {
                out.push_str(&csv_field(group));
                out.push(',');
            }
            out.push_str(&format!(
                "{},{},{}\n",
                csv_field(&tp.topic),
                tp.partition,
                offset
            ));
        }
    }
    out.push('\n');
    out
}

/// Top-level outcome of `--delete-offsets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteOffsetsOutcome {
    /// No top-level error.
    Success,
    /// INVALID_GROUP_ID.
    InvalidGroupId,
    /// GROUP_ID_NOT_FOUND.
    GroupIdNotFound,
    /// GROUP_AUTHORIZATION_FAILED.
    GroupAuthorizationFailed,
    /// NON_EMPTY_GROUP.
    NonEmptyGroup,
    /// A partition-level error surfaced at the top (subscribed, unauthorized or unknown topic).
    PartitionLevel,
    /// Anything else, named as Kafka's `Errors` constant.
    Other(String),
}

/// `--delete-offsets` output: the top-level message, then a `%-30s %-15s %-15s` table of
/// (topic, partition or `Not Provided`, `Successful` or `Error: :<message>`) rows, sorted by
/// topic + partition as one string.
pub fn delete_offsets_report(
    group: &str,
    topics_arg: &[String],
    outcome: &DeleteOffsetsOutcome,
    rows: &[(String, i32, Option<String>)],
) -> String {
    let mut out = match outcome {
        DeleteOffsetsOutcome::Success => format!(
            "Request succeed for deleting offsets with topic {} group {group}\n",
            topics_arg.join(", ")
        ),
        DeleteOffsetsOutcome::InvalidGroupId => error(&format!("'{group}' is not valid.")),
        DeleteOffsetsOutcome::GroupIdNotFound => error(&format!("'{group}' does not exist.")),
        DeleteOffsetsOutcome::GroupAuthorizationFailed => {
            error(&format!("Access to '{group}' is not authorized."))
        }
        DeleteOffsetsOutcome::NonEmptyGroup => error(&format!(
            "Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty."
        )),
        DeleteOffsetsOutcome::PartitionLevel => {
            error("Encounter some partition level error, see the follow-up details:")
        }
        DeleteOffsetsOutcome::Other(name) => {
            error(&format!("Encounter some unknown error: {name}"))
        }
    };
    let line =
        |t: &str, p: &str, s: &str| format!("\n{} {} {}", pad(t, 30), pad(p, 15), pad(s, 15));
    out.push_str(&line("TOPIC", "PARTITION", "STATUS"));
    let mut sorted: Vec<&(String, i32, Option<String>)> = rows.iter().collect();
    sorted.sort_by(|a, b| format!("{}{}", a.0, a.1).cmp(&format!("{}{}", b.0, b.1)));
    for (topic, partition, err) in sorted {
        let p = if *partition >= 0 {
            partition.to_string()
        } else {
            "Not Provided".to_string()
        };
        let status = match err {
            Some(m) => format!("Error: :{m}"),
            None => "Successful".to_string(),
        };
        out.push_str(&line(topic, &p, &status));
    }
    out.push('\n');
    out
}

/// `--delete` output, given the groups that succeeded and those that failed (each with Kafka's
/// exception text), both in print order.
pub fn delete_groups_report(succeeded: &[String], failed: &[(String, String)]) -> String {
    if failed.is_empty() {
        return format!(
            "Deletion of requested consumer groups ('{}') was successful.\n",
            succeeded.join(", ")
        );
    }
    let mut out = error("Deletion of some consumer groups failed:");
    for (group, e) in failed {
        out.push_str(&format!(
            "* Group '{group}' could not be deleted due to: {e}\n"
        ));
    }
    if !succeeded.is_empty() {
        out.push_str(&format!(
            "\nThese consumer groups were deleted successfully: '{}', '\n",
            succeeded.join("'")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        TopicPartition::new(t, p)
    }

    #[test]
    fn pad_is_javas_left_aligned_s() {
        assert_eq!(pad("ab", 5), "ab   ");
        assert_eq!(pad("abcdef", 3), "abcdef");
    }

    #[test]
    fn gate_messages_and_streams() {
        let g = gate("g", "Dead", Some(0)).unwrap();
        assert_eq!(g.stdout, "\nError: Consumer group 'g' does not exist.\n");
        assert!(!g.print_table);
        let g = gate("g", "Empty", Some(2)).unwrap();
        assert_eq!(g.stderr, "\nConsumer group 'g' has no active members.\n");
        assert!(g.print_table);
        let g = gate("g", "CompletingRebalance", Some(1)).unwrap();
        assert_eq!(g.stderr, "\nWarning: Consumer group 'g' is rebalancing.\n");
        let g = gate("g", "Stable", Some(0)).unwrap();
        assert_eq!(
            (g.stdout.as_str(), g.stderr.as_str(), g.print_table),
            ("", "", false)
        );
        let g = gate("g", "Stable", None).unwrap();
        assert_eq!(
            g.stdout,
            "\nError: The consumer group 'g' does not exist.\n"
        );
        assert_eq!(
            gate("g", "Bogus", Some(1)).unwrap_err(),
            "Expected a valid consumer group state, but found 'Unknown'."
        );
    }

    #[test]
    fn list_tables() {
        assert_eq!(list_plain(&["a".into(), "b".into()]), "a\nb\n");
        let rows = vec![ListRow {
            group: "g1".into(),
            group_type: "Classic".into(),
            state: "Stable".into(),
        }];
        assert_eq!(
            list_with_columns(&rows, true, true),
            format!(
                "{}{}{}\n{}{}{}\n",
                pad("GROUP", 25) + " ",
                pad("TYPE", 20) + " ",
                pad("STATE", 20),
                pad("g1", 25) + " ",
                pad("Classic", 20) + " ",
                pad("Stable", 20)
            )
        );
        let rows = vec![ListRow {
            group: "a-rather-long-group-id".into(),
            group_type: String::new(),
            state: "Empty".into(),
        }];
        let out = list_with_columns(&rows, false, true);
        assert_eq!(
            out,
            "GROUP                            STATE               \na-rather-long-group-id           Empty               \n"
        );
    }

    #[test]
    fn offsets_table_exact() {
        let rows = vec![
            OffsetRow {
                group: "g".into(),
                topic: Some("orders".into()),
                partition: Some(0),
                leader_epoch: None,
                current_offset: Some(5),
                log_end_offset: Some(9),
                lag: Some(4),
                consumer_id: Some("consumer-1-abc".into()),
                host: Some("/127.0.0.1".into()),
                client_id: Some("consumer-1".into()),
                lag_status: None,
                lag_seconds: Some("12.500".into()),
            },
            OffsetRow {
                group: "g".into(),
                topic: Some("orders".into()),
                partition: Some(1),
                current_offset: None,
                log_end_offset: Some(3),
                ..OffsetRow::default()
            },
        ];
        let expected = "\n\
GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n\
g               orders          0          5               9               4               consumer-1-abc  /127.0.0.1      consumer-1\n\
g               orders          1          -               3               -               -               -               -\n";
        assert_eq!(offsets_table(&rows, false, Extras::default()), expected);
        let verbose = offsets_table(&rows, true, Extras::default());
        assert!(verbose.starts_with(
            "\nGROUP           TOPIC           PARTITION  LEADER-EPOCH    CURRENT-OFFSET  "
        ));
        let with_status = offsets_table(
            &rows,
            false,
            Extras {
                lag_status: true,
                lag_seconds: false,
            },
        );
        assert!(with_status.contains("LAG             LAG-STATUS CONSUMER-ID"));
        let with_seconds = offsets_table(
            &rows,
            false,
            Extras {
                lag_status: false,
                lag_seconds: true,
            },
        );
        assert!(with_seconds.contains("\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             LAG-SECONDS  CONSUMER-ID     HOST            CLIENT-ID\n"), "{with_seconds}");
        assert!(with_seconds.contains("\ng               orders          0          5               9               4               12.500       consumer-1-abc  /127.0.0.1      consumer-1\n"), "{with_seconds}");
    }

    #[test]
    fn offsets_widths_grow_with_values() {
        let rows = vec![OffsetRow {
            group: "a-group-with-a-long-name".into(),
            topic: Some("t".into()),
            partition: Some(0),
            ..OffsetRow::default()
        }];
        let out = offsets_table(&rows, false, Extras::default());
        assert!(out.starts_with("\nGROUP                    TOPIC           PARTITION"));
    }

    #[test]
    fn members_table_exact() {
        let rows = vec![MemberRow {
            group: "g".into(),
            consumer_id: "c-1".into(),
            host: "/127.0.0.1".into(),
            client_id: "c".into(),
            num_partitions: 2,
            assignment: vec![tp("b", 0), tp("a", 10), tp("a", 2)],
            ..MemberRow::default()
        }];
        assert_eq!(
            members_table(&rows, false),
            "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n\
g               c-1             /127.0.0.1      c               2               \n"
        );
        assert_eq!(
            members_table(&rows, true),
            "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \n\
g               c-1             /127.0.0.1      c               2               -               a:10,2;b:0           -               -                   \n"
        );
        let mut with_instance = rows.clone();
        with_instance[0].group_instance_id = "i-1".into();
        assert!(members_table(&with_instance, false)
            .starts_with("\nGROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST"));
        assert_eq!(
            members_table(&[], false),
            "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
        );
    }

    #[test]
    fn state_table_exact() {
        let row = StateRow {
            group: "g".into(),
            coordinator: coordinator_string("localhost", 9092, 1),
            assignment_strategy: "range".into(),
            state: "Stable".into(),
            num_members: 2,
            ..StateRow::default()
        };
        assert_eq!(
            state_table(&row, false),
            "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n\
g               localhost:9092  (1)       range                Stable               2\n"
        );
        let empty = StateRow {
            assignment_strategy: String::new(),
            state: "Empty".into(),
            num_members: 0,
            ..row
        };
        assert!(state_table(&empty, true).contains(
            "\ng               localhost:9092  (1)       -                    Empty                -               -                         0\n"
        ));
    }

    #[test]
    fn reset_outputs_exact() {
        let plan: ResetPlan = vec![("g".into(), vec![(tp("t", 0), 5), (tp("t", 1), 7)])];
        assert_eq!(
            reset_plan_table(&plan),
            format!(
                "\n{} {} {} {}\n{} {} {} {}\n{} {} {} {}\n",
                pad("GROUP", 30),
                pad("TOPIC", 30),
                pad("PARTITION", 10),
                pad("NEW-OFFSET", 15),
                pad("g", 30),
                pad("t", 30),
                pad("0", 10),
                pad("5", 15),
                pad("g", 30),
                pad("t", 30),
                pad("1", 10),
                pad("7", 15)
            )
        );
        assert_eq!(reset_plan_table(&Vec::new()), "\n");
        assert_eq!(export_csv(&plan, true), "t,0,5\nt,1,7\n\n");
        assert_eq!(export_csv(&plan, false), "g,t,0,5\ng,t,1,7\n\n");
        let odd: ResetPlan = vec![("a,\"b\"".into(), vec![(tp("t", 0), 1)])];
        assert_eq!(export_csv(&odd, false), "\"a,\"\"b\"\"\",t,0,1\n\n");
    }

    #[test]
    fn delete_reports_exact() {
        let rows = vec![
            ("t".to_string(), 10, None),
            ("t".to_string(), 2, Some("org.apache.kafka.common.errors.GroupSubscribedToTopicException: The consumer group is actively subscribed to the topic".to_string())),
            ("u".to_string(), -1, Some("x".to_string())),
        ];
        let out = delete_offsets_report(
            "g",
            &["t".into(), "u".into()],
            &DeleteOffsetsOutcome::PartitionLevel,
            &rows,
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[1],
            "Error: Encounter some partition level error, see the follow-up details:"
        );
        assert_eq!(
            lines[3],
            format!(
                "{} {} {}",
                pad("TOPIC", 30),
                pad("PARTITION", 15),
                pad("STATUS", 15)
            )
        );
        // "t10" sorts before "t2".
        assert!(lines[4].starts_with(&format!("{} {} Successful", pad("t", 30), pad("10", 15))));
        assert!(lines[5]
            .contains("Error: :org.apache.kafka.common.errors.GroupSubscribedToTopicException"));
        assert!(lines[6].starts_with(&format!("{} {}", pad("u", 30), pad("Not Provided", 15))));
        assert_eq!(
            delete_offsets_report("g", &["t".into()], &DeleteOffsetsOutcome::Success, &[])
                .lines()
                .next(),
            Some("Request succeed for deleting offsets with topic t group g")
        );

        assert_eq!(
            delete_groups_report(&["a".into(), "b".into()], &[]),
            "Deletion of requested consumer groups ('a, b') was successful.\n"
        );
        assert_eq!(
            delete_groups_report(&["a".into(), "b".into()], &[("c".into(), "E: m".into())]),
            "\nError: Deletion of some consumer groups failed:\n* Group 'c' could not be deleted due to: E: m\n\nThese consumer groups were deleted successfully: 'a'b', '\n"
        );
    }
}
