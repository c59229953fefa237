//! Snapshot write and read-back throughput (a benchmark, not a test: it prints figures).
//!
//! ```text
//! cargo run -p compaction --release --example bench_snapshot -- [--dir DIR] [--keys N]
//! ```
//!
//! Writes N records shaped like offset commits (a ~40-byte key, a ~30-byte value), then reads
//! them back with every CRC checked, next to a raw read of the same file.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

use compaction::{SnapshotLimits, SnapshotReader, SnapshotWriter, TimestampMs};

const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    if let Err(error) = run() {
        eprintln!("bench_snapshot: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut dir = std::env::temp_dir();
    let mut keys: u64 = 1_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => dir = PathBuf::from(value),
            "--keys" => keys = value.parse().map_err(|e| format!("--keys: {e}"))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let dir = dir.join(format!("cohort-bench-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;

    let started = Instant::now();
    let mut writer = SnapshotWriter::create(&dir, "snap", b"meta", SnapshotLimits::default())
        .map_err(|e| e.to_string())?;
    for i in 0..keys {
        let key = format!(
            "group-{:06}/topic-{:04}/{:03}",
            i / 1000,
            (i / 10) % 100,
            i % 10
        );
        let value = format!("offset={:012} epoch=7 meta=", i * 3);
        writer
            .push(
                key.as_bytes(),
                Some(value.as_bytes()),
                TimestampMs(i as i64),
            )
            .map_err(|e| e.to_string())?;
    }
    let info = writer.finish().map_err(|e| e.to_string())?;
    let write_s = started.elapsed().as_secs_f64();

    // Raw read of the same file (page cache warm after the write).
    let file = std::fs::File::open(&info.path).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 1 << 20];
    let started = Instant::now();
    let mut at = 0u64;
    loop {
        let n = file.read_at(&mut buf, at).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        at += n as u64;
    }
    let raw_s = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let mut reader = SnapshotReader::open(&info.path).map_err(|e| e.to_string())?;
    let mut count = 0u64;
    let mut payload = 0usize;
    while let Some(record) = reader.next_record().map_err(|e| e.to_string())? {
        count += 1;
        payload += record.key.len() + record.value.map_or(0, |v| v.len());
    }
    let read_s = started.elapsed().as_secs_f64();
    let mib = info.bytes as f64 / MIB;
    println!(
        "snapshot of {count} records, {mib:.1} MiB ({:.0} B/record, {payload} B of keys+values)",
        info.bytes as f64 / count.max(1) as f64
    );
    println!(
        "write+fsync+rename: {:.0} MiB/s ({:.2} M records/s); read with CRC: {:.0} MiB/s ({:.2} M records/s); raw read: {:.0} MiB/s",
        mib / write_s,
        count as f64 / write_s / 1e6,
        mib / read_s,
        count as f64 / read_s / 1e6,
        mib / raw_s
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
