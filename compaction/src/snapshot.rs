//! Snapshot files: a compacted log (the live records of a state machine) in one file.
//!
//! ```text
//!  +----------+-----+-----+------------+-----------+-----+-----------+-------------+
//!  | CHRTSNAP | ver | pad | frame:meta | frame:rec | ... | frame:rec | frame:trailer|
//!  +----------+-----+-----+------------+-----------+-----+-----------+-------------+
//!   8 bytes    1     7     unkeyed,     keyed, one per     unkeyed, "CHRTEND!" +
//!                          offset 0     key, offsets 1..   record count
//! ```
//!
//! Frames are the log's frames ([`crate::frame`]): length + CRC32C each. The trailer proves
//! the file is whole: a snapshot cut at a frame boundary would otherwise look valid.
//!
//! Write path of [`SnapshotWriter`]:
//!
//! ```text
//!  1. create dir/name.tmp, write header + meta frame
//!  2. push(record)...       buffered frames, appended with write
//!  3. finish: trailer frame, fsync the temp file
//!  4. rename name.tmp -> name, fsync dir      readers see the previous file or this one
//! ```
//!
//! A crash before 4 leaves the previous snapshot (another name, or the old `name`) untouched;
//! the stale `.tmp` is overwritten by the next attempt. [`SnapshotReader`] refuses any damage
//! with a typed error so the caller can fall back to an older snapshot.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::entry::Entry;
use crate::error::LogError;
use crate::frame::{self, Decoded, FrameFault, FRAME_HEADER_LEN};
use crate::fsutil;
use crate::keyed::KeyedRecord;
use crate::types::{Offset, TimestampMs};

const MAGIC: &[u8; 8] = b"CHRTSNAP";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 16;
const TRAILER_MAGIC: &[u8; 8] = b"CHRTEND!";
const TEMP_SUFFIX: &str = ".tmp";
const WRITE_BUFFER_BYTES: usize = 1 << 20;
const READ_CHUNK_BYTES: usize = 1 << 20;

/// Bounds on what a snapshot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// The longest key.
    pub max_key_bytes: u32,
    /// Key + value + framing of one record; also bounds the meta blob.
    pub max_record_bytes: u32,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        SnapshotLimits {
            max_key_bytes: 64 << 10,
            max_record_bytes: 16 << 20,
        }
    }
}

/// Errors of snapshot writing and reading.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// An IO call failed.
    #[error(transparent)]
    Io(#[from] LogError),
    /// Damaged bytes at `position`.
    #[error("corrupt snapshot {} at byte {position}: {reason}", path.display())]
    Corrupt {
        path: PathBuf,
        position: u64,
        reason: SnapshotFault,
    },
    /// The file ends before its trailer: an incomplete copy.
    #[error("snapshot {} ends at byte {position} without its trailer", path.display())]
    Truncated { path: PathBuf, position: u64 },
    /// Written by an unknown (newer) format version.
    #[error("snapshot {}: unsupported format version {version}", path.display())]
    UnsupportedVersion { path: PathBuf, version: u8 },
    /// A key above [`SnapshotLimits::max_key_bytes`].
    #[error("key of {size} bytes exceeds the snapshot limit of {max}")]
    KeyTooLarge { size: u64, max: u64 },
    /// A record (or the meta blob) above [`SnapshotLimits::max_record_bytes`].
    #[error("record of {size} bytes exceeds the snapshot limit of {max}")]
    RecordTooLarge { size: u64, max: u64 },
    /// A name that is not one plain path component, or ends in `.tmp`.
    #[error("invalid snapshot name {0:?}: one plain component, no temp suffix")]
    BadName(String),
}

impl SnapshotError {
    /// Whether the write failed for lack of space (ENOSPC, EDQUOT).
    pub fn is_storage_full(&self) -> bool {
        matches!(self, SnapshotError::Io(e) if e.is_storage_full())
    }
}

/// What is wrong inside a corrupt snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotFault {
    /// The file header (magic, version, padding) is wrong.
    #[error("bad header")]
    Header,
    /// A frame fails its checks.
    #[error("bad frame: {0}")]
    Frame(FrameFault),
    /// The first frame is not the meta frame.
    #[error("missing meta frame")]
    Meta,
    /// A record's sequence number is not the next one.
    #[error("record out of sequence")]
    Sequence,
    /// The trailer is malformed or counts a different number of records.
    #[error("bad trailer")]
    Trailer,
    /// Bytes follow the trailer.
    #[error("bytes after the trailer")]
    AfterTrailer,
}

