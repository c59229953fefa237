//! A command-line parser with the rules of jopt-simple, the library behind Kafka's tools, so that
//! `cohort groups` and `cohort topics` accept exactly the arguments `kafka-consumer-groups.sh` and
//! `kafka-topics.sh` accept and reject the rest with the same words:
//!
//! - options are long only: `--name`, `--name value`, `--name=value`; no abbreviations;
//! - an option with a required argument takes the next word whatever it looks like;
//! - an option with an optional argument takes the next word only if it is not an option;
//! - `--` ends the options; other words are non-option arguments, kept and ignored;
//! - an option can be declared available only together with certain others.

use std::collections::BTreeMap;

use super::java_order::{self, Construction};

/// Whether an option takes an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// A flag.
    None,
    /// `--opt value` is mandatory.
    Required,
    /// `--opt [value]`.
    Optional,
}

/// One accepted option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The long name without dashes.
    pub name: &'static str,
    /// Its argument.
    pub arity: Arity,
    /// The option is rejected unless one of these is present too (jopt-simple's `availableIf`).
    pub available_if: &'static [&'static str],
    /// What the argument is, for the help text (`describedAs`).
    pub described_as: &'static str,
    /// Help text.
    pub doc: &'static str,
}

/// What jopt-simple throws; rendered the way the JVM prints an uncaught exception's first line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// An option nobody declared.
    #[error("joptsimple.UnrecognizedOptionException: {0} is not a recognized option")]
    Unrecognized(String),
    /// A required argument is missing at the end of the line.
    #[error("joptsimple.OptionMissingRequiredArgumentException: Option {0} requires an argument")]
    MissingArgument(String),
    /// Options used without the ones they need (`availableIf`).
    #[error("joptsimple.UnavailableOptionException: Option(s) {0} are unavailable given other options on the command line")]
    Unavailable(String),
}

impl ParseError {
    /// The exception's message without its class name, as Kafka's tools print a parse failure.
    pub fn message(&self) -> String {
        let text = self.to_string();
        text.split_once(": ")
            .map(|(_, m)| m.to_string())
            .unwrap_or(text)
    }
}

/// An option with no `availableIf` condition.
pub const fn spec(
    name: &'static str,
    arity: Arity,
    described_as: &'static str,
    doc: &'static str,
) -> Spec {
    Spec {
        name,
        arity,
        available_if: &[],
        described_as,
        doc,
    }
}

/// The result of parsing: options in the order seen, with their arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    values: BTreeMap<&'static str, Vec<Option<String>>>,
    /// Words that are not options.
    pub non_options: Vec<String>,
    /// How many words were given at all.
    pub arg_count: usize,
}

impl Parsed {
    /// Whether the option appeared.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The first argument given to the option, if any.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.iter().flatten().next())
            .map(String::as_str)
    }

    /// All arguments given to the option, in order.
    pub fn values(&self, name: &str) -> Vec<String> {
        self.values
            .get(name)
            .map(|v| v.iter().flatten().cloned().collect())
            .unwrap_or_default()
    }
}

/// Parses `args` against `specs`.
pub fn parse(specs: &[Spec], args: &[String]) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed {
        arg_count: args.len(),
        ..Parsed::default()
    };
    let mut i = 0;
    let mut options_ended = false;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if options_ended {
            parsed.non_options.push(word.clone());
            continue;
        }
        if word == "--" {
            options_ended = true;
            continue;
        }
        let Some(body) = word
            .strip_prefix("--")
            .or_else(|| word.strip_prefix('-').filter(|rest| !rest.is_empty()))
        else {
            parsed.non_options.push(word.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let spec = specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| ParseError::Unrecognized(name.to_string()))?;
        let value = match spec.arity {
            Arity::None => {
                if inline.is_some() {
                    return Err(ParseError::Unrecognized(body.to_string()));
                }
                None
            }
            Arity::Required => match inline {
                Some(v) => Some(v),
                None => {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| ParseError::MissingArgument(spec.name.to_string()))?;
                    i += 1;
                    Some(v)
                }
            },
            Arity::Optional => match inline {
                Some(v) => Some(v),
                None => match args.get(i) {
                    Some(next) if !looks_like_option(next) => {
                        i += 1;
                        Some(next.clone())
                    }
                    _ => None,
                },
            },
        };
        parsed.values.entry(spec.name).or_default().push(value);
    }
    let unavailable: Vec<&str> = specs
        .iter()
        .filter(|s| parsed.has(s.name) && !s.available_if.is_empty())
        .filter(|s| !s.available_if.iter().any(|other| parsed.has(other)))
        .map(|s| s.name)
        .collect();
    if !unavailable.is_empty() {
        return Err(ParseError::Unavailable(format!(
            "[{}]",
            unavailable.join(", ")
        )));
    }
    Ok(parsed)
}

fn looks_like_option(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1
}

/// jopt-simple's rendering of an option spec in messages: `[name]`.
pub fn spec_name(name: &str) -> String {
    format!("[{name}]")
}

/// Java's `List<String>.hashCode()` of a one-element list: how jopt-simple hashes an option spec.
fn spec_hash(name: &str) -> i32 {
    31i32.wrapping_add(java_order::string_hash(name))
}

