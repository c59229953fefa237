//! Shared by the black-box tests: the real `cohort` binary as a child process, a raw Kafka
//! client over a blocking socket, and the real client libraries (Python venv, Node, kcat).
//!
//! Everything a test starts it stops by PID: [`Cohort`] kills its child on drop.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod certs;
pub mod metrics;
pub mod procfs;
pub mod raw;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A port free on 127.0.0.1 now (released for the caller's process to bind: another process
/// may take it in between).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The Raft timing every multi-node test gives its nodes: the defaults before decision 0186
/// (50 ms heartbeat, 200 ms spread, 500 ms election timeout), generous against a debug build
/// on a loaded two-core machine, where an election no test caused would fail the ones that
/// follow one leader. The shipped defaults are measured by raft-meta's bake-off instead.
pub const RAFT_TEST_TIMING: [&str; 6] = [
    "--raft-heartbeat-ms",
    "50",
    "--raft-election-jitter-ms",
    "200",
    "--raft-election-timeout-ms",
    "500",
];

/// `DIR/cluster.secret` holding `text`, readable by its owner only (the nodes refuse a secret
/// file others can read).
pub fn cluster_secret(dir: &Path, text: &str) -> PathBuf {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("cluster.secret");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `cohort serve` child process on free ports and its own data directory.
pub struct Cohort {
    child: Option<Child>,
    /// Kafka listener.
    pub kafka: SocketAddr,
    /// The same, as `host:port` for client configs.
    pub kafka_str: String,
    /// HTTP listener.
    pub http: SocketAddr,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// Where its stderr (the log) goes.
    pub log_path: PathBuf,
    /// Every Kafka listener, `(PROTOCOL, address)`, from the `listeners=` field.
    pub listeners: Vec<(String, SocketAddr)>,
}

impl Cohort {
    /// Starts the broker on `data_dir` with extra flags and waits for its "listening" line.
    pub fn start(data_dir: &Path, extra: &[&str]) -> Cohort {
        Self::try_start(data_dir, extra).unwrap_or_else(|e| panic!("cohort did not start: {e}"))
    }

    /// Like [`Cohort::start`], logging at `log_filter` (a `RUST_LOG` value) unless
    /// `COHORT_TEST_LOG` overrides it: tests whose failures need the broker's side of a story
    /// (e.g. `cohort::group=debug` for rebalances) ask for it here.
    pub fn start_logged(data_dir: &Path, extra: &[&str], log_filter: &str) -> Cohort {
        Self::try_start_logged(data_dir, extra, log_filter)
            .unwrap_or_else(|e| panic!("cohort did not start: {e}"))
    }

    /// Like [`Cohort::start`], returning the failure (exit status and log) instead.
    pub fn try_start(data_dir: &Path, extra: &[&str]) -> Result<Cohort, String> {
        Self::try_start_logged(data_dir, extra, "info")
    }

    fn try_start_logged(
        data_dir: &Path,
        extra: &[&str],
        log_filter: &str,
    ) -> Result<Cohort, String> {
        static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = STARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log_path = data_dir
            .parent()
            .unwrap_or(data_dir)
            .join(format!("cohort-{}-{n}.log", std::process::id()));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cohort"));
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
            .args(RAFT_TEST_TIMING)
            .args(extra)
            .env(
                "RUST_LOG",
                std::env::var("COHORT_TEST_LOG").unwrap_or(log_filter.into()),
            );
        let (child, line) = spawn_listening(cmd, &log_path)?;
        let field = |name: &str| listening_field(&line, name);
        let kafka = field("kafka=");
        let listeners = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("listeners="))
            .map(|l| {
                l.split(',')
                    .filter_map(|e| {
                        let (p, a) = e.split_once("://")?;
                        Some((p.to_string(), a.parse().ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Cohort {
            kafka,
            listeners,
            kafka_str: kafka.to_string(),
            http: field("http="),
            child: Some(child),
            data_dir: data_dir.to_path_buf(),
            log_path,
        })
    }

    /// The address of the listener of `protocol` (panics without one).
    pub fn listener(&self, protocol: &str) -> SocketAddr {
        self.listeners
            .iter()
            .find(|(p, _)| p == protocol)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("no {protocol} listener in {:?}", self.listeners))
    }

    /// `host:port` for client configs.
    pub fn bootstrap(&self) -> String {
        self.kafka.to_string()
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// What the broker logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// SIGTERM, then waits (bounded) for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM failed");
        wait_bounded(&mut child, Duration::from_secs(40))
    }

    /// SIGKILL (`kill -9`), then reaps the child.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Whether the child is still running.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().map(|s| s.is_none()).unwrap_or(false),
            None => false,
        }
    }

    /// GET `path` on the HTTP port: (status line, body).
    pub fn http_get(&self, path: &str) -> (String, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(self.http).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
        (
            head.lines().next().unwrap_or("").to_string(),
            body.to_string(),
        )
    }
}

impl Drop for Cohort {
    fn drop(&mut self) {
        self.kill9();
        if std::thread::panicking() {
            eprintln!(
                "---- cohort log ({}) ----\n{}",
                self.log_path.display(),
                self.log()
            );
        }
        let _ = std::fs::remove_file(&self.log_path);
    }
}

fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("process {} did not exit within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawns `cmd` (a `cohort serve`) with its stderr, the log, appended to `log_path`, and
/// waits up to 30 s for the line it announces its listeners with. If that line does not come,
/// the child is stopped and the error carries how it ended and its log.
pub fn spawn_listening(mut cmd: Command, log_path: &Path) -> Result<(Child, String), String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .unwrap();
    let mut child = cmd.stdout(Stdio::piped()).stderr(log).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(line) if line.contains("cohort listening") => Ok((child, line)),
        other => {
            let _ = child.kill();
            let status = child.wait().ok();
            let log = std::fs::read_to_string(log_path).unwrap_or_default();
            Err(format!(
                "no listening line ({other:?}), exit {status:?}, log:\n{log}"
            ))
        }
    }
}

/// The address `name` (e.g. `"http="`) in the listening line.
pub fn listening_field(line: &str, name: &str) -> SocketAddr {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(name))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line:?}"))
}

