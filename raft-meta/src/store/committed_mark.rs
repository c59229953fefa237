//! The segment store's committed mark: a small file rewritten in place, two slots taking
//! turns, so recording how far the log is committed costs one `pwrite` and one `fdatasync`
//! of a block already allocated, not an atomic file replace (temp file, two fsyncs, a rename
//! and a journal commit: ~8 ms here, inside openraft's core loop, every 200 ms).
//!
//! ```text
//!  <dir>/raft-committed   2 slots of 128 bytes:  len u32 | crc32c u32 | payload | zeros
//!                         payload: tagged (0x0104 v1): seq u64 | opt(committed log id)
//! ```
//!
//! A write goes to slot `seq % 2`, so the other slot keeps the previous mark whole whatever a
//! crash tears. At open the valid slot with the higher `seq` wins; a torn or empty slot is
//! skipped (the mark is a hint: an older one only means a restarted node applies less before
//! its leader tells it more). A slot whose CRC holds but whose payload this binary cannot read
//! (a newer version) fails the open: it was written by a newer binary, and guessing is not
//! reading.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::format::openraft_codec::{get_log_id, put_log_id};
use crate::format::{tags, wire::Reader, wire::Writer, FormatError, Framed};
use crate::types::LogId;

pub(crate) const MARK_FILE: &str = "raft-committed";
const SLOT_BYTES: usize = 128;
const SLOT_PREFIX: usize = 8;

/// One slot's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommittedMark {
    /// Bumped by every write; the higher valid slot is the newer mark.
    pub seq: u64,
    pub committed: Option<LogId>,
}

impl CommittedMark {
    /// `0x02 | 0x0104 | v1 | seq | opt(committed log id)`.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(48));
        crate::format::write_header(&mut w.0, tags::COMMITTED_MARK, 1);
        w.u64(self.seq);
        w.opt(self.committed.as_ref(), put_log_id);
        w.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        match crate::format::split_bare(bytes)? {
            Framed::Untagged(_) => Err(FormatError::UnknownFrame(
                bytes.first().copied().unwrap_or(0),
            )),
            Framed::Tagged { tag, version, body } => {
                tags::check_exact(tag, version, tags::COMMITTED_MARK)?;
                let mut r = Reader::new(body, "committed mark");
                let mark = CommittedMark {
                    seq: r.u64("seq")?,
                    committed: r.opt("committed", get_log_id)?,
                };
                r.finish()?;
                Ok(mark)
            }
        }
    }

    /// The slot bytes: length and CRC32C of the payload, the payload, zeros.
    fn slot(&self) -> [u8; SLOT_BYTES] {
        let payload = self.encode();
        let mut slot = [0u8; SLOT_BYTES];
        // An encoded mark is at most 41 bytes; the slot holds 120.
        let len = payload.len().min(SLOT_BYTES - SLOT_PREFIX);
        slot[..4].copy_from_slice(&(len as u32).to_le_bytes());
        slot[4..8].copy_from_slice(&crc32c::crc32c(&payload[..len]).to_le_bytes());
        slot[SLOT_PREFIX..SLOT_PREFIX + len].copy_from_slice(&payload[..len]);
        slot
    }
}

/// What a slot holds: a mark, nothing usable (empty or torn), or a mark this binary cannot read.
fn read_slot(bytes: &[u8]) -> Result<Option<CommittedMark>, FormatError> {
    let Some(prefix) = bytes.get(..SLOT_PREFIX) else {
        return Ok(None);
    };
    let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
    let crc = u32::from_le_bytes([prefix[4], prefix[5], prefix[6], prefix[7]]);
    let Some(payload) = bytes.get(SLOT_PREFIX..SLOT_PREFIX + len) else {
        return Ok(None);
    };
    if len == 0 || crc32c::crc32c(payload) != crc {
        return Ok(None);
    }
    CommittedMark::decode(payload).map(Some)
}

#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    #[error(transparent)]
    Io(#[from] compaction::LogError),
    #[error("committed mark {path}: {source}")]
    Format { path: PathBuf, source: FormatError },
}

impl MarkError {
    /// Whether the write failed for lack of space (ENOSPC, EDQUOT).
    pub fn is_storage_full(&self) -> bool {
        matches!(self, MarkError::Io(e) if e.is_storage_full())
    }
}

/// The open mark file and the last mark written.
#[derive(Debug)]
pub(crate) struct MarkFile {
    path: PathBuf,
    dir: PathBuf,
    file: Option<File>,
    last: CommittedMark,
}

