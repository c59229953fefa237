//! The options of `cohort topics`, with the checks and messages of Kafka 4.0's
//! `TopicCommand.TopicCommandOptions` for the actions Cohort supports (create, list, describe,
//! alter, delete). Partition reassignment is not offered.

use super::super::groups::jopt::{self, Arity, Parsed, Spec};

const fn flag(name: &'static str, doc: &'static str) -> Spec {
    Spec {
        name,
        arity: Arity::None,
        available_if: &[],
        described_as: "",
        doc,
    }
}

const fn with_arg(name: &'static str, described_as: &'static str, doc: &'static str) -> Spec {
    Spec {
        name,
        arity: Arity::Required,
        available_if: &[],
        described_as,
        doc,
    }
}

/// Every option `cohort topics` accepts.
pub const SPECS: &[Spec] = &[
    with_arg("bootstrap-server", "server to connect to", "REQUIRED: The Kafka server to connect to."),
    with_arg("command-config", "command config property file", "Property file containing configs to be passed to Admin Client."),
    flag("list", "List all available topics."),
    flag("create", "Create a new topic."),
    flag("delete", "Delete a topic."),
    flag("describe", "List details for the given topics."),
    flag("alter", "Alter the number of partitions and replica assignment. (To alter topic configurations, the kafka-configs tool can be used.)"),
    with_arg("topic", "topic", "The topic to create, describe or delete. For --list and --describe it also accepts a comma-separated list of exact names."),
    with_arg("config", "name=value", "A topic configuration override for the topic being created. See the Kafka documentation for full details on the topic configs. It is supported only in combination with --create."),
    with_arg("partitions", "# of partitions", "The number of partitions for the topic being created or altered. If not supplied with --create, the topic uses the cluster default. (WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected)."),
    with_arg("replication-factor", "replication factor", "The replication factor for each partition in the topic being created. If not supplied, the topic uses the cluster default."),
    with_arg("replica-assignment", "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...", "A list of manual partition-to-broker assignments for the topic being created or altered."),
    flag("under-replicated-partitions", "If set when describing topics, only show under-replicated partitions."),
    flag("unavailable-partitions", "If set when describing topics, only show partitions whose leader is not available."),
    flag("under-min-isr-partitions", "If set when describing topics, only show partitions whose isr count is less than the configured minimum."),
    flag("at-min-isr-partitions", "If set when describing topics, only show partitions whose isr count is equal to the configured minimum."),
    flag("topics-with-overrides", "If set when describing topics, only show topics that have overridden configs."),
    flag("if-exists", "If set when deleting or describing topics, the action will only execute if the topic exists."),
    flag("if-not-exists", "If set when creating topics, the action will only execute if the topic does not already exist."),
    flag("exclude-internal", "Exclude internal topics when listing or describing topics. By default, the internal topics are included."),
    flag("help", "Print usage information."),
    flag("version", "Display Kafka version."),
];

/// The actions, as Kafka declares its `allTopicLevelOpts` set.
const TOPIC_LEVEL: &[&str] = &["alter", "create", "describe", "list", "delete"];
/// The partition report filters.
const REPORTS: &[&str] = &[
    "under-replicated-partitions",
    "under-min-isr-partitions",
    "at-min-isr-partitions",
    "unavailable-partitions",
];

/// What the command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `--create`
    Create,
    /// `--list`
    List,
    /// `--describe`
    Describe,
    /// `--delete`
    Delete,
    /// `--alter`
    Alter,
}

/// What checking decided.
pub type Checked = crate::cli::entry::Checked<Box<TopicsOptions>>;

/// Parsed options of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicsOptions {
    /// What jopt-simple parsed.
    pub parsed: Parsed,
    /// The action.
    pub action: Action,
}

impl TopicsOptions {
    /// Whether an option is present.
    pub fn has(&self, name: &str) -> bool {
        self.parsed.has(name)
    }
    /// An option's first value.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.parsed.value(name)
    }
    /// All values of an option.
    pub fn values(&self, name: &str) -> Vec<String> {
        self.parsed.values(name)
    }
}

