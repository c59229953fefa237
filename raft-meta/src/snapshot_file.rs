//! Snapshot files: the application's live records plus the Raft snapshot meta, written atomically
//! and verified whole before use.
//!
//! ```text
//!  "CHSNAP01" | u32 meta_len | meta (postcard SnapshotMeta)
//!  | u64 record_count | { u32 key_len | u32 value_len | key | value } * record_count
//!  | u32 crc32c(everything before) | "CHSNEND1"
//! ```
//!
//! Write path: encode in memory, write `<name>.tmp`, fdatasync, rename to `<name>`, fsync the
//! directory. A crash at any step leaves either the old set of snapshots or the new one; a `.tmp`
//! left behind is deleted at the next open. Read path: the CRC covers every byte, so a torn or
//! bit-flipped file is refused and the loader falls back to the previous snapshot.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::{Buf, Bytes};

use crate::app::Record;
use crate::types::{LogId, SnapshotMeta};

const MAGIC: &[u8; 8] = b"CHSNAP01";
const END_MAGIC: &[u8; 8] = b"CHSNEND1";
const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";
const TMP_SUFFIX: &str = ".snap.tmp";
const CORRUPT_SUFFIX: &str = ".snap.corrupt";

/// A snapshot is held in memory when built, sent and installed; this bounds it.
pub const SNAPSHOT_BYTES_MAX: usize = 2 * 1024 * 1024 * 1024;
/// Bounds the meta section (membership of a handful of nodes; far below this).
const META_BYTES_MAX: usize = 1024 * 1024;

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
    #[error("cannot encode snapshot meta: {0}")]
    Encode(postcard::Error),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotFileError + '_ {
    move |source| SnapshotFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Serializes meta and records into the file image (CRC and end marker included).
