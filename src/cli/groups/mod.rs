//! `cohort groups`: Kafka's `kafka-consumer-groups.sh` (4.0 era) with the same flags, output and
//! exit codes, over Cohort's pure Kafka client; plus `--lag-status`.
//!
//! ```text
//!   args ─► options::check (jopt-simple rules, checkArgs messages) ─► Run
//!        ─► list / describe / reset / delete (client calls, Kafka's row order via java_order)
//!        ─► format (pure: exact tables and messages) ─► stdout / stderr
//! ```
//! Exit codes follow Kafka: 1 for usage errors and parse failures, 0 otherwise, even when the
//! command reports `Error: Executing consumer group command failed due to ...`.

pub mod context;
pub mod delete;
pub mod describe;
pub mod format;
pub mod java_order;
pub mod jopt;
pub mod list;
pub mod options;
pub mod reset;
pub mod reset_plan;
pub mod timeparse;

use std::io::IsTerminal;
use std::time::Duration;

use crate::client::config::read_properties_file;
use crate::client::{Admin, ClientConfig};

use context::{Console, Run, Stop};
use options::{Action, Checked, GroupsOptions};

/// Runs `cohort groups` with `args` on the process's stdout and stderr; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let progress = stdout.is_terminal();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let mut console = Console {
        out: &mut out,
        err: &mut err,
        progress,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            console.err(&format!("cannot start the async runtime: {e}\n"));
            return 1;
        }
    };
    runtime.block_on(run(args, &mut console))
}

fn usage(console: &mut Console<'_>, message: &str) {
    console.err(&format!("{message}\n"));
    console.err(&options::help());
}

/// Runs `cohort groups` with `args` on `console`; returns the exit code.
pub async fn run(args: &[String], console: &mut Console<'_>) -> i32 {
    let (options, warnings) = match options::check(args) {
        Checked::ParseFailure(m) => {
            console.err(&format!("Exception in thread \"main\" {m}\n"));
            return 1;
        }
        Checked::Usage(m) => {
            usage(console, &m);
            return 1;
        }
        Checked::Version => {
            console.out(&format!("{}\n", env!("CARGO_PKG_VERSION")));
            return 0;
        }
        Checked::Run { options, warnings } => (options, warnings),
    };
    for w in warnings {
        console.err(&format!("{w}\n"));
    }
    let result = match admin_for(&options, console) {
        Ok(admin) => {
            let mut run = Run {
                options: &options,
                admin,
                console,
            };
            match options.action {
                Action::List => run.list().await,
                Action::Describe => run.describe().await,
                Action::Delete => run.delete_groups().await,
                Action::ResetOffsets => run.reset_offsets().await,
                Action::DeleteOffsets => run.delete_offsets().await,
            }
        }
        Err(stop) => Err(stop),
    };
    match result {
        Ok(()) => 0,
        Err(Stop::Usage(m)) => {
            usage(console, &m);
            1
        }
        Err(Stop::Failed { message, trace }) => {
            console.out(&format!(
                "\nError: Executing consumer group command failed due to {message}\n"
            ));
            console.err(&format!("{trace}\n"));
            0
        }
    }
}

/// Longest `--timeout` accepted: Kafka takes it as an int of milliseconds.
const TIMEOUT_MS_MAX: u64 = i32::MAX as u64;

fn admin_for(options: &GroupsOptions, console: &mut Console<'_>) -> Result<Admin, Stop> {
    let mut config = ClientConfig::new(options.bootstrap_server()).map_err(|e| {
        Stop::Failed {
            message: "Failed to create new KafkaAdminClient".to_string(),
            trace: format!("org.apache.kafka.common.KafkaException: Failed to create new KafkaAdminClient\nCaused by: {}", e.java_string()),
        }
    })?;
    if let Some(path) = options.value("command-config") {
        let props = read_properties_file(path)
            .map_err(|e| Stop::wrapped(format!("java.io.IOException: {}", e.java_message())))?;
        let unused = config.apply_properties(&props).map_err(|e| Stop::Failed {
            message: "Failed to create new KafkaAdminClient".to_string(),
            trace: e.java_string(),
        })?;
        if !unused.is_empty() {
            console.err(&format!(
                "WARN These configurations '[{}]' were supplied but are not used yet.\n",
                unused.join(", ")
            ));
        }
    }
    let timeout = match options.value("timeout") {
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|t| *t <= TIMEOUT_MS_MAX)
            .ok_or_else(|| {
                Stop::exception(format!(
                    "joptsimple.OptionArgumentConversionException: Cannot parse argument '{v}' of option timeout"
                ))
            })?,
        None => 5_000,
    };
    let mut admin = Admin::new(config);
    admin.set_call_timeout(Duration::from_millis(timeout));
    Ok(admin)
}

#[cfg(test)]
mod tests;
