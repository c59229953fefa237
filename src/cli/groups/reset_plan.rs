//! The pure parts of `--reset-offsets`: parsing `--topic t:0,1` scopes, clamping requested
//! offsets into [log start, log end] as Kafka's `checkOffsetsRange` does, and reading `--from-file`
//! CSV plans in both of Kafka's layouts.

use std::collections::BTreeMap;

use crate::client::TopicPartition;

/// Largest CSV plan file accepted.
pub const PLAN_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// Parses `topic:p1,p2` (Kafka's `parseTopicsWithPartitions`); errors are Kafka's usage texts.
pub fn parse_topic_partitions(arg: &str) -> Result<Vec<TopicPartition>, String> {
    let parts: Vec<&str> = split_java(arg, ':');
    if parts.len() != 2 {
        return Err(format!(
            "Invalid topic arg '{arg}', expected topic name and partitions"
        ));
    }
    let topic = parts[0];
    split_java(parts[1], ',')
        .into_iter()
        .map(|p| {
            p.parse::<i32>()
                .map(|n| TopicPartition::new(topic, n))
                .map_err(|_| format!("Invalid partition '{p}' specified in topic arg '{arg}''"))
        })
        .collect()
}

/// Java's `String.split(sep)`: trailing empty strings are dropped (but a lone empty input stays).
pub fn split_java(s: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() && !s.is_empty() {
        parts.clear();
    }
    parts
}

/// A warning Kafka logs while clamping, and the offset it picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clamped {
    /// The offset to commit.
    pub offset: i64,
    /// Kafka's WARN text when the request was out of range.
    pub warning: Option<String>,
}

/// `checkOffsetsRange` for one partition: above the log end → log end; else below the log
/// start → log start; else as requested. Unknown bounds do not clamp.
pub fn clamp(tp: &TopicPartition, requested: i64, start: Option<i64>, end: Option<i64>) -> Clamped {
    if let Some(end) = end.filter(|e| requested > *e) {
        return Clamped {
            offset: end,
            warning: Some(format!(
                "New offset ({requested}) is higher than latest offset for topic partition {tp}. Value will be set to {end}"
            )),
        };
    }
    if let Some(start) = start.filter(|s| requested < *s) {
        return Clamped {
            offset: start,
            warning: Some(format!(
                "New offset ({requested}) is lower than earliest offset for topic partition {tp}. Value will be set to {start}"
            )),
        };
    }
    Clamped {
        offset: requested,
        warning: None,
    }
}

/// A reset plan read from CSV: per group, partitions and offsets in file order.
pub type FilePlan = BTreeMap<String, Vec<(TopicPartition, i64)>>;

fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted => {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                }
            }
            '"' if cur.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            ',' if !quoted => {
                fields.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            _ => cur.push(c),
        }
    }
    if quoted {
        return Err(format!("Missing closing quote for value in line '{line}'"));
    }
    fields.push(cur);
    Ok(fields)
}

fn record(line: &str, with_group: bool) -> Result<(Option<String>, TopicPartition, i64), String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let fields = csv_fields(line)?;
    let expected = if with_group { 4 } else { 3 };
    if fields.len() != expected {
        return Err(format!(
            "Too many or too few entries in line '{line}': expected {expected}, found {}",
            fields.len()
        ));
    }
    let (group, rest) = if with_group {
        (Some(fields[0].clone()), &fields[1..])
    } else {
        (None, &fields[..])
    };
    let partition: i32 = rest[1].trim().parse().map_err(|_| {
        format!(
            "Cannot deserialize value of type `int` from String \"{}\"",
            rest[1]
        )
    })?;
    let offset: i64 = rest[2].trim().parse().map_err(|_| {
        format!(
            "Cannot deserialize value of type `long` from String \"{}\"",
            rest[2]
        )
    })?;
    Ok((
        group,
        TopicPartition::new(rest[0].clone(), partition),
        offset,
    ))
}

