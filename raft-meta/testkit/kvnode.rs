//! A Raft node running the key-value application, driven over a line protocol. The crash and
//! multi-process tests run it as a child process and kill it with SIGKILL; it is also handy to
//! poke at a cluster by hand.
//!
//! ```text
//! raft-meta-kvnode --id 1 --dir D [--listen 127.0.0.1:0] [--client 127.0.0.1:0]
//!                  [--store sled|segments] [--bootstrap single|join|cluster --peers 1=H:P,2=H:P,...]
//!                  [--snapshot-every N] [--heartbeat-ms N] [--election-ms MIN-MAX]
//!                  [--elections pre-vote|openraft] [--cluster-secret-file F]
//! prints:  READY raft=H:P client=H:P
//! client lines:  PUT k v | GET k | LOCALGET k | COUNT | LOCALCOUNT | STATUS | ADDVOTER id raft kafka | REMOVEVOTER id
//! ```

#[path = "kv.rs"]
mod kv;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use kv::{KvApp, KvCommand, KvReply};
use raft_meta::network::PeerAuth;
use raft_meta::{
    Bootstrap, Elections, MetaNode, NodeConfig, PeerSpec, RaftStore, ReadError, Tuning, WriteError,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Longest client line accepted.
const LINE_BYTES_MAX: u64 = 64 * 1024;

fn usage(msg: &str) -> ExitCode {
    eprintln!("raft-meta-kvnode: {msg}");
    ExitCode::from(2)
}

fn parse_peers(raw: &str) -> Result<Vec<PeerSpec>, String> {
    raw.split(',')
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (id, addr) = item.split_once('=').ok_or(format!("bad peer {item:?}"))?;
            let node_id: u64 = id.parse().map_err(|_| format!("bad peer id {id:?}"))?;
            Ok(PeerSpec {
                node_id,
                raft_addr: addr.to_owned(),
                kafka_addr: format!("kafka-{node_id}"),
            })
        })
        .collect()
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts: HashMap<String, String> = HashMap::new();
    let mut it = args.into_iter();
    while let Some(key) = it.next() {
        let Some(name) = key.strip_prefix("--") else {
            return usage(&format!("unexpected argument {key:?}"));
        };
        let Some(value) = it.next() else {
            return usage(&format!("--{name} needs a value"));
        };
        opts.insert(name.to_owned(), value);
    }
    let get = |k: &str| opts.get(k).cloned();
    let Some(id) = get("id").and_then(|v| v.parse::<u64>().ok()) else {
        return usage("--id N is required");
    };
    let Some(dir) = get("dir").map(PathBuf::from) else {
        return usage("--dir is required");
    };
    let store: RaftStore = match get("store").unwrap_or_else(|| "sled".into()).parse() {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let bootstrap = match get("bootstrap").as_deref().unwrap_or("single") {
        "single" => Bootstrap::Single,
        "join" => Bootstrap::Join,
        "cluster" => match parse_peers(&get("peers").unwrap_or_default()) {
            Ok(peers) => Bootstrap::Cluster(peers),
            Err(e) => return usage(&e),
        },
        other => return usage(&format!("unknown bootstrap {other:?}")),
    };
    let mut tuning = Tuning::default();
    if let Some(n) = get("snapshot-every").and_then(|v| v.parse().ok()) {
        tuning.snapshot_every_entries = n;
    }
    if let Some(n) = get("heartbeat-ms").and_then(|v| v.parse().ok()) {
        tuning.heartbeat_ms = n;
    }
    if let Some((lo, hi)) = get("election-ms")
        .as_deref()
        .and_then(|v| v.split_once('-'))
    {
        if let (Ok(lo), Ok(hi)) = (lo.parse(), hi.parse()) {
            tuning.election_timeout_min_ms = lo;
            tuning.election_timeout_max_ms = hi;
        }
    }
    match get("elections").as_deref() {
        None | Some("pre-vote") => tuning.elections = Elections::PreVote,
        Some("openraft") => tuning.elections = Elections::OpenraftTimer,
        Some(other) => return usage(&format!("unknown elections {other:?}")),
    }
    let listen = get("listen").unwrap_or_else(|| "127.0.0.1:0".into());
    let client_listen = get("client").unwrap_or_else(|| "127.0.0.1:0".into());
    let client = match TcpListener::bind(&client_listen).await {
        Ok(l) => l,
        Err(e) => return usage(&format!("cannot bind client port {client_listen}: {e}")),
    };
    let secret_file = get("cluster-secret-file");
    let peer_auth = match PeerAuth::from_file(secret_file.as_deref().map(Path::new)) {
        Ok(auth) => auth,
        Err(e) => return usage(&format!("--cluster-secret-file: {e}")),
    };
    let config = NodeConfig {
        node_id: id,
        listen_addr: listen,
        advertised_raft_addr: None,
        kafka_addr: format!("kafka-{id}"),
        raft_dir: dir,
        store,
        bootstrap,
        tuning,
        peer_auth,
    };
    let node = match MetaNode::start(config, KvApp::new()).await {
        Ok(node) => Arc::new(node),
        Err(e) => {
            eprintln!("raft-meta-kvnode: start failed: {e}");
            return ExitCode::from(1);
        }
    };
    let client_addr = match client.local_addr() {
        Ok(a) => a,
        Err(e) => return usage(&e.to_string()),
    };
    println!("READY raft={} client={}", node.raft_addr(), client_addr);
    let _ = std::io::stdout().flush();
    loop {
        let Ok((stream, _)) = client.accept().await else {
            continue;
        };
        let node = node.clone();
        tokio::spawn(async move {
            if let Err(e) = serve_client(stream, node).await {
                tracing::debug!(error = %e, "client connection ended");
            }
        });
    }
}