impl MarkFile {
    /// Reads the newer valid slot of `dir/raft-committed`, if the file exists.
    pub fn open(dir: &Path) -> Result<MarkFile, MarkError> {
        let path = dir.join(MARK_FILE);
        let io = |source| {
            MarkError::Io(compaction::LogError::Io {
                op: "read",
                path: path.clone(),
                source,
            })
        };
        let mut last = CommittedMark::default();
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => {
                let mut raw = vec![0u8; 2 * SLOT_BYTES];
                let read = read_up_to(&file, &mut raw).map_err(io)?;
                for slot in raw[..read].chunks(SLOT_BYTES) {
                    let mark = read_slot(slot).map_err(|source| MarkError::Format {
                        path: path.clone(),
                        source,
                    })?;
                    if let Some(mark) = mark.filter(|m| m.seq >= last.seq) {
                        last = mark;
                    }
                }
                Some(file)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        Ok(MarkFile {
            path,
            dir: dir.to_path_buf(),
            file,
            last,
        })
    }

    /// The mark read at open or written last.
    pub fn committed(&self) -> Option<LogId> {
        self.last.committed
    }

    /// Records `committed` durably in the slot the last write did not use.
    pub fn write(&mut self, committed: Option<LogId>) -> Result<(), MarkError> {
        let path = self.path.clone();
        let io = |source| {
            MarkError::Io(compaction::LogError::Io {
                op: "write",
                path: path.clone(),
                source,
            })
        };
        let file = match self.file.take() {
            Some(file) => file,
            None => {
                // Both slots allocated at once, made durable with the directory entry: later
                // writes change data only, which is all `fdatasync` then waits for.
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&self.path)
                    .map_err(io)?;
                file.write_all_at(&[0u8; 2 * SLOT_BYTES], 0).map_err(io)?;
                file.sync_all().map_err(io)?;
                compaction::sync_dir(&self.dir)?;
                file
            }
        };
        let next = CommittedMark {
            seq: self.last.seq.wrapping_add(1),
            committed,
        };
        let offset = (next.seq % 2) * SLOT_BYTES as u64;
        let written = file
            .write_all_at(&next.slot(), offset)
            .and_then(|()| file.sync_data());
        self.file = Some(file);
        written.map_err(io)?;
        self.last = next;
        Ok(())
    }
}

/// Reads from offset 0 until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut read = 0;
    while read < buf.len() {
        match file.read_at(&mut buf[read..], read as u64)? {
            0 => break,
            n => read += n,
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn log_id(term: u64, node: u64, index: u64) -> LogId {
        LogId::new(openraft::CommittedLeaderId::new(term, node), index)
    }

    #[test]
    fn the_newer_slot_wins_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut mark = MarkFile::open(dir.path()).unwrap();
        assert_eq!(mark.committed(), None);
        for i in 1..=5 {
            mark.write(Some(log_id(1, 1, i * 10))).unwrap();
        }
        let reopened = MarkFile::open(dir.path()).unwrap();
        assert_eq!(reopened.committed(), Some(log_id(1, 1, 50)));
        assert_eq!(reopened.last.seq, 5);
    }

    #[test]
    fn a_torn_slot_leaves_the_other_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut mark = MarkFile::open(dir.path()).unwrap();
        mark.write(Some(log_id(1, 1, 10))).unwrap(); // seq 1: slot 1
        mark.write(Some(log_id(1, 1, 20))).unwrap(); // seq 2: slot 0
        let path = dir.path().join(MARK_FILE);
        let mut raw = std::fs::read(&path).unwrap();
        for at in 0..SLOT_BYTES {
            let mut torn = raw.clone();
            torn[at] ^= 0x40;
            std::fs::write(&path, &torn).unwrap();
            let got = MarkFile::open(dir.path()).map(|m| m.committed());
            assert!(
                matches!(got, Ok(Some(c)) if c == log_id(1, 1, 10) || c == log_id(1, 1, 20)),
                "flip at {at}: {got:?}"
            );
        }
        // Slot 0 zeroed (a write that never reached the disk): the older mark.
        raw[..SLOT_BYTES].fill(0);
        std::fs::write(&path, &raw).unwrap();
        assert_eq!(
            MarkFile::open(dir.path()).unwrap().committed(),
            Some(log_id(1, 1, 10))
        );
        // A short file (a crash while it was first created): no mark.
        std::fs::write(&path, &raw[..5]).unwrap();
        assert_eq!(MarkFile::open(dir.path()).unwrap().committed(), None);
    }

    #[test]
    fn a_mark_of_a_newer_version_fails_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut payload = CommittedMark {
            seq: 1,
            committed: Some(log_id(2, 1, 7)),
        }
        .encode();
        payload[4] = 2; // version 2 (big-endian u16 after the tag)
        let mut slot = vec![0u8; 2 * SLOT_BYTES];
        slot[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        slot[4..8].copy_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
        slot[8..8 + payload.len()].copy_from_slice(&payload);
        std::fs::write(dir.path().join(MARK_FILE), &slot).unwrap();
        assert!(matches!(
            MarkFile::open(dir.path()),
            Err(MarkError::Format { .. })
        ));
    }
}
