//! The printed result of a run: what was run (command, date, shape, load average), the disk's
//! fdatasync distribution, one Markdown table row per measured broker, and the ratios.

use std::fmt::Write;
use std::time::Duration;

use super::commits::{CommitsArgs, Measured};
use super::fsync_probe::FsyncProbe;
use super::load::LoadResult;
use super::stats::{ms, Op};

/// The command line as typed (for the record next to the figures).
pub fn command_line() -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if let Some(first) = words.first_mut() {
        *first = "cohort".into();
    }
    words.join(" ")
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    crate::clock::utc_date(crate::clock::unix_ms())
}

fn cpu(d: Option<Duration>, window: Duration) -> String {
    d.map_or_else(
        || "-".into(),
        |d| {
            format!(
                "{:.2}",
                d.as_secs_f64() / window.as_secs_f64().max(f64::MIN_POSITIVE)
            )
        },
    )
}

fn rate(r: &LoadResult, n: u64) -> String {
    format!("{:.0}", r.per_second(n))
}

pub fn commits(
    args: &CommitsArgs,
    probe: &FsyncProbe,
    load_before: &str,
    load_after: &str,
    measured: &[Measured],
) -> String {
    let mut out = String::new();
    let connections = args.connections.unwrap_or(args.members);
    let commits = if args.commit_interval_ms == 0 {
        format!(
            "as fast as possible, {} in flight per connection",
            args.in_flight
        )
    } else {
        format!("every {} ms per member", args.commit_interval_ms)
    };
    let heartbeats = if args.heartbeat_interval_ms == 0 {
        "no heartbeats".to_string()
    } else {
        format!("heartbeats every {} ms", args.heartbeat_interval_ms)
    };
    let brokers = if args.bootstrap_server.is_empty() {
        format!("{} started node(s)", args.nodes)
    } else {
        format!("cluster at {}", args.bootstrap_server.join(","))
    };
    let _ = writeln!(out, "# cohort bench commits, {}", today());
    let _ = writeln!(out, "command: {}", command_line());
    let _ = writeln!(
        out,
        "shape: {brokers}; {} members in {} groups, {} partition(s) per commit, {connections} connections; commits {commits}; {heartbeats}; {} s warm-up, {} s measured",
        args.members, args.groups, args.partitions, args.warmup_secs, args.duration_secs
    );
    let f = probe.fdatasync;
    let _ = writeln!(
        out,
        "fdatasync of the disk ({} appends of {} B): p50 {} ms, p99 {} ms, p999 {} ms, max {} ms",
        probe.writes,
        probe.write_bytes,
        ms(f.p50),
        ms(f.p99),
        ms(f.p999),
        ms(f.max)
    );
    let _ = writeln!(
        out,
        "load average (1/5/15 min): {load_before} before, {load_after} after"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| broker | commits/s | offsets/s | commit p50 ms | p99 ms | p999 ms | max ms | heartbeats/s | heartbeat p99 ms | errors | broker CPU (cores) | load generator CPU (cores) |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
    );
    for m in measured {
        let r = &m.result;
        let c = r.op(Op::Commit);
        let h = r.op(Op::Heartbeat);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.label,
            c.map_or_else(|| "0".into(), |c| rate(r, c.ok + c.failed)),
            c.map_or_else(|| "0".into(), |c| rate(r, c.partitions)),
            c.map_or_else(|| "-".into(), |c| ms(c.latency.p50)),
            c.map_or_else(|| "-".into(), |c| ms(c.latency.p99)),
            c.map_or_else(|| "-".into(), |c| ms(c.latency.p999)),
            c.map_or_else(|| "-".into(), |c| ms(c.latency.max)),
            h.map_or_else(|| "0".into(), |h| rate(r, h.ok + h.failed)),
            h.map_or_else(|| "-".into(), |h| ms(h.latency.p99)),
            r.errors,
            cpu(r.broker_cpu, r.window),
            cpu(r.client_cpu, r.window),
        );
    }
    if let [ours, base, ..] = measured {
        let rate_of = |r: &LoadResult| {
            r.op(Op::Commit)
                .map_or(0.0, |c| r.per_second(c.ok + c.failed))
        };
        let (a, b) = (rate_of(&ours.result), rate_of(&base.result));
        if b > 0.0 {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "{} / {}: {:.1}x commits/s",
                ours.label,
                base.label,
                a / b
            );
        }
    }
    for m in measured {
        let r = &m.result;
        let requests = r.op(Op::Commit).map_or(0, |c| c.ok + c.failed)
            + r.op(Op::Heartbeat).map_or(0, |h| h.ok + h.failed);
        if let Some(line) = cost_line(r, requests) {
            let _ = writeln!(out, "cost, {}: {line}", m.label);
        }
        if let Some(line) = raft_line(r) {
            let _ = writeln!(out, "raft, {}: {line}", m.label);
        }
    }
    for m in measured {
        if m.result.unanswered > 0 {
            let _ = writeln!(
                out,
                "UNANSWERED: {}: {} requests had no answer 10 s after the window closed (the broker fell behind)",
                m.label, m.result.unanswered
            );
        }
        if m.result.send_lag_max > Duration::from_millis(100) {
            let _ = writeln!(
                out,
                "note: {}: a scheduled request went out {} ms late (the client or its connection was saturated)",
                m.label,
                ms(m.result.send_lag_max)
            );
        }
    }
    out
}

