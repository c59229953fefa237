//! What a child process holds, read from `/proc/<pid>`: resident memory and open file
//! descriptors (Linux only, as the suite is).

use std::time::{Duration, Instant};

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`...), in bytes.
pub fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unreadable {line:?}"));
    kb * 1024
}

/// Resident memory now.
pub fn rss(pid: u32) -> u64 {
    status_bytes(pid, "VmRSS")
}

/// Peak resident memory so far.
pub fn hwm(pid: u32) -> u64 {
    status_bytes(pid, "VmHWM")
}

/// Open file descriptors.
pub fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Open file descriptors naming a path that contains `needle` (e.g. `.log` segment files).
pub fn fds_to(pid: u32, needle: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains(needle))
        .count()
}

/// Waits up to `limit` for `fds(pid)` to come down to at most `max`; the last count.
pub fn fds_settle(pid: u32, max: usize, limit: Duration) -> usize {
    let deadline = Instant::now() + limit;
    loop {
        let n = fds(pid);
        if n <= max || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// MiB, for messages.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
