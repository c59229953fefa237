//! Request memory: bytes of requests read but not yet answered, bounded for each connection
//! and for the whole broker (Kafka's `queued.max.request.bytes`, which Kafka leaves unbounded
//! by default; see docs/decisions for the defaults chosen here).
//!
//! ```text
//!  length prefix read ─> take the frame's bytes: the connection's share first, then the
//!                        broker's pool; while either is spent the socket is simply not read
//!                        (back-pressure: TCP's window fills, the client waits)
//!                     ─> the body is read into memory already paid for
//!  answer written     ─> the frame's RequestBytes drop and go back to both
//! ```
//!
//! A frame is paid for whole, before its body is read: paying as bytes arrive could leave two
//! half-read frames each waiting for the other's bytes forever. A small frame (one read's
//! worth, see `frame_reader`) never waits: it pays if it can and otherwise goes unpaid, and
//! its connection then reads nothing more until it is answered. Heartbeats, commits, metadata
//! and fetch requests are small, so large requests stuck mid-air cannot silence the rest.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics as m;

/// At most one log line per this long about request memory running out.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The broker's pool of request bytes, shared by every connection.
#[derive(Debug)]
pub struct RequestMemory {
    pool: Arc<Semaphore>,
    total_bytes: usize,
    per_connection_bytes: usize,
    /// Milliseconds since `started` of the last warning (rate limit), plus one; 0: never.
    last_warned: AtomicU64,
    started: Instant,
}

/// Which bound a read waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The connection's own share.
    Connection,
    /// The broker's pool.
    Broker,
}

impl Scope {
    fn label(self) -> &'static str {
        match self {
            Scope::Connection => "connection",
            Scope::Broker => "broker",
        }
    }
}

impl RequestMemory {
    /// A pool of `total_bytes`, of which one connection holds at most `per_connection_bytes`.
    /// Both must hold the largest frame (the caller validates the flags).
    pub fn new(total_bytes: usize, per_connection_bytes: usize) -> Arc<RequestMemory> {
        Arc::new(RequestMemory {
            pool: Arc::new(Semaphore::new(total_bytes.min(Semaphore::MAX_PERMITS))),
            total_bytes,
            per_connection_bytes,
            last_warned: AtomicU64::new(0),
            started: Instant::now(),
        })
    }

    /// A new connection's handle on the pool.
    pub fn connection(self: &Arc<Self>) -> ConnectionMemory {
        ConnectionMemory {
            memory: self.clone(),
            share: Arc::new(Semaphore::new(
                self.per_connection_bytes.min(Semaphore::MAX_PERMITS),
            )),
        }
    }

    /// Bytes currently held by requests, counting those set aside for the frame first in line
    /// for the pool (for tests and metrics).
    pub fn held_bytes(&self) -> usize {
        self.total_bytes
            .min(Semaphore::MAX_PERMITS)
            .saturating_sub(self.pool.available_permits())
    }

    /// Counts a wait, and logs it unless a line went out recently.
    fn waited(&self, scope: Scope, bytes: usize) {
        metrics::counter!(m::REQUEST_MEMORY_WAITS_TOTAL, "scope" => scope.label()).increment(1);
        let now = self.started.elapsed().as_millis() as u64 + 1;
        let last = self.last_warned.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= WARN_EVERY.as_millis() as u64;
        if due
            && self
                .last_warned
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let limit = match scope {
                Scope::Connection => self.per_connection_bytes,
                Scope::Broker => self.total_bytes,
            };
            tracing::warn!(
                scope = scope.label(),
                limit_bytes = limit,
                frame_bytes = bytes,
                "request memory spent: not reading from sockets until answers free some"
            );
        }
    }
}

/// One connection's handle: its share, and the broker's pool behind it.
#[derive(Debug)]
pub struct ConnectionMemory {
    memory: Arc<RequestMemory>,
    share: Arc<Semaphore>,
}

/// Bytes of one request, taken from its connection's share and the broker's pool; they go
/// back when this drops (once the request is answered). A small frame that found both spent
/// holds nothing ([`RequestBytes::unpaid`]).
#[derive(Debug)]
pub struct RequestBytes {
    /// The connection's share and the pool's bytes; held only to be given back on drop.
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
}

