//! The command line of `cohort transactions`, checked as Kafka's `kafka-transactions.sh` checks
//! it with argparse4j: global options, then one of five commands with its own options. Errors
//! are argparse4j's: the usage of the parser that failed, then `<prog>: error: <message>`.
//!
//! ```text
//!  [--bootstrap-server H:P] [--command-config FILE] COMMAND [command options]
//!    list [--duration-filter MS]
//!    describe --transactional-id ID
//!    describe-producers --topic T --partition P [--broker-id N]
//!    abort --topic T --partition P (--start-offset O | --producer-id I --producer-epoch E
//!          --coordinator-epoch C)
//!    find-hanging (--broker-id N | --topic T [--partition P]) [--max-transaction-timeout MIN]
//! ```
//! `--bootstrap-server` and `--command-config` are also taken after the command, as every other
//! cohort tool takes them anywhere; argparse4j takes them only before it.

/// The program name usage lines and errors show.
pub const PROG: &str = "cohort transactions";
/// argparse4j's default format width.
const WIDTH: usize = 80;
/// Kafka's default `--max-transaction-timeout`, in minutes.
pub const MAX_TRANSACTION_TIMEOUT_DEFAULT: i32 = 15;

/// One command and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    List {
        duration_filter: Option<i64>,
    },
    Describe {
        transactional_id: String,
    },
    DescribeProducers {
        topic: String,
        partition: i32,
        broker_id: Option<i32>,
    },
    Abort {
        topic: String,
        partition: i32,
        start_offset: Option<i64>,
        producer_id: Option<i64>,
        producer_epoch: Option<i16>,
        coordinator_epoch: Option<i32>,
    },
    FindHanging {
        broker_id: Option<i32>,
        max_transaction_timeout: i32,
        topic: Option<String>,
        partition: Option<i32>,
    },
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub bootstrap: String,
    pub command_config: Option<String>,
    pub command: Command,
}

/// What checking the command line decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Run(Options),
    /// `-h`: this help on stdout, exit 0.
    Help(String),
    /// `-v`: the version on stdout, exit 0.
    Version,
    /// The usage, then `<prog>: error: <message>` on stderr, exit 1.
    Error {
        prog: String,
        usage: String,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Integer,
    Long,
    Short,
}

struct Arg {
    flag: &'static str,
    kind: Kind,
    required: bool,
    help: &'static str,
}

const fn arg(flag: &'static str, kind: Kind, required: bool, help: &'static str) -> Arg {
    Arg {
        flag,
        kind,
        required,
        help,
    }
}

/// The commands, in Kafka's order, with their help line and options.
const COMMANDS: &[(&str, &str, &[Arg])] = &[
    (
        "list",
        "list transactions",
        &[arg("--duration-filter", Kind::Long, false, "Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned")],
    ),
    (
        "describe",
        "describe the state of an active transactional-id",
        &[arg("--transactional-id", Kind::Str, true, "transactional id")],
    ),
    (
        "describe-producers",
        "describe the states of active producers for a topic partition",
        &[
            arg("--broker-id", Kind::Integer, false, "optional broker id to describe the producer state on a specific replica"),
            arg("--topic", Kind::Str, true, "topic name"),
            arg("--partition", Kind::Integer, true, "partition number"),
        ],
    ),
    (
        "abort",
        "abort a hanging transaction (requires administrative privileges)",
        &[
            arg("--topic", Kind::Str, true, "topic name"),
            arg("--partition", Kind::Integer, true, "partition number"),
            arg("--start-offset", Kind::Long, false, "start offset of the transaction to abort"),
            arg("--producer-id", Kind::Long, false, "producer id"),
            arg("--producer-epoch", Kind::Short, false, "producer epoch"),
            arg("--coordinator-epoch", Kind::Integer, false, "coordinator epoch"),
        ],
    ),
    (
        "find-hanging",
        "find hanging transactions",
        &[
            arg("--broker-id", Kind::Integer, false, "broker id to search for hanging transactions"),
            arg("--max-transaction-timeout", Kind::Integer, false, "maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)"),
            arg("--topic", Kind::Str, false, "topic name to limit search to (required if --partition is specified)"),
            arg("--partition", Kind::Integer, false, "partition number"),
        ],
    ),
];

