//! Reading request frames off a connection, within the request-memory budget.
//!
//! ```text
//!  buffer: [ prefix | body ....................... ][ read-ahead ≤ READ_AHEAD_BYTES ]
//!           └─ paid for (RequestMemory) before any ─┘ └─ unpaid: what one read may bring
//!              byte past the prefix is read             beyond the current frame
//! ```
//!
//! A frame's bytes are paid for as soon as its length prefix is known and before the rest is
//! read; the payment travels with the frame ([`Frame::held`]) until its answer is written.
//! Beyond the current frame a read may bring at most [`READ_AHEAD_BYTES`] (the next prefix
//! and small pipelined requests in one syscall). A frame no larger than that never waits for
//! memory: unpaid if the budget is spent, it is answered before the connection reads on. So
//! a connection's memory is what it paid for plus twice that allowance. Memory follows the
//! bytes that arrive: the buffer grows per read, never to a size a prefix merely announces.
//!
//! Once its prefix is in (and paid for), a request must arrive whole within the receive
//! timeout: a client trickling a large frame cannot hold its share of the budget for long.

use std::time::Duration;

use tokio::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use protocol::frame::{frame_size, FrameError, LENGTH_PREFIX_BYTES};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use super::request_memory::{ConnectionMemory, RequestBytes};

/// Unpaid bytes a read may bring past the current frame; also the largest frame that never
/// waits for request memory.
pub const READ_AHEAD_BYTES: usize = 16 * 1024;
/// Buffer growth per read while a large frame arrives: its memory follows the bytes received.
const READ_CHUNK_BYTES: usize = 256 * 1024;

/// A whole request frame (without its prefix) and the request memory it holds.
#[derive(Debug)]
pub struct Frame {
    /// Header and body.
    pub bytes: Bytes,
    /// Given back when the answer is out (drop it then).
    pub held: RequestBytes,
}

/// Why no frame could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The peer went away or the socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// A length prefix that cannot be honoured.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The peer closed the connection in the middle of a frame.
    #[error("connection closed {buffered} bytes into a frame")]
    TruncatedFrame {
        /// Bytes of the unfinished frame.
        buffered: usize,
    },
    /// Nothing received for this long (`--connections-max-idle-ms`).
    #[error("idle for {0:?}")]
    Idle(Duration),
    /// A request did not arrive whole within this of its prefix
    /// (`--request-receive-timeout-ms`).
    #[error("a request did not arrive whole within {0:?}")]
    SlowRequest(Duration),
}

/// How long a connection may take.
#[derive(Debug, Clone, Copy)]
pub struct ReadTimeouts {
    /// Between requests.
    pub idle: Duration,
    /// For a request, from its prefix (once paid for) to its last byte.
    pub receive: Duration,
}

/// The read side of one connection.
#[derive(Debug)]
pub struct FrameReader {
    buf: BytesMut,
    /// What the frame at the front of `buf` paid (once its prefix is known), and by when it
    /// must be whole.
    paid: Option<(RequestBytes, Instant)>,
    memory: ConnectionMemory,
    max_frame_bytes: usize,
    timeouts: ReadTimeouts,
}

impl FrameReader {
    pub fn new(memory: ConnectionMemory, max_frame_bytes: usize, timeouts: ReadTimeouts) -> Self {
        FrameReader {
            buf: BytesMut::new(),
            paid: None,
            memory,
            max_frame_bytes,
            timeouts,
        }
    }

    /// Changes the largest frame accepted (a SASL listener reads small frames only until the
    /// connection has authenticated).
    pub fn set_max_frame_bytes(&mut self, max_frame_bytes: usize) {
        self.max_frame_bytes = max_frame_bytes;
    }

    /// Whether bytes of a next request are already here (the client is pipelining).
    pub fn has_buffered(&self) -> bool {
        !self.buf.is_empty()
    }

