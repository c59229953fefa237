//! What every action of `cohort groups` shares: the admin client, the output streams, and how a
//! run stops early — a usage error (exit 1) or the catch-all failure Kafka's tool prints as
//! `Error: Executing consumer group command failed due to ...` (and still exits 0).

use std::io::Write;

use crate::client::{Admin, ClientError};

use super::options::GroupsOptions;

/// How a run ends early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// `printUsageAndExit`: the message and the help on stderr, exit code 1.
    Usage(String),
    /// The tool's catch-all: the message on stdout after `Error: Executing consumer group command
    /// failed due to `, the exception on stderr (where Java prints its stack trace), exit code 0.
    Failed {
        /// `Throwable.getMessage()` of what was thrown.
        message: String,
        /// `Throwable.toString()` of it.
        trace: String,
    },
}

impl Stop {
    /// An Admin failure surfacing through `KafkaFuture.get()`: an `ExecutionException` whose
    /// message is the cause's `toString()`.
    pub fn from_future(e: &ClientError) -> Stop {
        let cause = e.java_string();
        Stop::Failed {
            trace: format!("java.util.concurrent.ExecutionException: {cause}"),
            message: cause,
        }
    }

    /// An Admin failure the tool wrapped in `new RuntimeException(executionException)`.
    pub fn from_runtime(e: &ClientError) -> Stop {
        let message = format!(
            "java.util.concurrent.ExecutionException: {}",
            e.java_string()
        );
        Stop::Failed {
            trace: format!("java.lang.RuntimeException: {message}"),
            message,
        }
    }

    /// Any other exception, given its `toString()` (`class: message`).
    pub fn exception(text: String) -> Stop {
        let message = match text.split_once(": ") {
            Some((_, m)) => m.to_string(),
            None => text.clone(),
        };
        Stop::Failed {
            message,
            trace: text,
        }
    }

    /// An exception the tool wrapped in `new RuntimeException(e)`: its message is `e.toString()`.
    pub fn wrapped(text: String) -> Stop {
        Stop::Failed {
            trace: format!("java.lang.RuntimeException: {text}"),
            message: text,
        }
    }
}

/// Result of one step of a run.
pub type Step<T> = Result<T, Stop>;

/// The streams a run writes to.
pub struct Console<'a> {
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Standard error.
    pub err: &'a mut dyn Write,
    /// Whether to show progress on stderr (stdout is a terminal).
    pub progress: bool,
}

impl Console<'_> {
    /// Writes to stdout; a closed pipe is not an error worth reporting.
    pub fn out(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
    }

    /// Writes to stderr.
    pub fn err(&mut self, text: &str) {
        let _ = self.err.write_all(text.as_bytes());
    }

    /// A progress line on stderr (`\r`-rewritten), only when stdout is a terminal.
    pub fn progress(&mut self, what: &str, done: usize, total: usize) {
        if self.progress && total > 1 {
            let _ = write!(self.err, "\r{what}: {done}/{total}");
            if done == total {
                let _ = writeln!(self.err);
            }
            let _ = self.err.flush();
        }
    }
}

/// One run: options, client, output.
pub struct Run<'a, 'c> {
    /// The checked options.
    pub options: &'a GroupsOptions,
    /// The admin client, bootstrapped lazily.
    pub admin: Admin,
    /// Output streams.
    pub console: &'a mut Console<'c>,
}