/// Reads a reset plan as Kafka's `parseResetPlan` does: when exactly one `--group` was given
/// and the first line reads as `topic,partition,offset`, every line is read so and belongs to
/// that group; otherwise every line must be `group,topic,partition,offset`.
pub fn parse_plan(csv: &str, single_group: Option<&str>) -> Result<FilePlan, String> {
    let lines: Vec<&str> = split_java(csv, '\n')
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let old_format = lines.first().is_some_and(|l| record(l, false).is_ok());
    let mut plan = FilePlan::new();
    match single_group {
        Some(group) if old_format => {
            for line in lines {
                let (_, tp, offset) = record(line, false)?;
                plan.entry(group.to_string())
                    .or_default()
                    .push((tp, offset));
            }
        }
        _ => {
            for line in lines {
                let (group, tp, offset) = record(line, true)?;
                plan.entry(group.unwrap_or_default())
                    .or_default()
                    .push((tp, offset));
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        TopicPartition::new(t, p)
    }

    #[test]
    fn topic_partition_args() {
        assert_eq!(
            parse_topic_partitions("t:0,2").unwrap(),
            vec![tp("t", 0), tp("t", 2)]
        );
        assert_eq!(
            parse_topic_partitions("t:0:1").unwrap_err(),
            "Invalid topic arg 't:0:1', expected topic name and partitions"
        );
        assert_eq!(
            parse_topic_partitions("t:").unwrap_err(),
            "Invalid topic arg 't:', expected topic name and partitions"
        );
        assert_eq!(
            parse_topic_partitions("t:0,x").unwrap_err(),
            "Invalid partition 'x' specified in topic arg 't:0,x''"
        );
    }

    #[test]
    fn clamping_follows_check_offsets_range() {
        let t = tp("t", 0);
        assert_eq!(
            clamp(&t, 5, Some(2), Some(9)),
            Clamped {
                offset: 5,
                warning: None
            }
        );
        let high = clamp(&t, 50, Some(2), Some(9));
        assert_eq!(high.offset, 9);
        assert_eq!(
            high.warning.as_deref(),
            Some("New offset (50) is higher than latest offset for topic partition t-0. Value will be set to 9")
        );
        let low = clamp(&t, -3, Some(2), Some(9));
        assert_eq!(low.offset, 2);
        assert_eq!(
            low.warning.as_deref(),
            Some("New offset (-3) is lower than earliest offset for topic partition t-0. Value will be set to 2")
        );
        assert_eq!(clamp(&t, 50, None, None).offset, 50);
    }

    #[test]
    fn plans_in_both_layouts() {
        let old = parse_plan("t,0,5\nt,1,7\n", Some("g")).unwrap();
        assert_eq!(old["g"], vec![(tp("t", 0), 5), (tp("t", 1), 7)]);
        let new = parse_plan("g,t,0,5\nh,u,1,7\n", None).unwrap();
        assert_eq!(new["g"], vec![(tp("t", 0), 5)]);
        assert_eq!(new["h"], vec![(tp("u", 1), 7)]);
        // With one group but the group layout, lines keep their own group.
        let new = parse_plan("g,t,0,5\n", Some("other")).unwrap();
        assert_eq!(new.keys().collect::<Vec<_>>(), vec!["g"]);
        let quoted = parse_plan("\"a,\"\"b\"\"\",t,0,1\n", None).unwrap();
        assert_eq!(quoted["a,\"b\""], vec![(tp("t", 0), 1)]);
    }

    #[test]
    fn bad_plans_are_errors() {
        assert!(parse_plan("t,0\n", Some("g")).is_err());
        assert!(parse_plan("g,t,x,5\n", None).is_err());
        assert!(parse_plan("t,0,5\ng,t,0,5\n", Some("g")).is_err());
        assert!(parse_plan("\"open,t,0,5\n", None).is_err());
    }

    #[test]
    fn java_split_drops_trailing_empties() {
        assert_eq!(split_java("a,b,,", ','), vec!["a", "b"]);
        assert_eq!(split_java("", ','), vec![""]);
        assert!(split_java(",,", ',').is_empty());
    }
}
