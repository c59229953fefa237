//! [`SpaceGuard`]: what a write path does when its filesystem is full (decision 0112).
//!
//! ```text
//!  writer ── admit(bytes) ──► full?  ── yes ─► re-measured < 100 ms ago? refuse : statvfs, maybe resume
//!                              │ no
//!                              └─► reserve > 0: statvfs; free - bytes < reserve ─► full, refuse
//!  writer ── an IO error ───► observe(): ENOSPC / EDQUOT ─► full (one WARN line)
//!  a timer ── recheck() every 100 ms while full ─► free ≥ resume mark ─► not full (one INFO line)
//! ```
//!
//! One guard per *path kind* (partition logs, the Raft log, snapshots, index files): the label
//! and the directory whose filesystem it measures are the caller's; the crate knows neither
//! Kafka nor Raft. A guard never writes anything itself, so it cannot make a full disk fuller.
//!
//! **Resume mark.** A guard marked full by a failed write resumes once the filesystem has
//! [`RESUME_SLACK_BYTES`] more free than when the write failed (and at least the reserve plus
//! the slack). Measuring against the moment of failure also covers EDQUOT: a quota does not show
//! in `statvfs`, but deleting files to get under it frees filesystem space too, while a guard
//! that resumed on "free > 0" would flap between full and resumed on every write.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// While full, free space is measured at most this often by [`SpaceGuard::admit`]; the caller's
/// timer calls [`SpaceGuard::recheck`] at this period so a node resumes without traffic.
pub const RECHECK_INTERVAL: Duration = Duration::from_millis(100);
/// How much space must come back before a full path kind takes writes again.
pub const RESUME_SLACK_BYTES: u64 = 1 << 20;
/// ENOSPC.
const ENOSPC: i32 = 28;
/// EDQUOT (Linux).
const EDQUOT: i32 = 122;

/// Whether an IO error means "no space left": ENOSPC or EDQUOT.
pub fn is_storage_full_io(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    ) || matches!(error.raw_os_error(), Some(ENOSPC | EDQUOT))
}

/// Free bytes (for an unprivileged writer) of the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let stat = rustix::fs::statvfs(path).map_err(io::Error::from)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Why a guard refused a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("disk full on {kind} {}: writes refused until space is freed", path.display())]
pub struct SpaceRefused {
    /// The guard's path kind.
    pub kind: &'static str,
    /// The directory it measures.
    pub path: PathBuf,
}

/// How long a measurement of free space stands in for the next ones while far from the
/// reserve: a commit costs one `statvfs` (~1 µs, a twenty-fifth of its CPU) otherwise.
pub const ESTIMATE_INTERVAL: Duration = Duration::from_millis(100);
/// How far above the reserve the estimate must stay to be trusted; closer, every write
/// measures, so the reserve is kept as exactly as before. Also the most bytes admitted on one
/// measurement.
pub const ESTIMATE_MARGIN_BYTES: u64 = 1 << 20;

/// Free bytes as last measured, and what this guard admitted since.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    at: Instant,
    free: u64,
    admitted: u64,
}

#[derive(Debug)]
struct Inner {
    kind: &'static str,
    path: PathBuf,
    /// Writes are refused while free bytes would fall below this (0: only a failed write
    /// marks the guard full).
    reserve_bytes: AtomicU64,
    full: AtomicBool,
    /// Free bytes must reach this to resume (set when the guard becomes full).
    resume_at_bytes: AtomicU64,
    /// When free space was last measured while full.
    measured: Mutex<Option<Instant>>,
    /// The last measurement of free space against the reserve, and the bytes admitted since.
    estimate: Mutex<Option<Estimate>>,
    /// Writes refused since the guard was made (a counter for tests and metrics).
    refused: AtomicU64,
    /// Times the guard became full.
    episodes: AtomicU64,
}

/// The disk-full state of one path kind; clones share it.
#[derive(Debug, Clone)]
pub struct SpaceGuard {
    inner: Arc<Inner>,
}

impl SpaceGuard {
    /// A guard for the path kind `kind` (a short label: `partition-log`, `raft-log`...) whose
    /// files live under `path`; writes through [`SpaceGuard::admit`] are refused while the
    /// filesystem would keep less than `reserve_bytes` free.
    pub fn new(kind: &'static str, path: impl Into<PathBuf>, reserve_bytes: u64) -> SpaceGuard {
        SpaceGuard {
            inner: Arc::new(Inner {
                kind,
                path: path.into(),
                reserve_bytes: AtomicU64::new(reserve_bytes),
                full: AtomicBool::new(false),
                resume_at_bytes: AtomicU64::new(0),
                measured: Mutex::new(None),
                estimate: Mutex::new(None),
                refused: AtomicU64::new(0),
                episodes: AtomicU64::new(0),
            }),
        }
    }