/// The global options (besides -h and -v).
const GLOBAL: &[Arg] = &[
    arg(
        "--command-config",
        Kind::Str,
        false,
        "property file containing configs to be passed to admin client",
    ),
    arg(
        "--bootstrap-server",
        Kind::Str,
        true,
        "hostname and port for the broker to connect to, in the form `host:port`  (multiple comma-separated entries can be given)",
    ),
];

/// argparse4j's metavar of an option: its name without dashes, upper-cased, `_` for `-`.
fn metavar(a: &Arg) -> String {
    match a.flag {
        "--command-config" => "FILE".to_owned(),
        "--bootstrap-server" => "host:port".to_owned(),
        f => f.trim_start_matches('-').replace('-', "_").to_uppercase(),
    }
}

fn usage_part(a: &Arg) -> String {
    let part = format!("{} {}", a.flag, metavar(a));
    if a.required {
        part
    } else {
        format!("[{part}]")
    }
}

/// `usage: <prog> <parts>`, wrapped at argparse4j's width under the first part.
fn wrap_usage(prog: &str, parts: &[String]) -> String {
    let head = format!("usage: {prog} ");
    let indent = " ".repeat(head.len());
    let mut out = String::new();
    let mut line = head.clone();
    for part in parts {
        if line.len() > head.len() && line.len() + part.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
        }
        line.push_str(part);
        line.push(' ');
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// The main parser's usage.
pub fn main_usage() -> String {
    let mut parts = vec!["[-h]".to_owned(), "[-v]".to_owned()];
    parts.extend(GLOBAL.iter().map(usage_part));
    parts.push("COMMAND ...".to_owned());
    wrap_usage(PROG, &parts)
}

/// A command's usage.
pub fn command_usage(name: &str) -> String {
    let mut parts = vec!["[-h]".to_owned()];
    if let Some((_, _, args)) = COMMANDS.iter().find(|c| c.0 == name) {
        parts.extend(args.iter().map(usage_part));
    }
    wrap_usage(&format!("{PROG} {name}"), &parts)
}

fn option_lines(args: &[Arg]) -> String {
    let mut out = String::from("  -h, --help             show this help message and exit\n");
    for a in args {
        let head = format!("  {} {}", a.flag, metavar(a));
        if head.len() < 25 {
            out.push_str(&format!("{head:<25}{}\n", a.help));
        } else {
            out.push_str(&format!("{head}\n{:25}{}\n", "", a.help));
        }
    }
    out
}

/// The main help (`-h`).
pub fn main_help() -> String {
    let mut out = main_usage();
    out.push_str(
        "\nThis tool is used to analyze the transactional state of producers in the cluster. \
         It can be used to detect and recover from hanging transactions.\n\nnamed arguments:\n",
    );
    out.push_str(&option_lines(GLOBAL).replace(
        "show this help message and exit\n",
        "show this help message and exit\n  -v, --version          show the version of this Kafka distribution and exit\n",
    ));
    out.push_str("\ncommands:\n  COMMAND\n");
    for (name, help, _) in COMMANDS {
        out.push_str(&format!("    {name:<21}{help}\n"));
    }
    out
}

/// A command's help (`COMMAND -h`).
pub fn command_help(name: &str) -> String {
    let mut out = command_usage(name);
    if let Some((_, _, args)) = COMMANDS.iter().find(|c| c.0 == name) {
        // Kafka gives only `describe` a description.
        if name == "describe" {
            out.push_str("\nDescribe the state of an active transactional-id.\n");
        }
        out.push_str("\nnamed arguments:\n");
        out.push_str(&option_lines(args));
    }
    out
}

/// One parsed option value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Str(String),
    Int(i64),
}

fn java_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Str => "String",
        Kind::Integer => "Integer",
        Kind::Long => "Long",
        Kind::Short => "Short",
    }
}

