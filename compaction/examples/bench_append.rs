//! Append + fdatasync throughput of the log next to raw `write` + `fdatasync` of the same bytes
//! in the same batch sizes, then read throughput next to a raw read of the segment files, all in
//! one run on the same disk (a benchmark, not a test: it prints figures).
//!
//! ```text
//! cargo run -p compaction --release --example bench_append -- [--dir DIR] [--rounds N] [--read-mib M]
//! ```
//!
//! `--rounds`: fdatasync rounds per batch size (default 1000); `--read-mib`: bytes appended
//! (without fsync) for the read test (default 256). The directory defaults to the system temp
//! directory; point it at the disk you care about.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use compaction::{Entry, Log, LogConfig, Offset, TimestampMs};

const ENTRY_BYTES: usize = 1024;
const BATCHES: [usize; 4] = [1, 16, 64, 256];
const MIB: f64 = 1024.0 * 1024.0;

struct Args {
    dir: PathBuf,
    rounds: usize,
    read_mib: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: std::env::temp_dir(),
        rounds: 1000,
        read_mib: 256,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => args.dir = PathBuf::from(value),
            "--rounds" => args.rounds = value.parse().map_err(|e| format!("--rounds: {e}"))?,
            "--read-mib" => {
                args.read_mib = value.parse().map_err(|e| format!("--read-mib: {e}"))?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

/// Throughput and per-round latency of one run.
struct Run {
    bytes: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Run {
    fn mib_per_s(&self) -> f64 {
        self.bytes as f64 / MIB / self.elapsed.as_secs_f64()
    }

    fn percentile_ms(&mut self, p: f64) -> f64 {
        self.latencies.sort();
        let at = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies
            .get(at)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }
}

fn fresh_dir(base: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = base.join(format!("cohort-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn raw_writes(dir: &Path, batch: usize, rounds: usize) -> Result<Run, String> {
    let path = dir.join("raw.dat");
    let mut file = File::create(&path).map_err(|e| e.to_string())?;
    let buf = vec![0x5au8; batch * ENTRY_BYTES];
    let mut latencies = Vec::with_capacity(rounds);
    let start = Instant::now();
    for _ in 0..rounds {
        let t = Instant::now();
        file.write_all(&buf).map_err(|e| e.to_string())?;
        file.sync_data().map_err(|e| e.to_string())?;
        latencies.push(t.elapsed());
    }
    Ok(Run {
        bytes: (rounds * buf.len()) as u64,
        elapsed: start.elapsed(),
        latencies,
    })
}

fn entries(first: u64, count: usize, payload: &Bytes) -> Vec<Entry> {
    (0..count as u64)
        .map(|i| Entry::single(Offset(first + i), TimestampMs(0), payload.clone()))
        .collect()
}

fn log_config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 256 << 20,
        ..LogConfig::default()
    }
}

fn log_writes(dir: &Path, batch: usize, rounds: usize) -> Result<Run, String> {
    let log = Log::open(dir, log_config()).map_err(|e| e.to_string())?;
    let payload = Bytes::from(vec![0x5au8; ENTRY_BYTES]);
    let mut latencies = Vec::with_capacity(rounds);
    let start = Instant::now();
    for round in 0..rounds {
        let t = Instant::now();
        let batch = entries((round * batch) as u64, batch, &payload);
        log.append_durable(&batch, TimestampMs(0))
            .map_err(|e| e.to_string())?;
        latencies.push(t.elapsed());
    }
    Ok(Run {
        bytes: (rounds * batch * ENTRY_BYTES) as u64,
        elapsed: start.elapsed(),
        latencies,
    })
}

/// `threads` appenders, one entry per append, each waiting for durability: group commit.
fn log_group_commit(dir: &Path, threads: usize, rounds: usize) -> Result<(Run, u64), String> {
    let log = Arc::new(Log::open(dir, log_config()).map_err(|e| e.to_string())?);
    let assign = Arc::new(std::sync::Mutex::new(()));
    let payload = Bytes::from(vec![0x5au8; ENTRY_BYTES]);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (log, assign, payload) = (Arc::clone(&log), Arc::clone(&assign), payload.clone());
            std::thread::spawn(move || -> Result<Vec<Duration>, String> {
                let mut latencies = Vec::with_capacity(rounds);
                for _ in 0..rounds {
                    let t = Instant::now();
                    let info = {
                        let _guard = assign.lock().map_err(|e| e.to_string())?;
                        let next = log.next_offset();
                        log.append(&entries(next.0, 1, &payload), TimestampMs(0))
                            .map_err(|e| e.to_string())?
                    };
                    log.sync_to(info.next_offset).map_err(|e| e.to_string())?;
                    latencies.push(t.elapsed());
                }
                Ok(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for handle in handles {
        latencies.extend(
            handle
                .join()
                .map_err(|_| "appender panicked".to_owned())??,
        );
    }
    let run = Run {
        bytes: (threads * rounds * ENTRY_BYTES) as u64,
        elapsed: start.elapsed(),
        latencies,
    };
    Ok((run, log.sync_count()))
}

/// Read throughput from the page cache: raw `pread` of the segment files, then `Log::read`
/// with and without its per-frame CRC check. Returns MiB/s for each.
fn read_bench(dir: &Path, mib: usize) -> Result<(f64, f64, f64), String> {
    let files: Vec<PathBuf> = {
        let log = Log::open(dir, log_config()).map_err(|e| e.to_string())?;
        let payload = Bytes::from(vec![0x5au8; ENTRY_BYTES]);
        let count = mib * 1024 * 1024 / ENTRY_BYTES;
        for chunk in 0..count / 256 {
            log.append(
                &entries((chunk * 256) as u64, 256, &payload),
                TimestampMs(0),
            )
            .map_err(|e| e.to_string())?;
        }
        log.sync().map_err(|e| e.to_string())?;
        log.segments().into_iter().map(|s| s.path).collect()
    };
    // Warm the page cache once so every reader sees the same cache state.
    raw_read(&files)?;
    let t = Instant::now();
    let raw_bytes = raw_read(&files)?;
    let raw = raw_bytes as f64 / MIB / t.elapsed().as_secs_f64();
    let mut logged = [0.0; 2];
    for (i, verify_crc_on_read) in [true, false].into_iter().enumerate() {
        let config = LogConfig {
            verify_crc_on_read,
            ..log_config()
        };
        let log = Log::open(dir, config).map_err(|e| e.to_string())?;
        let t = Instant::now();
        let mut at = log.start_offset();
        let mut bytes = 0u64;
        while at < log.next_offset() {
            let batch = log.read(at, 1 << 20).map_err(|e| e.to_string())?;
            let Some(last) = batch.last() else { break };
            at = last.next_offset();
            bytes += batch.iter().map(|e| e.frame_len()).sum::<u64>();
        }
        logged[i] = bytes as f64 / MIB / t.elapsed().as_secs_f64();
    }
    Ok((raw, logged[0], logged[1]))
}

fn raw_read(files: &[PathBuf]) -> Result<u64, String> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    for path in files {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let mut at = 0u64;
        loop {
            let n = file.read_at(&mut buf, at).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            at += n as u64;
            total += n as u64;
        }
    }
    Ok(total)
}

fn main() {
    if let Err(error) = run() {
        eprintln!("bench_append: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    println!(
        "bench_append: {ENTRY_BYTES} B entries, {} fdatasync rounds per row, dir {}",
        args.rounds,
        args.dir.display()
    );
    println!(
        "{:>6} {:>10} {:>16} {:>10} {:>16} {:>7}",
        "batch", "raw MiB/s", "raw p50/p99 ms", "log MiB/s", "log p50/p99 ms", "ratio"
    );
    for batch in BATCHES {
        let raw_dir = fresh_dir(&args.dir, "raw")?;
        let log_dir = fresh_dir(&args.dir, "log")?;
        let mut raw = raw_writes(&raw_dir, batch, args.rounds)?;
        let mut log = log_writes(&log_dir, batch, args.rounds)?;
        println!(
            "{:>6} {:>10.1} {:>7.2}/{:<8.2} {:>10.1} {:>7.2}/{:<8.2} {:>7.2}",
            batch,
            raw.mib_per_s(),
            raw.percentile_ms(0.5),
            raw.percentile_ms(0.99),
            log.mib_per_s(),
            log.percentile_ms(0.5),
            log.percentile_ms(0.99),
            log.mib_per_s() / raw.mib_per_s(),
        );
        let _ = std::fs::remove_dir_all(&raw_dir);
        let _ = std::fs::remove_dir_all(&log_dir);
    }
    for threads in [4, 16] {
        let dir = fresh_dir(&args.dir, "group")?;
        let (mut run, syncs) = log_group_commit(&dir, threads, args.rounds / 2)?;
        let appends = threads * (args.rounds / 2);
        println!(
            "group commit: {threads} threads x 1 entry: {:.1} MiB/s, {:.0} appends/s, p50/p99 {:.2}/{:.2} ms, {:.1} appends per fdatasync",
            run.mib_per_s(),
            appends as f64 / run.elapsed.as_secs_f64(),
            run.percentile_ms(0.5),
            run.percentile_ms(0.99),
            appends as f64 / syncs.max(1) as f64,
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let dir = fresh_dir(&args.dir, "read")?;
    let (raw, checked, trusted) = read_bench(&dir, args.read_mib)?;
    println!(
        "read {} MiB from page cache: raw pread {raw:.0} MiB/s; log.read {checked:.0} MiB/s \
         (ratio {:.2}) with CRC check, {trusted:.0} MiB/s (ratio {:.2}) without",
        args.read_mib,
        checked / raw,
        trusted / raw
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
