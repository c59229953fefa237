//! Reconciling the partition directories on disk with the replicated topic list, safely.
//!
//! ```text
//!  start ─ DataPlane::open (removes nothing) ─ serve
//!     └─ run: ask the leader for its read index ─ applied up to it? ── no (no leader, no
//!                  ▲                                   │             quorum): keep everything,
//!                  └──────────── retry ◄───────────────┘             say so once, retry
//!                                                      yes
//!                                     DataPlane::reconcile: every directory the topic list
//!                                     does not account for ─► <data-dir>/stray/ (one log line)
//! ```
//!
//! Why the leader's read index and not this node's own commit mark: the mark is written lazily
//! and is absent after `--join` or on a fresh Raft directory, so a node that restarted may
//! have applied less than it had before it stopped, and a topic it created partitions for may
//! be missing from its list for a while. The leader's read index of the current term is at
//! least every index any node ever applied; once applied here, a directory missing from the
//! list is one whose topic was really deleted. Even then it is moved aside, not deleted:
//! deletion is the job of the applied DeleteTopics, which names the exact topic id.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use compaction::LogError;
use tokio::sync::watch;

use super::DataPlane;

/// Under the data directory: where directories no topic owns are moved.
pub const STRAY_DIR: &str = "stray";
/// Pause between two attempts to catch up with the leader.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Most same-named directories `stray/` keeps apart (`name`, `name.1`, ...).
const STRAY_SUFFIX_MAX: u32 = 10_000;

/// The partition directories under `topics_dir` (anything else there is not ours to judge).
pub fn list_dirs(topics_dir: &Path) -> Result<Vec<PathBuf>, LogError> {
    let listing = std::fs::read_dir(topics_dir).map_err(|e| LogError::Io {
        op: "list directory",
        path: topics_dir.to_path_buf(),
        source: e,
    })?;
    let mut dirs: Vec<PathBuf> = listing
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Renames `dir` into `stray_dir` under a free name, durably, with one log line.
pub fn move_aside(dir: &Path, stray_dir: &Path, why: &str) -> Result<PathBuf, LogError> {
    let io = |op, path: &Path, e| LogError::Io {
        op,
        path: path.to_path_buf(),
        source: e,
    };
    compaction::create_dir_durably(stray_dir)?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unnamed".to_owned());
    let target = (0..STRAY_SUFFIX_MAX)
        .map(|n| match n {
            0 => stray_dir.join(&name),
            n => stray_dir.join(format!("{name}.{n}")),
        })
        .find(|p| !p.exists())
        .ok_or_else(|| {
            io(
                "find a free name under",
                stray_dir,
                std::io::Error::other("too many directories of that name"),
            )
        })?;
    std::fs::rename(dir, &target).map_err(|e| io("move aside", dir, e))?;
    compaction::sync_dir(stray_dir)?;
    tracing::warn!(from = %dir.display(), to = %target.display(), reason = why,
        "partition directory moved aside, not deleted (remove it once you know it is not needed)");
    Ok(target)
}

/// Waits until `caught_up` succeeds (the node has applied the leader's read index), then
/// reconciles `data`; keeps everything for as long as it fails (no leader, no quorum), saying
/// so once. Returns early when `shutdown` flips.
pub async fn run<F, Fut, E>(data: Arc<DataPlane>, caught_up: F, mut shutdown: watch::Receiver<bool>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<u64>, E>>,
    E: std::fmt::Display,
{
    let mut said = false;
    loop {
        let attempt = tokio::select! {
            _ = shutdown.changed() => return,
            a = caught_up() => a,
        };
        match attempt {
            Ok(index) => {
                sweep(&data).await;
                tracing::info!(read_index = ?index,
                    "caught up with the leader: partition directories reconciled");
                return;
            }
            Err(e) => {
                if !said {
                    tracing::info!(error = %e,
                        "keeping every partition directory until this node catches up with the leader");
                    said = true;
                }
                tokio::select! {
                    _ = shutdown.changed() => return,
                    _ = tokio::time::sleep(RETRY_AFTER) => {}
                }
            }
        }
    }
}

/// [`DataPlane::reconcile`] off the async threads, failures logged.
pub async fn sweep(data: &Arc<DataPlane>) {
    let plane = Arc::clone(data);
    match tokio::task::spawn_blocking(move || plane.reconcile()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "reconciling partition directories failed"),
        Err(e) => tracing::error!(error = %e, "reconciling partition directories panicked"),
    }
}

/// Sweeps again if the first reconciliation has run (a snapshot replaced the state, or topic
/// events were missed): the catalog is then still at least as new as the leader's was.
pub async fn sweep_again(data: &Arc<DataPlane>) {
    if data.is_reconciled() {
        sweep(data).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_aside_keeps_the_contents_and_never_overwrites() {
        let root = tempfile::tempdir().unwrap();
        let stray = root.path().join(STRAY_DIR);
        for round in 0..2 {
            let dir = root.path().join("t-0");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("f"), format!("round {round}")).unwrap();
            let moved = move_aside(&dir, &stray, "test").unwrap();
            assert!(!dir.exists());
            assert_eq!(
                std::fs::read_to_string(moved.join("f")).unwrap(),
                format!("round {round}")
            );
        }
        assert!(stray.join("t-0").is_dir());
        assert!(stray.join("t-0.1").is_dir());
    }
}
