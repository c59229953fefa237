//! A real size-limited filesystem for disk-full tests: a tmpfs with `size=` that the test mounts
//! on a fresh temporary directory and unmounts when the guard drops (decision 0112).
//!
//! Shared by `compaction/tests/disk_full.rs`, `raft-meta/tests/disk_full.rs` and the binary's
//! `tests/disk_full.rs` (each includes this file with `#[path]`). Mounting needs root (or
//! CAP_SYS_ADMIN); where it is not permitted [`Tmpfs::mount`] prints a loud SKIPPED line and
//! returns `None`.
#![allow(dead_code)]

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs; unmounted (lazily, if something still holds it) on drop.
pub struct Tmpfs {
    dir: tempfile::TempDir,
    size_bytes: u64,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size_bytes` on a new temporary directory, or returns `None` (after
    /// saying so on stderr) if this process may not mount.
    pub fn mount(size_bytes: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size_bytes},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Tmpfs { dir, size_bytes }),
            Ok(out) => {
                eprintln!(
                    "\n*** SKIPPED: cannot mount a tmpfs for the disk-full test (needs root): {} ***\n",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("\n*** SKIPPED: cannot run mount for the disk-full test: {e} ***\n");
                None
            }
        }
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Free bytes now (statvfs, as the broker measures them).
    pub fn free_bytes(&self) -> u64 {
        let out = Command::new("stat")
            .args(["-f", "-c", "%a %S"])
            .arg(self.path())
            .output()
            .expect("stat -f");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text
            .split_whitespace()
            .map(|p| p.parse::<u64>().expect("number"));
        let blocks = parts.next().expect("free blocks");
        let block_size = parts.next().expect("block size");
        blocks * block_size
    }

    /// Writes a filler file at `name` until at most `leave_free` bytes are free (or the disk
    /// is full), and returns its path: removing it frees the space again.
    pub fn fill(&self, name: &str, leave_free: u64) -> PathBuf {
        let path = self.path().join(name);
        let mut file = File::create(&path).expect("create filler");
        let chunk = vec![0xA5u8; 4096];
        loop {
            let free = self.free_bytes();
            if free <= leave_free {
                break;
            }
            let n = usize::try_from((free - leave_free).min(chunk.len() as u64)).unwrap_or(4096);
            if file.write_all(&chunk[..n]).is_err() {
                break;
            }
            // tmpfs counts whole pages: a short tail still takes one.
            if n < chunk.len() {
                break;
            }
        }
        file.sync_all().ok();
        path
    }

    /// Fills the disk completely (every page taken).
    pub fn fill_completely(&self, name: &str) -> PathBuf {
        let path = self.path().join(name);
        let mut file = File::create(&path).expect("create filler");
        let chunk = vec![0x5Au8; 4096];
        while file.write_all(&chunk).is_ok() {}
        // The last write may have been partial: take the remaining bytes one at a time.
        while file.write_all(&[0u8]).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Something (a child we could not stop) still holds a file: detach it.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}