/// The iteration order of a `HashSet<OptionSpec>` built from `names` (`new HashSet<>(asList(..))`),
/// which decides the order of option lists in Kafka's usage messages.
pub fn hash_set_order(names: &[&'static str]) -> Vec<&'static str> {
    java_order::order_by(
        Construction::HashSetOf(names.len()),
        names.iter().copied(),
        |n| spec_hash(n),
    )
}

/// `ToolsUtils.minus(set, ...)`: a copy of the set without some options, in its iteration order.
pub fn hash_set_minus(names: &[&'static str], remove: &[&str]) -> Vec<&'static str> {
    let kept: Vec<&'static str> = hash_set_order(names)
        .into_iter()
        .filter(|n| !remove.contains(n))
        .collect();
    java_order::order_by(Construction::HashSetOf(names.len()), kept, |n| spec_hash(n))
}

/// Help text in jopt-simple's two-column layout.
pub fn help(specs: &[Spec]) -> String {
    let mut rows: Vec<(String, &str)> = specs
        .iter()
        .map(|s| {
            let left = match s.arity {
                Arity::None => format!("--{}", s.name),
                Arity::Required => format!("--{} <{}>", s.name, s.described_as),
                Arity::Optional => format!("--{} [{}]", s.name, s.described_as),
            };
            (left, s.doc)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let width = rows
        .iter()
        .map(|(l, _)| l.len())
        .max()
        .unwrap_or(6)
        .clamp(6, 38);
    let mut out = format!("{:<width$}  Description\n", "Option");
    out.push_str(&format!("{:<width$}  -----------\n", "------"));
    for (left, doc) in rows {
        let mut lines = wrap(doc, 78usize.saturating_sub(width + 2).max(20));
        if lines.is_empty() {
            lines.push(String::new());
        }
        if left.len() > width {
            out.push_str(&left);
            out.push('\n');
            for line in lines {
                out.push_str(&format!("{:<width$}  {line}\n", ""));
            }
        } else {
            for (n, line) in lines.into_iter().enumerate() {
                let l = if n == 0 { left.as_str() } else { "" };
                out.push_str(&format!("{l:<width$}  {line}\n"));
            }
        }
    }
    out
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[Spec] = &[
        Spec {
            name: "describe",
            arity: Arity::None,
            available_if: &[],
            described_as: "",
            doc: "Describe.",
        },
        Spec {
            name: "group",
            arity: Arity::Required,
            available_if: &[],
            described_as: "consumer group",
            doc: "The group.",
        },
        Spec {
            name: "state",
            arity: Arity::Optional,
            available_if: &["describe", "list"],
            described_as: "String",
            doc: "State.",
        },
        Spec {
            name: "list",
            arity: Arity::None,
            available_if: &[],
            described_as: "",
            doc: "List.",
        },
    ];

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn required_arguments_take_the_next_word_whatever_it_is() {
        let p = parse(SPECS, &args(&["--group", "--describe", "--group=g2"])).unwrap();
        assert_eq!(p.values("group"), vec!["--describe", "g2"]);
        assert!(!p.has("describe"));
    }

    #[test]
    fn optional_arguments_skip_options() {
        let p = parse(SPECS, &args(&["--list", "--state", "--group", "g"])).unwrap();
        assert!(p.has("state"));
        assert_eq!(p.value("state"), None);
        let p = parse(SPECS, &args(&["--list", "--state", "stable,empty"])).unwrap();
        assert_eq!(p.value("state"), Some("stable,empty"));
    }

    #[test]
    fn errors_read_like_jopt_simple() {
        assert_eq!(
            parse(SPECS, &args(&["--zookeeper", "x"]))
                .unwrap_err()
                .to_string(),
            "joptsimple.UnrecognizedOptionException: zookeeper is not a recognized option"
        );
        assert_eq!(
            parse(SPECS, &args(&["--group"])).unwrap_err().to_string(),
            "joptsimple.OptionMissingRequiredArgumentException: Option group requires an argument"
        );
        assert_eq!(
            parse(SPECS, &args(&["--state"])).unwrap_err().to_string(),
            "joptsimple.UnavailableOptionException: Option(s) [state] are unavailable given other options on the command line"
        );
        assert!(
            parse(SPECS, &args(&["--desc"])).is_err(),
            "no abbreviations"
        );
    }

    #[test]
    fn non_options_and_double_dash_are_kept_aside() {
        let p = parse(SPECS, &args(&["stray", "--list", "--", "--group"])).unwrap();
        assert_eq!(p.non_options, vec!["stray", "--group"]);
        assert!(p.has("list"));
        assert!(!p.has("group"));
    }

    #[test]
    fn spec_sets_iterate_like_java_hash_sets() {
        // Computed from Java's hashing of one-element lists: 31 + name.hashCode().
        assert_eq!(
            hash_set_order(&["group", "all-groups"]),
            vec!["all-groups", "group"]
        );
        assert_eq!(hash_set_order(&["group", "topic"]), vec!["topic", "group"]);
        assert_eq!(
            hash_set_order(&["list", "describe", "delete", "reset-offsets"]),
            vec!["reset-offsets", "describe", "delete", "list"]
        );
        assert_eq!(
            hash_set_minus(&["list", "describe", "delete", "reset-offsets"], &["list"]),
            vec!["reset-offsets", "describe", "delete"]
        );
    }

    #[test]
    fn help_lists_every_option() {
        let h = help(SPECS);
        assert!(h.starts_with("Option"));
        for s in SPECS {
            assert!(h.contains(&format!("--{}", s.name)));
        }
    }
}
