//! Who may hold a connection to the peer port: at most `connections_max` in all and
//! `connections_per_address_max` from one IP address, and a connection that has not yet sent
//! its first whole request (its handshake) is the first to go when a new one needs its place.
//!
//! ```text
//!  accept ─► admit(address)
//!              total or address at its cap? ─► evict the oldest connection still in its
//!                                               handshake (that address's, for its cap)
//!                                             └ none to evict ─► refuse (close, count, log)
//!              ─► Ticket (handshaking) ─ first whole request ─► established
//!                                       └ evicted meanwhile ─► the connection closes
//! ```
//!
//! A real peer sends its request the moment it connects, so it leaves the handshake within
//! milliseconds; idle or trickling sockets stay in it and are the ones evicted, so they cannot
//! keep a peer's new connection out and starve it into an election. Until peers authenticate,
//! the handshake is just the first request; authentication will slot in there.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// Bounds of the peer port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerPortLimits {
    /// Connections open at once.
    pub connections_max: usize,
    /// Connections open at once from one IP address.
    pub connections_per_address_max: usize,
    /// A new connection's first request, and any request once its first bytes arrived, must
    /// arrive whole within this.
    pub handshake_timeout: Duration,
    /// An established connection that sends nothing for this long is closed. Clients drop
    /// their pooled connections well before (`client::POOLED_IDLE_MAX`); at least
    /// [`IDLE_TIMEOUT_MIN`].
    pub idle_timeout: Duration,
}

/// Shortest idle timeout a peer port may have: twice the time clients keep a pooled
/// connection unused, so the server never closes one a client is about to reuse.
pub const IDLE_TIMEOUT_MIN: Duration = Duration::from_secs(10);

impl Default for PeerPortLimits {
    fn default() -> Self {
        PeerPortLimits {
            connections_max: 256,
            connections_per_address_max: 64,
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// Metric: peer connections refused on accept, by `reason` (`total`, `per_address`).
pub const REFUSED_TOTAL: &str = "raft_peer_connections_refused_total";
/// Metric: connections closed while still in their handshake to make room for a new one.
pub const EVICTED_TOTAL: &str = "raft_peer_connections_evicted_total";
/// Metric: peer connections closed by a timeout, by `reason` (`handshake`, `idle`, `slow_frame`).
pub const TIMED_OUT_TOTAL: &str = "raft_peer_connections_timed_out_total";

/// At most one warning per this long about the port's limits (an attack must not flood the
/// log); every event is counted.
const WARN_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct State {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
    /// Oldest first.
    handshaking: VecDeque<Handshaking>,
    next_id: u64,
}

#[derive(Debug)]
struct Handshaking {
    id: u64,
    address: IpAddr,
    evict: oneshot::Sender<()>,
}

impl State {
    fn release(&mut self, address: IpAddr) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.by_address.get_mut(&address) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_address.remove(&address);
            }
        }
    }

    /// Evicts the oldest handshaking connection (from `address` only, if given).
    fn evict_oldest(&mut self, address: Option<IpAddr>) -> bool {
        let at = self
            .handshaking
            .iter()
            .position(|h| address.is_none_or(|a| h.address == a));
        let Some(victim) = at.and_then(|i| self.handshaking.remove(i)) else {
            return false;
        };
        self.release(victim.address);
        let _ = victim.evict.send(());
        metrics::counter!(EVICTED_TOTAL).increment(1);
        true
    }
}

/// The peer port's admission control, shared by the accept loop and connection tasks.
#[derive(Debug)]
pub(crate) struct Admission {
    limits: PeerPortLimits,
    state: Mutex<State>,
    started: Instant,
    /// Milliseconds since `started` of the last warning, plus one; 0: never.
    last_warned: AtomicU64,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Total,
    PerAddress,
}

impl Refused {
    pub fn label(self) -> &'static str {
        match self {
            Refused::Total => "total",
            Refused::PerAddress => "per_address",
        }
    }
}

/// An admitted connection's place; given back on drop.
#[derive(Debug)]
pub(crate) struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    address: IpAddr,
    /// Past its handshake (then it cannot have been evicted).
    established: bool,
    /// Fires if the connection is evicted while in its handshake.
    pub evicted: oneshot::Receiver<()>,
}

