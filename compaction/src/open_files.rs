//! A budget of open segment files, shared by every log of a process that wants one: idle files
//! are closed (least recently used first, by a CLOCK sweep) and reopened by path when read
//! again, so ten thousand partitions with retention do not hold tens of thousands of file
//! descriptors.
//!
//! ```text
//!  FileSlot::get ── open? ── yes ─► Arc<File> (mark referenced: one atomic store)
//!                      └ no ─► reopen by path ─► register ─► over budget? ─► sweep the clock:
//!                                                             skip referenced (clear the bit),
//!                                                             in use, unsynced or pinned;
//!                                                             close the first other one
//! ```
//!
//! What is never closed, so the budget is a target rather than a hard cap:
//! - a file someone holds right now (`Arc<File>` handed to a read or a send): closing the slot
//!   would not free its descriptor, and a reopen would open a second one;
//! - a file with writes not yet fsynced: a writeback error is reported only to descriptors
//!   open when it happened, so closing one could hide a lost write from the next fsync;
//! - a pinned file: its path is about to be unlinked or renamed over (retention, truncation,
//!   a compaction swap), so it can never be reopened by path, and readers that located bytes
//!   in it keep reading the bytes they located.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::error::LogError;
use crate::fsutil;

/// A budget of open segment files (cheap to clone: one shared budget).
#[derive(Debug, Clone)]
pub struct OpenFiles {
    inner: Arc<Budget>,
}

#[derive(Debug)]
struct Budget {
    max: usize,
    open: AtomicUsize,
    closed_total: AtomicU64,
    reopened_total: AtomicU64,
    clock: Mutex<Clock>,
}

#[derive(Debug, Default)]
struct Clock {
    slots: Vec<Weak<SlotInner>>,
    hand: usize,
}

impl OpenFiles {
    /// At most `max` segment files open at once (1 at least), give or take the ones that
    /// cannot be closed right now (module docs).
    pub fn new(max: usize) -> OpenFiles {
        OpenFiles {
            inner: Arc::new(Budget {
                max: max.max(1),
                open: AtomicUsize::new(0),
                closed_total: AtomicU64::new(0),
                reopened_total: AtomicU64::new(0),
                clock: Mutex::new(Clock::default()),
            }),
        }
    }

    /// No budget: files stay open for as long as their segment exists.
    pub fn unlimited() -> OpenFiles {
        OpenFiles::new(usize::MAX)
    }

    /// The budget.
    pub fn max(&self) -> usize {
        self.inner.max
    }

    /// Segment files open now.
    pub fn open(&self) -> usize {
        self.inner.open.load(Ordering::Relaxed)
    }

    /// Files closed to stay within the budget, since the budget was made.
    pub fn closed_total(&self) -> u64 {
        self.inner.closed_total.load(Ordering::Relaxed)
    }

    /// Files reopened by path after the budget closed them.
    pub fn reopened_total(&self) -> u64 {
        self.inner.reopened_total.load(Ordering::Relaxed)
    }

    /// A slot for `file`, just opened or created at `path`.
    pub(crate) fn slot(&self, path: PathBuf, file: File) -> FileSlot {
        let inner = Arc::new(SlotInner {
            path,
            budget: self.inner.clone(),
            referenced: AtomicBool::new(true),
            state: Mutex::new(SlotState {
                file: Some(Arc::new(file)),
                pinned: false,
                gone: false,
                writes: 0,
                synced: 0,
            }),
        });
        self.inner.open.fetch_add(1, Ordering::Relaxed);
        self.inner.register(&inner);
        FileSlot { inner }
    }
}

