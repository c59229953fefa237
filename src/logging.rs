//! The log an operator reads: what is logged at INFO, and in which format.
//!
//! Policy (docs/decisions, "log policy"): INFO carries one readable line per event an operator
//! cares about — start-up and its effective configuration, leadership changes, topics created
//! and deleted, snapshots built and installed, member expiry and rebalance summaries, a limit
//! reached, shutdown — and nothing else. Per-request detail is DEBUG. openraft's own INFO
//! lines (state dumps at every start and election) are internal: the default filter shows only
//! its warnings; `RUST_LOG` (e.g. `RUST_LOG=info,openraft=info`) replaces the default whole.

use tracing_subscriber::EnvFilter;

/// The filter when `RUST_LOG` is unset (or unreadable).
pub const DEFAULT_FILTER: &str = "info,openraft=warn";

/// How log lines are written on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, target, fields), for log shippers.
    Json,
}

/// `RUST_LOG` if it is set and parses, else [`DEFAULT_FILTER`].
pub fn filter() -> EnvFilter {
    filter_from(std::env::var("RUST_LOG").ok().as_deref())
}

fn filter_from(rust_log: Option<&str>) -> EnvFilter {
    match rust_log.map(EnvFilter::try_new) {
        Some(Ok(f)) => f,
        Some(Err(e)) => {
            eprintln!("cohort: RUST_LOG is not a tracing filter ({e}); using {DEFAULT_FILTER}");
            EnvFilter::new(DEFAULT_FILTER)
        }
        None => EnvFilter::new(DEFAULT_FILTER),
    }
}

/// Installs the process's subscriber (once; later calls do nothing).
pub fn init(format: LogFormat) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_ansi(false)
            .try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openraft_info_is_hidden_unless_rust_log_asks_for_it() {
        let default = EnvFilter::new(DEFAULT_FILTER).to_string();
        assert!(default.contains("openraft=warn"), "{default}");
        assert_eq!(filter_from(None).to_string(), default);
        assert_eq!(filter_from(Some("debug")).to_string(), "debug");
        assert_eq!(filter_from(Some("info,openraft=[")).to_string(), default);
    }
}
