//! A TCP proxy in front of every node's Raft port that a test can cut, as a network partition
//! cuts a machine off: the process keeps running and keeps its client connections, only its
//! peers stop hearing it and it stops hearing them.
//!
//! ```text
//!  node A ──► proxy of B (BASE+30+B) ──► B's Raft port (BASE+10+B)
//!               │ each frame A sends is read whole; the first that names its sender (an
//!               │ AppendEntries, vote or snapshot names the leader or candidate, a pre-vote its
//!               │ candidate) tags the connection as A's
//!               └ A or B cut ─► bytes are swallowed both ways (no reset: a partition drops
//!                               packets, so RPCs time out), and the connection is closed once
//!                               healed (a stream that lost bytes cannot go on)
//! ```
//!
//! Every node names the proxies in `--peers`/`--advertise-raft` (`cluster.sh`'s
//! `RAFT_PEER_BASE`), so all peer traffic crosses them; the test's own `cohort cluster status`
//! dials the real ports. A connection that has carried no frame naming its sender (only
//! forwarded writes or admin requests) counts as from outside and is cut only with its target:
//! enough to cut a leader off (it sends AppendEntries on every connection), not a follower
//! whose forwarded writes ride a connection that never carried a pre-vote.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a blocked read looks at the cut set and the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Which nodes are cut off; shared by every proxy and connection.
#[derive(Default)]
struct Cuts {
    cut: Mutex<BTreeSet<u64>>,
    /// Set when the proxies are dropped: every thread ends.
    stop: AtomicBool,
}

impl Cuts {
    fn blocked(&self, from: Option<u64>, to: u64) -> bool {
        let cut = self.cut.lock().unwrap();
        cut.contains(&to) || from.is_some_and(|f| cut.contains(&f))
    }
}

/// The proxies of a three-node cluster; dropping it stops them (threads joined).
pub struct RaftProxies {
    cuts: Arc<Cuts>,
    threads: Vec<JoinHandle<()>>,
    listens: Vec<SocketAddr>,
}

/// Where node `n`'s proxy listens and where it forwards to.
pub struct Route {
    pub node: u64,
    pub listen: SocketAddr,
    pub target: SocketAddr,
}

impl RaftProxies {
    /// Starts one proxy per route.
    pub fn start(routes: Vec<Route>) -> RaftProxies {
        let cuts = Arc::new(Cuts::default());
        let mut threads = Vec::new();
        let listens = routes.iter().map(|r| r.listen).collect();
        for route in routes {
            let listener = TcpListener::bind(route.listen).unwrap_or_else(|e| {
                panic!("proxy of node {} on {}: {e}", route.node, route.listen)
            });
            let cuts = cuts.clone();
            threads.push(std::thread::spawn(move || {
                accept_loop(listener, route, cuts)
            }));
        }
        RaftProxies {
            cuts,
            threads,
            listens,
        }
    }

    /// Cuts node `n` off from every other node (both directions); its live connections start
    /// swallowing bytes at once.
    pub fn cut(&self, n: u64) {
        self.cuts.cut.lock().unwrap().insert(n);
    }

    /// Reconnects node `n`. Connections that swallowed bytes are closed; the nodes reconnect.
    pub fn heal(&self, n: u64) {
        self.cuts.cut.lock().unwrap().remove(&n);
    }
}

