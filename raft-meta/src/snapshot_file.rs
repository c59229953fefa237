//! Snapshot files: the application's live records plus the Raft snapshot meta, written by
//! `compaction`'s snapshot writer and verified whole before use.
//!
//! ```text
//!  compaction snapshot file:  header | meta frame (tagged snapshot meta, `format::openraft_codec`)
//!                             | record frames | trailer
//!  name: snapshot-<last log index + 1, 20 digits>.snap   (sorts in log order)
//! ```
//!
//! Write path (compaction's): `<name>.tmp`, records streamed, trailer, fsync, rename, directory
//! fsync. A crash at any step leaves the previous set of snapshots; a `.tmp` left behind is
//! deleted at the next open. Read path: every frame's CRC, the record sequence and the trailer are
//! checked, so a torn or bit-flipped file is refused and the loader falls back to the previous
//! snapshot (which the log purge policy keeps replayable).

use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use compaction::{SnapshotError, SnapshotLimits, SnapshotReader, SnapshotWriter, TimestampMs};

use crate::app::Record;
use crate::types::{LogId, SnapshotMeta};

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";
const TMP_SUFFIX: &str = ".snap.tmp";
const CORRUPT_SUFFIX: &str = ".snap.corrupt";

/// A snapshot is held in memory when sent and installed; this bounds it.
pub const SNAPSHOT_BYTES_MAX: usize = 2 * 1024 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotFileError {
    #[error("snapshot io on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("snapshot of {0} bytes is over the {SNAPSHOT_BYTES_MAX}-byte limit")]
    TooLarge(usize),
    #[error("snapshot is corrupt: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Engine(#[from] SnapshotError),
    #[error("snapshot {path} has a meta frame this binary cannot read: {source}")]
    Meta {
        path: PathBuf,
        source: crate::format::FormatError,
    },
}

impl SnapshotFileError {
    /// Whether the write failed for lack of space (ENOSPC, EDQUOT).
    pub fn is_storage_full(&self) -> bool {
        match self {
            SnapshotFileError::Io { source, .. } => compaction::space::is_storage_full_io(source),
            SnapshotFileError::Engine(e) => e.is_storage_full(),
            _ => false,
        }
    }

    /// Damage in the file itself (fall back to an older snapshot), as opposed to an IO failure
    /// (stop: the disk is in trouble, not this file) or a file that verifies but that this
    /// binary cannot read (stop: it was written by a newer binary, or by a bug; falling back
    /// would hide it).
    pub fn is_damage(&self) -> bool {
        !matches!(
            self,
            SnapshotFileError::Io { .. }
                | SnapshotFileError::Meta { .. }
                | SnapshotFileError::Engine(SnapshotError::Io(_))
                | SnapshotFileError::Engine(SnapshotError::UnsupportedVersion { .. })
        )
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotFileError + '_ {
    move |source| SnapshotFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn limits() -> SnapshotLimits {
    SnapshotLimits::default()
}

/// Checks a whole snapshot image (every CRC, the trailer) and returns its meta and records.
pub fn decode(
    label: &Path,
    image: Bytes,
) -> Result<(SnapshotMeta, Vec<Record>), SnapshotFileError> {
    if image.len() > SNAPSHOT_BYTES_MAX {
        return Err(SnapshotFileError::TooLarge(image.len()));
    }
    let image_len = image.len() as u64;
    let reader = SnapshotReader::from_bytes(label, image)?;
    let meta =
        crate::format::openraft_codec::decode_snapshot_meta(reader.meta()).map_err(|source| {
            SnapshotFileError::Meta {
                path: label.to_path_buf(),
                source,
            }
        })?;
    let hint = usize::try_from(reader.records_hint().unwrap_or(0)).unwrap_or(0);
    let threads = if image_len >= PARALLEL_DECODE_BYTES_MIN {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(DECODE_THREADS_MAX))
    } else {
        1
    };
    let mut parts = reader.split(threads).into_iter();
    let Some(first) = parts.next() else {
        return Ok((meta, Vec::new()));
    };
    let per_part = hint / threads;
    // The first part is read here into a vector sized for all; the others on their own
    // threads, each from its own copy of its bytes (no reference count shared across
    // threads), appended after it. Errors are reported in part order: the one a single reader
    // would have met first.
    let (first, others) = std::thread::scope(|scope| {
        let others: Vec<_> = parts
            .map(|mut part| {
                scope.spawn(move || {
                    part.detach();
                    live_records(part, per_part)
                })
            })
            .collect();
        let first = live_records(first, hint);
        let others: Vec<_> = others
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (first, others)
    });
    let mut records = first?;
    for part in others {
        records.append(&mut part?);
    }
    Ok((meta, records))
}

/// Snapshot images smaller than this are decoded on one thread (a thread costs more).
const PARALLEL_DECODE_BYTES_MIN: u64 = 8 << 20;
/// Decode threads at most, whatever the machine has.
const DECODE_THREADS_MAX: usize = 4;

/// The live records of one part of a snapshot (a tombstone has nothing to restore).
fn live_records(
    mut reader: SnapshotReader,
    capacity: usize,
) -> Result<Vec<Record>, SnapshotFileError> {
    let mut records = Vec::with_capacity(capacity);
    while let Some(record) = reader.next_record()? {
        if let Some(value) = record.value {
            records.push(Record {
                key: record.key,
                value,
            });
        }
    }
    Ok(records)
}

/// Where a snapshot sits in log order: one past its last index, 0 for an empty state.
fn position(last_log_id: Option<&LogId>) -> u64 {
    last_log_id.map_or(0, |l| l.index.saturating_add(1))
}

/// A snapshot file on disk, named by its position so a directory listing sorts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    pub position: u64,
    pub path: PathBuf,
}

