//! Small filesystem steps the write paths share: directory fsync, file creation, positional IO
//! with errors that name the file.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::LogError;

/// Makes a directory's entries (created, renamed, deleted files) durable.
///
/// A file's own fsync does not persist the name that points to it; after a crash the file could
/// be missing from the directory. Every create, rename and unlink on a durable path is followed
/// by this.
pub fn sync_dir(dir: &Path) -> Result<(), LogError> {
    let handle = File::open(dir).map_err(|e| LogError::io("open directory", dir, e))?;
    handle
        .sync_all()
        .map_err(|e| LogError::io("fsync directory", dir, e))
}

/// Creates `dir` and any missing ancestors, fsyncing the parent of each one created: a new
/// directory's name is not durable until its parent is synced, and everything under it would
/// vanish with it.
pub fn create_dir_durably(dir: &Path) -> Result<(), LogError> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    std::fs::create_dir_all(dir).map_err(|e| LogError::io("create directory", dir, e))?;
    for created in missing.iter().rev() {
        if let Some(parent) = created.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

/// Creates `path`, failing if it exists: a segment file is never silently replaced.
pub(crate) fn create_new(path: &Path) -> Result<File, LogError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| LogError::io("create", path, e))
}

/// Opens an existing file for reading and writing.
pub(crate) fn open_rw(path: &Path) -> Result<File, LogError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| LogError::io("open", path, e))
}

pub(crate) fn read_exact_at(
    file: &File,
    path: &Path,
    buf: &mut [u8],
    position: u64,
) -> Result<(), LogError> {
    file.read_exact_at(buf, position)
        .map_err(|e| LogError::io("read", path, e))
}

pub(crate) fn write_all_at(
    file: &File,
    path: &Path,
    buf: &[u8],
    position: u64,
) -> Result<(), LogError> {
    file.write_all_at(buf, position)
        .map_err(|e| LogError::io("write", path, e))
}

pub(crate) fn file_len(file: &File, path: &Path) -> Result<u64, LogError> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| LogError::io("stat", path, e))
}

pub(crate) fn remove_file(path: &Path) -> Result<(), LogError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LogError::io("unlink", path, e)),
    }
}

pub(crate) fn rename(from: &Path, to: &Path) -> Result<(), LogError> {
    std::fs::rename(from, to).map_err(|e| LogError::io("rename", from, e))
}
