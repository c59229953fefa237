//! The options of `cohort log-dirs`, with the checks and messages of Kafka 4.0's
//! `LogDirsCommand.LogDirsCommandOptions`.

use super::super::groups::jopt::{self, Arity, Parsed, Spec};

/// Every option `cohort log-dirs` accepts.
pub const SPECS: &[Spec] = &[
    Spec {
        name: "bootstrap-server",
        arity: Arity::Required,
        available_if: &[],
        described_as: "The server(s) to use for bootstrapping",
        doc: "REQUIRED: the server(s) to use for bootstrapping",
    },
    Spec {
        name: "command-config",
        arity: Arity::Required,
        available_if: &[],
        described_as: "Admin client property file",
        doc: "Property file containing configs to be passed to Admin Client.",
    },
    Spec {
        name: "describe",
        arity: Arity::None,
        available_if: &[],
        described_as: "",
        doc: "Describe the specified log directories on the specified brokers.",
    },
    Spec {
        name: "topic-list",
        arity: Arity::Required,
        available_if: &[],
        described_as: "Topic list",
        doc: "The list of topics to be queried in the form \"topic1,topic2,topic3\". All topics will be queried if no topic list is specified",
    },
    Spec {
        name: "broker-list",
        arity: Arity::Required,
        available_if: &[],
        described_as: "Broker list",
        doc: "The list of brokers to be queried in the form \"0,1,2\". All brokers in the cluster will be queried if no broker list is specified",
    },
    Spec {
        name: "help",
        arity: Arity::None,
        available_if: &[],
        described_as: "",
        doc: "Print usage information.",
    },
    Spec {
        name: "version",
        arity: Arity::None,
        available_if: &[],
        described_as: "",
        doc: "Display Kafka version.",
    },
];

/// What checking decided.
pub type Checked = crate::cli::entry::Checked<Box<LogDirsOptions>>;

/// Parsed options of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDirsOptions {
    /// What jopt-simple parsed.
    pub parsed: Parsed,
}

impl LogDirsOptions {
    /// An option's first value.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.parsed.value(name)
    }

    /// `--topic-list` split at commas, empty names dropped (Kafka's
    /// `splitAtCommasAndFilterOutEmpty`; names are not trimmed).
    pub fn topics(&self) -> Vec<String> {
        split(self.value("topic-list").unwrap_or_default())
    }

    /// `--broker-list` the same way, each parsed as Java's `Integer.valueOf` does (no blanks
    /// allowed); the error is Java's `NumberFormatException` message.
    pub fn brokers(&self) -> Result<Vec<i32>, String> {
        split(self.value("broker-list").unwrap_or_default())
            .into_iter()
            .map(|b| {
                b.parse::<i32>()
                    .map_err(|_| format!("For input string: \"{b}\""))
            })
            .collect()
    }
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|x| !x.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses and checks `args` as Kafka's `LogDirsCommandOptions` does.
pub fn check(args: &[String]) -> Checked {
    let parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => return Checked::Failure(e.message()),
    };
    if parsed.arg_count == 0 || parsed.has("help") {
        return Checked::Usage(
            "This tool helps to query log directory usage on the specified brokers.".to_string(),
        );
    }
    if parsed.has("version") {
        return Checked::Version;
    }
    for required in ["bootstrap-server", "describe"] {
        if !parsed.has(required) {
            return Checked::Usage(format!(
                "Missing required argument \"{}\"",
                jopt::spec_name(required)
            ));
        }
    }
    Checked::Run(Box::new(LogDirsOptions { parsed }))
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
    fn argument_errors_read_like_kafka_log_dirs() {
        let usage = "This tool helps to query log directory usage on the specified brokers.";
        assert_eq!(check_words(""), Checked::Usage(usage.into()));
        assert_eq!(check_words("--help"), Checked::Usage(usage.into()));
        assert_eq!(check_words("--version"), Checked::Version);
        assert_eq!(
            check_words("--describe"),
            Checked::Usage("Missing required argument \"[bootstrap-server]\"".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1"),
            Checked::Usage("Missing required argument \"[describe]\"".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --bogus"),
            Checked::Failure("bogus is not a recognized option".into())
        );
        assert_eq!(
            check_words("--bootstrap-server h:1 --describe --topic-list"),
            Checked::Failure("Option topic-list requires an argument".into())
        );
    }

    #[test]
    fn lists_split_at_commas_as_kafka_does() {
        let Checked::Run(o) =
            check_words("--bootstrap-server h:1 --describe --topic-list a,,b, --broker-list 3,1")
        else {
            panic!()
        };
        assert_eq!(o.topics(), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(o.brokers(), Ok(vec![3, 1]));
        let Checked::Run(o) = check_words("--bootstrap-server h:1 --describe --broker-list 1,x")
        else {
            panic!()
        };
        assert_eq!(o.brokers(), Err("For input string: \"x\"".into()));
        let Checked::Run(o) = check_words("--bootstrap-server h:1 --describe") else {
            panic!()
        };
        assert!(o.topics().is_empty());
        assert_eq!(o.brokers(), Ok(vec![]));
    }
}
