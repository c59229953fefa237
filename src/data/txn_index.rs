//! The aborted-transaction index of one segment, in Kafka's `.txnindex` format, and the
//! files of a partition's `txn/` directory.
//!
//! ```text
//!  <partition>/txn/<base:020>.txnindex   entries of the aborts whose marker lies in the
//!                                       segment starting at <base>, 34 bytes each, big-endian:
//!     0  version             i16   0
//!     2  producer id         i64
//!    10  first offset        i64   the transaction's first record
//!    18  last offset         i64   its ABORT marker
//!    26  last stable offset  i64   the LSO right after the abort (Kafka's search stop)
//!  <partition>/txn/<offset:020>.snapshot  producer state as of <offset> (`transactions`)
//! ```
//!
//! A sealed segment's index is written whole when the segment is sealed (temp file, fsync,
//! rename, directory fsync); the active segment's entries live in memory and are rebuilt from
//! the log after a restart. A file whose length is not a multiple of 34, whose version is not
//! 0 or whose entries do not belong to its segment is corrupt: the segment's entries are
//! rebuilt from the log. Files of segments the log no longer has are deleted.

use std::io::Write;
use std::path::{Path, PathBuf};

use compaction::LogError;

/// Bytes of one entry.
pub const ENTRY_BYTES: usize = 34;
/// The only entry version Kafka writes.
pub const ENTRY_VERSION: i16 = 0;
/// The directory of a partition holding its `.txnindex` and `.snapshot` files.
pub const TXN_DIR: &str = "txn";
/// Suffix of index files.
pub const INDEX_SUFFIX: &str = "txnindex";
/// Suffix of producer state snapshots.
pub const SNAPSHOT_SUFFIX: &str = "snapshot";

/// One aborted transaction (Kafka's `AbortedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The producer.
    pub producer_id: i64,
    /// Offset of the transaction's first batch.
    pub first_offset: i64,
    /// Offset of its ABORT marker.
    pub last_offset: i64,
    /// The last stable offset once it was aborted.
    pub last_stable_offset: i64,
}

/// Why an index file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexCorrupt {
    /// Not whole entries.
    #[error("{0} bytes is not a whole number of entries")]
    Length(usize),
    /// An unknown entry version.
    #[error("entry {index} has version {version}")]
    Version {
        /// Entry position.
        index: usize,
        /// Its version.
        version: i16,
    },
    /// An entry outside its segment, out of order, or inconsistent.
    #[error("entry {0} does not belong to its segment")]
    Misplaced(usize),
}

/// Encodes entries as a `.txnindex` file's bytes.
pub fn encode(entries: &[AbortedTxn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * ENTRY_BYTES);
    for e in entries {
        out.extend_from_slice(&ENTRY_VERSION.to_be_bytes());
        out.extend_from_slice(&e.producer_id.to_be_bytes());
        out.extend_from_slice(&e.first_offset.to_be_bytes());
        out.extend_from_slice(&e.last_offset.to_be_bytes());
        out.extend_from_slice(&e.last_stable_offset.to_be_bytes());
    }
    out
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(raw)
}

/// Decodes a `.txnindex` file of the segment covering `[base, next)`: whole entries of
/// version 0, markers inside the segment in increasing order, first offset ≤ marker.
pub fn decode(bytes: &[u8], base: i64, next: i64) -> Result<Vec<AbortedTxn>, IndexCorrupt> {
    if !bytes.len().is_multiple_of(ENTRY_BYTES) {
        return Err(IndexCorrupt::Length(bytes.len()));
    }
    let mut out: Vec<AbortedTxn> = Vec::with_capacity(bytes.len() / ENTRY_BYTES);
    for (index, e) in bytes.chunks_exact(ENTRY_BYTES).enumerate() {
        let version = i16::from_be_bytes([e[0], e[1]]);
        if version != ENTRY_VERSION {
            return Err(IndexCorrupt::Version { index, version });
        }
        let entry = AbortedTxn {
            producer_id: i64_at(e, 2),
            first_offset: i64_at(e, 10),
            last_offset: i64_at(e, 18),
            last_stable_offset: i64_at(e, 26),
        };
        let ordered = out.last().is_none_or(|p| p.last_offset < entry.last_offset);
        if entry.last_offset < base
            || entry.last_offset >= next
            || entry.first_offset < 0
            || entry.first_offset > entry.last_offset
            || entry.producer_id < 0
            || !ordered
        {
            return Err(IndexCorrupt::Misplaced(index));
        }
        out.push(entry);
    }
    Ok(out)
}

/// `<base:020>.<suffix>`.
pub fn file_name(offset: i64, suffix: &str) -> String {
    format!("{offset:020}.{suffix}")
}

