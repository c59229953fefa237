//! A child process for crash tests: appends (and compacts) forever, printing each append once
//! it is durable, until the test kills it with SIGKILL.
//!
//! ```text
//! compaction-crash-child append <dir> <threads>   batches, group commit across threads
//! compaction-crash-child keyed  <dir>             keyed records, compacting as it goes
//! ```
//!
//! Every entry's content is a pure function of its offset, so the test can check what
//! survived without talking to the child.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use compaction::{Entry, Log, LogConfig, LogError, Offset, TimestampMs, TombstonePolicy};

/// Offsets covered by the batch starting at `first`.
fn batch_len(first: u64) -> u64 {
    1 + first % 4
}

/// The payload of the batch starting at `first`.
fn batch_payload(first: u64) -> Bytes {
    let len = 1 + (first * 7919 % 3000) as usize;
    Bytes::from(
        (0..len)
            .map(|j| (first.wrapping_mul(2_654_435_761).wrapping_add(j as u64) % 256) as u8)
            .collect::<Vec<u8>>(),
    )
}

/// The keyed record at `offset`.
fn keyed_record(offset: u64) -> Entry {
    let key = Bytes::from(format!("k{}", offset * 7 % 50));
    let value = (!offset.is_multiple_of(9)).then(|| Bytes::from(format!("v{offset}")));
    Entry::keyed(Offset(offset), TimestampMs(offset as i64), key, value)
}

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 64 << 10,
        index_interval_bytes: 1024,
        max_entry_bytes: 8 << 10,
        ..LogConfig::default()
    }
}

/// Keyed records are small: small segments so that compaction has sealed ones to rewrite.
fn keyed_config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 2048,
        index_interval_bytes: 256,
        ..config()
    }
}

fn print_line(line: String) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

fn append_forever(log: Arc<Log>, threads: usize) -> Result<(), String> {
    let assign = Arc::new(Mutex::new(()));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let log = Arc::clone(&log);
            let assign = Arc::clone(&assign);
            std::thread::spawn(move || -> Result<(), String> {
                loop {
                    let info = {
                        // Offsets are assigned under a lock, as a partition leader does; the
                        // fsync happens outside it so appenders share it.
                        let _guard = assign.lock().map_err(|e| e.to_string())?;
                        let first = log.next_offset().0;
                        let entry = Entry::batch(
                            Offset(first),
                            Offset(first + batch_len(first) - 1),
                            TimestampMs(first as i64),
                            batch_payload(first),
                        );
                        log.append(&[entry], TimestampMs(0))
                            .map_err(|e| e.to_string())?
                    };
                    log.sync_to(info.next_offset).map_err(|e| e.to_string())?;
                    print_line(format!("ack {}", info.first_offset))?;
                }
            })
        })
        .collect();
    for handle in handles {
        handle
            .join()
            .map_err(|_| "appender panicked".to_owned())??;
    }
    Ok(())
}

fn keyed_forever(log: Arc<Log>) -> Result<(), String> {
    loop {
        let offset = log.next_offset().0;
        log.append_durable(&[keyed_record(offset)], TimestampMs(0))
            .map_err(|e: LogError| e.to_string())?;
        print_line(format!("ack {offset}"))?;
        if offset % 50 == 49 {
            let policy = TombstonePolicy {
                now_ms: TimestampMs(offset as i64),
                tombstone_retention_ms: 200,
            };
            log.compact(policy).map_err(|e| e.to_string())?;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1..) {
        Some([mode, dir, rest @ ..]) => match Log::open(
            PathBuf::from(dir),
            if mode == "keyed" {
                keyed_config()
            } else {
                config()
            },
        ) {
            Ok(log) => match (mode.as_str(), rest) {
                ("append", [threads]) => match threads.parse() {
                    Ok(threads) => append_forever(Arc::new(log), threads),
                    Err(e) => Err(format!("threads: {e}")),
                },
                ("keyed", []) => keyed_forever(Arc::new(log)),
                _ => {
                    Err("usage: compaction-crash-child append <dir> <threads> | keyed <dir>".into())
                }
            },
            Err(e) => Err(format!("open: {e}")),
        },
        _ => Err("usage: compaction-crash-child append <dir> <threads> | keyed <dir>".into()),
    };
    if let Err(error) = result {
        eprintln!("compaction-crash-child: {error}");
        std::process::exit(1);
    }
}
