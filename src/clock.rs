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

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m as u32, d as u32)
}

/// `YYYY-MM-DD` (UTC) of a Unix time in ms.
pub fn utc_date(unix_ms: i64) -> String {
    let (y, m, d) = civil_from_days(unix_ms.div_euclid(86_400_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `HH:MM` (UTC) of a Unix time in ms.
pub fn utc_hour_minute(unix_ms: i64) -> String {
    let of_day = unix_ms.rem_euclid(86_400_000) / 1_000;
    format!("{:02}:{:02}", of_day / 3_600, of_day % 3_600 / 60)
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a Unix time in ms.
pub fn utc_date_time(unix_ms: i64) -> String {
    let second = unix_ms.rem_euclid(86_400_000) / 1_000 % 60;
    format!(
        "{} {}:{second:02} UTC",
        utc_date(unix_ms),
        utc_hour_minute(unix_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_and_times() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(utc_date(0), "1970-01-01");
        // 2026-12-04 21:05:09.250 UTC
        let t = 1_796_418_309_250;
        assert_eq!(utc_date_time(t), "2026-12-04 21:05:09 UTC");
        assert_eq!(utc_hour_minute(t), "21:05");
        assert_eq!(utc_date_time(-1), "1969-12-31 23:59:59 UTC");
    }

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