/// The venv's Python, with the real client libraries.
pub fn python() -> PathBuf {
    let p = std::env::var_os("COHORT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: run scripts/setup-clients.sh (it creates the venv with confluent-kafka \
         and kafka-python)",
        p.display()
    );
    p
}

/// Node, with kafkajs installed in tests/clients/node.
pub fn node_dir() -> PathBuf {
    let d = repo_root().join("tests/clients/node");
    assert!(
        d.join("node_modules/kafkajs").exists(),
        "tests/clients/node/node_modules is missing: run scripts/setup-clients.sh"
    );
    d
}

/// Runs a command with a time limit; panics with its output if it fails or overruns.
pub fn run_ok(cmd: &mut Command, limit: Duration) -> Output {
    let out = run(cmd, limit);
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a command with a time limit (killed by PID past it).
pub fn run(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || read_all(stdout));
    let err_t = std::thread::spawn(move || read_all(stderr));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} ran past {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out_t.join().unwrap()),
                String::from_utf8_lossy(&err_t.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

fn read_all(mut r: impl std::io::Read) -> Vec<u8> {
    let mut v = Vec::new();
    let _ = r.read_to_end(&mut v);
    v
}

/// Runs `tests/clients/python/<script>` with the venv's Python.
pub fn python_script(script: &str, args: &[&str], limit: Duration) -> Output {
    run_ok(
        Command::new(python())
            .arg(repo_root().join("tests/clients/python").join(script))
            .args(args),
        limit,
    )
}

/// Runs `tests/clients/node/<script>` with Node.
pub fn node_script(script: &str, args: &[&str], limit: Duration) -> Output {
    let dir = node_dir();
    run_ok(
        Command::new("node")
            .current_dir(&dir)
            .arg(dir.join(script))
            .args(args),
        limit,
    )
}

/// A small seeded PRNG (xorshift64*): tests print the seed so a failure replays exactly.
pub struct Rng(u64);

impl Rng {
    /// From `COHORT_TEST_SEED` when set, else from the clock; prints the seed.
    pub fn from_env(test: &str) -> Rng {
        let seed = std::env::var("COHORT_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{test}: seed {seed} (rerun with COHORT_TEST_SEED={seed})");
        Rng(seed.max(1))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}