pub fn encode(meta: &SnapshotMeta, records: &[Record]) -> Result<Vec<u8>, SnapshotFileError> {
    let meta_raw = postcard::to_stdvec(meta).map_err(SnapshotFileError::Encode)?;
    let records_bytes: usize = records
        .iter()
        .map(|r| 8 + r.key.len() + r.value.len())
        .sum();
    let total = 8 + 4 + meta_raw.len() + 8 + records_bytes + 4 + 8;
    if total > SNAPSHOT_BYTES_MAX {
        return Err(SnapshotFileError::TooLarge(total));
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(meta_raw.len() as u32).to_be_bytes());
    out.extend_from_slice(&meta_raw);
    out.extend_from_slice(&(records.len() as u64).to_be_bytes());
    for r in records {
        out.extend_from_slice(&(r.key.len() as u32).to_be_bytes());
        out.extend_from_slice(&(r.value.len() as u32).to_be_bytes());
        out.extend_from_slice(&r.key);
        out.extend_from_slice(&r.value);
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(END_MAGIC);
    Ok(out)
}

/// Checks the CRC and structure of a file image and returns its meta and records. Records are
/// slices of `image` (no copy).
pub fn decode(image: Bytes) -> Result<(SnapshotMeta, Vec<Record>), SnapshotFileError> {
    let corrupt = |what: &str| SnapshotFileError::Corrupt(what.to_owned());
    if image.len() > SNAPSHOT_BYTES_MAX {
        return Err(SnapshotFileError::TooLarge(image.len()));
    }
    if image.len() < 8 + 4 + 8 + 4 + 8 || &image[..8] != MAGIC {
        return Err(corrupt("missing header"));
    }
    let body_end = image.len() - 12;
    if &image[image.len() - 8..] != END_MAGIC {
        return Err(corrupt("missing end marker (torn write)"));
    }
    let stored_crc = u32::from_be_bytes([
        image[body_end],
        image[body_end + 1],
        image[body_end + 2],
        image[body_end + 3],
    ]);
    if crc32c::crc32c(&image[..body_end]) != stored_crc {
        return Err(corrupt("checksum mismatch"));
    }
    let mut body = image.slice(8..body_end);
    let meta_len = body.get_u32() as usize;
    if meta_len > META_BYTES_MAX || meta_len > body.remaining() {
        return Err(corrupt("meta length out of range"));
    }
    let meta: SnapshotMeta = postcard::from_bytes(&body[..meta_len])
        .map_err(|e| SnapshotFileError::Corrupt(format!("meta: {e}")))?;
    body.advance(meta_len);
    if body.remaining() < 8 {
        return Err(corrupt("missing record count"));
    }
    let count = body.get_u64();
    // Each record needs at least 8 bytes, so a count beyond that is a lie, not an allocation.
    if count > (body.remaining() / 8) as u64 {
        return Err(corrupt("record count out of range"));
    }
    let mut records = Vec::with_capacity(count as usize);
    for _ in 0..count {
        if body.remaining() < 8 {
            return Err(corrupt("truncated record header"));
        }
        let key_len = body.get_u32() as usize;
        let value_len = body.get_u32() as usize;
        if key_len.saturating_add(value_len) > body.remaining() {
            return Err(corrupt("record length out of range"));
        }
        let key = body.split_to(key_len);
        let value = body.split_to(value_len);
        records.push(Record { key, value });
    }
    if body.has_remaining() {
        return Err(corrupt("trailing bytes after records"));
    }
    Ok((meta, records))
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

    /// Writes a file image atomically: temp file, fdatasync, rename, directory fsync.
    pub fn write(
        &self,
        last_log_id: Option<&LogId>,
        image: &[u8],
    ) -> Result<SnapshotFile, SnapshotFileError> {
        let pos = position(last_log_id);
        let name = format!("{PREFIX}{pos:020}");
        let tmp = self.dir.join(format!("{name}{TMP_SUFFIX}"));
        let path = self.dir.join(format!("{name}{SUFFIX}"));
        {
            let mut file = File::create(&tmp).map_err(io_err(&tmp))?;
            file.write_all(image).map_err(io_err(&tmp))?;
            let started = std::time::Instant::now();
            file.sync_data().map_err(io_err(&tmp))?;
            crate::metrics::record_fsync(started.elapsed());
        }
        fs::rename(&tmp, &path).map_err(io_err(&path))?;
        sync_dir(&self.dir)?;
        Ok(SnapshotFile {
            position: pos,
            path,
        })
    }

    /// Reads and verifies one snapshot file.
    pub fn read(
        &self,
        file: &SnapshotFile,
    ) -> Result<(Bytes, SnapshotMeta, Vec<Record>), SnapshotFileError> {
        let raw = fs::read(&file.path).map_err(io_err(&file.path))?;
        let image = Bytes::from(raw);
        let (meta, records) = decode(image.clone())?;
        Ok((image, meta, records))
    }

    /// Loads the newest snapshot that verifies. A corrupt one is renamed `*.corrupt` (kept for
    /// inspection, never retried) with one log line, and the previous one is tried.
    pub fn load_newest_valid(&self) -> Result<Option<LoadedSnapshot>, SnapshotFileError> {
        for file in self.list()? {
            match self.read(&file) {
                Ok((image, meta, records)) => return Ok(Some((file, image, meta, records))),
                Err(SnapshotFileError::Io { path, source }) => {
                    return Err(SnapshotFileError::Io { path, source })
                }
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
    /// kept one: the log may be purged up to (excluding) it and a fallback still replays.
    pub fn retain(&self, keep: usize) -> Result<Option<u64>, SnapshotFileError> {
        let files = self.list()?;
        for old in files.iter().skip(keep) {
            fs::remove_file(&old.path).map_err(io_err(&old.path))?;
        }
        if files.len() > keep {
            sync_dir(&self.dir)?;
        }
        Ok(files.iter().take(keep).next_back().map(|f| f.position))
    }
}

/// fsync on the directory makes a rename or unlink durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), SnapshotFileError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
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
    fn encode_decode_round_trip() {
        let image = encode(&meta(7), &records(100)).unwrap();
        let (m, r) = decode(Bytes::from(image)).unwrap();
        assert_eq!(m, meta(7));
        assert_eq!(r, records(100));
    }

    #[test]
    fn every_truncation_and_every_bit_flip_is_refused() {
        let image = encode(&meta(3), &records(5)).unwrap();
        for len in 0..image.len() {
            assert!(
                decode(Bytes::copy_from_slice(&image[..len])).is_err(),
                "truncated at {len}"
            );
        }
        for at in 0..image.len() {
            let mut flipped = image.clone();
            flipped[at] ^= 0x10;
            assert!(decode(Bytes::from(flipped)).is_err(), "bit flip at {at}");
        }
    }

    #[test]
    fn corrupt_newest_falls_back_to_previous() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        let m1 = meta(10);
        let m2 = meta(20);
        dir.write(m1.last_log_id.as_ref(), &encode(&m1, &records(3)).unwrap())
            .unwrap();
        let newest = dir
            .write(m2.last_log_id.as_ref(), &encode(&m2, &records(4)).unwrap())
            .unwrap();
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
            dir.write(m.last_log_id.as_ref(), &encode(&m, &records(1)).unwrap())
                .unwrap();
        }
        assert_eq!(dir.retain(2).unwrap(), Some(10));
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
