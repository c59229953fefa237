//! `cohort records --delete`: Kafka 4.0's `kafka-delete-records.sh` over Cohort's pure Kafka
//! client. The offset JSON file (`{"partitions":[{"topic":"t","partition":0,"offset":5}],
//! "version":1}`) is read and checked as `DeleteRecordsCommand` checks it, DeleteRecords goes to
//! each partition's leader, and the result prints as the tool prints it:
//!
//! ```text
//! Executing records delete operation
//! Records delete operation completed:
//! partition: t-0<TAB>low_watermark: 5
//! partition: t-1<TAB>error: org.apache.kafka.common.errors.OffsetOutOfRangeException: ...
//! ```
//!
//! (`<TAB>` is one tab.) Partitions print in the iteration order of the Java `HashMap` the tool reads the results
//! from. `--delete` names the action (Kafka's tool has only this one and no flag for it); it may
//! be left out, so a `kafka-delete-records.sh` command line works unchanged. What Kafka's tool
//! lets escape `main` (a bad JSON file, a missing file) is printed as the JVM prints an uncaught
//! exception's first line, `Exception in thread "main" <class>: <message>`, and exits 1.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::Value;

use crate::client::{Admin, ClientConfig, TopicPartition};

use super::entry::warn_unused;
use super::groups::java_order::{self, Construction};
use super::groups::jopt::{self, Arity, Spec};

/// How long the Admin call may take (Kafka's default.api.timeout.ms).
const CALL_TIMEOUT_MS: u64 = 60_000;
/// The largest offset JSON file read.
const JSON_FILE_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// The help line of Kafka's tool.
const HELP_MESSAGE: &str =
    "This tool helps to delete records of the given partitions down to the specified offset.";

/// Every option `cohort records` accepts.
pub const SPECS: &[Spec] = &[
    Spec {
        name: "bootstrap-server",
        arity: Arity::Required,
        available_if: &[],
        described_as: "server(s) to use for bootstrapping",
        doc: "REQUIRED: The server to connect to.",
    },
    Spec {
        name: "offset-json-file",
        arity: Arity::Required,
        available_if: &[],
        described_as: "Offset json file path",
        doc: "REQUIRED: The JSON file with offset per partition. The format to use is:\n{\"partitions\":\n  [{\"topic\": \"foo\", \"partition\": 1, \"offset\": 1}],\n \"version\":1\n}",
    },
    Spec {
        name: "command-config",
        arity: Arity::Required,
        available_if: &[],
        described_as: "command config property file path",
        doc: "A property file containing configs to be passed to Admin Client.",
    },
    Spec {
        name: "delete",
        arity: Arity::None,
        available_if: &[],
        described_as: "",
        doc: "Delete the records below the given offsets (the only action; may be left out).",
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

/// Runs `cohort records` with `args` on the process's stdout and stderr; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// Runs `cohort records` with `args`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let parsed = match jopt::parse(SPECS, args) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "Exception in thread \"main\" {e}");
            return 1;
        }
    };
    let usage = |err: &mut dyn Write, m: &str| {
        let _ = writeln!(err, "{m}");
        let _ = err.write_all(jopt::help(SPECS).as_bytes());
        1
    };
    if parsed.arg_count == 0 || parsed.has("help") {
        return usage(err, HELP_MESSAGE);
    }
    if parsed.has("version") {
        let _ = writeln!(out, "{}", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    for required in ["bootstrap-server", "offset-json-file"] {
        if !parsed.has(required) {
            return usage(
                err,
                &format!(
                    "Missing required argument \"{}\"",
                    jopt::spec_name(required)
                ),
            );
        }
    }
    let uncaught = |err: &mut dyn Write, m: &str| {
        let _ = writeln!(err, "Exception in thread \"main\" {m}");
        1
    };
    let config = match ClientConfig::for_tool(
        parsed.value("bootstrap-server").unwrap_or_default(),
        parsed.value("command-config"),
        &[],
    ) {
        Ok((config, unused)) => {
            warn_unused(err, &unused);
            config
        }
        Err(e) => return uncaught(err, &e.java_string()),
    };
    let path = parsed.value("offset-json-file").unwrap_or_default();
    let text = match read_file(path) {
        Ok(t) => t,
        Err(m) => return uncaught(err, &m),
    };
    let wanted = match parse_offsets(&text) {
        Ok(w) => w,
        Err(m) => return uncaught(err, &m),
    };
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    let _ = writeln!(out, "Executing records delete operation");
    let before: BTreeMap<TopicPartition, i64> = wanted.iter().cloned().collect();
    let results = match admin.delete_records(&before).await {
        Ok(r) => r,
        Err(e) => {
            // Every partition's future fails with the call's exception.
            let _ = writeln!(out, "Records delete operation completed:");
            for tp in order(&wanted) {
                let _ = writeln!(out, "partition: {tp}\terror: {}", e.java_string());
            }
            return 0;
        }
    };
    let _ = writeln!(out, "Records delete operation completed:");
    for tp in order(&wanted) {
        let line = match results.get(&tp) {
            Some(Ok(low)) => format!("partition: {tp}\tlow_watermark: {low}"),
            Some(Err(e)) => format!("partition: {tp}\terror: {}", e.java_string()),
            None => format!(
                "partition: {tp}\terror: org.apache.kafka.common.errors.UnknownServerException: no answer for {tp}"
            ),
        };
        let _ = writeln!(out, "{line}");
    }
    0
}

/// The iteration order of the tool's result map (`HashMap`s built by default).
fn order(wanted: &[(TopicPartition, i64)]) -> Vec<TopicPartition> {
    java_order::topic_partitions(
        Construction::Default,
        wanted.iter().map(|(tp, _)| tp.clone()),
    )
}

/// `Utils.readFileAsString`, bounded.
fn read_file(path: &str) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|_| format!("java.nio.file.NoSuchFileException: {path}"))?;
    let mut text = String::new();
    file.take(JSON_FILE_BYTES_MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("java.io.IOException: {path}: {e}"))?;
    if text.len() as u64 > JSON_FILE_BYTES_MAX {
        return Err(format!(
            "java.io.IOException: {path} is larger than {JSON_FILE_BYTES_MAX} bytes"
        ));
    }
    Ok(text)
}

