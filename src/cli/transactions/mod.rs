//! `cohort transactions`: Kafka 4.0's `kafka-transactions.sh` (`TransactionsCommand`, KIP-664)
//! over Cohort's pure Kafka client (decision 0150): the same commands, options, tables,
//! messages and exit codes.
//!
//! ```text
//!  --bootstrap-server H:P list [--duration-filter MS]         one row per transaction
//!  --bootstrap-server H:P describe --transactional-id ID       its coordinator's view
//!  --bootstrap-server H:P describe-producers --topic T --partition P [--broker-id N]
//!  --bootstrap-server H:P abort --topic T --partition P --start-offset O
//!                          (or --producer-id I --producer-epoch E --coordinator-epoch C)
//!  --bootstrap-server H:P find-hanging (--broker-id N | --topic T [--partition P])
//!                          [--max-transaction-timeout MIN]
//! ```
//!
//! Tables are `ToolsUtils.prettyPrintTable`'s on stdout; a failed call prints
//! `<what failed>: <cause>. Enable debug logging for additional detail.` on stderr and exits 1,
//! as `printErrorAndExit` does. Where Kafka prints a Java hash set or map in no fixed order
//! (describe's partitions, find-hanging's producers) this prints them sorted.

pub mod args;
pub mod commands;
pub mod hanging;
pub mod table;

use std::io::Write;

use crate::client::{Admin, ClientConfig, TopicPartition};
use args::{Command, Parsed};

/// A message for stderr; the tool exits 1 (Kafka's `printErrorAndExit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

/// Milliseconds since the epoch, Kafka's `Time.SYSTEM.milliseconds()`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs `cohort transactions` with `args` on the process's stdout and stderr.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// Runs `cohort transactions` with `args`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let options = match args::parse(args) {
        Parsed::Run(o) => o,
        Parsed::Help(text) => {
            let _ = out.write_all(text.as_bytes());
            return 0;
        }
        Parsed::Version => {
            let _ = writeln!(out, "{}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Parsed::Error {
            prog,
            usage,
            message,
        } => {
            let _ = err.write_all(usage.as_bytes());
            let _ = writeln!(err, "{prog}: error: {message}");
            return 1;
        }
    };
    let result = match admin_for(&options, err) {
        Ok(mut admin) => execute(&mut admin, options.command, out).await,
        Err(f) => Err(f),
    };
    match result {
        Ok(()) => 0,
        Err(Failure(message)) => {
            let _ = writeln!(err, "{message}");
            1
        }
    }
}

fn admin_for(options: &args::Options, err: &mut dyn Write) -> Result<Admin, Failure> {
    let (config, unused) =
        ClientConfig::for_tool(&options.bootstrap, options.command_config.as_deref(), &[])
            .map_err(|e| {
                commands::with_cause("Failed to load admin client properties", &e.java_message())
            })?;
    super::entry::warn_unused(err, &unused);
    Ok(Admin::new(config))
}

async fn execute(admin: &mut Admin, command: Command, out: &mut dyn Write) -> Result<(), Failure> {
    match command {
        Command::List { duration_filter } => commands::list(admin, duration_filter, out).await,
        Command::Describe { transactional_id } => {
            commands::describe(admin, &transactional_id, out).await
        }
        Command::DescribeProducers {
            topic,
            partition,
            broker_id,
        } => {
            let tp = TopicPartition::new(topic, partition);
            commands::describe_producers(admin, &tp, broker_id, out).await
        }
        Command::Abort {
            topic,
            partition,
            start_offset,
            producer_id,
            producer_epoch,
            coordinator_epoch,
        } => {
            let tp = TopicPartition::new(topic, partition);
            let target = commands::abort_target(
                &tp,
                start_offset,
                producer_id,
                producer_epoch,
                coordinator_epoch,
            )?;
            commands::abort(admin, &tp, target).await
        }
        Command::FindHanging {
            broker_id,
            max_transaction_timeout,
            topic,
            partition,
        } => {
            hanging::find_hanging(
                admin,
                broker_id,
                topic.as_deref(),
                partition,
                max_transaction_timeout,
                out,
            )
            .await
        }
    }
}
