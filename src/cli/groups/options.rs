//! The options of `cohort groups`, with the checks and messages of Kafka 4.0's
//! `ConsumerGroupCommandOptions.checkArgs` (and of the tool's `main`, which demands exactly one
//! action), in the same order, so the same mistakes get the same answers.

use super::jopt::{self, Arity, Parsed, Spec};

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

/// Every option `cohort groups` accepts: Kafka's, plus `--lag-status`, `--lag-window-ms` and
/// `--lag-seconds`.
pub const SPECS: &[Spec] = &[
    with_arg("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to."),
    with_arg("group", "consumer group", "The consumer group we wish to act on."),
    with_arg("topic", "topic", "The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process. Reset-offsets also supports multiple topic inputs."),
    flag("all-topics", "Consider all topics assigned to a group in the `reset-offsets` process."),
    flag("list", "List all consumer groups."),
    flag("describe", "Describe consumer group and list offset lag (number of messages not yet processed) related to given group."),
    flag("all-groups", "Apply to all consumer groups."),
    flag("delete", "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group. For instance --group g1 --group g2"),
    with_arg("timeout", "timeout (ms)", "The timeout that can be set for some use cases. For example, it can be used when describing the group to specify the maximum amount of time in milliseconds to wait before the group stabilizes (when the group is just created, or is going through some changes). (default: 5000)"),
    with_arg("command-config", "command config property file", "Property file containing configs to be passed to Admin Client and Consumer."),
    flag("reset-offsets", "Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive\nHas 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets. Additionally, the --export option is used to export the results to a CSV format.\nYou must choose one of the following reset specifications: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, --from-file, --to-current, --to-offset.\nTo define the scope use --all-topics or --topic. One scope must be specified unless you use '--from-file'."),
    flag("delete-offsets", "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics."),
    flag("dry-run", "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets."),
    flag("execute", "Execute operation. Supported operations: reset-offsets."),
    flag("export", "Export operation execution to a CSV file. Supported operations: reset-offsets."),
    with_arg("to-offset", "offset", "Reset offsets to a specific offset."),
    with_arg("from-file", "path to CSV file", "Reset offsets to values defined in CSV file."),
    with_arg("to-datetime", "datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'"),
    with_arg("by-duration", "duration", "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'"),
    flag("to-earliest", "Reset offsets to earliest offset."),
    flag("to-latest", "Reset offsets to latest offset."),
    flag("to-current", "Reset offsets to current offset."),
    with_arg("shift-by", "number-of-offsets", "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative."),
    Spec {
        name: "members",
        arity: Arity::None,
        available_if: &["describe"],
        described_as: "",
        doc: "Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --members",
    },
    Spec {
        name: "verbose",
        arity: Arity::None,
        available_if: &["describe"],
        described_as: "",
        doc: "Provide additional information, if any, when describing the group. This option may be used with '--offsets'/'--members'/'--state' and '--bootstrap-server' options only.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --members --verbose",
    },
    Spec {
        name: "offsets",
        arity: Arity::None,
        available_if: &["describe"],
        described_as: "",
        doc: "Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and may be used with '--describe' and '--bootstrap-server' options only.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --offsets",
    },
    Spec {
        name: "state",
        arity: Arity::Optional,
        available_if: &["describe", "list"],
        described_as: "String",
        doc: "When specified with '--describe', includes the state of the group.\nExample: --bootstrap-server localhost:9092 --describe --group group1 --state\nWhen specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states.\nExample: --bootstrap-server localhost:9092 --list --state stable,empty\nThis option may be used with '--describe', '--list' and '--bootstrap-server' options only.",
    },
    Spec {
        name: "type",
        arity: Arity::Optional,
        available_if: &["list"],
        described_as: "String",
        doc: "When specified with '--list', it displays the types of all the groups. It can also be used to list groups with specific types.\nExample: --bootstrap-server localhost:9092 --list --type classic,consumer\nThis option may be used with the '--list' option only.",
    },
    Spec {
        name: "lag-status",
        arity: Arity::None,
        available_if: &["describe"],
        described_as: "",
        doc: "Cohort: with '--describe' (offsets view), sample the group over a window and add a LAG-STATUS column (OK, WARNING, STALLED, STOPPED, ERROR).",
    },
    Spec {
        name: "lag-window-ms",
        arity: Arity::Required,
        available_if: &["lag-status"],
        described_as: "window (ms)",
        doc: "Cohort: how long '--lag-status' samples the group. (default: 10000)",
    },
    Spec {
        name: "lag-seconds",
        arity: Arity::None,
        available_if: &["describe"],
        described_as: "",
        doc: "Cohort: with '--describe' (offsets view), add a LAG-SECONDS column: how old the record at the committed offset is, by the timestamp the log keeps for it (0 when caught up).",
    },
    flag("help", "Print usage information."),
    flag("version", "Display Kafka version."),
];

