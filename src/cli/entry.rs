//! What the `cohort` admin tools share around their own work, as Kafka's tools do: how a run of
//! option checking ends (the usage text, an exception's message, `--version`), the
//! single-threaded runtime on the process's stdout and stderr, and the warning about
//! `--command-config` properties nobody used.

use std::future::Future;
use std::io::{StderrLock, StdoutLock, Write};

/// What checking a tool's options decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked<T> {
    /// Run the action.
    Run(T),
    /// Print the message and the help on stderr, exit 1 (`printUsageAndExit`).
    Usage(String),
    /// An exception escaped option handling: its message on stderr, exit 1.
    Failure(String),
    /// `--version`: the version on stdout, exit 0.
    Version,
}

impl<T> Checked<T> {
    /// The options to run with, or the exit code once the usage, failure or version is printed.
    pub fn or_exit(self, help: &str, out: &mut dyn Write, err: &mut dyn Write) -> Result<T, i32> {
        match self {
            Checked::Run(options) => Ok(options),
            Checked::Usage(m) => {
                let _ = writeln!(err, "{m}");
                let _ = err.write_all(help.as_bytes());
                Err(1)
            }
            Checked::Failure(m) => {
                let _ = writeln!(err, "{m}");
                Err(1)
            }
            Checked::Version => {
                let _ = writeln!(out, "{}", env!("CARGO_PKG_VERSION"));
                Err(0)
            }
        }
    }
}

/// Runs a tool on the process's stdout and stderr in a single-threaded runtime; returns its
/// exit code.
pub fn run_on_stdio<F, Fut>(tool: F) -> i32
where
    F: FnOnce(StdoutLock<'static>, StderrLock<'static>) -> Fut,
    Fut: Future<Output = i32>,
{
    let out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "cannot start the async runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(tool(out, err))
}

/// Kafka's warning for `--command-config` properties the client does not use.
pub fn warn_unused(err: &mut dyn Write, unused: &[String]) {
    if !unused.is_empty() {
        let _ = writeln!(
            err,
            "WARN These configurations '[{}]' were supplied but are not used yet.",
            unused.join(", ")
        );
    }
}
