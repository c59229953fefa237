//! `cohort`: the command line. Each subcommand lives in the library; this file only parses and
//! dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// glibc's malloc took a fifth of the broker's CPU under a commit load (its free lists are
// consolidated and searched on every large request); mimalloc's per-thread pages do not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Kafka-compatible broker whose heart is a replicated group coordinator.
#[derive(Debug, Parser)]
#[command(name = "cohort", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process; boxing the large `serve` flags would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the broker.
    Serve(cohort::config::ServeArgs),
    /// Load generators that print figures against a baseline measured in the same run.
    Bench(cohort::bench::BenchArgs),
    /// The Raft cluster: status, add-voter, remove-voter (over any node's Raft port).
    Cluster(cohort::cli::cluster::ClusterArgs),
    // --- operator tools: their arguments are parsed by the tools themselves, with Kafka's own
    // rules, so they pass through clap untouched ---
    /// Consumer groups: kafka-consumer-groups.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Groups {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Topics: kafka-topics.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Topics {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Log directories: kafka-log-dirs.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    LogDirs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Configs of topics, brokers and groups: kafka-configs.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Configs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Records: `--delete` below offsets, kafka-delete-records.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Records {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// ACLs: kafka-acls.sh's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Acls {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// SCRAM users: kafka-configs.sh --entity-type users's flags and output.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Users {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Transactions: kafka-transactions.sh's commands and output (list, describe,
    /// describe-producers, abort, find-hanging).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Transactions {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    // --- end of operator tools ---
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => cohort::server::serve_main(args),
        Command::Bench(args) => cohort::bench::bench_main(args),
        Command::Cluster(args) => exit_code(cohort::cli::cluster::main(args)),
        Command::Groups { args } => exit_code(cohort::cli::groups::main(&args)),
        Command::Topics { args } => exit_code(cohort::cli::topics::main(&args)),
        Command::LogDirs { args } => exit_code(cohort::cli::log_dirs::main(&args)),
        Command::Users { args } => exit_code(cohort::cli::users::main(&args)),
        Command::Acls { args } => exit_code(cohort::cli::acls::main(&args)),
        Command::Configs { args } => exit_code(cohort::cli::configs::main(&args)),
        Command::Records { args } => exit_code(cohort::cli::records::main(&args)),
        Command::Transactions { args } => exit_code(cohort::cli::transactions::main(&args)),
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
