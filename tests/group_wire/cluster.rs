//! Three `cohort serve` processes on loopback forming one Raft cluster (fixed ports picked
//! free beforehand, since every node must know the others' addresses at start).

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// One node: its process, Kafka address and log file.
pub struct Node {
    pub id: u64,
    pub kafka: SocketAddr,
    /// HTTP listener (`/metrics`, `/console`).
    pub http: SocketAddr,
    pub child: Option<Child>,
    pub log_path: std::path::PathBuf,
}

impl Node {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `n` nodes under `dir` with the same `--peers` list and waits for each to announce
/// its listeners.
pub fn start(dir: &Path, n: u64, extra: &[&str]) -> Vec<Node> {
    let ports: Vec<(u16, u16)> = (0..n).map(|_| (free_port(), free_port())).collect();
    let peers = (1..=n)
        .zip(&ports)
        .map(|(id, (raft, kafka))| format!("{id}@127.0.0.1:{raft}@127.0.0.1:{kafka}"))
        .collect::<Vec<_>>()
        .join(",");
    (1..=n)
        .zip(&ports)
        .map(|(id, (raft, kafka))| {
            let log_path = dir.join(format!("node-{id}.log"));
            let log = std::fs::File::create(&log_path).unwrap();
            let mut child = Command::new(env!("CARGO_BIN_EXE_cohort"))
                .arg("serve")
                .arg("--data-dir")
                .arg(dir.join(format!("node-{id}")))
                .args(["--node-id", &id.to_string()])
                .args(["--listen", &format!("127.0.0.1:{kafka}")])
                .args(["--http", "127.0.0.1:0"])
                .args(["--raft", &format!("127.0.0.1:{raft}")])
                .args(["--peers", &peers])
                .args(extra)
                .env("RUST_LOG", "info")
                .stdout(Stdio::piped())
                .stderr(log)
                .spawn()
                .unwrap();
            let stdout = child.stdout.take().unwrap();
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let _ = tx.send(line);
                }
            });
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("node {id} did not start"));
            assert!(line.contains("cohort listening"), "{line}");
            let http = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("http="))
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("no http= in {line:?}"));
            Node {
                id,
                kafka: format!("127.0.0.1:{kafka}").parse().unwrap(),
                http,
                child: Some(child),
                log_path,
            }
        })
        .collect()
}