const ADMIN_OPERATION: &str = "org.apache.kafka.server.common.AdminOperationException";
const JSON_MAPPING: &str = "com.fasterxml.jackson.databind.JsonMappingException";

fn expected(kind: &str, v: &Value) -> String {
    format!("{JSON_MAPPING}: Expected `{kind}` value, received {v}")
}

fn field<'a>(object: &'a serde_json::Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    object
        .get(name)
        .ok_or_else(|| format!("{JSON_MAPPING}: No such field exists: `{name}`"))
}

/// Jackson's `isInt`: an integral number that fits an `int`.
fn as_int(v: &Value) -> Result<i32, String> {
    v.as_i64()
        .filter(|_| v.is_i64() || v.is_u64())
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| expected("Integer", v))
}

/// `DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup` and its duplicate check: the
/// partitions and offsets in file order, or the exception the tool would throw.
pub fn parse_offsets(text: &str) -> Result<Vec<(TopicPartition, i64)>, String> {
    let js: Value = serde_json::from_str(text)
        .map_err(|_| format!("{ADMIN_OPERATION}: The input string is not a valid JSON"))?;
    let object = js
        .as_object()
        .ok_or_else(|| format!("{JSON_MAPPING}: Expected JSON object, received {js}"))?;
    let version = match object.get("version") {
        Some(v) => as_int(v)?,
        None => 1,
    };
    if version != 1 {
        return Err(format!(
            "{ADMIN_OPERATION}: Not supported version field value {version}"
        ));
    }
    let partitions = object
        .get("partitions")
        .ok_or_else(|| format!("{ADMIN_OPERATION}: Missing partitions field"))?;
    let list = partitions
        .as_array()
        .ok_or_else(|| format!("{JSON_MAPPING}: Expected JSON array, received {partitions}"))?;
    let mut out: Vec<(TopicPartition, i64)> = Vec::new();
    let mut duplicates: Vec<TopicPartition> = Vec::new();
    for p in list {
        let p_object = p
            .as_object()
            .ok_or_else(|| format!("{JSON_MAPPING}: Expected JSON object, received {p}"))?;
        let topic_value = field(p_object, "topic")?;
        let topic = topic_value
            .as_str()
            .ok_or_else(|| expected("String", topic_value))?;
        let partition = as_int(field(p_object, "partition")?)?;
        let offset_value = field(p_object, "offset")?;
        let offset = offset_value
            .as_i64()
            .ok_or_else(|| expected("Long", offset_value))?;
        let tp = TopicPartition::new(topic, partition);
        if out.iter().any(|(seen, _)| *seen == tp) {
            if !duplicates.contains(&tp) {
                duplicates.push(tp);
            }
        } else {
            out.push((tp, offset));
        }
    }
    if !duplicates.is_empty() {
        let listed: Vec<String> = java_order::topic_partitions(Construction::Default, duplicates)
            .iter()
            .map(|tp| tp.to_string())
            .collect();
        return Err(format!(
            "org.apache.kafka.server.common.AdminCommandFailedException: Offset json file contains duplicate topic partitions: {}",
            listed.join(",")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_files_parse_as_kafkas_tool_parses_them() {
        assert_eq!(
            parse_offsets(
                r#"{"partitions":[{"topic":"t","partition":0,"offset":5},{"topic":"t","partition":1,"offset":-1}],"version":1}"#
            ),
            Ok(vec![
                (TopicPartition::new("t", 0), 5),
                (TopicPartition::new("t", 1), -1)
            ])
        );
        // The version defaults to 1.
        assert!(parse_offsets(r#"{"partitions":[]}"#).is_ok());
        assert_eq!(
            parse_offsets("{nope"),
            Err("org.apache.kafka.server.common.AdminOperationException: The input string is not a valid JSON".into())
        );
        assert_eq!(
            parse_offsets(r#"{"partitions":[],"version":2}"#),
            Err("org.apache.kafka.server.common.AdminOperationException: Not supported version field value 2".into())
        );
        assert_eq!(
            parse_offsets(r#"{"version":1}"#),
            Err(
                "org.apache.kafka.server.common.AdminOperationException: Missing partitions field"
                    .into()
            )
        );
        assert_eq!(
            parse_offsets(r#"{"partitions":[{"topic":"t","offset":1}]}"#),
            Err("com.fasterxml.jackson.databind.JsonMappingException: No such field exists: `partition`".into())
        );
        assert_eq!(
            parse_offsets(r#"{"partitions":[{"topic":"t","partition":"0","offset":1}]}"#),
            Err("com.fasterxml.jackson.databind.JsonMappingException: Expected `Integer` value, received \"0\"".into())
        );
        assert_eq!(
            parse_offsets(r#"{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}]}"#),
            Err("org.apache.kafka.server.common.AdminCommandFailedException: Offset json file contains duplicate topic partitions: t-0".into())
        );
    }
}
