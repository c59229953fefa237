//! A real filesystem with a quota for the EDQUOT test: a btrfs image on a loop device that
//! the test makes and mounts, with a subvolume whose qgroup limit is the quota (btrfs applies
//! it to root too, and `statvfs` does not show it, as with user quotas). Unmounted and deleted
//! when the guard drops.
//!
//! Needs root, loop devices and `mkfs.btrfs` (btrfs-progs, installed by
//! `scripts/setup-clients.sh`); where any is missing [`QuotaFs::mount`] prints a loud SKIPPED
//! line and returns `None`. Included by `tests/disk_quota.rs` with `#[path]`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted btrfs image and the quota-limited subvolume in it.
pub struct QuotaFs {
    dir: tempfile::TempDir,
    image: PathBuf,
    mount: PathBuf,
}

fn run(what: &str, cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

impl QuotaFs {
    /// A 256 MiB btrfs whose subvolume [`QuotaFs::path`] may hold `quota_bytes`, or `None`
    /// (after saying why on stderr) where this machine cannot make one.
    pub fn mount(quota_bytes: u64) -> Option<QuotaFs> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let image = dir.path().join("btrfs.img");
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).expect("mount point");
        let made = (|| {
            let file = std::fs::File::create(&image).map_err(|e| format!("image: {e}"))?;
            file.set_len(256 << 20).map_err(|e| format!("image: {e}"))?;
            run(
                "mkfs.btrfs",
                Command::new("mkfs.btrfs").arg("-q").arg(&image),
            )?;
            // commit=1: freed space and qgroup usage are settled within a second, not 30 s.
            run(
                "mount",
                Command::new("mount")
                    .args(["-o", "loop,commit=1"])
                    .arg(&image)
                    .arg(&mount),
            )?;
            Ok::<(), String>(())
        })();
        if let Err(e) = made {
            eprintln!(
                "\n*** SKIPPED: cannot make a btrfs with a quota for the EDQUOT test: {e} ***\n"
            );
            return None;
        }
        let fs = QuotaFs { dir, image, mount };
        let limited = (|| {
            run(
                "btrfs quota enable",
                Command::new("btrfs")
                    .args(["quota", "enable"])
                    .arg(&fs.mount),
            )?;
            run(
                "btrfs subvolume create",
                Command::new("btrfs")
                    .args(["subvolume", "create"])
                    .arg(fs.path()),
            )?;
            run(
                "btrfs qgroup limit",
                Command::new("btrfs")
                    .args(["qgroup", "limit", &quota_bytes.to_string()])
                    .arg(fs.path()),
            )
        })();
        if let Err(e) = limited {
            eprintln!("\n*** SKIPPED: cannot set a btrfs quota for the EDQUOT test: {e} ***\n");
            return None;
        }
        Some(fs)
    }

    /// The quota-limited directory.
    pub fn path(&self) -> PathBuf {
        self.mount.join("vol")
    }

    /// The whole filesystem's mount point.
    pub fn mount_point(&self) -> &Path {
        &self.mount
    }

    /// Writes a file of `bytes` under the quota (stopping early at EDQUOT) and returns its
    /// path; removing it gives the quota back.
    pub fn fill(&self, name: &str, bytes: u64) -> PathBuf {
        use std::io::Write;
        let path = self.mount.join("vol").join(name);
        let mut file = std::fs::File::create(&path).expect("create filler");
        let chunk = vec![0xA5u8; 64 << 10];
        let mut written = 0;
        while written < bytes {
            if file.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len() as u64;
        }
        let _ = file.sync_all();
        path
    }

    /// Makes btrfs settle freed space and qgroup usage now.
    pub fn sync(&self) {
        let _ = Command::new("btrfs")
            .args(["filesystem", "sync"])
            .arg(&self.mount)
            .status();
    }
}

impl Drop for QuotaFs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.mount)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
        }
        let _ = std::fs::remove_file(&self.image);
        let _ = &self.dir;
    }
}