/// Shown with the help text when there are no arguments or `--help`.
pub const TOOL_DESCRIPTION: &str = "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.";

/// Option groups used in messages, in the order Kafka declares them.
pub const GROUP_SELECTION: &[&str] = &["group", "all-groups"];
/// Options that only accept a scope together with `--delete-offsets`.
pub const DELETE_OFFSETS_OPTS: &[&str] = &["group", "topic"];
/// The actions that take `--group`.
pub const GROUP_LEVEL: &[&str] = &["list", "describe", "delete", "reset-offsets"];
/// The reset specifiers.
pub const RESET_SCENARIOS: &[&str] = &[
    "to-offset",
    "shift-by",
    "to-datetime",
    "by-duration",
    "to-earliest",
    "to-latest",
    "to-current",
    "from-file",
];

/// The stderr warning of a reset without `--dry-run` or `--execute` (the missing space after
/// "missing." is Kafka's).
pub const NO_EXECUTE_WARNING: &str = "WARN: No action will be performed as the --execute option is missing.In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.";

/// The action the command performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `--list`
    List,
    /// `--describe`
    Describe,
    /// `--delete`
    Delete,
    /// `--reset-offsets`
    ResetOffsets,
    /// `--delete-offsets`
    DeleteOffsets,
}

/// Which `--describe` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescribeView {
    /// `--offsets` (the default)
    Offsets,
    /// `--members`
    Members,
    /// `--state`
    State,
}

/// What checking the arguments decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Run the command; print `warnings` to stderr first.
    Run {
        /// The parsed options.
        options: Box<GroupsOptions>,
        /// Lines for stderr before anything else.
        warnings: Vec<String>,
    },
    /// Print `message` and the help to stderr, exit 1.
    Usage(String),
    /// jopt-simple threw while parsing: the JVM prints it, exit 1.
    ParseFailure(String),
    /// `--version`: print the version, exit 0.
    Version,
}

/// The options of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupsOptions {
    /// What jopt-simple parsed; the rest of the tool reads it like Kafka reads its `OptionSet`.
    pub parsed: Parsed,
    /// The action.
    pub action: Action,
}

impl GroupsOptions {
    /// `--bootstrap-server`.
    pub fn bootstrap_server(&self) -> &str {
        self.parsed.value("bootstrap-server").unwrap_or_default()
    }
    /// `--group` values in order.
    pub fn groups(&self) -> Vec<String> {
        self.parsed.values("group")
    }
    /// `--topic` values in order.
    pub fn topics(&self) -> Vec<String> {
        self.parsed.values("topic")
    }
    /// Whether an option is present.
    pub fn has(&self, name: &str) -> bool {
        self.parsed.has(name)
    }
    /// An option's (first) value.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.parsed.value(name)
    }
    /// The describe table asked for.
    pub fn describe_view(&self) -> DescribeView {
        if self.has("members") && !self.has("offsets") {
            DescribeView::Members
        } else if self.has("state") && !self.has("offsets") {
            DescribeView::State
        } else {
            DescribeView::Offsets
        }
    }
    /// Dry run is the default; only `--execute` without `--dry-run` writes.
    pub fn dry_run(&self) -> bool {
        self.has("dry-run") || !self.has("execute")
    }
}