impl Budget {
    fn lock_clock(&self) -> MutexGuard<'_, Clock> {
        // Nothing panics while holding it; the ring stays consistent.
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a newly opened slot to the clock, then closes others while over budget.
    fn register(&self, slot: &Arc<SlotInner>) {
        if self.max == usize::MAX {
            return;
        }
        let mut clock = self.lock_clock();
        clock.slots.push(Arc::downgrade(slot));
        // Two turns of the hand: the first may only clear referenced bits.
        let mut steps = 2 * clock.slots.len();
        while self.open.load(Ordering::Relaxed) > self.max && steps > 0 && !clock.slots.is_empty() {
            steps -= 1;
            if clock.hand >= clock.slots.len() {
                clock.hand = 0;
            }
            let at = clock.hand;
            let Some(candidate) = clock.slots[at].upgrade() else {
                clock.slots.swap_remove(at);
                continue;
            };
            if Arc::ptr_eq(&candidate, slot) || candidate.referenced.swap(false, Ordering::Relaxed)
            {
                clock.hand += 1;
                continue;
            }
            if candidate.try_close() {
                clock.slots.swap_remove(at);
                self.closed_total.fetch_add(1, Ordering::Relaxed);
            } else {
                clock.hand += 1;
            }
        }
    }
}

#[derive(Debug)]
struct SlotInner {
    path: PathBuf,
    budget: Arc<Budget>,
    /// Used since the clock hand last passed (CLOCK's second chance).
    referenced: AtomicBool,
    state: Mutex<SlotState>,
}

#[derive(Debug)]
struct SlotState {
    /// `None` while closed by the budget.
    file: Option<Arc<File>>,
    /// Never closed, never reopened: the path is about to stop naming this file.
    pinned: bool,
    /// Closed and its path no longer names it: it can never be read again.
    gone: bool,
    /// Writes handed out, and how many of them an fsync covered.
    writes: u64,
    synced: u64,
}

impl SlotInner {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes the file if nothing prevents it (module docs); never waits for the slot.
    fn try_close(&self) -> bool {
        let Ok(mut state) = self.state.try_lock() else {
            return false;
        };
        let closable = !state.pinned
            && state.writes == state.synced
            && state
                .file
                .as_ref()
                .is_some_and(|f| Arc::strong_count(f) == 1);
        if closable {
            state.file = None;
            self.budget.open.fetch_sub(1, Ordering::Relaxed);
        }
        closable
    }
}

impl Drop for SlotInner {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if state.file.take().is_some() {
            self.budget.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// One segment file under a budget: open now, or closed and reopened on use.
#[derive(Debug)]
pub(crate) struct FileSlot {
    inner: Arc<SlotInner>,
}

impl FileSlot {
    /// The file's path.
    #[cfg(test)]
    pub fn path(&self) -> &std::path::Path {
        &self.inner.path
    }

    /// The open file, reopened by path if the budget closed it.
    pub fn get(&self) -> Result<Arc<File>, LogError> {
        let (file, _) = self.get_inner(false)?;
        Ok(file)
    }

    /// The open file for a write: until an fsync covers it, the file is not closed.
    pub fn for_write(&self) -> Result<Arc<File>, LogError> {
        let (file, _) = self.get_inner(true)?;
        Ok(file)
    }

    /// The open file for an fsync, and the writes it will cover (pass them to
    /// [`FileSlot::synced`] once it succeeded).
    pub fn for_sync(&self) -> Result<(Arc<File>, u64), LogError> {
        self.get_inner(false)
    }

    /// An fsync covering the first `writes` writes succeeded.
    pub fn synced(&self, writes: u64) {
        let mut state = self.inner.lock();
        state.synced = state.synced.max(writes);
    }

    /// Keeps the file open for good, before its path is unlinked or renamed over: it is
    /// opened now if the budget closed it (this can fail: the caller's operation fails too).
    pub fn pin(&self) -> Result<(), LogError> {
        self.get_inner(false)?;
        self.inner.lock().pinned = true;
        Ok(())
    }

    /// Its path is going away with its directory (a deleted topic): an open file stays open
    /// for whoever holds it, a closed one is never reopened (reads of it fail).
    pub fn forget_path(&self) {
        let mut state = self.inner.lock();
        if state.file.is_some() {
            state.pinned = true;
        } else {
            state.gone = true;
        }
    }

