//! What Raft did during a window, read from the started brokers' Prometheus `/metrics`:
//! commands per log entry (how well writes batch) and fsyncs (what each cost). These explain
//! a figure: a throughput that is `entries/s × commands/entry` with entries/s bounded by the
//! fsync latency is disk-bound; one with short fsyncs and few commands per entry is not.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one scrape may take (a busy broker still answers in milliseconds).
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest `/metrics` body read (it is a few tens of KiB).
const BODY_BYTES_MAX: usize = 4 * 1024 * 1024;

/// Running totals of the Raft histograms, summed over the scraped nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RaftCounters {
    /// Commands proposed (`raft_write_batch_commands_sum`; only the leader batches).
    pub commands: f64,
    /// Log entries those commands rode in (`raft_write_batch_commands_count`).
    pub entries: f64,
    /// fdatasync calls of the Raft log stores, every node.
    pub fsyncs: f64,
    /// Seconds spent in them.
    pub fsync_seconds: f64,
}

impl RaftCounters {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &RaftCounters) -> RaftCounters {
        RaftCounters {
            commands: self.commands - before.commands,
            entries: self.entries - before.entries,
            fsyncs: self.fsyncs - before.fsyncs,
            fsync_seconds: self.fsync_seconds - before.fsync_seconds,
        }
    }

    pub fn commands_per_entry(&self) -> Option<f64> {
        (self.entries > 0.0).then(|| self.commands / self.entries)
    }

    pub fn fsync_mean(&self) -> Option<Duration> {
        (self.fsyncs > 0.0).then(|| Duration::from_secs_f64(self.fsync_seconds / self.fsyncs))
    }
}

/// The counters of every node summed; `None` if any node could not be read (a partial sum
/// would explain nothing).
pub async fn scrape_all(nodes: &[SocketAddr]) -> Option<RaftCounters> {
    if nodes.is_empty() {
        return None;
    }
    let mut total = RaftCounters::default();
    for addr in nodes {
        let c = scrape(*addr).await?;
        total.commands += c.commands;
        total.entries += c.entries;
        total.fsyncs += c.fsyncs;
        total.fsync_seconds += c.fsync_seconds;
    }
    Some(total)
}

async fn scrape(addr: SocketAddr) -> Option<RaftCounters> {
    let body = tokio::time::timeout(SCRAPE_TIMEOUT, get_metrics(addr))
        .await
        .ok()??;
    Some(parse(&body))
}

async fn get_metrics(addr: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect(addr).await.ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: cohort\r\nconnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
        if raw.len() > BODY_BYTES_MAX {
            return None;
        }
    }
    let text = String::from_utf8(raw).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Reads the four totals from Prometheus text; a metric not yet recorded counts 0.
fn parse(body: &str) -> RaftCounters {
    let mut c = RaftCounters::default();
    for line in body.lines() {
        let Some((name, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(v) = value.trim().parse::<f64>() else {
            continue;
        };
        match name {
            "raft_write_batch_commands_sum" => c.commands = v,
            "raft_write_batch_commands_count" => c.entries = v,
            "raft_fsync_seconds_count" => c.fsyncs = v,
            "raft_fsync_seconds_sum" => c.fsync_seconds = v,
            _ => {}
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_read_from_prometheus_text_and_differenced() {
        let before = parse(
            "# TYPE raft_fsync_seconds histogram\n\
             raft_fsync_seconds_bucket{le=\"0.001\"} 3\n\
             raft_fsync_seconds_sum 0.004\n\
             raft_fsync_seconds_count 4\n\
             raft_write_batch_commands_sum 10\n\
             raft_write_batch_commands_count 2\n",
        );
        assert_eq!(
            before,
            RaftCounters {
                commands: 10.0,
                entries: 2.0,
                fsyncs: 4.0,
                fsync_seconds: 0.004
            }
        );
        let after = RaftCounters {
            commands: 110.0,
            entries: 6.0,
            fsyncs: 8.0,
            fsync_seconds: 0.012,
        };
        let d = after.since(&before);
        assert_eq!(d.commands_per_entry(), Some(25.0));
        let mean = d.fsync_mean().unwrap();
        assert!((mean.as_secs_f64() - 0.002).abs() < 1e-9, "{mean:?}");
        assert_eq!(parse("garbage\nraft_fsync_seconds_count x\n").fsyncs, 0.0);
        assert_eq!(RaftCounters::default().commands_per_entry(), None);
    }
}
