//! The options of `cohort configs`, with the checks and messages of Kafka 4.0's
//! `ConfigCommand.ConfigCommandOptions` (`checkArgs`, then `processCommand`'s).

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

/// Every option Kafka's tool accepts (so that parsing accepts and rejects the same words).
pub const SPECS: &[Spec] = &[
    with_arg("bootstrap-server", "server to connect to", "The Kafka servers to connect to."),
    with_arg("bootstrap-controller", "controller to connect to", "The Kafka controllers to connect to."),
    with_arg("command-config", "command config property file", "Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs."),
    flag("alter", "Alter the configuration for the entity."),
    flag("describe", "List configs for the given entity."),
    flag("all", "List all configs for the given entity, including static configs if available."),
    with_arg("entity-type", "String", "Type of entity (topics/clients/users/brokers/broker-loggers/ips/client-metrics/groups)"),
    with_arg("entity-name", "String", "Name of entity (topic name/client id/user principal name/broker id/ip/client metrics/group id)"),
    flag("entity-default", "Default entity name for clients/users/brokers/ips (applies to corresponding entity type)"),
    with_arg("add-config", "String", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'."),
    with_arg("add-config-file", "String", "Path to a properties file with configs to add. See add-config for a list of valid configurations."),
    with_arg("delete-config", "String", "config keys to remove 'k1,k2'"),
    flag("force", "Suppress console prompts"),
    with_arg("topic", "String", "The topic's name."),
    with_arg("client", "String", "The client's ID."),
    flag("client-defaults", "The config defaults for all clients."),
    with_arg("user", "String", "The user's principal name."),
    flag("user-defaults", "The config defaults for all users."),
    with_arg("broker", "String", "The broker's ID."),
    flag("broker-defaults", "The config defaults for all brokers."),
    with_arg("broker-logger", "String", "The broker's ID for its logger config."),
    flag("ip-defaults", "The config defaults for all IPs."),
    with_arg("ip", "String", "The IP address."),
    with_arg("group", "String", "The group's ID."),
    with_arg("client-metrics", "String", "The client metrics config resource name."),
    flag("help", "Print usage information."),
    flag("version", "Display Kafka version."),
];

/// Entity types Kafka's tool accepts with `--bootstrap-server`, in its message's order.
const ALLOWED_TYPES: &[&str] = &[
    "topics",
    "clients",
    "users",
    "brokers",
    "ips",
    "broker-loggers",
    "client-metrics",
    "groups",
];
/// The entity flags (`--topic t`) and the type each names.
const ENTITY_FLAGS: &[(&str, &str)] = &[
    ("topic", "topics"),
    ("client", "clients"),
    ("user", "users"),
    ("broker", "brokers"),
    ("broker-logger", "broker-loggers"),
    ("ip", "ips"),
    ("client-metrics", "client-metrics"),
    ("group", "groups"),
];
/// The default-entity flags (`--broker-defaults`) and the type each names.
const DEFAULT_FLAGS: &[(&str, &str)] = &[
    ("client-defaults", "clients"),
    ("user-defaults", "users"),
    ("broker-defaults", "brokers"),
    ("ip-defaults", "ips"),
];

/// What the command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `--describe`
    Describe,
    /// `--alter`
    Alter,
}

/// What checking decided.
pub type Checked = crate::cli::entry::Checked<Box<ConfigsOptions>>;

/// Parsed options of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigsOptions {
    /// What jopt-simple parsed.
    pub parsed: Parsed,
    /// The action.
    pub action: Action,
    /// Kafka's `entityTypes`: the `--entity-type` values, then the types of entity flags.
    pub entity_types: Vec<String>,
    /// Kafka's `entityNames`: `--entity-name` values (`""` for `--entity-default`), then the
    /// entity flags' values, then `""` per default flag.
    pub entity_names: Vec<String>,
}

