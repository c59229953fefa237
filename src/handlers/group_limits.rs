//! Cohort's group count limits (`--groups-max`, `--offsets-per-group-max`) as an operator sees
//! them when they bite: the coordinator decides the refusal (deterministically, on every
//! replica); the handler that answers it counts it and says so in the log, at most every 10 s
//! per limit so that a client retrying in a loop cannot flood the log.

use std::sync::atomic::{AtomicI64, Ordering};

use coordinator::ErrorKind;

use crate::group_coordinator::metrics::GROUP_LIMIT_REFUSALS_TOTAL;

/// The least time between two log lines about the same limit.
const WARN_EVERY_MS: i64 = 10_000;

static GROUPS_WARNED_MS: AtomicI64 = AtomicI64::new(0);
static OFFSETS_WARNED_MS: AtomicI64 = AtomicI64::new(0);

/// Counts (and maybe logs) `kind` if it is a count-limit refusal; any other answer is ignored.
pub fn note(kind: ErrorKind) {
    let (limit, flag, last_warned) = match kind {
        ErrorKind::GroupsMaxReached => ("groups", "--groups-max", &GROUPS_WARNED_MS),
        ErrorKind::OffsetsPerGroupMaxReached => (
            "offsets_per_group",
            "--offsets-per-group-max",
            &OFFSETS_WARNED_MS,
        ),
        _ => return,
    };
    metrics::counter!(GROUP_LIMIT_REFUSALS_TOTAL, "limit" => limit).increment(1);
    if warn_due(last_warned, crate::clock::unix_ms()) {
        tracing::warn!(
            limit = flag,
            "group request refused: {flag} reached (POLICY_VIOLATION; counted in \
             {GROUP_LIMIT_REFUSALS_TOTAL}; this line at most every 10 s)"
        );
    }
}

/// Whether a line is due at `now_ms`; claims it if so (one caller wins a race).
fn warn_due(last_warned: &AtomicI64, now_ms: i64) -> bool {
    let last = last_warned.load(Ordering::Relaxed);
    let due = last == 0 || now_ms.saturating_sub(last) >= WARN_EVERY_MS;
    due && last_warned
        .compare_exchange(last, now_ms.max(1), Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_due_once_per_period() {
        let last = AtomicI64::new(0);
        assert!(warn_due(&last, 1_000));
        assert!(!warn_due(&last, 1_001));
        assert!(!warn_due(&last, 10_999));
        assert!(warn_due(&last, 11_000));
    }
}
