//! The two time syntaxes of `--reset-offsets`: `--to-datetime` as Kafka's `Utils.getDateTime`
//! reads it (strict `yyyy-MM-dd'T'HH:mm:ss.SSS` with an ISO-8601 zone, UTC when none), and
//! `--by-duration` as `java.time.Duration.parse` reads it (`PnDTnHnMnS`). Errors carry the
//! exception text Kafka's tool would print.

/// Milliseconds since the epoch for `text`, or the `java.text.ParseException` text.
pub fn parse_datetime(text: &str) -> Result<i64, String> {
    let parts: Vec<&str> = text.split('T').collect();
    if parts.len() < 2 {
        return Err("java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format".to_string());
    }
    let second = parts[1];
    let full = if second.contains(['+', '-', 'Z']) {
        text.to_string()
    } else {
        format!("{text}Z")
    };
    strict_datetime(&full)
        .ok_or_else(|| format!("java.text.ParseException: Unparseable date: \"{full}\""))
}

fn take_digits(s: &str, min: usize, max: usize) -> Option<(i64, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n < min || n > max {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn expect(s: &str, c: char) -> Option<&str> {
    s.strip_prefix(c)
}

fn strict_datetime(s: &str) -> Option<i64> {
    let (year, s) = take_digits(s, 1, 9)?;
    let s = expect(s, '-')?;
    let (month, s) = take_digits(s, 1, 2)?;
    let s = expect(s, '-')?;
    let (day, s) = take_digits(s, 1, 2)?;
    let s = expect(s, 'T')?;
    let (hour, s) = take_digits(s, 1, 2)?;
    let s = expect(s, ':')?;
    let (minute, s) = take_digits(s, 1, 2)?;
    let s = expect(s, ':')?;
    let (second, s) = take_digits(s, 1, 2)?;
    let s = expect(s, '.')?;
    let (millis, s) = take_digits(s, 1, 3)?;
    let offset_minutes = parse_zone(s)?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

/// `Z`, `±hh`, `±hhmm` or `±hh:mm`; the offset in minutes east of UTC.
fn parse_zone(s: &str) -> Option<i64> {
    if s == "Z" {
        return Some(0);
    }
    let (sign, rest) = match s.chars().next()? {
        '+' => (1, &s[1..]),
        '-' => (-1, &s[1..]),
        _ => return None,
    };
    let (hours, minutes) = match rest.len() {
        2 => (rest.parse::<i64>().ok()?, 0),
        4 => (rest[..2].parse().ok()?, rest[2..].parse().ok()?),
        5 if &rest[2..3] == ":" => (rest[..2].parse().ok()?, rest[3..].parse().ok()?),
        _ => return None,
    };
    if !rest
        .bytes()
        .filter(|b| *b != b':')
        .all(|b| b.is_ascii_digit())
        || hours > 23
        || minutes > 59
    {
        return None;
    }
    Some(sign * (hours * 60 + minutes))
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A `java.time.Duration` in milliseconds (truncated), or the `DateTimeParseException` text.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    duration_ms(text).ok_or_else(|| {
        "java.time.format.DateTimeParseException: Text cannot be parsed to a Duration".to_string()
    })
}

fn signed_number(s: &str) -> Option<(f64, bool, &str)> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let mut len = int_len;
    let mut fraction = false;
    if rest[int_len..].starts_with(['.', ',']) {
        let f = rest[int_len + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if f == 0 || f > 9 {
            return None;
        }
        len = int_len + 1 + f;
        fraction = true;
    }
    let value: f64 = rest[..len].replace(',', ".").parse().ok()?;
    Some((
        if negative { -value } else { value },
        fraction,
        &rest[len..],
    ))
}

fn duration_ms(text: &str) -> Option<i64> {
    let upper = text.to_ascii_uppercase();
    let (negative, s) = match upper.as_bytes().first()? {
        b'-' => (true, &upper[1..]),
        b'+' => (false, &upper[1..]),
        _ => (false, upper.as_str()),
    };
    let mut s = s.strip_prefix('P')?;
    let mut total_ms = 0f64;
    let mut any = false;
    if !s.starts_with('T') {
        let (days, fraction, rest) = signed_number(s)?;
        if fraction {
            return None;
        }
        s = rest.strip_prefix('D')?;
        total_ms += days * 86_400_000.0;
        any = true;
    }
    if let Some(rest) = s.strip_prefix('T') {
        s = rest;
        let mut seen_time = false;
        for (unit, ms, allows_fraction) in [
            ('H', 3_600_000.0, false),
            ('M', 60_000.0, false),
            ('S', 1000.0, true),
        ] {
            if s.is_empty() {
                break;
            }
            let (value, fraction, rest) = signed_number(s)?;
            if let Some(after) = rest.strip_prefix(unit) {
                if fraction && !allows_fraction {
                    return None;
                }
                total_ms += value * ms;
                s = after;
                seen_time = true;
            }
        }
        if !seen_time {
            return None;
        }
        any = true;
    }
    if !s.is_empty() || !any {
        return None;
    }
    let ms = if negative { -total_ms } else { total_ms };
    if !ms.is_finite() || ms.abs() > 9.0e18 {
        return None;
    }
    Some(ms as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_without_zone_are_utc() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00.000"), Ok(0));
        assert_eq!(
            parse_datetime("2024-02-29T12:34:56.789"),
            Ok(1_709_210_096_789)
        );
        assert_eq!(
            parse_datetime("2024-02-29T12:34:56.789Z"),
            Ok(1_709_210_096_789)
        );
    }

    #[test]
    fn datetimes_with_zones() {
        let utc = parse_datetime("2024-01-01T10:00:00.000").unwrap();
        assert_eq!(parse_datetime("2024-01-01T12:00:00.000+02:00"), Ok(utc));
        assert_eq!(parse_datetime("2024-01-01T12:00:00.000+0200"), Ok(utc));
        assert_eq!(parse_datetime("2024-01-01T07:00:00.000-03"), Ok(utc));
    }

    #[test]
    fn milliseconds_are_read_as_a_number_like_simpledateformat() {
        // "SSS" parses ".5" as 5 ms, not 500.
        assert_eq!(parse_datetime("1970-01-01T00:00:00.5"), Ok(5));
    }

    #[test]
    fn bad_datetimes_are_kafkas_parse_errors() {
        assert_eq!(
            parse_datetime("2024-01-01"),
            Err("java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format".to_string())
        );
        assert_eq!(
            parse_datetime("2024-13-01T00:00:00.000"),
            Err(
                "java.text.ParseException: Unparseable date: \"2024-13-01T00:00:00.000Z\""
                    .to_string()
            )
        );
        assert!(parse_datetime("2023-02-29T00:00:00.000").is_err());
        assert!(
            parse_datetime("2024-01-01T00:00:00").is_err(),
            "milliseconds are required"
        );
        assert!(parse_datetime("2024-01-01T00:00:00.000+25:00").is_err());
    }

    #[test]
    fn durations_follow_java_time() {
        assert_eq!(parse_duration("PT1H"), Ok(3_600_000));
        assert_eq!(parse_duration("P1DT2H3M4.5S"), Ok(93_784_500));
        assert_eq!(parse_duration("pt15m"), Ok(900_000));
        assert_eq!(parse_duration("-PT1S"), Ok(-1000));
        assert_eq!(parse_duration("PT-1H30M"), Ok(-1_800_000));
        assert_eq!(parse_duration("P2D"), Ok(172_800_000));
        for bad in ["", "P", "PT", "1H", "PT1.5H", "P1.5D", "PT1X", "P1DT"] {
            assert_eq!(
                parse_duration(bad),
                Err(
                    "java.time.format.DateTimeParseException: Text cannot be parsed to a Duration"
                        .to_string()
                ),
                "{bad}"
            );
        }
    }
}
