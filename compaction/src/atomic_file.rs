//! Small files replaced atomically (a Raft vote, a checkpoint): all of the old content or all
//! of the new, never a mix, and a CRC proves which.
//!
//! Write path of [`write_file_atomically`]:
//!
//! ```text
//!  1. write  dir/name.tmp   header (magic, version, length, crc32c) + bytes
//!  2. fsync  dir/name.tmp   the new bytes are on disk, under a name nobody reads
//!  3. rename name.tmp -> name   atomic: readers see the old file or the new one
//!  4. fsync  dir            the rename itself survives a crash
//! ```
//!
//! A crash before 3 leaves the old file; a crash between 3 and 4 leaves either, both whole.
//! [`read_file_checked`] verifies the CRC so a damaged file is an error, never a wrong value.

use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::LogError;
use crate::fsutil;

const MAGIC: &[u8; 4] = b"CHAF";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 16;
/// These files hold small state; anything bigger is a mistake or damage.
pub const MAX_ATOMIC_FILE_BYTES: usize = 64 << 20;

/// Errors of the atomic small-file helpers.
#[derive(Debug, thiserror::Error)]
pub enum AtomicFileError {
    /// An IO call failed.
    #[error(transparent)]
    Io(#[from] LogError),
    /// The file is damaged: bad magic, version, length or CRC.
    #[error("{}: {reason}", path.display())]
    Corrupt { path: PathBuf, reason: &'static str },
    /// More than [`MAX_ATOMIC_FILE_BYTES`].
    #[error("{size} bytes exceed the atomic file limit of {max}")]
    TooLarge { size: usize, max: usize },
    /// A name that is not one plain path component, or ends in `.tmp`.
    #[error("invalid file name {0:?}: one plain component, no temp suffix")]
    BadName(String),
}

impl AtomicFileError {
    /// Whether the write failed for lack of space (ENOSPC, EDQUOT).
    pub fn is_storage_full(&self) -> bool {
        matches!(self, AtomicFileError::Io(e) if e.is_storage_full())
    }
}

fn check_name(name: &str) -> Result<(), AtomicFileError> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.ends_with(".tmp");
    if plain {
        Ok(())
    } else {
        Err(AtomicFileError::BadName(name.to_owned()))
    }
}

/// Replaces `dir/name` with `bytes` atomically and durably (steps in the module docs).
pub fn write_file_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), AtomicFileError> {
    check_name(name)?;
    if bytes.len() > MAX_ATOMIC_FILE_BYTES {
        return Err(AtomicFileError::TooLarge {
            size: bytes.len(),
            max: MAX_ATOMIC_FILE_BYTES,
        });
    }
    let tmp = dir.join(format!("{name}.tmp"));
    let target = dir.join(name);
    let mut content = Vec::with_capacity(HEADER_LEN + bytes.len());
    content.extend_from_slice(MAGIC);
    content.push(VERSION);
    content.extend_from_slice(&[0u8; 3]);
    content.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&content[0..12]), bytes);
    content.extend_from_slice(&crc.to_le_bytes());
    content.extend_from_slice(bytes);

    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| LogError::io("create", &tmp, e))?;
    let written = file
        .write_all(&content)
        .map_err(|e| LogError::io("write", &tmp, e))
        .and_then(|()| file.sync_all().map_err(|e| LogError::io("fsync", &tmp, e)));
    drop(file);
    if let Err(error) = written.and_then(|()| fsutil::rename(&tmp, &target)) {
        // The previous file stands; the temp one would only hold space a retry needs (a full
        // disk, decision 0112).
        let _ = std::fs::remove_file(&tmp);
        return Err(error.into());
    }
    fsutil::sync_dir(dir)?;
    Ok(())
}

/// Reads a file written by [`write_file_atomically`]: `Ok(None)` if it does not exist, an error
/// if its header or CRC do not check out.
pub fn read_file_checked(dir: &Path, name: &str) -> Result<Option<Bytes>, AtomicFileError> {
    check_name(name)?;
    let path = dir.join(name);
    let content = match std::fs::read(&path) {
        Ok(content) => content,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LogError::io("read", &path, e).into()),
    };
    let corrupt = |reason| AtomicFileError::Corrupt {
        path: path.clone(),
        reason,
    };
    if content.len() < HEADER_LEN {
        return Err(corrupt("shorter than its header"));
    }
    if &content[0..4] != MAGIC {
        return Err(corrupt("bad magic"));
    }
    if content[4] != VERSION {
        return Err(corrupt("unknown version"));
    }
    let len = crate::frame::read_u32(&content, 8) as usize;
    if len > MAX_ATOMIC_FILE_BYTES || content.len() != HEADER_LEN + len {
        return Err(corrupt("length does not match the file"));
    }
    let stored = crate::frame::read_u32(&content, 12);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&content[0..12]), &content[HEADER_LEN..]);
    if crc != stored {
        return Err(corrupt("crc mismatch"));
    }
    let mut content = Bytes::from(content);
    Ok(Some(content.split_off(HEADER_LEN)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_file_checked(dir.path(), "vote").unwrap(), None);
        write_file_atomically(dir.path(), "vote", b"first").unwrap();
        write_file_atomically(dir.path(), "vote", b"second").unwrap();
        let got = read_file_checked(dir.path(), "vote").unwrap().unwrap();
        assert_eq!(&got[..], b"second");
        assert!(!dir.path().join("vote.tmp").exists());
    }

    #[test]
    fn any_flipped_bit_or_truncation_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        write_file_atomically(dir.path(), "vote", b"term=3 node=2").unwrap();
        let path = dir.path().join("vote");
        let good = std::fs::read(&path).unwrap();
        for bit in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&path, &bad).unwrap();
            assert!(read_file_checked(dir.path(), "vote").is_err(), "bit {bit}");
        }
        for cut in 0..good.len() {
            std::fs::write(&path, &good[..cut]).unwrap();
            assert!(read_file_checked(dir.path(), "vote").is_err(), "cut {cut}");
        }
    }

    #[test]
    fn a_leftover_temp_file_does_not_change_what_is_read() {
        let dir = tempfile::tempdir().unwrap();
        write_file_atomically(dir.path(), "vote", b"durable").unwrap();
        // A crash between writing the temp file and the rename leaves this behind.
        std::fs::write(dir.path().join("vote.tmp"), b"half-writ").unwrap();
        let got = read_file_checked(dir.path(), "vote").unwrap().unwrap();
        assert_eq!(&got[..], b"durable");
        write_file_atomically(dir.path(), "vote", b"next").unwrap();
        let got = read_file_checked(dir.path(), "vote").unwrap().unwrap();
        assert_eq!(&got[..], b"next");
    }

    #[test]
    fn names_that_escape_the_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["", ".", "..", "a/b", "x.tmp"] {
            assert!(matches!(
                write_file_atomically(dir.path(), name, b"x"),
                Err(AtomicFileError::BadName(_))
            ));
        }
    }
}
