//! One broker per data directory: an exclusive lock on `<data-dir>/cohort.lock`, held for the
//! life of the process. The kernel drops it when the process dies, even by SIGKILL, so a stale
//! file never blocks a restart; the pid written inside is only there for the error message.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside the data directory.
pub const LOCK_FILE_NAME: &str = "cohort.lock";

/// Held while the broker runs; dropping it releases the directory.
#[derive(Debug)]
pub struct DataDirLock {
    /// The open, locked file. Kept open: closing it would release the lock.
    _file: File,
    /// Where it is, for logs.
    path: PathBuf,
}

/// Why the data directory cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "data directory {dir} is in use by another cohort process{holder}; \
         stop it or pick another --data-dir"
    )]
    InUse {
        /// The directory.
        dir: PathBuf,
        /// " (pid N)" when the holder wrote its pid.
        holder: String,
    },
    /// Creating the directory or the file failed.
    #[error("cannot lock data directory {dir}: {source}")]
    Io {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl DataDirLock {
    /// Creates `dir` if needed and takes its lock without waiting.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        let io = |source| LockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(LOCK_FILE_NAME);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(LockError::InUse {
                    dir: dir.to_path_buf(),
                    holder: if pid.is_empty() {
                        String::new()
                    } else {
                        format!(" (pid {pid})")
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let err = DataDirLock::acquire(dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("in use by another cohort process"), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        drop(first);
        DataDirLock::acquire(dir.path()).unwrap();
    }
}