    /// The next whole frame; `None` when the peer closed cleanly between frames or shutdown
    /// began while no frame was under way. Cancel-safe: bytes and payments stay in `self`.
    pub async fn next<R: AsyncRead + Unpin>(
        &mut self,
        stream: &mut R,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Option<Frame>, ReadError> {
        loop {
            let limit = match self.frame_total()? {
                Some(total) => {
                    if self.paid.is_none() {
                        let paid = if total <= READ_AHEAD_BYTES {
                            self.memory
                                .try_take(total)
                                .unwrap_or_else(RequestBytes::unpaid)
                        } else {
                            let idle = self.buf.is_empty();
                            tokio::select! {
                                paid = self.memory.take(total) => paid,
                                _ = shutdown.changed(), if idle => return Ok(None),
                            }
                        };
                        self.paid = Some((paid, Instant::now() + self.timeouts.receive));
                    }
                    if self.buf.len() >= total {
                        let mut frame = self.buf.split_to(total);
                        let bytes = frame.split_off(LENGTH_PREFIX_BYTES).freeze();
                        let held = self
                            .paid
                            .take()
                            .map_or_else(RequestBytes::unpaid, |(held, _)| held);
                        return Ok(Some(Frame { bytes, held }));
                    }
                    total + READ_AHEAD_BYTES
                }
                None => READ_AHEAD_BYTES,
            };
            if self.buf.is_empty() && *shutdown.borrow() {
                return Ok(None);
            }
            let room = limit
                .saturating_sub(self.buf.len())
                .clamp(1, READ_CHUNK_BYTES);
            self.buf.reserve(room);
            let idle = self.buf.is_empty();
            // Between requests the idle timeout runs; inside one, its receive deadline.
            let (deadline, late) = match &self.paid {
                Some((_, by)) => (*by, ReadError::SlowRequest(self.timeouts.receive)),
                None => (
                    Instant::now() + self.timeouts.idle,
                    ReadError::Idle(self.timeouts.idle),
                ),
            };
            let mut room_left = (&mut self.buf).limit(room);
            let read = tokio::select! {
                r = tokio::time::timeout_at(deadline, stream.read_buf(&mut room_left)) => r,
                _ = shutdown.changed(), if idle => return Ok(None),
            };
            let n = read.map_err(|_| late)??;
            if n == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(ReadError::TruncatedFrame {
                        buffered: self.buf.len(),
                    })
                };
            }
        }
    }

    /// Bytes of the frame at the front of the buffer, prefix included, once its prefix is in.
    fn frame_total(&self) -> Result<Option<usize>, FrameError> {
        if self.buf.len() < LENGTH_PREFIX_BYTES {
            return Ok(None);
        }
        let size = frame_size(&self.buf[..LENGTH_PREFIX_BYTES], self.max_frame_bytes)?;
        Ok(Some(size + LENGTH_PREFIX_BYTES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::request_memory::RequestMemory;
    use tokio::io::AsyncWriteExt;

    fn timeouts(ms: u64) -> ReadTimeouts {
        ReadTimeouts {
            idle: Duration::from_millis(ms),
            receive: Duration::from_millis(ms),
        }
    }

    fn framed(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    #[tokio::test]
    async fn frames_split_anywhere_are_reassembled_and_hold_their_bytes() {
        let memory = RequestMemory::new(1 << 20, 1 << 20);
        let (mut client, mut server) = tokio::io::duplex(64);
        let mut reader = FrameReader::new(memory.connection(), 1024, timeouts(5_000));
        let (_tx, mut shutdown) = watch::channel(false);
        let mut wire = framed(b"hello");
        wire.extend(framed(&[7u8; 300]));
        let writer = tokio::spawn(async move {
            for byte in wire {
                client.write_all(&[byte]).await.unwrap();
            }
            client
        });
        let first = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&first.bytes[..], b"hello");
        assert_eq!(first.held.len(), 9);
        let second = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(second.bytes.len(), 300);
        assert_eq!(memory.held_bytes(), 9 + 304);
        drop((first, second));
        assert_eq!(memory.held_bytes(), 0);
        drop(writer.await.unwrap());
        assert!(reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .is_none());
    }

    #[tokio::test]
    async fn past_the_pool_a_large_frame_waits_unread() {
        // Room for one 20000-byte frame: the second waits, its body unread, until the first
        // is answered.
        let memory = RequestMemory::new(21_000, 21_000);
        let (mut client, mut server) = tokio::io::duplex(1 << 20);
        let mut reader = FrameReader::new(memory.connection(), 1 << 20, timeouts(5_000));
        let (_tx, mut shutdown) = watch::channel(false);
        let mut wire = framed(&[1u8; 20_000]);
        wire.extend(framed(&[2u8; 20_000]));
        client.write_all(&wire).await.unwrap();
        let first = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert!(first.held.is_paid());
        let blocked = tokio::time::timeout(
            Duration::from_millis(50),
            reader.next(&mut server, &mut shutdown),
        )
        .await;
        assert!(blocked.is_err(), "a second frame was read past the budget");
        assert!(reader.buf.len() <= READ_AHEAD_BYTES);
        drop(first);
        let second = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((second.bytes[0], second.held.len()), (2, 20_004));
    }

    #[tokio::test]
    async fn a_small_frame_never_waits_for_memory() {
        let memory = RequestMemory::new(21_000, 21_000);
        let (mut client, mut server) = tokio::io::duplex(1 << 20);
        let mut reader = FrameReader::new(memory.connection(), 1 << 20, timeouts(5_000));
        let other = memory.connection();
        let (_tx, mut shutdown) = watch::channel(false);
        let spent = other.take(21_000).await;
        client.write_all(&framed(b"heartbeat")).await.unwrap();
        let frame = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&frame.bytes[..], b"heartbeat");
        assert!(!frame.held.is_paid());
        drop(spent);
        client.write_all(&framed(b"commit")).await.unwrap();
        let paid = reader
            .next(&mut server, &mut shutdown)
            .await
            .unwrap()
            .unwrap();
        assert!(paid.held.is_paid());
    }

    #[tokio::test]
    async fn a_request_trickling_past_its_receive_timeout_ends_the_read() {
        let memory = RequestMemory::new(1 << 20, 1 << 20);
        let (mut client, mut server) = tokio::io::duplex(1 << 16);
        let mut reader = FrameReader::new(
            memory.connection(),
            1 << 20,
            ReadTimeouts {
                idle: Duration::from_secs(5),
                receive: Duration::from_millis(100),
            },
        );
        let (_tx, mut shutdown) = watch::channel(false);
        let trickle = tokio::spawn(async move {
            client.write_all(&100_000u32.to_be_bytes()).await.unwrap();
            for _ in 0..50 {
                if client.write_all(&[0u8; 10]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let got = reader.next(&mut server, &mut shutdown).await;
        assert!(matches!(got, Err(ReadError::SlowRequest(_))), "{got:?}");
        // The connection ends with the error: its memory goes back with the reader.
        drop(reader);
        assert_eq!(memory.held_bytes(), 0, "the slow request kept its memory");
        drop(server);
        trickle.await.unwrap();
    }

    #[tokio::test]
    async fn an_announced_frame_costs_only_the_bytes_that_arrived() {
        let memory = RequestMemory::new(64 << 20, 64 << 20);
        let (mut client, mut server) = tokio::io::duplex(1 << 16);
        let mut reader = FrameReader::new(memory.connection(), 32 << 20, timeouts(5_000));
        let (_tx, mut shutdown) = watch::channel(false);
        client
            .write_all(&(30u32 << 20).to_be_bytes())
            .await
            .unwrap();
        // (30 MiB announced, 100 bytes sent.)
        client.write_all(&[0u8; 100]).await.unwrap();
        let waiting = tokio::time::timeout(
            Duration::from_millis(50),
            reader.next(&mut server, &mut shutdown),
        )
        .await;
        assert!(waiting.is_err());
        assert!(reader.buf.capacity() <= READ_CHUNK_BYTES + READ_AHEAD_BYTES);
        assert_eq!(memory.held_bytes(), (30 << 20) + 4);
    }

    #[tokio::test]
    async fn silence_past_the_idle_timeout_ends_the_read() {
        let memory = RequestMemory::new(1 << 20, 1 << 20);
        let (_client, mut server) = tokio::io::duplex(64);
        let mut reader = FrameReader::new(memory.connection(), 1024, timeouts(30));
        let (_tx, mut shutdown) = watch::channel(false);
        let got = reader.next(&mut server, &mut shutdown).await;
        assert!(matches!(got, Err(ReadError::Idle(_))), "{got:?}");
    }
}