impl ConfigsOptions {
    /// Whether an option is present.
    pub fn has(&self, name: &str) -> bool {
        self.parsed.has(name)
    }
    /// An option's first value.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.parsed.value(name)
    }
    /// `--delete-config` keys: every value split at commas (jopt-simple's
    /// `withValuesSeparatedBy(',')`, empty pieces skipped), each trimmed.
    pub fn keys_to_delete(&self) -> Vec<String> {
        self.parsed
            .values("delete-config")
            .iter()
            .flat_map(|v| {
                v.split(',')
                    .filter(|k| !k.is_empty())
                    .map(|k| k.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// The help line Kafka prints for no arguments or `--help`.
pub const HELP_MESSAGE: &str = "This tool helps to manipulate and describe entity config for a topic, client, user, broker, ip, client-metrics or group";

/// Parses and checks `args` as Kafka's `ConfigCommandOptions` does.
pub fn check(args: &[String]) -> Checked {
    let parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::Failure(e.message()),
    };
    let has = |n: &str| parsed.has(n);
    if parsed.arg_count == 0 || has("help") {
        return Checked::Usage(HELP_MESSAGE.to_string());
    }
    if has("version") {
        return Checked::Version;
    }
    let actions = ["alter", "describe"].iter().filter(|a| has(a)).count();
    if actions != 1 {
        return Checked::Usage(
            "Command must include exactly one action: --describe, --alter".into(),
        );
    }
    if has("describe") {
        for invalid in ["alter", "add-config", "delete-config"] {
            if has(invalid) {
                return Checked::Usage(format!(
                    "Option \"{}\" can't be used with option \"{}\"",
                    jopt::spec_name("describe"),
                    jopt::spec_name(invalid)
                ));
            }
        }
    }
    let mut entity_types: Vec<String> = parsed.values("entity-type");
    entity_types.extend(
        ENTITY_FLAGS
            .iter()
            .chain(DEFAULT_FLAGS)
            .filter(|(f, _)| has(f))
            .map(|(_, t)| t.to_string()),
    );
    let mut entity_names: Vec<String> = parsed.values("entity-name");
    if has("entity-default") {
        entity_names.push(String::new());
    }
    entity_names.extend(
        ENTITY_FLAGS
            .iter()
            .filter_map(|(f, _)| parsed.value(f))
            .map(str::to_owned),
    );
    entity_names.extend(
        DEFAULT_FLAGS
            .iter()
            .filter(|(f, _)| has(f))
            .map(|_| String::new()),
    );

    let mut seen: Vec<&String> = Vec::new();
    let mut duplicates: Vec<&String> = Vec::new();
    for t in &entity_types {
        if seen.contains(&t) {
            duplicates.push(t);
        } else {
            seen.push(t);
        }
    }
    if !duplicates.is_empty() {
        let d: Vec<&str> = duplicates.iter().map(|s| s.as_str()).collect();
        return Checked::Failure(format!(
            "Duplicate entity type(s) specified: {}",
            d.join(",")
        ));
    }
    for t in &entity_types {
        if !ALLOWED_TYPES.contains(&t.as_str()) {
            return Checked::Failure(format!(
                "Invalid entity type {t}, the entity type must be one of {} with a --bootstrap-server or --bootstrap-controller argument",
                ALLOWED_TYPES.join(", ")
            ));
        }
    }
    if entity_types.is_empty() {
        return Checked::Failure("At least one entity type must be specified".into());
    }
    if entity_types.len() > 1 {
        let mut set: Vec<&str> = entity_types.iter().map(String::as_str).collect();
        set.sort();
        if set != ["clients", "users"] {
            return Checked::Failure(
                "Only 'users' and 'clients' entity types may be specified together".into(),
            );
        }
    }
    if (has("entity-name") || has("entity-type") || has("entity-default"))
        && ENTITY_FLAGS
            .iter()
            .chain(DEFAULT_FLAGS)
            .any(|(f, _)| has(f))
    {
        return Checked::Failure(
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags"
                .into(),
        );
    }
    let has_name = entity_names.iter().any(|n| !n.is_empty());
    let has_default = entity_names.iter().any(|n| n.is_empty());
    let connects = ["bootstrap-server", "bootstrap-controller"]
        .iter()
        .filter(|o| has(o))
        .count();
    if connects == 0 {
        return Checked::Failure(
            "One of the required --bootstrap-server or --bootstrap-controller arguments must be specified"
                .into(),
        );
    }
    if connects > 1 {
        return Checked::Failure(
            "Only one of --bootstrap-server or --bootstrap-controller can be specified".into(),
        );
    }
    let head = entity_types[0].clone();
    let has_type = |t: &str| entity_types.iter().any(|x| x == t);
    if has_name && (has_type("brokers") || has_type("broker-loggers")) {
        for o in ["entity-name", "broker", "broker-logger"] {
            if let Some(id) = parsed.value(o) {
                if id.parse::<i32>().is_err() {
                    return Checked::Failure(format!(
                        "The entity name for {head} must be a valid integer broker id, but it is: {id}"
                    ));
                }
            }
        }
    }
    let joined = entity_types.join(",");
    let defaults_allowed =
        has_type("users") || has_type("clients") || has_type("brokers") || has_type("ips");
    if has("describe") {
        if !defaults_allowed && has("entity-default") {
            return Checked::Failure(format!(
                "--entity-default must not be specified with --describe of {joined}"
            ));
        }
        if has_type("broker-loggers") && !has_name {
            return Checked::Failure(format!(
                "An entity name must be specified with --describe of {joined}"
            ));
        }
    }
    if has("alter") {
        if defaults_allowed {
            if !has_name && !has_default {
                return Checked::Failure(
                    "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips"
                        .into(),
                );
            }
        } else if !has_name {
            return Checked::Failure(format!(
                "An entity name must be specified with --alter of {joined}"
            ));
        }
        if has("add-config") && has("add-config-file") {
            return Checked::Failure(
                "Only one of --add-config or --add-config-file must be specified".into(),
            );
        }
        if !has("add-config") && !has("add-config-file") && !has("delete-config") {
            return Checked::Failure(
                "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"
                    .into(),
            );
        }
    }
    let action = if has("alter") {
        Action::Alter
    } else {
        Action::Describe
    };
    Checked::Run(Box::new(ConfigsOptions {
        parsed,
        action,
        entity_types,
        entity_names,
    }))
}

/// The help text.
pub fn help() -> String {
    jopt::help(SPECS)
}

/// Kafka's `parseConfigsToBeAdded` for an `--add-config` value: split at the commas outside
/// square brackets (trailing empty pieces dropped, as Java's `split` drops them), each piece at
/// its `=` outside brackets (blanks around it absorbed); exactly one `=` per piece, else Scala's
/// `require` message. Brackets are then removed from values and both sides trimmed.
pub fn parse_add_config(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pieces = split_outside_brackets(text, |c| c == ',', false);
    if pieces.len() > 1 {
        while pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
    }
    let mut out = Vec::new();
    for piece in pieces {
        let pair = split_outside_brackets(&piece, |c| c == '=', true);
        if pair.len() != 2 {
            return Err(
                "requirement failed: Invalid entity config: all configs to be added must be in the format \"key=val\"."
                    .into(),
            );
        }
        let value: String = pair[1].chars().filter(|c| *c != '[' && *c != ']').collect();
        out.push((pair[0].trim().to_string(), value.trim().to_string()));
    }
    Ok(out)
}

/// Splits `text` at separators followed by the lookahead `(?=[^\]]*(?:\[|$))` (no `]` before
/// the next `[` or the end); with `absorb_blanks`, blanks around a separator go with it (the
/// `\s*=\s*` of Kafka's pattern).
fn split_outside_brackets(
    text: &str,
    sep: impl Fn(char) -> bool,
    absorb_blanks: bool,
) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let lookahead_ok = |from: usize| {
        for c in &chars[from..] {
            match c {
                ']' => return false,
                '[' => return true,
                _ => {}
            }
        }
        true
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        if sep(chars[i]) {
            let mut end = i + 1;
            if absorb_blanks {
                while end < chars.len() && chars[end].is_whitespace() {
                    end += 1;
                }
            }
            if lookahead_ok(end) {
                let mut piece_end = i;
                if absorb_blanks {
                    while piece_end > start && chars[piece_end - 1].is_whitespace() {
                        piece_end -= 1;
                    }
                }
                out.push(chars[start..piece_end].iter().collect());
                start = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out.push(chars[start..].iter().collect());
    out
}

/// Kafka's `validatePropsKey`: keys of `[a-zA-Z0-9._-]*` only.
pub fn check_keys(pairs: &[(String, String)]) -> Result<(), String> {
    for (k, _) in pairs {
        if !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
        {
            return Err(format!("Invalid character found for config key: {k}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_words(words: &str) -> Checked {
        let args: Vec<String> = words.split_whitespace().map(String::from).collect();
        check(&args)
    }

    #[test]
    fn argument_errors_read_like_kafka_configs() {
        let f = |s: &str| Checked::Failure(s.to_string());
        let u = |s: &str| Checked::Usage(s.to_string());
        assert_eq!(check_words(""), u(HELP_MESSAGE));
        assert_eq!(check_words("--version"), Checked::Version);
        assert_eq!(
            check_words("--bootstrap-server h:1 --entity-type topics"),
            u("Command must include exactly one action: --describe, --alter")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-type topics --add-config a=b"),
            u("Option \"[describe]\" can't be used with option \"[add-config]\"")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe"),
            f("At least one entity type must be specified")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-type widgets"),
            f("Invalid entity type widgets, the entity type must be one of topics, clients, users, brokers, ips, broker-loggers, client-metrics, groups with a --bootstrap-server or --bootstrap-controller argument")
        );
        assert_eq!(
            check_words(
                "--bootstrap-server h:1 --describe --entity-type topics --entity-type topics"
            ),
            f("Duplicate entity type(s) specified: topics")
        );
        assert_eq!(
            check_words(
                "--bootstrap-server h:1 --describe --entity-type topics --entity-type brokers"
            ),
            f("Only 'users' and 'clients' entity types may be specified together")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-name t --topic t"),
            f("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
        );
        // As in Kafka, a type named twice (here by --entity-type and --topic) is a duplicate.
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-type topics --topic t"),
            f("Duplicate entity type(s) specified: topics")
        );
        assert_eq!(
            check_words("--describe --entity-type topics"),
            f("One of the required --bootstrap-server or --bootstrap-controller arguments must be specified")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-type brokers --entity-name x"),
            f("The entity name for brokers must be a valid integer broker id, but it is: x")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --entity-type topics --entity-default"),
            f("--entity-default must not be specified with --describe of topics")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --alter --entity-type topics --add-config a=b"),
            f("An entity name must be specified with --alter of topics")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --alter --entity-type brokers --add-config a=b"),
            f("An entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --alter --entity-type topics --entity-name t"),
            f("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")
        );
        assert_eq!(
            check_words(
                "--bootstrap-server h:1 --alter --topic t --add-config a=b --add-config-file f"
            ),
            f("Only one of --add-config or --add-config-file must be specified")
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --bogus"),
            f("bogus is not a recognized option")
        );
    }

    #[test]
    fn entity_flags_name_the_entity() {
        let Checked::Run(o) = check_words("--bootstrap-server h:1 --alter --broker-defaults --delete-config a,,b --delete-config c") else {
            panic!()
        };
        assert_eq!(o.entity_types, vec!["brokers".to_string()]);
        assert_eq!(o.entity_names, vec![String::new()]);
        assert_eq!(o.keys_to_delete(), vec!["a", "b", "c"]);
        let Checked::Run(o) =
            check_words("--bootstrap-server h:1 --describe --entity-type topics --entity-name t")
        else {
            panic!()
        };
        assert_eq!(
            (o.action, o.entity_names.clone()),
            (Action::Describe, vec!["t".to_string()])
        );
    }

    #[test]
    fn add_config_splits_like_kafka() {
        let pairs = |s: &str| parse_add_config(s).unwrap();
        assert_eq!(
            pairs("retention.ms=1000,cleanup.policy=[compact,delete], x = y ,"),
            vec![
                ("retention.ms".to_string(), "1000".to_string()),
                ("cleanup.policy".to_string(), "compact,delete".to_string()),
                ("x".to_string(), "y".to_string()),
            ]
        );
        assert_eq!(pairs("k="), vec![("k".to_string(), String::new())]);
        let bad = "requirement failed: Invalid entity config: all configs to be added must be in the format \"key=val\".";
        assert_eq!(parse_add_config("novalue"), Err(bad.to_string()));
        assert_eq!(parse_add_config("a=b=c"), Err(bad.to_string()));
        assert_eq!(parse_add_config(""), Err(bad.to_string()));
        assert_eq!(parse_add_config(","), Ok(vec![]));
        assert_eq!(
            check_keys(&[("a b".into(), "1".into())]),
            Err("Invalid character found for config key: a b".to_string())
        );
    }
}
