//! The log engine: CRC-framed segment files, sparse indexes, open-time recovery, retention,
//! group-committed durability, key-based compaction, snapshots and atomic small files.
//!
//! The crate knows nothing of Kafka, groups or Raft: entries, keys and values are opaque bytes.
//!
//! ```text
//!   Log (one directory)                               disk
//!   ├── append ──> active segment  ───────────────>  00000000000000001000.log
//!   │              + in-memory sparse index           (sealed: .log + .index + .timeindex)
//!   ├── sync_to ─> group commit: one fdatasync for all waiting appenders
//!   ├── read / find_by_timestamp: pread outside locks, CRC checked, zero-copy payloads
//!   ├── read_located: large payloads left in the file as `FileSlice`s (for sendfile)
//!   ├── truncate_from / purge_to / apply_retention: whole segments, directory fsync
//!   └── compact: rewrite sealed segments by key, atomic swap (.cleaned -> .swap -> .log)
//!
//!   snapshot::{SnapshotWriter, SnapshotReader}: a compacted log as one file, written
//!     temp -> fsync -> rename -> fsync dir, read back with every frame's CRC verified
//!   atomic_file::{write_file_atomically, read_file_checked}: small state (a Raft vote)
//!   space::SpaceGuard: ENOSPC/EDQUOT and a free-space reserve refuse writes, then resume
//! ```
//!
//! [`log`] draws the write path and the recovery rules; [`frame`] the on-disk frame;
//! [`segment`] the segment file; [`log_compaction`] the compaction swap.

pub mod atomic_file;
mod buffer_pool;
pub mod config;
pub mod entry;
pub mod error;
pub mod frame;
mod fsutil;
mod group_commit;
mod index;
mod index_file;
pub mod keyed;
pub mod log;
pub mod log_compaction;
mod log_locate;
mod log_maintenance;
mod log_read;
mod open_files;
pub mod segment;
pub mod snapshot;
pub mod space;
pub mod types;

pub use atomic_file::{read_file_checked, write_file_atomically, AtomicFileError};
pub use config::LogConfig;
pub use entry::Entry;
pub use error::{CorruptReason, LogError};
pub use fsutil::{create_dir_durably, sync_dir};
pub use keyed::{compact_records, replay, KeyedRecord, TombstonePolicy};
pub use log::{AppendInfo, DeletedSegments, Log, RetentionPolicy, SegmentInfo};
pub use log_compaction::CompactionOutcome;
pub use log_locate::{FileSlice, LocatedEntry, SliceCut, FILE_TAIL_MIN_BYTES};
pub use open_files::OpenFiles;
pub use snapshot::{
    install_snapshot_bytes, SnapshotError, SnapshotInfo, SnapshotLimits, SnapshotReader,
    SnapshotWriter,
};
pub use space::{SpaceGuard, SpaceRefused};
pub use types::{Offset, TimestampMs};
