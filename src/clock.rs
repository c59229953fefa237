//! The wall clock, read in one place. The coordinator never reads a clock: the leader stamps
//! each group command with [`now`] and every replica decides with that value. The data plane
//! ages segments and stamps appends with [`unix_ms`]; lag samples and the tools read it too.

use std::time::{SystemTime, UNIX_EPOCH};

use coordinator::TimestampMs;

/// Milliseconds since the Unix epoch; 0 for a clock set before 1970, saturated far in the
/// future.
pub fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// [`unix_ms`] in Kafka's timestamp newtype: what a leader stamps on a command.
pub fn now() -> TimestampMs {
    TimestampMs(unix_ms())
}

/// [`unix_ms`] as the unsigned milliseconds the lag tracker counts in.
pub fn unix_ms_unsigned() -> u64 {
    u64::try_from(unix_ms()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_read_the_same_clock() {
        let before = unix_ms();
        let stamped = now();
        let unsigned = unix_ms_unsigned();
        let after = unix_ms();
        // 2020-01-01 is long past: the clock reads real time, not zero.
        assert!(before > 1_577_836_800_000, "{before}");
        assert!(before <= stamped.0 && stamped.0 <= after);
        assert!(u64::try_from(before).unwrap() <= unsigned);
        assert!(unsigned <= u64::try_from(after).unwrap());
    }
}
