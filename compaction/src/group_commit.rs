//! Group commit: many appenders, one `fdatasync` covering all of them.
//!
//! ```text
//!  appender A: append ─┐                       ┌─> durable >= A's end: return
//!  appender B: append ─┼─> sync_to(end) ──┬──> │   (B and C waited on the condvar while A
//!  appender C: append ─┘                  │    │    ran the one fdatasync covering all three)
//!                                         │    └─> not yet covered: become the next syncer
//!          first caller finding no sync running:
//!            1. note the log end it is about to cover (every append published so far)
//!            2. fdatasync the active segment, no lock held
//!            3. durable = that end; wake everyone
//! ```
//!
//! A failed fsync poisons the log: the kernel may already have dropped the dirty pages, so a
//! later successful fsync would not prove the earlier writes durable (the fsyncgate lesson).
//! Truncation bumps an epoch so a sync that started before it cannot raise `durable` over
//! entries the truncation removed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::error::LogError;
use crate::types::Offset;

#[derive(Debug)]
struct CommitState {
    /// Every entry below this offset is on disk.
    durable: Offset,
    /// A caller is running an fdatasync right now.
    syncing: bool,
    /// Bumped by truncation (and re-basing an empty log).
    epoch: u64,
    /// Set by the first failed sync; the log refuses writes from then on.
    poisoned: Option<String>,
    /// Callers waiting on the condvar: with none, a change wakes nobody and costs no
    /// `futex` call (std's condvar makes one on every notify; a lone appender's every sync
    /// paid it).
    waiters: u32,
}

/// The durable offset and the rendezvous of callers waiting for it.
#[derive(Debug)]
pub struct GroupCommit {
    state: Mutex<CommitState>,
    changed: Condvar,
    /// fdatasyncs run by group commit: appends per sync is the batching ratio.
    syncs: AtomicU64,
}

/// What a syncer must fsync: captured atomically with the log end it covers.
pub struct SyncTarget {
    /// The log end the fsync will cover.
    pub end: Offset,
    /// Performs the fsync.
    pub sync: Box<dyn FnOnce() -> Result<(), LogError> + Send>,
}

impl GroupCommit {
    pub fn new(durable: Offset) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(CommitState {
                durable,
                syncing: false,
                epoch: 0,
                poisoned: None,
                waiters: 0,
            }),
            changed: Condvar::new(),
            syncs: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CommitState> {
        // No code panics while holding this lock; recover the guard if something ever did.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the waiters, if any: called with the lock held, after a change to `state`.
    fn wake(&self, state: &CommitState) {
        if state.waiters > 0 {
            self.changed.notify_all();
        }
    }

    pub fn sync_count(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    pub fn durable(&self) -> Offset {
        self.lock().durable
    }

    /// `Err(Poisoned)` once a sync has failed.
    pub fn check_poisoned(&self) -> Result<(), LogError> {
        match &self.lock().poisoned {
            Some(reason) => Err(LogError::Poisoned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Records a failure that leaves the on-disk state unknown.
    pub fn poison(&self, error: &LogError) {
        let mut state = self.lock();
        let first = state.poisoned.is_none();
        if first {
            state.poisoned = Some(error.to_string());
        }
        self.wake(&state);
        drop(state);
        if first {
            // The one line an operator gets: every later append is refused with this reason.
            tracing::error!(%error, "log poisoned: its state on disk is unknown, appends refused until restart");
        }
    }

    /// Everything below `end` was made durable outside a group sync (a roll fsyncs the segment
    /// it seals).
    pub fn mark_durable(&self, end: Offset) {
        let mut state = self.lock();
        if end > state.durable {
            state.durable = end;
        }
        self.wake(&state);
    }

    /// The log was cut back to `end` (or re-based there): entries at and after it are gone,
    /// and any sync in flight covers a log that no longer exists.
    pub fn reset(&self, end: Offset, durable: Offset) {
        let mut state = self.lock();
        state.epoch += 1;
        state.durable = durable.min(end);
        self.wake(&state);
    }

    /// Returns once every entry below `end` is durable. The first caller that finds no sync
    /// running captures a target with `capture` and fsyncs it; the others wait.
    pub fn sync_to(&self, end: Offset, capture: impl Fn() -> SyncTarget) -> Result<(), LogError> {
        let mut state = self.lock();
        loop {
            if let Some(reason) = &state.poisoned {
                return Err(LogError::Poisoned(reason.clone()));
            }
            if state.durable >= end {
                return Ok(());
            }
            if state.syncing {
                state.waiters += 1;
                state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                state.waiters -= 1;
                continue;
            }
            state.syncing = true;
            let epoch = state.epoch;
            drop(state);

            let target = capture();
            let covered = target.end;
            let outcome = (target.sync)();
            self.syncs.fetch_add(1, Ordering::Relaxed);

            state = self.lock();
            state.syncing = false;
            match outcome {
                Ok(()) => {
                    if state.epoch == epoch && covered > state.durable {
                        state.durable = covered;
                    }
                    self.wake(&state);
                    if state.epoch == epoch && covered < end {
                        // Nothing appended will ever reach `end`: the caller asked beyond the
                        // log (or a truncation removed it).
                        return Err(LogError::SyncBeyondEnd {
                            requested: end,
                            end: covered,
                        });
                    }
                }
                Err(error) => {
                    if state.poisoned.is_none() {
                        state.poisoned = Some(error.to_string());
                    }
                    self.wake(&state);
                    return Err(error);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{mpsc, Arc, Mutex};

    use super::*;

    /// A caller that finds a sync running waits, is woken when it ends (its end covered),
    /// and is no longer counted; a notify is only skipped when nobody is counted.
    #[test]
    fn a_caller_waiting_on_a_running_sync_is_woken_when_it_ends() {
        let commit = Arc::new(GroupCommit::new(Offset(0)));
        let (started, syncing) = mpsc::channel::<()>();
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let syncer = {
            let commit = Arc::clone(&commit);
            std::thread::spawn(move || {
                commit.sync_to(Offset(5), || {
                    let started = started.clone();
                    let released = Arc::clone(&released);
                    SyncTarget {
                        end: Offset(5),
                        sync: Box::new(move || {
                            started.send(()).unwrap();
                            released.lock().unwrap().recv().unwrap();
                            Ok(())
                        }),
                    }
                })
            })
        };
        syncing.recv().unwrap();
        let waiter = {
            let commit = Arc::clone(&commit);
            std::thread::spawn(move || {
                commit.sync_to(Offset(3), || SyncTarget {
                    end: Offset(0),
                    sync: Box::new(|| Err(LogError::Poisoned("a second sync ran".into()))),
                })
            })
        };
        while commit.lock().waiters == 0 {
            std::thread::yield_now();
        }
        release.send(()).unwrap();
        syncer.join().unwrap().unwrap();
        waiter.join().unwrap().unwrap();
        assert_eq!(commit.lock().waiters, 0);
        assert_eq!(commit.durable(), Offset(5));
        assert_eq!(commit.sync_count(), 1);
    }
}