    /// The path kind's label.
    pub fn kind(&self) -> &'static str {
        self.inner.kind
    }

    /// The directory whose filesystem is measured.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The reserve this guard keeps free.
    pub fn reserve_bytes(&self) -> u64 {
        self.inner.reserve_bytes.load(Ordering::Relaxed)
    }

    /// Changes the reserve (the owner of the path kind knows it once its configuration is).
    pub fn set_reserve_bytes(&self, reserve_bytes: u64) {
        self.inner
            .reserve_bytes
            .store(reserve_bytes, Ordering::Relaxed);
    }

    /// Whether writes of this path kind are refused now.
    pub fn is_full(&self) -> bool {
        self.inner.full.load(Ordering::Acquire)
    }

    /// Writes refused so far.
    pub fn refused_count(&self) -> u64 {
        self.inner.refused.load(Ordering::Relaxed)
    }

    /// How many times the guard became full.
    pub fn full_episodes(&self) -> u64 {
        self.inner.episodes.load(Ordering::Relaxed)
    }

    /// The refusal this guard answers with.
    pub fn refusal(&self) -> SpaceRefused {
        SpaceRefused {
            kind: self.inner.kind,
            path: self.inner.path.clone(),
        }
    }

    fn lock_measured(&self) -> MutexGuard<'_, Option<Instant>> {
        // Nothing panics while holding it; a poisoned lock still holds a usable instant.
        self.inner
            .measured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Checks, before anything is written, that `bytes` more may go to disk. While the guard is
    /// full it refuses (re-measuring at most every [`RECHECK_INTERVAL`]); otherwise, with a
    /// reserve, it refuses (and becomes full) when the write would leave less than the reserve
    /// free. A filesystem that cannot be measured admits: the write itself will tell.
    pub fn admit(&self, bytes: u64) -> Result<(), SpaceRefused> {
        if self.is_full() {
            let due = {
                let mut measured = self.lock_measured();
                let due = measured.is_none_or(|at| at.elapsed() >= RECHECK_INTERVAL);
                if due {
                    *measured = Some(Instant::now());
                }
                due
            };
            if !(due && self.try_resume()) {
                self.inner.refused.fetch_add(1, Ordering::Relaxed);
                return Err(self.refusal());
            }
        }
        let reserve = self.reserve_bytes();
        if reserve > 0 && !self.admitted_on_estimate(bytes, reserve) {
            if let Ok(free) = free_bytes(&self.inner.path) {
                if free.saturating_sub(bytes) < reserve {
                    self.become_full(free, "free space below the reserve");
                    self.inner.refused.fetch_add(1, Ordering::Relaxed);
                    return Err(self.refusal());
                }
                *self.lock_estimate() = Some(Estimate {
                    at: Instant::now(),
                    free,
                    admitted: bytes,
                });
            }
        }
        Ok(())
    }

    /// Admits `bytes` without measuring when the last measurement is recent, little was
    /// admitted since, and what it leaves stays a margin above the reserve; otherwise the
    /// caller measures.
    fn admitted_on_estimate(&self, bytes: u64, reserve: u64) -> bool {
        let mut estimate = self.lock_estimate();
        let Some(e) = estimate.as_mut() else {
            return false;
        };
        let admitted = e.admitted.saturating_add(bytes);
        let trusted = e.at.elapsed() < ESTIMATE_INTERVAL
            && admitted <= ESTIMATE_MARGIN_BYTES
            && e.free.saturating_sub(admitted) >= reserve.saturating_add(ESTIMATE_MARGIN_BYTES);
        if trusted {
            e.admitted = admitted;
        }
        trusted
    }

    fn lock_estimate(&self) -> std::sync::MutexGuard<'_, Option<Estimate>> {
        // Nothing panics while holding it.
        self.inner
            .estimate
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Classifies a failed write: ENOSPC or EDQUOT makes the guard full (one log line when it
    /// becomes so). Returns whether it was such an error.
    pub fn observe(&self, error: &io::Error) -> bool {
        if !is_storage_full_io(error) {
            return false;
        }
        let free = free_bytes(&self.inner.path).unwrap_or(0);
        self.become_full(free, &error.to_string());
        true
    }

    /// Marks the guard full (a write failed for lack of space, as the caller found).
    pub fn mark_full(&self, why: &str) {
        let free = free_bytes(&self.inner.path).unwrap_or(0);
        self.become_full(free, why);
    }

    fn become_full(&self, free: u64, why: &str) {
        *self.lock_estimate() = None;
        let reserve = self.reserve_bytes();
        let resume_at = free
            .saturating_add(RESUME_SLACK_BYTES)
            .max(reserve.saturating_add(RESUME_SLACK_BYTES));
        self.inner
            .resume_at_bytes
            .store(resume_at, Ordering::Release);
        *self.lock_measured() = Some(Instant::now());
        if !self.inner.full.swap(true, Ordering::AcqRel) {
            self.inner.episodes.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                path_kind = self.inner.kind,
                path = %self.inner.path.display(),
                free_bytes = free,
                reserve_bytes = reserve,
                cause = why,
                "disk full on {} {}: writes refused until space is freed",
                self.inner.kind,
                self.inner.path.display()
            );
        }
    }

    /// Measures free space now; a full guard whose filesystem has reached its resume mark takes
    /// writes again (one log line). Returns whether the guard is still full. Call it every
    /// [`RECHECK_INTERVAL`] while [`SpaceGuard::is_full`].
    pub fn recheck(&self) -> bool {
        if !self.is_full() {
            return false;
        }
        *self.lock_measured() = Some(Instant::now());
        !self.try_resume()
    }

    /// Resumes if there is room; true when the guard is no longer full.
    fn try_resume(&self) -> bool {
        let Ok(free) = free_bytes(&self.inner.path) else {
            return false;
        };
        if free < self.inner.resume_at_bytes.load(Ordering::Acquire) {
            return false;
        }
        if self.inner.full.swap(false, Ordering::AcqRel) {
            tracing::info!(
                path_kind = self.inner.kind,
                path = %self.inner.path.display(),
                free_bytes = free,
                "disk space freed on {} {}: writes resume",
                self.inner.kind,
                self.inner.path.display()
            );
        }
        true
    }

    /// Blocks (sleeping, for a blocking thread) until the guard is no longer full, re-measuring
    /// with a back-off from 10 ms up to [`RECHECK_INTERVAL`]. Returns at once if it is not full.
    pub fn wait_until_writable(&self) {
        let mut pause = Duration::from_millis(10);
        while self.recheck() {
            std::thread::sleep(pause);
            pause = (pause * 2).min(RECHECK_INTERVAL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_and_edquot_are_storage_full_and_other_errors_are_not() {
        assert!(is_storage_full_io(&io::Error::from_raw_os_error(28)));
        assert!(is_storage_full_io(&io::Error::from_raw_os_error(122)));
        assert!(is_storage_full_io(&io::Error::from(
            io::ErrorKind::StorageFull
        )));
        assert!(!is_storage_full_io(&io::Error::from_raw_os_error(5)));
        assert!(!is_storage_full_io(&io::Error::other("no")));
    }

    #[test]
    fn a_failed_write_makes_the_guard_full_until_space_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let guard = SpaceGuard::new("test", dir.path(), 0);
        assert!(guard.admit(1 << 20).is_ok());
        assert!(!guard.observe(&io::Error::from_raw_os_error(5)));
        assert!(!guard.is_full());
        assert!(guard.observe(&io::Error::from_raw_os_error(28)));
        assert!(guard.is_full());
        assert_eq!(guard.full_episodes(), 1);
        // Free space has not grown by the slack since the failure: still full.
        assert!(guard.recheck());
        let refused = guard.admit(1).unwrap_err();
        assert_eq!(refused.kind, "test");
        assert!(refused.to_string().starts_with("disk full on test "));
        assert_eq!(guard.refused_count(), 1);
    }

    #[test]
    fn a_recent_measurement_admits_far_from_the_reserve_never_near_it() {
        let dir = tempfile::tempdir().unwrap();
        let guard = SpaceGuard::new("raft-log", dir.path(), 1);
        for _ in 0..1000 {
            guard.admit(100).unwrap();
        }
        let e = (*guard.lock_estimate()).unwrap();
        assert!(
            e.admitted > 0 && e.admitted <= ESTIMATE_MARGIN_BYTES,
            "{e:?}"
        );
        // A reserve at the last measurement: measured again, refused at once (unless 64 MiB
        // were freed on this filesystem in between).
        guard.set_reserve_bytes(e.free);
        assert!(guard.admit(64 * ESTIMATE_MARGIN_BYTES).is_err());
        assert!(guard.is_full());
        assert!(guard.lock_estimate().is_none());
    }

    #[test]
    fn a_reserve_larger_than_the_filesystem_refuses_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let guard = SpaceGuard::new("test", dir.path(), u64::MAX / 2);
        assert!(guard.admit(1).is_err());
        assert!(guard.is_full());
        assert!(guard.recheck(), "cannot resume below the reserve");
    }
}
