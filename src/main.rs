//! `cohort`: the command line. Each subcommand lives in the library; this file only parses and
//! dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A Kafka-compatible broker whose heart is a replicated group coordinator.
#[derive(Debug, Parser)]
#[command(name = "cohort", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the broker.
    Serve(cohort::config::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => cohort::server::serve_main(args),
    }
}
