//! Runs `raft-meta-kvnode` as real child processes and talks to them over its line protocol.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as TokioBufReader};
use tokio::net::TcpStream;

const CLUSTER_SECRET: &str = "raft-meta process tests: the secret every node shares";

/// The cluster secret every node proves on its peer port (the secure path is the one
/// tested): one file beside the node's directory, the same bytes for every node.
fn secret_file(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.with_extension("secret");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, CLUSTER_SECRET.as_bytes()).unwrap();
    path
}

/// A child node; dropped = SIGKILLed (by its PID, through `Child::kill`).
pub struct KvProc {
    pub child: Child,
    pub raft_addr: String,
    pub client_addr: String,
}

impl KvProc {
    pub fn spawn(id: u64, dir: &Path, store: &str, listen: &str, extra: &[&str]) -> KvProc {
        let secret = secret_file(dir);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_raft-meta-kvnode"));
        cmd.args([
            "--cluster-secret-file",
            secret.to_str().unwrap(),
            "--id",
            &id.to_string(),
            "--dir",
            dir.to_str().unwrap(),
            "--store",
            store,
            "--listen",
            listen,
        ])
        .args(extra)
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn,openraft=off".to_owned()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so the child never blocks on a full pipe.
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                panic!("node {id} did not report READY (exit: {status:?})");
            }
        };
        let mut raft_addr = String::new();
        let mut client_addr = String::new();
        for word in line.split_whitespace() {
            if let Some(a) = word.strip_prefix("raft=") {
                raft_addr = a.to_owned();
            }
            if let Some(a) = word.strip_prefix("client=") {
                client_addr = a.to_owned();
            }
        }
        assert!(line.starts_with("READY"), "unexpected first line {line:?}");
        KvProc {
            child,
            raft_addr,
            client_addr,
        }
    }

    /// SIGKILL, then reap.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for KvProc {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// One request on a fresh connection.
pub async fn ask(addr: &str, line: &str) -> Result<String, std::io::Error> {
    let mut c = Client::connect(addr).await?;
    c.ask(line).await
}

/// A persistent client connection.
pub struct Client {
    stream: TokioBufReader<TcpStream>,
}

impl Client {
    pub async fn connect(addr: &str) -> Result<Client, std::io::Error> {
        let stream = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr))
            .await
            .map_err(|_| std::io::Error::other("connect timeout"))??;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream: TokioBufReader::new(stream),
        })
    }

    pub async fn ask(&mut self, line: &str) -> Result<String, std::io::Error> {
        self.stream
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .await?;
        let mut answer = String::new();
        let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read_line(&mut answer))
            .await
            .map_err(|_| std::io::Error::other("answer timeout"))??;
        if n == 0 {
            return Err(std::io::Error::other("connection closed"));
        }
        Ok(answer.trim_end().to_owned())
    }
}

/// Parses `STATUS key=value ...` into a lookup.
pub fn status_field(status: &str, field: &str) -> Option<String> {
    status
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{field}=")).map(str::to_owned))
}

pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !f().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

static PROCESS_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs one multi-process test at a time on its own runtime: their timing assertions (failover)
/// must not measure another test's load.
pub fn run_alone<F: std::future::Future>(test: F) -> F::Output {
    let _turn = PROCESS_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test)
}
