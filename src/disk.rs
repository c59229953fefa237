//! The node's disk-full state (decision 0112): one [`SpaceGuard`] per path kind, re-checked
//! every 100 ms while full, shown as `cohort_disk_full{path_kind}` in `/metrics`.
//!
//! ```text
//!  path kind       directory                   refuses                        answered as
//!  partition-log   <data-dir>/topics           Produce below --disk-reserve   KAFKA_STORAGE_ERROR (56)
//!  index           <data-dir>/topics           nothing (a cache; logged)      -
//!  raft-log        <data-dir>/raft/log-*       commands below reserve / 4     COORDINATOR_NOT_AVAILABLE
//!                                              (and on ENOSPC: the append      (group APIs),
//!                                              waits in the store)             KAFKA_STORAGE_ERROR (topics)
//!  snapshot        <data-dir>/raft/snapshots   a build is postponed           -
//! ```
//!
//! Reads never consult a guard: Fetch, ListOffsets, Metadata and OffsetFetch go on, and
//! `/readyz` stays 200 (the node serves); the gauge says which kind is full.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use compaction::space::RECHECK_INTERVAL;
use compaction::SpaceGuard;
use tokio::sync::watch;

/// The gauge.
pub const DISK_FULL: &str = "cohort_disk_full";

/// The size of a filesystem, as Java's `FileStore` reports it to Kafka's DescribeLogDirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilesystemSpace {
    /// Every block of the filesystem (`getTotalSpace`: `f_blocks * f_frsize`).
    pub total_bytes: u64,
    /// What an unprivileged writer may still use (`getUsableSpace`: `f_bavail * f_frsize`):
    /// the root-reserved blocks are not counted, as they are not Cohort's to fill.
    pub usable_bytes: u64,
}

/// The size of the filesystem holding `path` (one `statvfs(2)`; it can block on a sick
/// filesystem, so call it off the async threads).
pub fn filesystem_space(path: &Path) -> std::io::Result<FilesystemSpace> {
    let stat = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(FilesystemSpace {
        total_bytes: stat.f_blocks.saturating_mul(stat.f_frsize),
        usable_bytes: stat.f_bavail.saturating_mul(stat.f_frsize),
    })
}

/// Every guard of one node.
#[derive(Debug)]
pub struct DiskSpace {
    partition_log: SpaceGuard,
    index: SpaceGuard,
    /// The Raft node's guards, added once it started.
    raft: Mutex<Vec<SpaceGuard>>,
    reserve_bytes: u64,
}

impl DiskSpace {
    /// The data plane's guards under `data_dir`, partition data keeping `reserve_bytes` free.
    pub fn new(data_dir: &Path, reserve_bytes: u64) -> DiskSpace {
        let topics = data_dir.join("topics");
        DiskSpace {
            partition_log: SpaceGuard::new("partition-log", &topics, reserve_bytes),
            index: SpaceGuard::new("index", &topics, 0),
            raft: Mutex::new(Vec::new()),
            reserve_bytes,
        }
    }

    /// The guard of partition logs.
    pub fn partition_log(&self) -> &SpaceGuard {
        &self.partition_log
    }

    /// The guard of partition index files.
    pub fn index(&self) -> &SpaceGuard {
        &self.index
    }

    /// Adds the Raft node's guards; new commands stop at a quarter of the reserve, so the
    /// Raft log keeps room for openraft's own entries, the vote and snapshots.
    pub fn add_raft(&self, guards: Vec<SpaceGuard>) {
        for g in &guards {
            if g.kind() == "raft-log" {
                g.set_reserve_bytes(self.reserve_bytes / 4);
            }
        }
        self.lock_raft().extend(guards);
    }

    fn lock_raft(&self) -> std::sync::MutexGuard<'_, Vec<SpaceGuard>> {
        // Nothing panics while holding it.
        self.raft.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every guard, data plane first.
    pub fn guards(&self) -> Vec<SpaceGuard> {
        let mut all = vec![self.partition_log.clone(), self.index.clone()];
        all.extend(self.lock_raft().iter().cloned());
        all
    }

    /// The path kinds that are full now.
    pub fn full_kinds(&self) -> Vec<&'static str> {
        self.guards()
            .iter()
            .filter(|g| g.is_full())
            .map(SpaceGuard::kind)
            .collect()
    }

    /// `cohort_disk_full{path_kind="..."} 0|1`, one series per guard, rendered per server at
    /// scrape time (the process-wide recorder is shared by every in-process server).
    pub fn render_gauges(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP {DISK_FULL} 1 while writes of this path kind are refused for lack of disk space."
        );
        let _ = writeln!(out, "# TYPE {DISK_FULL} gauge");
        for g in self.guards() {
            let _ = writeln!(
                out,
                "{DISK_FULL}{{path_kind=\"{}\"}} {}",
                g.kind(),
                u8::from(g.is_full())
            );
        }
        out
    }

    /// Re-measures every full guard every [`RECHECK_INTERVAL`], so a node writes again (and
    /// says so once) as soon as space is freed, with or without traffic.
    pub async fn run_rechecks(self: Arc<Self>, mut shutdown: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(RECHECK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tick.tick() => {}
            }
            let full: Vec<SpaceGuard> = self
                .guards()
                .into_iter()
                .filter(SpaceGuard::is_full)
                .collect();
            if full.is_empty() {
                continue;
            }
            // statvfs can block on a sick filesystem; keep it off the async threads.
            let checked = tokio::task::spawn_blocking(move || {
                for g in full {
                    g.recheck();
                }
            });
            if tokio::time::timeout(Duration::from_secs(5), checked)
                .await
                .is_err()
            {
                tracing::debug!("free-space re-check took over 5 s");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filesystem_space_is_what_df_would_say() {
        let dir = tempfile::tempdir().unwrap();
        let space = filesystem_space(dir.path()).unwrap();
        assert!(space.total_bytes > 0);
        assert!(space.usable_bytes <= space.total_bytes);
        assert!(filesystem_space(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn the_gauge_has_one_series_per_path_kind() {
        let dir = tempfile::tempdir().unwrap();
        let disk = DiskSpace::new(dir.path(), 64 << 20);
        disk.add_raft(vec![
            SpaceGuard::new("raft-log", dir.path(), 0),
            SpaceGuard::new("snapshot", dir.path(), 0),
        ]);
        let raft_log = disk.guards()[2].clone();
        assert_eq!(
            raft_log.reserve_bytes(),
            16 << 20,
            "a quarter of the reserve"
        );
        disk.index().mark_full("test");
        let text = disk.render_gauges();
        assert!(
            text.contains("cohort_disk_full{path_kind=\"partition-log\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_disk_full{path_kind=\"index\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_disk_full{path_kind=\"raft-log\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("cohort_disk_full{path_kind=\"snapshot\"} 0\n"),
            "{text}"
        );
        assert_eq!(disk.full_kinds(), vec!["index"]);
    }
}