/// A snapshot read back and verified: the file, its raw image, its meta and its records.
pub type LoadedSnapshot = (SnapshotFile, Bytes, SnapshotMeta, Vec<Record>);

/// The directory holding this node's snapshots.
#[derive(Debug, Clone)]
pub struct SnapshotDir {
    dir: PathBuf,
}

impl SnapshotDir {
    /// Opens (creating) the directory and removes temp files a crash left mid-write.
    pub fn open(dir: &Path) -> Result<Self, SnapshotFileError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        for entry in fs::read_dir(dir).map_err(io_err(dir))? {
            let entry = entry.map_err(io_err(dir))?;
            let name = entry.file_name();
            if name.to_string_lossy().ends_with(TMP_SUFFIX) {
                let path = entry.path();
                fs::remove_file(&path).map_err(io_err(&path))?;
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Valid-looking snapshot files (by name), newest first.
    pub fn list(&self) -> Result<Vec<SnapshotFile>, SnapshotFileError> {
        let mut files = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(io_err(&self.dir))? {
            let entry = entry.map_err(io_err(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pos) = name
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.strip_suffix(SUFFIX))
                .and_then(|digits| digits.parse::<u64>().ok())
            else {
                continue;
            };
            files.push(SnapshotFile {
                position: pos,
                path: entry.path(),
            });
        }
        files.sort_by_key(|f| std::cmp::Reverse(f.position));
        Ok(files)
    }

    fn name(last_log_id: Option<&LogId>) -> (u64, String) {
        let pos = position(last_log_id);
        (pos, format!("{PREFIX}{pos:020}{SUFFIX}"))
    }

    /// Streams `records` into a new snapshot through compaction's writer (temp file, fsync,
    /// rename, directory fsync) and returns the file.
    pub fn write(
        &self,
        meta: &SnapshotMeta,
        records: &[Record],
    ) -> Result<SnapshotFile, SnapshotFileError> {
        let (pos, name) = Self::name(meta.last_log_id.as_ref());
        let meta_raw = crate::format::openraft_codec::encode_snapshot_meta(meta);
        let mut writer = SnapshotWriter::create(&self.dir, &name, &meta_raw, limits())?;
        for r in records {
            writer.push(&r.key, Some(&r.value), TimestampMs(0))?;
        }
        let started = std::time::Instant::now();
        let info = writer.finish()?;
        crate::metrics::record_fsync(started.elapsed());
        Ok(SnapshotFile {
            position: pos,
            path: info.path,
        })
    }

    /// Verifies a snapshot image received from a peer and installs it atomically.
    pub fn install(
        &self,
        meta: &SnapshotMeta,
        image: Bytes,
    ) -> Result<SnapshotFile, SnapshotFileError> {
        let (pos, name) = Self::name(meta.last_log_id.as_ref());
        let info = compaction::install_snapshot_bytes(&self.dir, &name, image)?;
        Ok(SnapshotFile {
            position: pos,
            path: info.path,
        })
    }

    /// Reads and verifies one snapshot file.
    pub fn read(
        &self,
        file: &SnapshotFile,
    ) -> Result<(Bytes, SnapshotMeta, Vec<Record>), SnapshotFileError> {
        let raw = fs::read(&file.path).map_err(io_err(&file.path))?;
        let image = Bytes::from(raw);
        let (meta, records) = decode(&file.path, image.clone())?;
        Ok((image, meta, records))
    }

    /// The raw bytes of a snapshot file (what is streamed to a lagging follower).
    pub fn read_image(&self, file: &SnapshotFile) -> Result<Vec<u8>, SnapshotFileError> {
        fs::read(&file.path).map_err(io_err(&file.path))
    }

    /// Loads the newest snapshot that verifies. A corrupt one is renamed `*.corrupt` (kept for
    /// inspection, never retried) with one log line, and the previous one is tried.
    pub fn load_newest_valid(&self) -> Result<Option<LoadedSnapshot>, SnapshotFileError> {
        for file in self.list()? {
            match self.read(&file) {
                Ok((image, meta, records)) => return Ok(Some((file, image, meta, records))),
                Err(e) if !e.is_damage() => return Err(e),
                Err(e) => {
                    let aside = file
                        .path
                        .with_extension(CORRUPT_SUFFIX.trim_start_matches('.'));
                    tracing::warn!(path = %file.path.display(), error = %e, "snapshot refused; falling back to the previous one");
                    fs::rename(&file.path, &aside).map_err(io_err(&file.path))?;
                    sync_dir(&self.dir)?;
                }
            }
        }
        Ok(None)
    }

    /// Keeps the `keep` newest snapshots, deletes the rest, and returns the position of the oldest
    /// kept one once `keep` exist: the log may be purged up to (excluding) it and a fallback to it
    /// still replays. With fewer, nothing may be purged (a lone corrupt snapshot falls back to an
    /// empty state plus the whole log).
    pub fn retain(&self, keep: usize) -> Result<Option<u64>, SnapshotFileError> {
        let files = self.list()?;
        for old in files.iter().skip(keep) {
            fs::remove_file(&old.path).map_err(io_err(&old.path))?;
        }
        if files.len() > keep {
            sync_dir(&self.dir)?;
        }
        if files.len() < keep {
            return Ok(None);
        }
        Ok(files.iter().take(keep).next_back().map(|f| f.position))
    }
}

/// fsync on the directory makes a rename or unlink durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), SnapshotFileError> {
    compaction::sync_dir(dir).map_err(|e| SnapshotFileError::Io {
        path: dir.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{CommittedLeaderId, Membership, StoredMembership};
    use std::collections::BTreeSet;

    fn meta(index: u64) -> SnapshotMeta {
        let log_id = LogId::new(CommittedLeaderId::new(1, 1), index);
        SnapshotMeta {
            last_log_id: Some(log_id),
            last_membership: StoredMembership::new(
                Some(log_id),
                Membership::new(vec![BTreeSet::from([1u64])], None),
            ),
            snapshot_id: format!("1-1-{index}"),
        }
    }

    fn records(n: usize) -> Vec<Record> {
        (0..n)
            .map(|i| Record {
                key: Bytes::from(format!("key-{i}")),
                value: Bytes::from(format!("value-{i}")),
            })
            .collect()
    }

    #[test]
    fn write_then_read_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        let file = dir.write(&meta(7), &records(100)).unwrap();
        let (_, m, r) = dir.read(&file).unwrap();
        assert_eq!(m, meta(7));
        assert_eq!(r, records(100));
    }

    #[test]
    fn every_truncation_and_every_bit_flip_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        let file = dir.write(&meta(3), &records(5)).unwrap();
        let image = dir.read_image(&file).unwrap();
        let label = Path::new("test");
        for len in 0..image.len() {
            assert!(
                decode(label, Bytes::copy_from_slice(&image[..len])).is_err(),
                "truncated at {len}"
            );
        }
        for at in 0..image.len() {
            let mut flipped = image.clone();
            flipped[at] ^= 0x10;
            assert!(
                decode(label, Bytes::from(flipped)).is_err(),
                "bit flip at {at}"
            );
        }
    }

    #[test]
    fn corrupt_newest_falls_back_to_previous() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        let m1 = meta(10);
        let m2 = meta(20);
        dir.write(&m1, &records(3)).unwrap();
        let newest = dir.write(&m2, &records(4)).unwrap();
        let mut raw = fs::read(&newest.path).unwrap();
        let mid = raw.len() / 2;
        raw[mid] ^= 0xff;
        fs::write(&newest.path, raw).unwrap();

        let (_, _, loaded, recs) = dir.load_newest_valid().unwrap().unwrap();
        assert_eq!(loaded, m1);
        assert_eq!(recs.len(), 3);
        assert_eq!(
            dir.list().unwrap().len(),
            1,
            "the corrupt file is set aside"
        );
    }

    #[test]
    fn retain_keeps_newest_and_reports_oldest_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        for i in [5u64, 9, 14] {
            let m = meta(i);
            dir.write(&m, &records(1)).unwrap();
        }
        assert_eq!(dir.retain(2).unwrap(), Some(10));
        let lone = tempfile::tempdir().unwrap();
        let lone_dir = SnapshotDir::open(lone.path()).unwrap();
        lone_dir.write(&meta(3), &records(1)).unwrap();
        assert_eq!(
            lone_dir.retain(2).unwrap(),
            None,
            "one snapshot: nothing to fall back to"
        );
        let positions: Vec<u64> = dir.list().unwrap().iter().map(|f| f.position).collect();
        assert_eq!(positions, vec![15, 10]);
    }

    #[test]
    fn leftover_temp_file_is_removed_on_open() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join("snapshot-00000000000000000001.snap.tmp"),
            b"half",
        )
        .unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        assert!(dir.list().unwrap().is_empty());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