    /// The file itself, if this slot is its only holder and it is open (compaction takes its
    /// output file out of a private slot to put it under the log's budget).
    pub fn into_file(self) -> Option<File> {
        let file = self.inner.lock().file.take()?;
        self.inner.budget.open.fetch_sub(1, Ordering::Relaxed);
        Arc::try_unwrap(file).ok()
    }

    fn get_inner(&self, write: bool) -> Result<(Arc<File>, u64), LogError> {
        let inner = &self.inner;
        inner.referenced.store(true, Ordering::Relaxed);
        let mut state = inner.lock();
        if write {
            state.writes += 1;
        }
        if let Some(file) = &state.file {
            return Ok((file.clone(), state.writes));
        }
        if state.gone {
            return Err(LogError::io(
                "reopen",
                &inner.path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "segment file removed with its directory",
                ),
            ));
        }
        let file = Arc::new(fsutil::open_rw(&inner.path)?);
        state.file = Some(file.clone());
        let writes = state.writes;
        drop(state);
        inner.budget.open.fetch_add(1, Ordering::Relaxed);
        inner.budget.reopened_total.fetch_add(1, Ordering::Relaxed);
        inner.budget.register(inner);
        Ok((file, writes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(budget: &OpenFiles, dir: &std::path::Path, name: &str) -> FileSlot {
        let path = dir.join(name);
        let file = fsutil::create_new(&path).unwrap();
        budget.slot(path, file)
    }

    #[test]
    fn idle_files_close_past_the_budget_and_reopen_on_use() {
        let dir = tempfile::tempdir().unwrap();
        let budget = OpenFiles::new(2);
        let slots: Vec<FileSlot> = (0..5)
            .map(|i| slot(&budget, dir.path(), &format!("{i}.log")))
            .collect();
        assert!(budget.open() <= 2, "{} open", budget.open());
        assert_eq!(budget.closed_total(), 3);
        for s in &slots {
            std::fs::write(s.path(), b"x").unwrap();
            let mut b = [0u8; 1];
            fsutil::read_exact_at(&s.get().unwrap(), s.path(), &mut b, 0).unwrap();
            assert_eq!(&b, b"x");
        }
        assert!(budget.open() <= 2, "{} open", budget.open());
        assert!(budget.reopened_total() >= 3);
        drop(slots);
        assert_eq!(budget.open(), 0);
    }

    #[test]
    fn files_in_use_unsynced_or_pinned_stay_open() {
        let dir = tempfile::tempdir().unwrap();
        let budget = OpenFiles::new(1);
        let held = slot(&budget, dir.path(), "held.log");
        let in_use = held.get().unwrap();
        let dirty = slot(&budget, dir.path(), "dirty.log");
        dirty.for_write().unwrap();
        let pinned = slot(&budget, dir.path(), "pinned.log");
        pinned.pin().unwrap();
        let _more: Vec<FileSlot> = (0..3)
            .map(|i| slot(&budget, dir.path(), &format!("{i}.log")))
            .collect();
        // The three that cannot close are still open (the budget is exceeded, not broken).
        let open = |s: &FileSlot| s.inner.lock().file.is_some();
        assert!(open(&held) && open(&dirty) && open(&pinned));
        drop(in_use);
        let (_, writes) = dirty.for_sync().unwrap();
        dirty.synced(writes);
        let _another = slot(&budget, dir.path(), "another.log");
        let _again = slot(&budget, dir.path(), "again.log");
        assert!(
            !open(&held) && !open(&dirty),
            "not closed once they could be"
        );
        assert!(open(&pinned));
    }

    #[test]
    fn a_forgotten_closed_file_is_never_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let budget = OpenFiles::new(1);
        let first = slot(&budget, dir.path(), "0.log");
        let _second = slot(&budget, dir.path(), "1.log");
        assert!(first.inner.lock().file.is_none());
        first.forget_path();
        // Something else now lives at the path: it must not be read as this segment.
        std::fs::remove_file(first.path()).unwrap();
        std::fs::write(first.path(), b"another file").unwrap();
        assert!(first.get().is_err());
    }
}