fn names(list: &[&str]) -> String {
    list.iter()
        .map(|n| jopt::spec_name(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses and checks `args` as Kafka's tool does.
pub fn check(args: &[String]) -> Checked {
    let parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::ParseFailure(e.to_string()),
    };
    let has = |n: &str| parsed.has(n);
    if parsed.arg_count == 0 || has("help") {
        return Checked::Usage(TOOL_DESCRIPTION.to_string());
    }
    if has("version") {
        return Checked::Version;
    }
    if !has("bootstrap-server") {
        return Checked::Usage(format!(
            "Missing required argument \"{}\"",
            jopt::spec_name("bootstrap-server")
        ));
    }
    let selection = names(&jopt::hash_set_order(GROUP_SELECTION));
    if has("describe") {
        if !has("group") && !has("all-groups") {
            return Checked::Usage(format!(
                "Option {} takes one of these options: {selection}",
                jopt::spec_name("describe")
            ));
        }
        let exclusive = ["members", "offsets", "state"];
        if exclusive.iter().filter(|o| has(o)).count() > 1 {
            return Checked::Usage(format!(
                "Option {} takes at most one of these options: {}",
                jopt::spec_name("describe"),
                names(&exclusive)
            ));
        }
        if has("state") && parsed.value("state").is_some() {
            return Checked::Usage(format!(
                "Option {} does not take a value for {}",
                jopt::spec_name("describe"),
                jopt::spec_name("state")
            ));
        }
    }
    if has("delete") {
        if !has("group") && !has("all-groups") {
            return Checked::Usage(format!(
                "Option {} takes one of these options: {selection}",
                jopt::spec_name("delete")
            ));
        }
        if has("topic") {
            return Checked::Usage(
                "The consumer does not support topic-specific offset deletion from a consumer group."
                    .to_string(),
            );
        }
    }
    if has("delete-offsets") && (!has("group") || !has("topic")) {
        return Checked::Usage(format!(
            "Option {} takes the following options: {}",
            jopt::spec_name("delete-offsets"),
            names(&jopt::hash_set_order(DELETE_OFFSETS_OPTS))
        ));
    }
    let mut warnings = Vec::new();
    if has("reset-offsets") {
        if has("dry-run") && has("execute") {
            return Checked::Usage(format!(
                "Option {} only accepts one of {} and {}",
                jopt::spec_name("reset-offsets"),
                jopt::spec_name("execute"),
                jopt::spec_name("dry-run")
            ));
        }
        if !has("dry-run") && !has("execute") {
            warnings.push(NO_EXECUTE_WARNING.to_string());
        }
        if !has("group") && !has("all-groups") {
            return usage_with_warnings(
                format!(
                    "Option {} takes one of these options: {selection}",
                    jopt::spec_name("reset-offsets")
                ),
                warnings,
            );
        }
        for used in [
            "to-offset",
            "to-datetime",
            "by-duration",
            "to-earliest",
            "to-latest",
            "to-current",
            "shift-by",
            "from-file",
        ] {
            if let Some(m) = invalid_with(
                &parsed,
                used,
                &jopt::hash_set_minus(RESET_SCENARIOS, &[used]),
            ) {
                return usage_with_warnings(m, warnings);
            }
        }
    }
    if let Some(m) = invalid_with(
        &parsed,
        "group",
        &jopt::hash_set_minus(GROUP_SELECTION, &["group"]),
    ) {
        return usage_with_warnings(m, warnings);
    }
    if let Some(m) = invalid_with(
        &parsed,
        "group",
        &jopt::hash_set_minus(GROUP_LEVEL, &["describe", "delete", "reset-offsets"]),
    ) {
        return usage_with_warnings(m, warnings);
    }
    if let Some(m) = invalid_with(
        &parsed,
        "topic",
        &jopt::hash_set_minus(GROUP_LEVEL, &["delete", "reset-offsets"]),
    ) {
        return usage_with_warnings(m, warnings);
    }
    let actions: Vec<Action> = [
        ("list", Action::List),
        ("describe", Action::Describe),
        ("delete", Action::Delete),
        ("reset-offsets", Action::ResetOffsets),
        ("delete-offsets", Action::DeleteOffsets),
    ]
    .iter()
    .filter(|(n, _)| has(n))
    .map(|(_, a)| *a)
    .collect();
    if actions.len() != 1 {
        return usage_with_warnings(
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets".to_string(),
            warnings,
        );
    }
    Checked::Run {
        options: Box::new(GroupsOptions {
            action: actions[0],
            parsed,
        }),
        warnings,
    }
}

/// A usage error after warnings were already due: Kafka printed them first, so keep them in the
/// message's lines.
fn usage_with_warnings(message: String, warnings: Vec<String>) -> Checked {
    if warnings.is_empty() {
        Checked::Usage(message)
    } else {
        let mut lines = warnings;
        lines.push(message);
        Checked::Usage(lines.join("\n"))
    }
}

/// `CommandLineUtils.checkInvalidArgs`: the first present option of `invalid` (in set order).
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

/// The help text printed after a usage message.
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

    fn usage(words: &str) -> String {
        match check_words(words) {
            Checked::Usage(m) => m,
            other => panic!("expected a usage error for {words:?}, got {other:?}"),
        }
    }

    const BS: &str = "--bootstrap-server h:1";

    #[test]
    fn no_arguments_or_help_print_the_tool_description() {
        assert_eq!(usage(""), TOOL_DESCRIPTION);
        assert_eq!(usage("--help"), TOOL_DESCRIPTION);
        assert_eq!(check_words("--version"), Checked::Version);
    }

    #[test]
    fn bootstrap_server_is_required() {
        assert_eq!(
            usage("--list"),
            "Missing required argument \"[bootstrap-server]\""
        );
    }

    #[test]
    fn describe_needs_a_group_and_one_view() {
        assert_eq!(
            usage(&format!("{BS} --describe")),
            "Option [describe] takes one of these options: [all-groups], [group]"
        );
        assert_eq!(
            usage(&format!("{BS} --describe --group g --members --state")),
            "Option [describe] takes at most one of these options: [members], [offsets], [state]"
        );
        assert_eq!(
            usage(&format!("{BS} --describe --group g --state Stable")),
            "Option [describe] does not take a value for [state]"
        );
    }

    #[test]
    fn delete_and_delete_offsets_scopes() {
        assert_eq!(
            usage(&format!("{BS} --delete")),
            "Option [delete] takes one of these options: [all-groups], [group]"
        );
        assert_eq!(
            usage(&format!("{BS} --delete --group g --topic t")),
            "The consumer does not support topic-specific offset deletion from a consumer group."
        );
        assert_eq!(
            usage(&format!("{BS} --delete-offsets --group g")),
            "Option [delete-offsets] takes the following options: [topic], [group]"
        );
    }

    #[test]
    fn reset_checks_and_warning() {
        assert_eq!(
            usage(&format!(
                "{BS} --reset-offsets --group g --dry-run --execute --to-earliest"
            )),
            "Option [reset-offsets] only accepts one of [execute] and [dry-run]"
        );
        assert_eq!(
            usage(&format!("{BS} --reset-offsets --dry-run --to-earliest")),
            "Option [reset-offsets] takes one of these options: [all-groups], [group]"
        );
        assert_eq!(
            usage(&format!(
                "{BS} --reset-offsets --group g --dry-run --to-offset 5 --to-earliest"
            )),
            "Option \"[to-offset]\" can't be used with option \"[to-earliest]\""
        );
        match check_words(&format!(
            "{BS} --reset-offsets --group g --all-topics --to-latest"
        )) {
            Checked::Run { warnings, options } => {
                assert_eq!(warnings, vec![NO_EXECUTE_WARNING.to_string()]);
                assert_eq!(options.action, Action::ResetOffsets);
                assert!(options.dry_run());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn group_and_topic_combinations() {
        assert_eq!(
            usage(&format!("{BS} --describe --group g --all-groups")),
            "Option \"[group]\" can't be used with option \"[all-groups]\""
        );
        assert_eq!(
            usage(&format!("{BS} --list --group g")),
            "Option \"[group]\" can't be used with option \"[list]\""
        );
        assert_eq!(
            usage(&format!("{BS} --describe --all-groups --topic t")),
            "Option \"[topic]\" can't be used with option \"[describe]\""
        );
    }

    #[test]
    fn exactly_one_action() {
        assert_eq!(
            usage(BS),
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"
        );
        assert_eq!(
            usage(&format!("{BS} --list --delete --all-groups")),
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"
        );
    }

    #[test]
    fn parse_failures_are_jvm_exceptions() {
        assert_eq!(
            check_words(&format!("{BS} --zookeeper z --list")),
            Checked::ParseFailure(
                "joptsimple.UnrecognizedOptionException: zookeeper is not a recognized option"
                    .to_string()
            )
        );
        assert_eq!(
            check_words(&format!("{BS} --list --members")),
            Checked::ParseFailure("joptsimple.UnavailableOptionException: Option(s) [members] are unavailable given other options on the command line".to_string())
        );
    }

    #[test]
    fn views_and_modes() {
        let Checked::Run { options, .. } = check_words(&format!("{BS} --describe --group g"))
        else {
            panic!()
        };
        assert_eq!(options.describe_view(), DescribeView::Offsets);
        let Checked::Run { options, .. } =
            check_words(&format!("{BS} --describe --group g --members --verbose"))
        else {
            panic!()
        };
        assert_eq!(options.describe_view(), DescribeView::Members);
        assert_eq!(options.groups(), vec!["g".to_string()]);
        let Checked::Run { options, .. } = check_words(&format!(
            "{BS} --reset-offsets --group g --all-topics --to-latest --execute"
        )) else {
            panic!()
        };
        assert!(!options.dry_run());
    }
}
