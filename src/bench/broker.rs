//! Brokers a benchmark starts itself: `cohort serve` child processes (this same executable)
//! with their data in a scratch directory, one node or a cluster on loopback. A child is
//! stopped by its PID (SIGKILL through `Child::kill`) when the run ends or the handle drops.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::BenchError;

/// How long a node may take to print its listening line.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A scratch directory, removed with everything in it on drop.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Creates `<parent>/cohort-bench-<pid>-<name>` (emptied first if a killed run left it).
    pub fn new(parent: &Path, name: &str) -> Result<Scratch, BenchError> {
        let path = parent.join(format!("cohort-bench-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| BenchError::Io {
            what: format!("creating {}", path.display()),
            source,
        })?;
        Ok(Scratch(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Started brokers as the load samples them; empty when driving a cluster it did not start.
#[derive(Debug, Clone, Default)]
pub struct BrokerWatch {
    pub pids: Vec<u32>,
    pub http: Vec<SocketAddr>,
}

/// One `cohort serve` process.
#[derive(Debug)]
pub struct Node {
    pub kafka: SocketAddr,
    /// Where its `/metrics` are served.
    pub http: SocketAddr,
    child: Child,
    log: PathBuf,
}

impl Node {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the node's log (stderr), for error messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Brokers started for one measurement; dropping it stops them and removes their data.
#[derive(Debug)]
pub struct Launched {
    // Field order matters: nodes are killed before their directory is removed.
    pub nodes: Vec<Node>,
    _scratch: Scratch,
}

impl Launched {
    pub fn bootstrap(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.kafka).collect()
    }

    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().map(Node::pid).collect()
    }

    /// What the load samples over its window: the processes' CPU and their Raft counters.
    pub fn watch(&self) -> BrokerWatch {
        BrokerWatch {
            pids: self.pids(),
            http: self.nodes.iter().map(|n| n.http).collect(),
        }
    }

    /// Fails if a node has exited (a crash is a result, not something to measure around).
    pub fn check_alive(&mut self) -> Result<(), BenchError> {
        for n in &mut self.nodes {
            if !n.alive() {
                return Err(BenchError::Broker(format!(
                    "the broker (pid {}) exited; its log ends with:\n{}",
                    n.pid(),
                    n.log_tail()
                )));
            }
        }
        Ok(())
    }
}

/// Starts `nodes` brokers (1 = the embedded one-voter default; more = one Raft cluster on
/// loopback) with their data under `parent`, passing `extra` flags to each.
pub fn launch(
    parent: &Path,
    name: &str,
    nodes: usize,
    extra: &[String],
) -> Result<Launched, BenchError> {
    let scratch = Scratch::new(parent, name)?;
    let exe = std::env::current_exe().map_err(|source| BenchError::Io {
        what: "finding this executable".into(),
        source,
    })?;
    let mut started = Vec::with_capacity(nodes);
    if nodes <= 1 {
        started.push(spawn(
            &exe,
            scratch.path(),
            1,
            &[
                "--listen".into(),
                "127.0.0.1:0".into(),
                "--raft".into(),
                "127.0.0.1:0".into(),
            ],
            extra,
        )?);
    } else {
        // Every node must know the others' addresses at start, so ports are picked first.
        let ports = (0..nodes)
            .map(|_| Ok((free_port()?, free_port()?)))
            .collect::<Result<Vec<_>, BenchError>>()?;
        let peers = ports
            .iter()
            .enumerate()
            .map(|(i, (raft, kafka))| format!("{}@127.0.0.1:{raft}@127.0.0.1:{kafka}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        for (i, (raft, kafka)) in ports.iter().enumerate() {
            started.push(spawn(
                &exe,
                scratch.path(),
                i + 1,
                &[
                    "--listen".into(),
                    format!("127.0.0.1:{kafka}"),
                    "--raft".into(),
                    format!("127.0.0.1:{raft}"),
                    "--peers".into(),
                    peers.clone(),
                ],
                extra,
            )?);
        }
    }
    Ok(Launched {
        nodes: started,
        _scratch: scratch,
    })
}

fn free_port() -> Result<u16, BenchError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|source| BenchError::Io {
            what: "picking a free port".into(),
            source,
        })
}

fn spawn(
    exe: &Path,
    dir: &Path,
    id: usize,
    addresses: &[String],
    extra: &[String],
) -> Result<Node, BenchError> {
    let log = dir.join(format!("node-{id}.log"));
    let log_file = std::fs::File::create(&log).map_err(|source| BenchError::Io {
        what: format!("creating {}", log.display()),
        source,
    })?;
    let mut command = Command::new(exe);
    // Quiet by default so logging costs nothing in the figures; a RUST_LOG set by the caller
    // (to debug a run) reaches the broker untouched.
    if std::env::var_os("RUST_LOG").is_none() {
        command.env("RUST_LOG", "warn");
    }
    let mut child = command
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.join(format!("node-{id}")))
        .args(["--node-id", &id.to_string(), "--http", "127.0.0.1:0"])
        .args(addresses)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .spawn()
        .map_err(|source| BenchError::Io {
            what: format!("starting {} serve", exe.display()),
            source,
        })?;
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        return Err(BenchError::Broker(
            "the broker's stdout was not captured".into(),
        ));
    };
    // The announcement line comes from a blocking pipe: read it on a thread, with a deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next();
        let _ = tx.send(first);
        // Keep draining so the child never blocks on a full pipe.
        for _ in lines {}
    });
    let mut node = Node {
        kafka: SocketAddr::from(([127, 0, 0, 1], 0)),
        http: SocketAddr::from(([127, 0, 0, 1], 0)),
        child,
        log,
    };
    let line = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Some(Ok(line))) => line,
        _ => {
            return Err(BenchError::Broker(format!(
                "node {id} did not announce itself; its log ends with:\n{}",
                node.log_tail()
            )))
        }
    };
    (node.kafka, node.http) = parse_listening(&line).ok_or_else(|| {
        BenchError::Broker(format!("node {id} announced {line:?}, not its listeners"))
    })?;
    Ok(node)
}

/// The Kafka and HTTP addresses of `cohort listening kafka=H:P http=H:P`.
fn parse_listening(line: &str) -> Option<(SocketAddr, SocketAddr)> {
    let words = line.strip_prefix("cohort listening ")?;
    let find = |key: &str| {
        words
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))?
            .parse()
            .ok()
    };
    Some((find("kafka=")?, find("http=")?))
}

/// CPU time (user + system) a process has used so far, from `/proc/<pid>/stat`.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; fields are counted after its closing parenthesis.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // /proc reports in USER_HZ, which the kernel's ABI fixes at 100 on Linux.
    Some(Duration::from_millis(ticks * 10))
}

/// The 1-, 5- and 15-minute load averages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_line_parses() {
        assert_eq!(
            parse_listening("cohort listening kafka=127.0.0.1:4001 http=127.0.0.1:4002"),
            Some((
                "127.0.0.1:4001".parse().unwrap(),
                "127.0.0.1:4002".parse().unwrap()
            ))
        );
        assert_eq!(parse_listening("something else"), None);
    }

    #[test]
    fn own_cpu_time_is_readable() {
        assert!(cpu_time(std::process::id()).is_some());
        assert_eq!(load_average().split_whitespace().count(), 3);
    }
}