impl RequestBytes {
    /// A small frame read without payment.
    pub fn unpaid() -> RequestBytes {
        RequestBytes { permits: None }
    }

    /// How many bytes this holds.
    pub fn len(&self) -> usize {
        self.permits
            .as_ref()
            .map_or(0, |(_, pool)| pool.num_permits())
    }

    /// Whether this holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the frame was paid for (else its connection must not read on until it is
    /// answered).
    pub fn is_paid(&self) -> bool {
        self.permits.is_some()
    }
}

impl ConnectionMemory {
    /// Takes `bytes` for a frame, waiting (not reading the socket) while the connection's
    /// share or the broker's pool lacks them. Cancel-safe: nothing is held if the future drops.
    pub async fn take(&self, bytes: usize) -> RequestBytes {
        let n = u32::try_from(bytes).unwrap_or(u32::MAX);
        let share = match self.share.clone().try_acquire_many_owned(n) {
            Ok(p) => p,
            Err(_) => {
                self.memory.waited(Scope::Connection, bytes);
                match self.share.clone().acquire_many_owned(n).await {
                    Ok(p) => p,
                    // The semaphores are never closed.
                    Err(_) => return self.take_never().await,
                }
            }
        };
        let pool = match self.memory.pool.clone().try_acquire_many_owned(n) {
            Ok(p) => p,
            Err(_) => {
                self.memory.waited(Scope::Broker, bytes);
                match self.memory.pool.clone().acquire_many_owned(n).await {
                    Ok(p) => p,
                    Err(_) => return self.take_never().await,
                }
            }
        };
        RequestBytes {
            permits: Some((share, pool)),
        }
    }

    /// Takes `bytes` only if both the share and the pool have them now.
    pub fn try_take(&self, bytes: usize) -> Option<RequestBytes> {
        let n = u32::try_from(bytes).ok()?;
        let share = self.share.clone().try_acquire_many_owned(n).ok()?;
        let pool = self.memory.pool.clone().try_acquire_many_owned(n).ok()?;
        Some(RequestBytes {
            permits: Some((share, pool)),
        })
    }

    /// A closed semaphore (which nothing does) would mean no memory ever: wait forever rather
    /// than read unpaid bytes; shutdown or the idle timeout ends the connection.
    async fn take_never(&self) -> RequestBytes {
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_go_back_when_the_request_is_dropped() {
        let memory = RequestMemory::new(1000, 600);
        let a = memory.connection();
        let first = a.take(500).await;
        assert_eq!(first.len(), 500);
        assert_eq!(memory.held_bytes(), 500);
        drop(first);
        assert_eq!(memory.held_bytes(), 0);
    }

    #[tokio::test]
    async fn a_connection_past_its_share_waits_while_others_are_served() {
        let memory = RequestMemory::new(1000, 600);
        let a = memory.connection();
        let b = memory.connection();
        let held = a.take(400).await;
        // A's share has 200 left: 300 more must wait for its own answers...
        let waiting = tokio::time::timeout(Duration::from_millis(50), a.take(300)).await;
        assert!(waiting.is_err());
        // ...while B is served from the pool.
        let other = b.take(500).await;
        assert_eq!(memory.held_bytes(), 900);
        drop(held);
        let got = a.take(100).await;
        assert_eq!(got.len(), 100);
        drop(other);
    }

    #[tokio::test]
    async fn the_pool_bounds_every_connection_together() {
        let memory = RequestMemory::new(1000, 600);
        let a = memory.connection();
        let b = memory.connection();
        let held = a.take(600).await;
        let waiting = tokio::spawn({
            let memory = memory.clone();
            async move {
                let b = b;
                let got = b.take(500).await;
                (got.len(), memory.held_bytes())
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "took bytes the pool does not have");
        // The 400 bytes left are set aside for the frame first in line (tokio's semaphore is
        // FIFO), so smaller frames cannot overtake it and starve it.
        assert_eq!(memory.held_bytes(), 1000);
        let c = memory.connection();
        assert!(
            c.try_take(100).is_none(),
            "overtook the frame first in line"
        );
        drop(held);
        let (len, held_then) = waiting.await.unwrap();
        assert_eq!((len, held_then), (500, 500));
    }
}