impl Admission {
    pub fn new(limits: PeerPortLimits) -> Arc<Admission> {
        Arc::new(Admission {
            limits,
            state: Mutex::new(State::default()),
            started: Instant::now(),
            last_warned: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned guard's counts are still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection from `address`, evicting a handshaking one if needed.
    pub fn admit(self: &Arc<Self>, address: IpAddr) -> Result<Ticket, Refused> {
        let mut state = self.lock();
        let mut evicted = false;
        if state.total >= self.limits.connections_max {
            if !state.evict_oldest(None) {
                return Err(Refused::Total);
            }
            evicted = true;
        }
        let from_address = state.by_address.get(&address).copied().unwrap_or(0);
        if from_address >= self.limits.connections_per_address_max {
            if !state.evict_oldest(Some(address)) {
                return Err(Refused::PerAddress);
            }
            evicted = true;
        }
        state.total += 1;
        *state.by_address.entry(address).or_insert(0) += 1;
        let id = state.next_id;
        state.next_id += 1;
        let (evict, evicted_rx) = oneshot::channel();
        state
            .handshaking
            .push_back(Handshaking { id, address, evict });
        drop(state);
        if evicted {
            self.warn("peer port full: closed the oldest connection still in its handshake");
        }
        Ok(Ticket {
            admission: self.clone(),
            id,
            address,
            established: false,
            evicted: evicted_rx,
        })
    }

    /// Logs `what` unless a warning went out within [`WARN_EVERY`].
    pub fn warn(&self, what: &'static str) {
        let now = self.started.elapsed().as_millis() as u64 + 1;
        let last = self.last_warned.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= WARN_EVERY.as_millis() as u64;
        if due
            && self
                .last_warned
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                connections_max = self.limits.connections_max,
                per_address_max = self.limits.connections_per_address_max,
                "{what} (counted in raft_peer_connections_*; this line at most every 10 s)"
            );
        }
    }

    /// Connections open now (for tests).
    #[cfg(test)]
    fn open(&self) -> usize {
        self.lock().total
    }
}

impl Ticket {
    /// The connection sent its first whole request: it can no longer be evicted. False if it
    /// was evicted first (it must close).
    pub fn established(&mut self) -> bool {
        if self.established {
            return true;
        }
        let mut state = self.admission.lock();
        match state.handshaking.iter().position(|h| h.id == self.id) {
            Some(i) => {
                state.handshaking.remove(i);
                self.established = true;
                true
            }
            None => false,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.admission.lock();
        if !self.established {
            match state.handshaking.iter().position(|h| h.id == self.id) {
                Some(i) => {
                    state.handshaking.remove(i);
                }
                // Evicted: its place was given back then.
                None => return,
            }
        }
        state.release(self.address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_address: usize) -> PeerPortLimits {
        PeerPortLimits {
            connections_max: total,
            connections_per_address_max: per_address,
            ..PeerPortLimits::default()
        }
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn a_new_connection_evicts_the_oldest_handshaking_one() {
        let admission = Admission::new(limits(2, 2));
        let mut first = admission.admit(A).unwrap();
        let second = admission.admit(A).unwrap();
        let third = admission.admit(B).unwrap();
        assert!(
            first.evicted.try_recv().is_ok(),
            "the oldest was not evicted"
        );
        assert!(!first.established());
        assert_eq!(admission.open(), 2);
        drop(first);
        assert_eq!(admission.open(), 2, "an evicted place was given back twice");
        drop((second, third));
        assert_eq!(admission.open(), 0);
    }

    #[test]
    fn established_connections_are_never_evicted() {
        let admission = Admission::new(limits(2, 2));
        let mut a = admission.admit(A).unwrap();
        let mut b = admission.admit(B).unwrap();
        assert!(a.established() && b.established());
        assert_eq!(admission.admit(A).unwrap_err(), Refused::Total);
        drop(a);
        let c = admission.admit(A).unwrap();
        drop((b, c));
        assert_eq!(admission.open(), 0);
    }

    #[test]
    fn the_address_cap_evicts_only_that_address() {
        let admission = Admission::new(limits(10, 1));
        let mut from_b = admission.admit(B).unwrap();
        let mut from_a = admission.admit(A).unwrap();
        assert!(from_a.established());
        assert_eq!(admission.admit(A).unwrap_err(), Refused::PerAddress);
        let _second_b = admission.admit(B).unwrap();
        assert!(from_b.evicted.try_recv().is_ok());
        assert!(!from_b.established());
    }
}