impl Drop for RaftProxies {
    fn drop(&mut self) {
        self.cuts.stop.store(true, Ordering::Relaxed);
        for addr in &self.listens {
            // Wakes the blocking accept, which then sees `stop`.
            let _ = TcpStream::connect_timeout(addr, Duration::from_secs(1));
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: TcpListener, route: Route, cuts: Arc<Cuts>) {
    let mut conns: Vec<JoinHandle<()>> = Vec::new();
    // Blocking accept: a heartbeat on a new connection has the RPC's whole deadline (one
    // heartbeat interval, 50 ms) for the connect, so nothing here may poll. `Drop` wakes it
    // with a connection of its own.
    for client in listener.incoming() {
        if cuts.stop.load(Ordering::Relaxed) {
            break;
        }
        let Ok(client) = client else {
            continue;
        };
        let cuts = cuts.clone();
        let (to, target) = (route.node, route.target);
        conns.push(std::thread::spawn(move || {
            // The node is down: the client sees its connection closed, as it would.
            if let Ok(server) = TcpStream::connect_timeout(&target, Duration::from_secs(1)) {
                relay(client, server, to, cuts);
            }
        }));
        conns.retain(|c| !c.is_finished());
    }
    for c in conns {
        let _ = c.join();
    }
}

/// One relayed connection: who sent it (0 until a frame said), whether it lost bytes.
struct Link {
    to: u64,
    from: AtomicU64,
    swallowed: AtomicBool,
    done: AtomicBool,
}

impl Link {
    fn from(&self) -> Option<u64> {
        Some(self.from.load(Ordering::Relaxed)).filter(|n| *n != 0)
    }

    /// Whether the pumps should stop: closed, proxies stopping, or healed after a loss.
    fn over(&self, cuts: &Cuts) -> bool {
        self.done.load(Ordering::Relaxed)
            || cuts.stop.load(Ordering::Relaxed)
            || (self.swallowed.load(Ordering::Relaxed) && !cuts.blocked(self.from(), self.to))
    }
}

/// Copies both ways until either side closes; while the sender or the target is cut,
/// swallows what arrives. A connection that swallowed anything is closed once healed.
fn relay(client: TcpStream, server: TcpStream, to: u64, cuts: Arc<Cuts>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let link = Arc::new(Link {
        to,
        from: AtomicU64::new(0),
        swallowed: AtomicBool::new(false),
        done: AtomicBool::new(false),
    });
    let (src, dst) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let up = {
        let (link, cuts) = (link.clone(), cuts.clone());
        std::thread::spawn(move || pump(src, dst, &link, &cuts, true))
    };
    pump(server, client, &link, &cuts, false);
    let _ = up.join();
}

/// Moves bytes from `src` to `dst`. Requests (`frames`) go whole frames at a time, each
/// looked at for its sender before it is forwarded or swallowed.
fn pump(mut src: TcpStream, mut dst: TcpStream, link: &Link, cuts: &Cuts, frames: bool) {
    let _ = src.set_read_timeout(Some(POLL));
    let mut chunk = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    while !link.over(cuts) {
        let n = match src.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&chunk[..n]);
        let ready = if frames {
            let mut whole = 0;
            while let Some(len) = frame_len(&pending[whole..]) {
                if link.from().is_none() {
                    if let Some(sender) = sender_of(&pending[whole..whole + len]) {
                        link.from.store(sender, Ordering::Relaxed);
                    }
                }
                whole += len;
            }
            whole
        } else {
            pending.len()
        };
        if ready == 0 {
            continue;
        }
        if cuts.blocked(link.from(), link.to) {
            link.swallowed.store(true, Ordering::Relaxed);
        } else if dst.write_all(&pending[..ready]).is_err() {
            break;
        }
        pending.drain(..ready);
    }
    link.done.store(true, Ordering::Relaxed);
    let _ = src.shutdown(Shutdown::Both);
    let _ = dst.shutdown(Shutdown::Both);
}

/// The length of the whole frame at the start of `buf` (`u32 length | u8 version | payload`,
/// raft-meta's `network::frame`), once all of it is there.
fn frame_len(buf: &[u8]) -> Option<usize> {
    let len = u32::from_be_bytes(buf.get(..4)?.try_into().ok()?) as usize;
    (buf.len() >= 4 + len).then_some(4 + len)
}

/// The node that sent a request frame, when the request names it. Requests are version 1
/// (open port) or 2 (sealed: the payload, then the tag, which postcard leaves unread); the
/// authentication handshake's messages (0x10 and up) name no sender.
fn sender_of(frame: &[u8]) -> Option<u64> {
    use raft_meta::network::rpc::RpcRequest;
    if !matches!(frame.get(4), Some(1 | 2)) {
        return None;
    }
    let request: RpcRequest = postcard::from_bytes(frame.get(5..)?).ok()?;
    match request {
        RpcRequest::AppendEntries(r) => r.vote.leader_id().voted_for(),
        RpcRequest::Vote(r) => r.vote.leader_id().voted_for(),
        RpcRequest::InstallSnapshot(r) => r.vote.leader_id().voted_for(),
        RpcRequest::PreVote(r) => Some(r.candidate),
        RpcRequest::Admin(_) | RpcRequest::Forward(_) | RpcRequest::ReadIndex => None,
    }
}