/// A finished snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The snapshot file.
    pub path: PathBuf,
    /// Records in it (the meta blob and trailer not counted).
    pub records: u64,
    /// File size.
    pub bytes: u64,
}

fn check_name(name: &str) -> Result<(), SnapshotError> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.ends_with(TEMP_SUFFIX);
    if plain {
        Ok(())
    } else {
        Err(SnapshotError::BadName(name.to_owned()))
    }
}

fn header_bytes() -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(MAGIC);
    header[8] = VERSION;
    header
}

/// Streams records into a new snapshot file; [`SnapshotWriter::finish`] makes it visible.
/// Dropped unfinished, it deletes its temp file.
#[derive(Debug)]
pub struct SnapshotWriter {
    dir: PathBuf,
    path: PathBuf,
    temp_path: PathBuf,
    file: Option<File>,
    buffer: Vec<u8>,
    bytes: u64,
    records: u64,
    limits: SnapshotLimits,
}

impl SnapshotWriter {
    /// Starts `dir/name` (written as `dir/name.tmp` until finished) with an opaque `meta` blob
    /// (for instance the last log id and membership the snapshot covers).
    pub fn create(
        dir: &Path,
        name: &str,
        meta: &[u8],
        limits: SnapshotLimits,
    ) -> Result<SnapshotWriter, SnapshotError> {
        check_name(name)?;
        let meta_len = (meta.len() + FRAME_HEADER_LEN) as u64;
        if meta_len > u64::from(limits.max_record_bytes) {
            return Err(SnapshotError::RecordTooLarge {
                size: meta_len,
                max: u64::from(limits.max_record_bytes),
            });
        }
        let temp_path = dir.join(format!("{name}{TEMP_SUFFIX}"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp_path)
            .map_err(|e| LogError::io("create", &temp_path, e))?;
        let mut writer = SnapshotWriter {
            dir: dir.to_path_buf(),
            path: dir.join(name),
            temp_path,
            file: Some(file),
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
            bytes: 0,
            records: 0,
            limits,
        };
        writer.buffer.extend_from_slice(&header_bytes());
        let meta_entry = Entry::single(Offset(0), TimestampMs(0), Bytes::copy_from_slice(meta));
        frame::encode_into(&meta_entry, &mut writer.buffer);
        Ok(writer)
    }

    /// Appends one record: `value: None` writes a tombstone (a compacted log may keep some).
    pub fn push(
        &mut self,
        key: &[u8],
        value: Option<&[u8]>,
        timestamp_ms: TimestampMs,
    ) -> Result<(), SnapshotError> {
        if key.len() as u64 > u64::from(self.limits.max_key_bytes) {
            return Err(SnapshotError::KeyTooLarge {
                size: key.len() as u64,
                max: u64::from(self.limits.max_key_bytes),
            });
        }
        let size = (FRAME_HEADER_LEN + key.len() + value.map_or(0, <[u8]>::len)) as u64;
        if size > u64::from(self.limits.max_record_bytes) {
            return Err(SnapshotError::RecordTooLarge {
                size,
                max: u64::from(self.limits.max_record_bytes),
            });
        }
        let offset = Offset(self.records + 1);
        let parts = frame::FrameParts {
            first_offset: offset,
            last_offset: offset,
            max_timestamp_ms: timestamp_ms,
            key: Some(key),
            payload: value.unwrap_or(&[]),
            tombstone: value.is_none(),
        };
        frame::encode_parts(parts, &mut self.buffer);
        self.records += 1;
        if self.buffer.len() >= WRITE_BUFFER_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SnapshotError> {
        if let Some(file) = self.file.as_mut() {
            file.write_all(&self.buffer)
                .map_err(|e| LogError::io("write", &self.temp_path, e))?;
        }
        self.bytes += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    /// Writes the trailer, fsyncs, renames into place and fsyncs the directory.
    pub fn finish(mut self) -> Result<SnapshotInfo, SnapshotError> {
        let mut trailer = Vec::with_capacity(16);
        trailer.extend_from_slice(TRAILER_MAGIC);
        trailer.extend_from_slice(&self.records.to_le_bytes());
        let entry = Entry::single(
            Offset(self.records + 1),
            TimestampMs(0),
            Bytes::from(trailer),
        );
        frame::encode_into(&entry, &mut self.buffer);
        self.flush()?;
        let file = self
            .file
            .take()
            .ok_or(SnapshotError::Io(LogError::Unsupported(
                "snapshot finished twice",
            )))?;
        let synced = file
            .sync_all()
            .map_err(|e| LogError::io("fsync", &self.temp_path, e));
        drop(file);
        if let Err(error) = synced.and_then(|()| fsutil::rename(&self.temp_path, &self.path)) {
            // The temp file is garbage; on a full disk it holds the space the next try needs.
            let _ = std::fs::remove_file(&self.temp_path);
            return Err(error.into());
        }
        fsutil::sync_dir(&self.dir)?;
        Ok(SnapshotInfo {
            path: self.path.clone(),
            records: self.records,
            bytes: self.bytes,
        })
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // Unfinished: the temp file is garbage. Failing to delete it is harmless (the next
            // writer of this name truncates it).
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

/// Where a reader gets its bytes.
#[derive(Debug)]
enum Source {
    File(File),
    Memory(Bytes),
}

/// Reads a snapshot back, record by record, verifying every CRC, the sequence and the trailer.
/// Iterate it; the first error ends the iteration.
#[derive(Debug)]
pub struct SnapshotReader {
    path: PathBuf,
    source: Source,
    len: u64,
    position: u64,
    chunk: Bytes,
    chunk_start: u64,
    meta: Bytes,
    records: u64,
    done: bool,
    /// Where a part made by [`SnapshotReader::split`] ends: reading stops there, and the part
    /// that holds the trailer checks it. `len` for a whole reader.
    end: u64,
    /// Where the in-memory source's first byte sits in the image: 0, or the start of a part
    /// that [`SnapshotReader::detach`] gave its own copy.
    base: u64,
}

impl SnapshotReader {
    /// Opens the snapshot at `path` and reads its header and meta blob.
    pub fn open(path: &Path) -> Result<SnapshotReader, SnapshotError> {
        let file = File::open(path).map_err(|e| LogError::io("open", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| LogError::io("stat", path, e))?
            .len();
        SnapshotReader::start(path.to_path_buf(), Source::File(file), len)
    }

    /// Reads a snapshot held in memory (one received from a peer); `label` names it in errors.
    pub fn from_bytes(label: &Path, bytes: Bytes) -> Result<SnapshotReader, SnapshotError> {
        let len = bytes.len() as u64;
        SnapshotReader::start(label.to_path_buf(), Source::Memory(bytes), len)
    }

    fn start(path: PathBuf, source: Source, len: u64) -> Result<SnapshotReader, SnapshotError> {
        let mut reader = SnapshotReader {
            path,
            source,
            len,
            position: 0,
            chunk: Bytes::new(),
            chunk_start: 0,
            meta: Bytes::new(),
            records: 0,
            done: false,
            end: len,
            base: 0,
        };
        let at = reader.ensure(0, HEADER_LEN)?;
        let header = reader.chunk.slice(at..);
        if header.len() < HEADER_LEN || header[..8] != MAGIC[..] {
            return Err(reader.corrupt(0, SnapshotFault::Header));
        }
        if header[8] != VERSION {
            return Err(SnapshotError::UnsupportedVersion {
                path: reader.path.clone(),
                version: header[8],
            });
        }
        if header[9..HEADER_LEN].iter().any(|b| *b != 0) {
            return Err(reader.corrupt(0, SnapshotFault::Header));
        }
        reader.position = HEADER_LEN as u64;
        let meta_position = reader.position;
        match reader.next_frame()? {
            Some(entry) if entry.key.is_none() && entry.first_offset == Offset(0) => {
                reader.meta = entry.payload;
            }
            _ => return Err(reader.corrupt(meta_position, SnapshotFault::Meta)),
        }
        Ok(reader)
    }

    /// The record count the trailer states, read from the end of an in-memory image without
    /// walking it: a capacity hint only (the walk still checks the trailer), capped by what the
    /// image's size could hold. `None` for a file source or an image whose end is not a trailer.
    pub fn records_hint(&self) -> Option<u64> {
        let Source::Memory(bytes) = &self.source else {
            return None;
        };
        let trailer_len = frame::FRAME_HEADER_LEN + 16;
        let tail = bytes.get(bytes.len().checked_sub(trailer_len)?..)?;
        let frame::Decoded::Frame(header) = frame::decode(tail) else {
            return None;
        };
        let payload = tail.get(header.payload_range())?;
        if header.keyed || payload.len() != 16 || payload[..8] != TRAILER_MAGIC[..] {
            return None;
        }
        Some(frame::read_u64(payload, 8).min(self.len / frame::FRAME_HEADER_LEN as u64))
    }

    /// Cuts the records of an in-memory image into up to `parts` readers over consecutive
    /// byte ranges of about equal size, to be read on as many threads; reading every part
    /// checks everything one reader would (each frame's CRC, the sequence across the cuts, the
    /// trailer in the last part). The cuts are found by walking the frames' lengths without
    /// their CRCs: a damaged length only moves a cut, and the part that meets it reports it.
    /// A file source, or a reader already partly read, stays one part.
    pub fn split(self, parts: usize) -> Vec<SnapshotReader> {
        let bytes = match &self.source {
            Source::Memory(bytes) => bytes.clone(),
            Source::File(_) => return vec![self],
        };
        if parts < 2 || self.records != 0 || self.end != self.len {
            return vec![self];
        }
        let mut cuts = Vec::new();
        let mut position = self.position;
        let mut records = self.records;
        let step = (self.len - position) / parts as u64;
        let mut next_cut = position.saturating_add(step);
        while cuts.len() + 1 < parts {
            let Some(rest) = bytes.get(position as usize..) else {
                break;
            };
            // The trailer (unkeyed) is never cut before: the last part checks it.
            let Some(header) = frame::peek(rest).filter(|h| h.keyed) else {
                break;
            };
            position += u64::from(header.frame_len);
            records += 1;
            if position >= next_cut {
                cuts.push((position, records));
                next_cut = position.saturating_add(step);
            }
        }
        let mut readers = Vec::with_capacity(cuts.len() + 1);
        let mut first = self;
        for (position, records) in cuts.into_iter().rev() {
            readers.push(SnapshotReader {
                path: first.path.clone(),
                source: Source::Memory(bytes.clone()),
                len: first.len,
                position,
                chunk: Bytes::new(),
                chunk_start: 0,
                meta: first.meta.clone(),
                records,
                done: false,
                end: first.end,
                base: 0,
            });
            first.end = position;
        }
        readers.push(first);
        readers.reverse();
        readers
    }

    /// Gives a part made by [`SnapshotReader::split`] its own copy of the bytes it reads: the
    /// records it returns then share a reference count with no other part's, so threads
    /// reading parts do not contend on one (every record's key and value is a slice, and each
    /// slice counts). Called on the thread that reads the part, the copy runs in parallel too.
    pub fn detach(&mut self) {
        let Source::Memory(bytes) = &self.source else {
            return;
        };
        let (from, until) = (self.position - self.base, self.end - self.base);
        let Some(own) = bytes.get(from as usize..until as usize) else {
            return;
        };
        self.source = Source::Memory(Bytes::copy_from_slice(own));
        self.base = self.position;
        self.chunk = Bytes::new();
        self.chunk_start = self.position;
    }

    /// The opaque meta blob given to [`SnapshotWriter::create`].
    pub fn meta(&self) -> &Bytes {
        &self.meta
    }

    fn corrupt(&self, position: u64, reason: SnapshotFault) -> SnapshotError {
        SnapshotError::Corrupt {
            path: self.path.clone(),
            position,
            reason,
        }
    }

    /// Makes the current chunk hold the bytes from `position` (at least `need` of them unless
    /// the source ends first); returns where `position` is in the chunk.
    fn ensure(&mut self, position: u64, need: usize) -> Result<usize, SnapshotError> {
        let wanted_end = position.saturating_add(need as u64).min(self.end);
        let chunk_end = self.chunk_start + self.chunk.len() as u64;
        if position < self.chunk_start || wanted_end > chunk_end {
            let len = (need.max(READ_CHUNK_BYTES) as u64).min(self.end.saturating_sub(position));
            self.chunk = match &self.source {
                Source::Memory(bytes) => {
                    // Past the part's end (a frame ran over a cut): nothing more to read here.
                    let from = position.saturating_sub(self.base) as usize;
                    let range = from..from.saturating_add(len as usize);
                    if bytes.get(range.clone()).is_none() {
                        return Err(SnapshotError::Truncated {
                            path: self.path.clone(),
                            position,
                        });
                    }
                    bytes.slice(range)
                }
                Source::File(file) => {
                    let mut buf = crate::buffer_pool::take(len as usize);
                    file.read_exact_at(&mut buf, position)
                        .map_err(|e| LogError::io("read", &self.path, e))?;
                    let chunk = buf.freeze();
                    crate::buffer_pool::give(&chunk);
                    chunk
                }
            };
            self.chunk_start = position;
        }
        Ok((position - self.chunk_start) as usize)
    }

    /// The next frame, or `None` at the end of the source.
    fn next_frame(&mut self) -> Result<Option<Entry>, SnapshotError> {
        let position = self.position;
        if position >= self.len {
            return Ok(None);
        }
        let mut at = self.ensure(position, FRAME_HEADER_LEN)?;
        if let Decoded::Incomplete {
            frame_len: Some(len),
        } = frame::decode(&self.chunk[at..])
        {
            if position + u64::from(len) <= self.len {
                at = self.ensure(position, len as usize)?;
            }
        }
        match frame::decode(&self.chunk[at..]) {
            Decoded::Frame(header) => {
                self.position += u64::from(header.frame_len);
                Ok(Some(header.to_entry_at(&self.chunk, at)))
            }
            Decoded::Incomplete { .. } => Err(SnapshotError::Truncated {
                path: self.path.clone(),
                position,
            }),
            Decoded::Invalid(fault) => Err(self.corrupt(position, SnapshotFault::Frame(fault))),
        }
    }

    /// The next record; `Ok(None)` after the trailer has been verified.
    pub fn next_record(&mut self) -> Result<Option<KeyedRecord>, SnapshotError> {
        if self.done {
            return Ok(None);
        }
        let position = self.position;
        if position == self.end && self.end != self.len {
            // The end of a part that `split` cut before the trailer.
            self.done = true;
            return Ok(None);
        }
        let Some(entry) = self.next_frame()? else {
            return Err(SnapshotError::Truncated {
                path: self.path.clone(),
                position,
            });
        };
        if entry.first_offset.0 != self.records + 1
            || entry.last_offset != entry.first_offset
            || self.position > self.end
        {
            return Err(self.corrupt(position, SnapshotFault::Sequence));
        }
        match entry.key {
            Some(key) => {
                self.records += 1;
                Ok(Some(KeyedRecord {
                    offset: entry.first_offset,
                    timestamp_ms: entry.max_timestamp_ms,
                    key,
                    value: (!entry.tombstone).then_some(entry.payload),
                }))
            }
            None => {
                let p = &entry.payload;
                if p.len() != 16
                    || p[..8] != TRAILER_MAGIC[..]
                    || frame::read_u64(p, 8) != self.records
                {
                    return Err(self.corrupt(position, SnapshotFault::Trailer));
                }
                if self.position != self.len {
                    return Err(self.corrupt(self.position, SnapshotFault::AfterTrailer));
                }
                self.done = true;
                Ok(None)
            }
        }
    }

    /// Reads the whole snapshot, checking everything; returns its size and record count.
    pub fn verify(path: &Path) -> Result<SnapshotInfo, SnapshotError> {
        let mut reader = SnapshotReader::open(path)?;
        while reader.next_record()?.is_some() {}
        Ok(SnapshotInfo {
            path: path.to_path_buf(),
            records: reader.records,
            bytes: reader.len,
        })
    }
}

impl Iterator for SnapshotReader {
    type Item = Result<KeyedRecord, SnapshotError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => None,
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }
}

/// Installs a snapshot received as bytes (from a peer) as `dir/name`: verifies it completely,
/// then writes it atomically (temp file, fsync, rename, directory fsync).
pub fn install_snapshot_bytes(
    dir: &Path,
    name: &str,
    bytes: Bytes,
) -> Result<SnapshotInfo, SnapshotError> {
    check_name(name)?;
    let path = dir.join(name);
    let mut reader = SnapshotReader::from_bytes(&path, bytes.clone())?;
    while reader.next_record()?.is_some() {}
    let temp_path = dir.join(format!("{name}{TEMP_SUFFIX}"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp_path)
        .map_err(|e| LogError::io("create", &temp_path, e))?;
    let written = file
        .write_all(&bytes)
        .map_err(|e| LogError::io("write", &temp_path, e))
        .and_then(|()| {
            file.sync_all()
                .map_err(|e| LogError::io("fsync", &temp_path, e))
        });
    drop(file);
    if let Err(error) = written.and_then(|()| fsutil::rename(&temp_path, &path)) {
        // A half-written temp file holds the space a retry needs (a full disk).
        let _ = std::fs::remove_file(&temp_path);
        return Err(error.into());
    }
    fsutil::sync_dir(dir)?;
    Ok(SnapshotInfo {
        path,
        records: reader.records,
        bytes: bytes.len() as u64,
    })
}