/// CPU per request, which a busy shared machine changes far less than requests/s: it says
/// what the same code would do with the whole machine.
fn cost_line(r: &LoadResult, requests: u64) -> Option<String> {
    if requests == 0 {
        return None;
    }
    let per = |d: Option<Duration>| {
        d.map_or_else(
            || "-".into(),
            |d| format!("{:.1}", d.as_secs_f64() * 1e6 / requests as f64),
        )
    };
    Some(format!(
        "{} µs broker CPU and {} µs load generator CPU per request",
        per(r.broker_cpu),
        per(r.client_cpu)
    ))
}

/// How the window's writes batched and what their fsyncs cost, from the brokers' metrics.
fn raft_line(r: &LoadResult) -> Option<String> {
    let raft = r.raft?;
    let per_entry = raft.commands_per_entry()?;
    Some(format!(
        "{:.1} commands/entry, {} entries/s, {} fsyncs/s (all nodes), mean fsync {} ms",
        per_entry,
        rate(r, raft.entries as u64),
        rate(r, raft.fsyncs as u64),
        raft.fsync_mean().map_or_else(|| "-".into(), ms)
    ))
}

/// The OffsetFetch run: the fetch load and the ApiVersions floor on the same broker.
pub fn offset_fetch(
    header: &str,
    load_before: &str,
    load_after: &str,
    fetch: &LoadResult,
    floor: &LoadResult,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# cohort bench offset-fetch, {}", today());
    let _ = writeln!(out, "command: {}", command_line());
    let _ = writeln!(out, "{header}");
    let _ = writeln!(
        out,
        "load average (1/5/15 min): {load_before} before, {load_after} after"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| request | requests/s | partitions/s | p50 ms | p99 ms | p999 ms | max ms | errors | broker CPU (cores) | load generator CPU (cores) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    let row = |out: &mut String, op: Op, r: &LoadResult| {
        let s = r.op(op);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            op.name(),
            s.map_or_else(|| "0".into(), |s| rate(r, s.ok + s.failed)),
            s.map_or_else(|| "0".into(), |s| rate(r, s.partitions)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p50)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p99)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.p999)),
            s.map_or_else(|| "-".into(), |s| ms(s.latency.max)),
            r.errors,
            cpu(r.broker_cpu, r.window),
            cpu(r.client_cpu, r.window),
        );
    };
    row(&mut out, Op::FetchOffsets, fetch);
    row(&mut out, Op::ApiVersions, floor);
    for (op, r) in [(Op::FetchOffsets, fetch), (Op::ApiVersions, floor)] {
        let requests = r.op(op).map_or(0, |s| s.ok + s.failed);
        if let Some(line) = cost_line(r, requests) {
            let _ = writeln!(out, "cost, {}: {line}", op.name());
        }
    }
    let per = |op: Op, r: &LoadResult| r.op(op).map_or(0.0, |s| r.per_second(s.ok + s.failed));
    let (a, b) = (per(Op::FetchOffsets, fetch), per(Op::ApiVersions, floor));
    if b > 0.0 {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "OffsetFetch / ApiVersions (the front end's floor): {:.2}",
            a / b
        );
    }
    for (op, r) in [(Op::FetchOffsets, fetch), (Op::ApiVersions, floor)] {
        if r.unanswered > 0 {
            let _ = writeln!(
                out,
                "UNANSWERED: {}: {} requests had no answer 10 s after the window closed",
                op.name(),
                r.unanswered
            );
        }
    }
    if fetch.missing_offsets > 0 {
        let _ = writeln!(
            out,
            "WRONG: {} partitions answered without the offset the setup committed",
            fetch.missing_offsets
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_a_date() {
        assert_eq!(today().len(), 10);
    }
}
