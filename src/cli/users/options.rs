//! The options of `cohort users`, with the checks and messages of Kafka 4.0's
//! `ConfigCommandOptions` for `--entity-type users` (`--user NAME` is its shorthand).

use super::super::groups::jopt::{self, spec, Arity, Parsed, Spec};

/// Every option `cohort users` accepts.
pub const SPECS: &[Spec] = &[
    spec("bootstrap-server", Arity::Required, "server to connect to", "The Kafka servers to connect to."),
    spec("command-config", Arity::Required, "command config property file", "Property file containing configs to be passed to Admin Client."),
    spec("alter", Arity::None, "", "Alter the configuration for the entity."),
    spec("describe", Arity::None, "", "List configs for the given entity."),
    spec("entity-type", Arity::Required, "", "Type of entity (users: the only type `cohort users` serves)"),
    spec("entity-name", Arity::Required, "", "Name of entity (user name)"),
    spec("user", Arity::Required, "user-principal", "The user's principal name; shorthand for --entity-type users --entity-name <user>."),
    spec("add-config", Arity::Required, "", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. For users: SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]"),
    spec("delete-config", Arity::Required, "", "config keys to remove 'k1,k2'"),
    spec("help", Arity::None, "", "Print usage information."),
    spec("version", Arity::None, "", "Display Kafka version."),
];

/// Describe or alter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Describe,
    Alter,
}

/// What checking decided.
pub type Checked = crate::cli::entry::Checked<Box<UsersOptions>>;

/// One run's options.
#[derive(Clone, PartialEq, Eq)]
pub struct UsersOptions {
    pub action: Action,
    pub bootstrap: String,
    pub command_config: Option<String>,
    pub entity_name: Option<String>,
    /// `--add-config` as (key, value) in order, brackets removed (values hold passwords).
    pub add: Vec<(String, String)>,
    /// `--delete-config` keys.
    pub delete: Vec<String>,
}

impl std::fmt::Debug for UsersOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsersOptions")
            .field("action", &self.action)
            .field("entity_name", &self.entity_name)
            .field("add", &self.add.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("delete", &self.delete)
            .finish_non_exhaustive()
    }
}

/// Kafka's `parseConfigsToBeAdded` split: commas outside square brackets separate entries,
/// each `key=value` at its first `=`, and a value in brackets loses them.
pub fn parse_add_config(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut entries = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '[' => {
                depth += 1;
                current.push(c);
            }
            ']' => {
                depth -= 1;
                current.push(c);
            }
            ',' if depth <= 0 => entries.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    entries.push(current);
    let mut out = Vec::new();
    for entry in entries.into_iter().filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('=').ok_or_else(|| {
            "java.lang.IllegalArgumentException: requirement failed: Invalid entity config: all \
             configs to be added must be in the format \"key=val\"."
                .to_owned()
        })?;
        let value = value
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .unwrap_or(value);
        out.push((key.trim().to_owned(), value.to_owned()));
    }
    Ok(out)
}

/// Kafka's `(?:iterations=(\-?[0-9]*),)?password=(.*)` on a SCRAM config's value: the
/// iterations (`None`: the default; -1 means it too) and the password.
pub fn iterations_and_password(value: &str) -> Option<(Option<i64>, &str)> {
    if let Some(password) = value.strip_prefix("password=") {
        return Some((None, password));
    }
    let rest = value.strip_prefix("iterations=")?;
    let (count, rest) = rest.split_once(',')?;
    let password = rest.strip_prefix("password=")?;
    let digits = count.strip_prefix('-').unwrap_or(count);
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let iterations = match count {
        "" | "-1" => None,
        n => Some(n.parse::<i64>().ok()?),
    };
    Some((iterations, password))
}