/// Java's `valueOf` for the option's type, with its `NumberFormatException` message.
fn convert(a: &Arg, raw: &str) -> Result<Value, String> {
    let (min, max) = match a.kind {
        Kind::Str => return Ok(Value::Str(raw.to_owned())),
        Kind::Integer => (i64::from(i32::MIN), i64::from(i32::MAX)),
        Kind::Long => (i64::MIN, i64::MAX),
        Kind::Short => (i64::from(i16::MIN), i64::from(i16::MAX)),
    };
    let why = match raw.parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => return Ok(Value::Int(v)),
        Ok(_) if a.kind == Kind::Short => format!("Value out of range. Value:\"{raw}\" Radix:10"),
        _ => format!("For input string: \"{raw}\""),
    };
    Err(format!(
        "argument {}: could not convert '{raw}' to {} ({why})",
        a.flag,
        java_type(a.kind)
    ))
}

/// The option `token` names among `args` (exact, or an unambiguous prefix as argparse4j
/// allows); `Err` for an ambiguous prefix.
fn lookup<'a>(args: &'a [&'a Arg], token: &str) -> Result<Option<&'a Arg>, String> {
    if let Some(a) = args.iter().find(|a| a.flag == token) {
        return Ok(Some(a));
    }
    let matches: Vec<&&Arg> = args
        .iter()
        .filter(|a| token.len() > 2 && a.flag.starts_with(token))
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(format!(
            "ambiguous option: {token} could match {}",
            many.iter().map(|a| a.flag).collect::<Vec<_>>().join(", ")
        )),
    }
}