fn invalid_with(parsed: &Parsed, used: &str, invalid: &[&str]) -> Option<String> {
    if !parsed.has(used) {
        return None;
    }
    invalid.iter().find(|o| parsed.has(o)).map(|o| {
        format!(
            "Option \"{}\" can't be used with option \"{}\"",
            jopt::spec_name(used),
            jopt::spec_name(o)
        )
    })
}

/// `invalidOptions(add, remove)`: the action set (in its hash order) minus some, plus some.
fn all_but(remove: &[&str], add: &[&'static str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = jopt::hash_set_order(TOPIC_LEVEL)
        .into_iter()
        .filter(|o| !remove.contains(o))
        .collect();
    for a in add {
        if !v.contains(a) {
            v.push(a);
        }
    }
    v
}

/// Parses and checks `args` as Kafka's `TopicCommandOptions` does.
pub fn check(args: &[String]) -> Checked {
    let parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::Failure(e.message()),
    };
    let has = |n: &str| parsed.has(n);
    if parsed.arg_count == 0 {
        return Checked::Usage("Create, delete, describe, or change a topic.".to_string());
    }
    if has("help") {
        return Checked::Usage(
            "This tool helps to create, delete, describe, or change a topic.".to_string(),
        );
    }
    if has("version") {
        return Checked::Version;
    }
    let actions: Vec<Action> = [
        ("create", Action::Create),
        ("list", Action::List),
        ("describe", Action::Describe),
        ("delete", Action::Delete),
        ("alter", Action::Alter),
    ]
    .iter()
    .filter(|(n, _)| has(n))
    .map(|(_, a)| *a)
    .collect();
    if actions.len() != 1 {
        return Checked::Usage(
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete"
                .to_string(),
        );
    }
    if !has("bootstrap-server") {
        return Checked::Failure("--bootstrap-server must be specified".to_string());
    }
    if has("describe") && has("if-exists") && !has("topic") {
        return Checked::Usage("--topic or --topic-id is required to describe a topic".to_string());
    }
    if !has("list") && !has("describe") && !has("topic") {
        return Checked::Usage(format!(
            "Missing required argument \"{}\"",
            jopt::spec_name("topic")
        ));
    }
    if has("alter") {
        if has("bootstrap-server") && has("config") {
            let used: Vec<String> = jopt::hash_set_order(&["bootstrap-server", "config"])
                .iter()
                .map(|o| jopt::spec_name(o))
                .collect();
            return Checked::Usage(format!(
                "Option combination \"[{}]\" can't be used with option \"{}\" (To alter topic configurations, the kafka-configs tool can be used.)",
                used.join(", "),
                jopt::spec_name("alter")
            ));
        }
        if !has("partitions") {
            return Checked::Usage(format!(
                "Missing required argument \"{}\"",
                jopt::spec_name("partitions")
            ));
        }
    }
    let checks: Vec<(&str, Vec<&'static str>)> = vec![
        ("config", all_but(&["alter", "create"], &[])),
        ("partitions", all_but(&["alter", "create"], &[])),
        ("replication-factor", all_but(&["create"], &[])),
        ("replica-assignment", all_but(&["alter", "create"], &[])),
    ];
    for (used, invalid) in &checks {
        if let Some(m) = invalid_with(&parsed, used, invalid) {
            return Checked::Usage(m);
        }
    }
    if has("create") {
        if let Some(m) = invalid_with(
            &parsed,
            "replica-assignment",
            &["partitions", "replication-factor"],
        ) {
            return Checked::Usage(m);
        }
    }
    for report in REPORTS {
        if let Some(m) = invalid_with(
            &parsed,
            report,
            &all_but(&["describe", report], &["topics-with-overrides"]),
        ) {
            return Checked::Usage(m);
        }
    }
    let mut report_set: Vec<&'static str> = jopt::hash_set_order(REPORTS);
    report_set.extend(all_but(&["describe"], &[]));
    let later_checks: Vec<(&str, Vec<&'static str>)> = vec![
        ("topics-with-overrides", report_set),
        ("if-exists", all_but(&["alter", "delete", "describe"], &[])),
        ("if-not-exists", all_but(&["create"], &[])),
        ("exclude-internal", all_but(&["list", "describe"], &[])),
    ];
    for (used, invalid) in &later_checks {
        if let Some(m) = invalid_with(&parsed, used, invalid) {
            return Checked::Usage(m);
        }
    }
    Checked::Run(Box::new(TopicsOptions {
        action: actions[0],
        parsed,
    }))
}

