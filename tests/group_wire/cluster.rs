//! Three `cohort serve` processes on loopback forming one Raft cluster (fixed ports picked
//! free beforehand, since every node must know the others' addresses at start).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command};

use crate::common::{free_port, listening_field, spawn_listening};

/// One node: its process, Kafka address and log file.
pub struct Node {
    pub id: u64,
    pub kafka: SocketAddr,
    /// HTTP listener (`/metrics`, `/console`).
    pub http: SocketAddr,
    pub child: Option<Child>,
    pub log_path: std::path::PathBuf,
    /// The whole `cohort serve` command line, to start the node again after a kill.
    args: Vec<String>,
}

impl Node {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// SIGKILLs the node (by its PID) and starts it again on the same ports and data.
    pub fn kill_and_restart(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let (child, http) =
            spawn(self.id, &self.args, &self.log_path).unwrap_or_else(|e| panic!("{e}"));
        self.child = Some(child);
        self.http = http;
    }
}

/// Starts `cohort <args>` with its log appended to `log_path` and waits for its listeners;
/// if it does not announce them, the error carries the node's log.
fn spawn(id: u64, args: &[String], log_path: &Path) -> Result<(Child, SocketAddr), String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cohort"));
    cmd.args(args).env("RUST_LOG", "info");
    let (child, line) =
        spawn_listening(cmd, log_path).map_err(|e| format!("node {id} did not start: {e}"))?;
    Ok((child, listening_field(&line, "http=")))
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts `n` nodes under `dir` with the same `--peers` list and waits for each to announce
/// its listeners. The ports are picked free beforehand and released for the nodes to bind, so
/// another process (or an outgoing connection's ephemeral port) can take one in between: a
/// cluster whose node finds its address in use is stopped, wiped and started on new ports.
pub fn start(dir: &Path, n: u64, extra: &[&str]) -> Vec<Node> {
    const ATTEMPTS: usize = 3;
    for attempt in 1..=ATTEMPTS {
        match try_start(dir, n, extra) {
            Ok(nodes) => return nodes,
            Err(e) if attempt < ATTEMPTS && e.contains("in use") => {
                eprintln!("cluster start attempt {attempt}: a port was taken; retrying: {e}");
                for id in 1..=n {
                    let _ = std::fs::remove_dir_all(dir.join(format!("node-{id}")));
                    let _ = std::fs::remove_file(dir.join(format!("node-{id}.log")));
                }
            }
            Err(e) => panic!("{e}"),
        }
    }
    unreachable!("the last attempt returns or panics")
}

/// The cluster secret every node proves on its Raft port (as `scripts/cluster.sh` sets up).
fn secret_file(dir: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("cluster.secret");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    std::io::Write::write_all(
        &mut file,
        b"group wire tests: the cluster's shared secret\n",
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

fn try_start(dir: &Path, n: u64, extra: &[&str]) -> Result<Vec<Node>, String> {
    let secret = secret_file(dir)?;
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
            let mut args: Vec<String> = vec![
                "serve".into(),
                "--data-dir".into(),
                dir.join(format!("node-{id}")).display().to_string(),
                "--node-id".into(),
                id.to_string(),
                "--listen".into(),
                format!("127.0.0.1:{kafka}"),
                "--http".into(),
                "127.0.0.1:0".into(),
                "--raft".into(),
                format!("127.0.0.1:{raft}"),
                "--peers".into(),
                peers.clone(),
                "--cluster-secret-file".into(),
                secret.clone(),
            ];
            args.extend(crate::common::RAFT_TEST_TIMING.map(String::from));
            args.extend(extra.iter().map(|a| a.to_string()));
            let (child, http) = spawn(id, &args, &log_path)?;
            Ok(Node {
                id,
                kafka: format!("127.0.0.1:{kafka}").parse().unwrap(),
                http,
                child: Some(child),
                log_path,
                args,
            })
        })
        .collect()
}