/// The offsets of the files in `dir` with `suffix`, ascending (none if `dir` is missing).
pub fn list(dir: &Path, suffix: &str) -> Result<Vec<i64>, LogError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(LogError::Io {
                op: "list transaction files",
                path: dir.to_path_buf(),
                source: e,
            })
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((digits, ext)) = name.split_once('.') else {
            continue;
        };
        if ext != suffix || digits.len() != 20 {
            continue;
        }
        if let Ok(offset) = digits.parse::<i64>() {
            out.push(offset);
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn io(op: &'static str, path: &Path, source: std::io::Error) -> LogError {
    LogError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the index of the segment `[base, next)`: `Ok(None)` if there is no file, `Err`
/// with the reason if it is corrupt.
pub fn read(
    dir: &Path,
    base: i64,
    next: i64,
) -> Result<Option<Result<Vec<AbortedTxn>, IndexCorrupt>>, LogError> {
    let path = dir.join(file_name(base, INDEX_SUFFIX));
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(decode(&bytes, base, next))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read transaction index", &path, e)),
    }
}

/// Writes the index of the segment at `base` whole: temp file, fsync, rename, directory fsync.
pub fn write(dir: &Path, base: i64, entries: &[AbortedTxn]) -> Result<(), LogError> {
    let name = file_name(base, INDEX_SUFFIX);
    let path = dir.join(&name);
    let tmp = dir.join(format!("{name}.tmp"));
    let mut file = std::fs::File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
    file.write_all(&encode(entries))
        .map_err(|e| io("write transaction index", &tmp, e))?;
    file.sync_all().map_err(|e| io("fsync", &tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| io("rename", &path, e))?;
    compaction::sync_dir(dir)
}

/// Removes the file of `offset` with `suffix` (absent is fine); the caller syncs the directory.
pub fn remove(dir: &Path, offset: i64, suffix: &str) -> Result<(), LogError> {
    let path: PathBuf = dir.join(file_name(offset, suffix));
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("remove", &path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: lso,
        }
    }

    #[test]
    fn entries_are_kafkas_34_bytes() {
        let bytes = encode(&[entry(0x0102_0304_0506_0708, 10, 20, 21)]);
        let golden: [u8; 34] = [
            0x00, 0x00, // version 0
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // producer id
            0, 0, 0, 0, 0, 0, 0, 10, // first offset
            0, 0, 0, 0, 0, 0, 0, 20, // last offset
            0, 0, 0, 0, 0, 0, 0, 21, // last stable offset
        ];
        assert_eq!(bytes, golden);
        assert_eq!(
            decode(&golden, 0, 100),
            Ok(vec![entry(0x0102_0304_0506_0708, 10, 20, 21)])
        );
    }

    #[test]
    fn damaged_or_foreign_files_are_corrupt() {
        let two = encode(&[entry(1, 5, 10, 11), entry(2, 3, 12, 13)]);
        assert_eq!(decode(&two, 10, 20).map(|v| v.len()), Ok(2));
        assert_eq!(
            decode(&two[..40], 10, 20),
            Err(IndexCorrupt::Length(40)),
            "a torn entry"
        );
        let mut v1 = two.clone();
        v1[1] = 1;
        assert_eq!(
            decode(&v1, 10, 20),
            Err(IndexCorrupt::Version {
                index: 0,
                version: 1
            })
        );
        assert_eq!(
            decode(&two, 11, 20),
            Err(IndexCorrupt::Misplaced(0)),
            "a marker below the segment"
        );
        assert_eq!(
            decode(&two, 10, 12),
            Err(IndexCorrupt::Misplaced(1)),
            "a marker past the segment"
        );
        let reversed = encode(&[entry(2, 3, 12, 13), entry(1, 5, 10, 11)]);
        assert_eq!(decode(&reversed, 10, 20), Err(IndexCorrupt::Misplaced(1)));
        assert_eq!(decode(&[], 0, 1), Ok(Vec::new()));
    }

    #[test]
    fn files_round_trip_and_list_in_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 200, &[entry(1, 150, 210, 211)]).unwrap();
        write(dir.path(), 0, &[]).unwrap();
        assert_eq!(list(dir.path(), INDEX_SUFFIX).unwrap(), vec![0, 200]);
        assert_eq!(
            read(dir.path(), 200, 300).unwrap(),
            Some(Ok(vec![entry(1, 150, 210, 211)]))
        );
        assert_eq!(read(dir.path(), 300, 400).unwrap(), None);
        remove(dir.path(), 200, INDEX_SUFFIX).unwrap();
        remove(dir.path(), 200, INDEX_SUFFIX).unwrap();
        assert_eq!(list(dir.path(), INDEX_SUFFIX).unwrap(), vec![0]);
    }
}