/// The help text.
pub fn help() -> String {
    jopt::help(SPECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_words(words: &str) -> Checked {
        let args: Vec<String> = words.split_whitespace().map(String::from).collect();
        check(&args)
    }

    #[test]
    fn argument_errors_read_like_kafka_topics() {
        assert_eq!(
            check_words(""),
            Checked::Usage("Create, delete, describe, or change a topic.".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1"),
            Checked::Usage("Command must include exactly one action: --list, --describe, --create, --alter or --delete".into())
        );
        assert_eq!(
            check_words("--create --topic t"),
            Checked::Failure("--bootstrap-server must be specified".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --create"),
            Checked::Usage("Missing required argument \"[topic]\"".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --list --partitions 3"),
            Checked::Usage("Option \"[partitions]\" can't be used with option \"[list]\"".into())
        );
        assert_eq!(
            check_words(
                "--bootstrap-server h:1 --create --topic t --replica-assignment 1:2 --partitions 2"
            ),
            Checked::Usage(
                "Option \"[replica-assignment]\" can't be used with option \"[partitions]\"".into()
            )
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --list --if-not-exists"),
            Checked::Usage(
                "Option \"[if-not-exists]\" can't be used with option \"[list]\"".into()
            )
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --list --bogus"),
            Checked::Failure("bogus is not a recognized option".into())
        );
    }

    #[test]
    fn alter_needs_partitions_and_no_config() {
        assert_eq!(
            check_words("--bootstrap-server h:1 --alter --topic t"),
            Checked::Usage("Missing required argument \"[partitions]\"".into())
        );
        let Checked::Usage(m) =
            check_words("--bootstrap-server h:1 --alter --topic t --partitions 3 --config a=b")
        else {
            panic!()
        };
        assert!(
            m.starts_with("Option combination \"[[") && m.ends_with("]]\" can't be used with option \"[alter]\" (To alter topic configurations, the kafka-configs tool can be used.)"),
            "{m}"
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --alter --partitions 3"),
            Checked::Usage("Missing required argument \"[topic]\"".into())
        );
        assert_eq!(
            check_words(
                "--bootstrap-server h:1 --alter --topic t --partitions 3 --replication-factor 1"
            ),
            Checked::Usage(
                "Option \"[replication-factor]\" can't be used with option \"[alter]\"".into()
            )
        );
        let Checked::Run(o) =
            check_words("--bootstrap-server h:1 --alter --topic t --partitions 3")
        else {
            panic!()
        };
        assert_eq!(o.action, Action::Alter);
    }

    #[test]
    fn good_commands_run() {
        let Checked::Run(o) = check_words(
            "--bootstrap-server h:1 --create --topic t --partitions 3 --config a=b --config c=d",
        ) else {
            panic!()
        };
        assert_eq!(o.action, Action::Create);
        assert_eq!(
            o.values("config"),
            vec!["a=b".to_string(), "c=d".to_string()]
        );
        let Checked::Run(o) = check_words("--bootstrap-server h:1 --describe --exclude-internal")
        else {
            panic!()
        };
        assert_eq!(o.action, Action::Describe);
    }
}