/// Parses and checks `args` as Kafka's `ConfigCommandOptions.checkArgs` does for users.
pub fn check(args: &[String]) -> Checked {
    let parsed: Parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::Failure(e.message()),
    };
    if parsed.arg_count == 0 || parsed.has("help") {
        return Checked::Usage(
            "This tool helps to manipulate and describe entity config for a topic, client, user, \
             broker, ip or client-metrics"
                .to_string(),
        );
    }
    if parsed.has("version") {
        return Checked::Version;
    }
    let action = match (parsed.has("alter"), parsed.has("describe")) {
        (true, false) => Action::Alter,
        (false, true) => Action::Describe,
        _ => {
            return Checked::Usage(
                "Command must include exactly one action: --describe, --alter".to_string(),
            )
        }
    };
    let Some(bootstrap) = parsed.value("bootstrap-server").map(str::to_owned) else {
        return Checked::Usage(
            "One of the required bootstrap-server or bootstrap-controller arguments must be \
             specified"
                .to_string(),
        );
    };
    let entity_name = parsed
        .value("user")
        .or_else(|| parsed.value("entity-name"))
        .map(str::to_owned);
    match parsed.value("entity-type") {
        Some("users") => {}
        None if parsed.has("user") => {}
        None => return Checked::Usage("At least one entity type must be specified".to_string()),
        Some(other) => {
            return Checked::Usage(format!(
                "cohort users serves --entity-type users only (got {other}); topic and broker \
                 configs are `cohort topics` and the admin APIs"
            ))
        }
    }
    let add = match parsed.value("add-config").map(parse_add_config) {
        None => Vec::new(),
        Some(Ok(a)) => a,
        Some(Err(e)) => return Checked::Failure(e),
    };
    let delete: Vec<String> = parsed
        .value("delete-config")
        .unwrap_or_default()
        .split(',')
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
        .collect();
    if action == Action::Alter {
        if entity_name.is_none() {
            return Checked::Usage(
                "An entity name must be specified with --alter of users".to_string(),
            );
        }
        if add.is_empty() && delete.is_empty() {
            return Checked::Usage(
                "At least one of --add-config or --delete-config must be specified with --alter"
                    .to_string(),
            );
        }
    } else if parsed.has("add-config") || parsed.has("delete-config") {
        return Checked::Usage(
            "Option \"[add-config]\" can't be used with option \"[describe]\"".to_string(),
        );
    }
    Checked::Run(Box::new(UsersOptions {
        action,
        bootstrap,
        command_config: parsed.value("command-config").map(str::to_owned),
        entity_name,
        add,
        delete,
    }))
}

/// The help text.
pub fn help() -> String {
    jopt::help(SPECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    fn run(c: Checked) -> Box<UsersOptions> {
        match c {
            Checked::Run(o) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn add_config_splits_outside_brackets_as_kafka_does() {
        assert_eq!(
            parse_add_config(
                "SCRAM-SHA-256=[iterations=8192,password=a,b],SCRAM-SHA-512=[password=c]"
            )
            .unwrap(),
            vec![
                (
                    "SCRAM-SHA-256".to_owned(),
                    "iterations=8192,password=a,b".to_owned()
                ),
                ("SCRAM-SHA-512".to_owned(), "password=c".to_owned()),
            ]
        );
        assert!(parse_add_config("SCRAM-SHA-256").is_err());
        assert_eq!(
            iterations_and_password("iterations=8192,password=p=w,x"),
            Some((Some(8192), "p=w,x"))
        );
        assert_eq!(iterations_and_password("password=x"), Some((None, "x")));
        assert_eq!(
            iterations_and_password("iterations=-1,password=x"),
            Some((None, "x"))
        );
        assert_eq!(iterations_and_password("iterations=abc,password=x"), None);
        assert_eq!(iterations_and_password("pw=x"), None);
    }

    #[test]
    fn checks_follow_config_commands() {
        let o = run(check(&args(&[
            "--bootstrap-server",
            "h:1",
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--add-config",
            "SCRAM-SHA-256=[password=x]",
        ])));
        assert_eq!(o.action, Action::Alter);
        assert_eq!(o.entity_name.as_deref(), Some("alice"));
        assert!(
            !format!("{o:?}").contains("password=x"),
            "Debug hides values"
        );
        let o = run(check(&args(&[
            "--bootstrap-server",
            "h:1",
            "--alter",
            "--user",
            "bob",
            "--delete-config",
            "SCRAM-SHA-512",
        ])));
        assert_eq!(o.delete, vec!["SCRAM-SHA-512".to_owned()]);
        assert!(matches!(
            check(&args(&["--bootstrap-server", "h:1", "--alter", "--describe", "--entity-type", "users"])),
            Checked::Usage(m) if m.contains("exactly one action")
        ));
        assert!(matches!(
            check(&args(&["--bootstrap-server", "h:1", "--alter", "--entity-type", "users", "--add-config", "SCRAM-SHA-256=[password=x]"])),
            Checked::Usage(m) if m.contains("entity name")
        ));
        assert!(matches!(
            check(&args(&["--bootstrap-server", "h:1", "--describe", "--entity-type", "topics"])),
            Checked::Usage(m) if m.contains("users only")
        ));
        let o = run(check(&args(&[
            "--bootstrap-server",
            "h:1",
            "--describe",
            "--entity-type",
            "users",
        ])));
        assert_eq!(o.entity_name, None);
    }
}