fn write_error(e: WriteError) -> String {
    match e {
        WriteError::NotLeader { leader } => format!(
            "NOTLEADER {}",
            leader.map_or("-".into(), |l| l.node_id.to_string())
        ),
        other => format!("ERR {other}"),
    }
}

fn read_error(e: ReadError) -> String {
    match e {
        ReadError::NotLeader { leader } => format!(
            "NOTLEADER {}",
            leader.map_or("-".into(), |l| l.node_id.to_string())
        ),
        other => format!("ERR {other}"),
    }
}

async fn serve_client(stream: TcpStream, node: Arc<MetaNode<KvApp>>) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read.take(u64::MAX));
    let mut line = String::new();
    loop {
        line.clear();
        lines.get_mut().set_limit(LINE_BYTES_MAX);
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        if !line.ends_with('\n') {
            write.write_all(b"ERR line too long\n").await?;
            return Ok(());
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words.as_slice() {
            ["PUT", key, value] => {
                let command = KvCommand::Put {
                    key: Bytes::from(key.to_string()),
                    value: Bytes::from(value.to_string()),
                };
                match node.write(command.encode()).await {
                    Ok(reply) => match KvReply::decode(&reply) {
                        Ok(KvReply::Done { .. }) => "OK".to_owned(),
                        Ok(KvReply::Rejected { reason }) => format!("ERR {reason}"),
                        Err(e) => format!("ERR {e}"),
                    },
                    Err(e) => write_error(e),
                }
            }
            ["GET", key] => match node.read(|app| app.get(key.as_bytes())).await {
                Ok(Some(v)) => format!("VAL {}", String::from_utf8_lossy(&v)),
                Ok(None) => "NONE".to_owned(),
                Err(e) => read_error(e),
            },
            ["LOCALGET", key] => match node.read_local(|a| a.app.get(key.as_bytes())) {
                Some(v) => format!("VAL {}", String::from_utf8_lossy(&v)),
                None => "NONE".to_owned(),
            },
            ["COUNT"] => match node.read(|app| app.len()).await {
                Ok(n) => format!("COUNT {n}"),
                Err(e) => read_error(e),
            },
            ["LOCALCOUNT"] => format!("COUNT {}", node.read_local(|a| a.app.len())),
            ["STATUS"] => {
                let s = node.status();
                let opt = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
                format!(
                    "STATUS leader={} term={} applied={} snapshot={} purged={} voters={}",
                    s.leader.map_or("-".to_owned(), |l| l.node_id.to_string()),
                    s.term,
                    opt(s.applied_index),
                    opt(s.snapshot_index),
                    opt(s.purged_index),
                    s.voters
                        .iter()
                        .map(|(id, _)| id.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
            ["ADDVOTER", id, raft, kafka] => match id.parse::<u64>() {
                Ok(id) => match node
                    .add_voter(id, raft.to_string(), kafka.to_string())
                    .await
                {
                    Ok(_) => "OK".to_owned(),
                    Err(e) => format!("ERR {e}"),
                },
                Err(_) => "ERR bad id".to_owned(),
            },
            ["REMOVEVOTER", id] => match id.parse::<u64>() {
                Ok(id) => match node.remove_voter(id).await {
                    Ok(_) => "OK".to_owned(),
                    Err(e) => format!("ERR {e}"),
                },
                Err(_) => "ERR bad id".to_owned(),
            },
            _ => "ERR unknown command".to_owned(),
        };
        let mut answer = answer.into_bytes();
        answer.push(b'\n');
        write.write_all(&answer).await?;
    }
}
