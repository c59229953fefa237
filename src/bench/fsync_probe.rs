//! The disk's own fdatasync latency at the start of a run: small appends, each followed by
//! `fdatasync`, on the same filesystem as the broker's data. Every figure of a run is read
//! against it, since a shared virtual disk's fsync latency changes from minute to minute.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::stats::{Latencies, Summary};
use super::BenchError;

/// What a probe measured.
#[derive(Debug, Clone, Copy)]
pub struct FsyncProbe {
    pub writes: usize,
    pub write_bytes: usize,
    pub fdatasync: Summary,
}

/// Appends `writes` records of `write_bytes` to a scratch file in `dir`, fdatasyncing after
/// each, and returns the distribution of the fdatasync calls. The file is removed.
pub fn measure(dir: &Path, writes: usize, write_bytes: usize) -> Result<FsyncProbe, BenchError> {
    let path = dir.join("fsync-probe");
    let io = |what: &str, source| BenchError::Io {
        what: format!("{what} {}", path.display()),
        source,
    };
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)
        .map_err(|e| io("creating", e))?;
    // The file's creation is metadata; sync it once so the loop measures data syncs only.
    file.sync_all().map_err(|e| io("syncing", e))?;
    let record = vec![0x5a_u8; write_bytes];
    let mut latencies = Latencies::default();
    for _ in 0..writes {
        file.write_all(&record).map_err(|e| io("writing", e))?;
        let started = Instant::now();
        file.sync_data().map_err(|e| io("fdatasync of", e))?;
        latencies.record(started.elapsed());
    }
    drop(file);
    std::fs::remove_file(&path).map_err(|e| io("removing", e))?;
    Ok(FsyncProbe {
        writes,
        write_bytes,
        fdatasync: latencies.summary(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_measures_every_sync_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let probe = measure(dir.path(), 20, 100).unwrap();
        assert_eq!(probe.fdatasync.count, 20);
        assert!(probe.fdatasync.max >= probe.fdatasync.p50);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }
}