type Values = Vec<(&'static str, Value)>;

fn get_str(values: &Values, flag: &str) -> Option<String> {
    values
        .iter()
        .rev()
        .find(|v| v.0 == flag)
        .and_then(|v| match &v.1 {
            Value::Str(s) => Some(s.clone()),
            Value::Int(_) => None,
        })
}

fn get_int(values: &Values, flag: &str) -> Option<i64> {
    values
        .iter()
        .rev()
        .find(|v| v.0 == flag)
        .and_then(|v| match v.1 {
            Value::Int(i) => Some(i),
            Value::Str(_) => None,
        })
}

/// Narrows a value its option's type already bounded.
fn narrow<T: TryFrom<i64>>(v: Option<i64>) -> Option<T> {
    v.and_then(|v| T::try_from(v).ok())
}

/// Checks `args` as `kafka-transactions.sh` checks its command line.
pub fn parse(args: &[String]) -> Parsed {
    let main_error = |message: String| Parsed::Error {
        prog: PROG.to_owned(),
        usage: main_usage(),
        message,
    };
    let global: Vec<&Arg> = GLOBAL.iter().collect();
    let mut values: Values = Vec::new();
    let mut i = 0;
    let mut command: Option<(&str, &[Arg])> = None;
    // The global options, up to the command.
    while i < args.len() {
        let token = args[i].as_str();
        match token {
            "-h" | "--help" => return Parsed::Help(main_help()),
            "-v" | "--version" => return Parsed::Version,
            _ => {}
        }
        if !token.starts_with('-') {
            match COMMANDS.iter().find(|c| c.0 == token) {
                Some(c) => command = Some((c.0, c.2)),
                None => {
                    let choices: Vec<String> =
                        COMMANDS.iter().map(|c| format!("'{}'", c.0)).collect();
                    return main_error(format!(
                        "invalid choice: '{token}' (choose from {})",
                        choices.join(", ")
                    ));
                }
            }
            i += 1;
            break;
        }
        match take(&global, args, &mut i, &mut values) {
            Ok(true) => {}
            Ok(false) => return main_error(format!("unrecognized arguments: '{token}'")),
            Err(m) => return main_error(m),
        }
    }
    let Some((name, command_args)) = command else {
        return main_error("too few arguments".to_owned());
    };
    let sub_error = |message: String| Parsed::Error {
        prog: format!("{PROG} {name}"),
        usage: command_usage(name),
        message,
    };
    // The command's options (and the global ones, which cohort's tools take anywhere).
    let mut known: Vec<&Arg> = command_args.iter().collect();
    known.extend(GLOBAL.iter());
    while i < args.len() {
        let token = args[i].as_str();
        if token == "-h" || token == "--help" {
            return Parsed::Help(command_help(name));
        }
        if !token.starts_with('-') || token == "-" {
            return sub_error(format!("unrecognized arguments: '{token}'"));
        }
        match take(&known, args, &mut i, &mut values) {
            Ok(true) => {}
            Ok(false) => return sub_error(format!("unrecognized arguments: '{token}'")),
            Err(m) => return sub_error(m),
        }
    }
    for a in command_args {
        if a.required && !values.iter().any(|v| v.0 == a.flag) {
            return sub_error(format!("argument {} is required", a.flag));
        }
    }
    let Some(bootstrap) = get_str(&values, "--bootstrap-server") else {
        return main_error("argument --bootstrap-server is required".to_owned());
    };
    let text = |f: &str| get_str(&values, f).unwrap_or_default();
    let int = |f: &str| get_int(&values, f);
    let command = match name {
        "list" => Command::List {
            duration_filter: int("--duration-filter"),
        },
        "describe" => Command::Describe {
            transactional_id: text("--transactional-id"),
        },
        "describe-producers" => Command::DescribeProducers {
            topic: text("--topic"),
            partition: narrow(int("--partition")).unwrap_or_default(),
            broker_id: narrow(int("--broker-id")),
        },
        "abort" => Command::Abort {
            topic: text("--topic"),
            partition: narrow(int("--partition")).unwrap_or_default(),
            start_offset: int("--start-offset"),
            producer_id: int("--producer-id"),
            producer_epoch: narrow(int("--producer-epoch")),
            coordinator_epoch: narrow(int("--coordinator-epoch")),
        },
        _ => Command::FindHanging {
            broker_id: narrow(int("--broker-id")),
            max_transaction_timeout: narrow(int("--max-transaction-timeout"))
                .unwrap_or(MAX_TRANSACTION_TIMEOUT_DEFAULT),
            topic: get_str(&values, "--topic"),
            partition: narrow(int("--partition")),
        },
    };
    Parsed::Run(Options {
        bootstrap,
        command_config: get_str(&values, "--command-config"),
        command,
    })
}

/// Takes the option at `args[*i]` (`--flag value` or `--flag=value`) if it is one of `known`;
/// `Ok(false)` if it is not.
fn take(
    known: &[&Arg],
    args: &[String],
    i: &mut usize,
    values: &mut Values,
) -> Result<bool, String> {
    let token = args[*i].as_str();
    let (name, inline) = match token.split_once('=') {
        Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
        _ => (token, None),
    };
    let Some(a) = lookup(known, name)? else {
        return Ok(false);
    };
    let raw = match inline {
        Some(v) => v,
        None => {
            *i += 1;
            match args.get(*i) {
                Some(v) if !v.starts_with("--") => v.clone(),
                _ => return Err(format!("argument {}: expected one argument", a.flag)),
            }
        }
    };
    *i += 1;
    values.push((a.flag, convert(a, &raw)?));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(s: &[&str]) -> Parsed {
        parse(&s.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    fn error(p: Parsed) -> (String, String) {
        match p {
            Parsed::Error { usage, message, .. } => (usage, message),
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn commands_and_their_options_parse_in_either_order() {
        let p = parse_all(&[
            "--bootstrap-server",
            "h:1",
            "describe",
            "--transactional-id",
            "x",
        ]);
        assert_eq!(
            p,
            Parsed::Run(Options {
                bootstrap: "h:1".into(),
                command_config: None,
                command: Command::Describe {
                    transactional_id: "x".into()
                },
            })
        );
        let p = parse_all(&[
            "abort",
            "--topic=t",
            "--partition",
            "2",
            "--producer-id",
            "5",
            "--producer-epoch",
            "1",
            "--coordinator-epoch",
            "-1",
            "--bootstrap-server",
            "h:1",
            "--command-config",
            "f.properties",
        ]);
        let Parsed::Run(o) = p else { panic!("{p:?}") };
        assert_eq!(o.command_config.as_deref(), Some("f.properties"));
        assert_eq!(
            o.command,
            Command::Abort {
                topic: "t".into(),
                partition: 2,
                start_offset: None,
                producer_id: Some(5),
                producer_epoch: Some(1),
                coordinator_epoch: Some(-1),
            }
        );
        let Parsed::Run(o) =
            parse_all(&["--bootstrap-server", "h:1", "find-hanging", "--topic", "t"])
        else {
            panic!()
        };
        assert_eq!(
            o.command,
            Command::FindHanging {
                broker_id: None,
                max_transaction_timeout: 15,
                topic: Some("t".into()),
                partition: None
            }
        );
        // An unambiguous prefix is the option, as argparse4j allows.
        let Parsed::Run(o) = parse_all(&["--bootstrap-server", "h:1", "list", "--duration", "-1"])
        else {
            panic!()
        };
        assert_eq!(
            o.command,
            Command::List {
                duration_filter: Some(-1)
            }
        );
    }

    #[test]
    fn errors_are_argparse4js() {
        let (usage, m) = error(parse_all(&["--bootstrap-server", "h:1", "describe"]));
        assert_eq!(m, "argument --transactional-id is required");
        assert_eq!(
            usage,
            "usage: cohort transactions describe [-h] --transactional-id TRANSACTIONAL_ID\n"
        );
        let (usage, m) = error(parse_all(&["describe", "--transactional-id", "x"]));
        assert_eq!(m, "argument --bootstrap-server is required");
        assert_eq!(
            usage,
            "usage: cohort transactions [-h] [-v] [--command-config FILE]\n                           --bootstrap-server host:port COMMAND ...\n"
        );
        assert_eq!(
            error(parse_all(&["--bootstrap-server", "h:1"])).1,
            "too few arguments"
        );
        assert_eq!(
            error(parse_all(&["--bootstrap-server", "h:1", "lst"])).1,
            "invalid choice: 'lst' (choose from 'list', 'describe', 'describe-producers', 'abort', 'find-hanging')"
        );
        assert_eq!(
            error(parse_all(&[
                "--bootstrap-server",
                "h:1",
                "describe-producers",
                "--topic",
                "t",
                "--partition",
                "x"
            ]))
            .1,
            "argument --partition: could not convert 'x' to Integer (For input string: \"x\")"
        );
        assert_eq!(
            error(parse_all(&["--bootstrap-server", "h:1", "abort", "--topic", "t", "--partition", "0", "--producer-epoch", "40000"])).1,
            "argument --producer-epoch: could not convert '40000' to Short (Value out of range. Value:\"40000\" Radix:10)"
        );
        assert_eq!(
            error(parse_all(&[
                "--bootstrap-server",
                "h:1",
                "abort",
                "--topic"
            ]))
            .1,
            "argument --topic: expected one argument"
        );
        assert_eq!(
            error(parse_all(&[
                "--bootstrap-server",
                "h:1",
                "abort",
                "--p",
                "1"
            ]))
            .1,
            "ambiguous option: --p could match --partition, --producer-id, --producer-epoch"
        );
        assert_eq!(
            error(parse_all(&["--bootstrap-server", "h:1", "list", "--all"])).1,
            "unrecognized arguments: '--all'"
        );
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse_all(&["-v"]), Parsed::Version);
        let Parsed::Help(h) = parse_all(&["--bootstrap-server", "h:1", "abort", "-h"]) else {
            panic!()
        };
        assert!(
            h.starts_with("usage: cohort transactions abort [-h] --topic TOPIC"),
            "{h}"
        );
        assert!(h.contains("  --start-offset START_OFFSET\n"), "{h}");
        let Parsed::Help(h) = parse_all(&["-h"]) else {
            panic!()
        };
        assert!(
            h.contains("    find-hanging         find hanging transactions\n"),
            "{h}"
        );
    }
}
