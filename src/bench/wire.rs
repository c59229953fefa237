//! A pipelined Kafka connection for load generation: requests are encoded into a write buffer
//! and sent together with one `write`, responses are read in bulk and matched in order.
//!
//! ```text
//!  queue(req, tag) ─► wbuf ──flush()──► broker      (many requests, one syscall)
//!  next_response() ◄─ rbuf ◄──read──── broker      (in order: Kafka answers a connection's
//!        └─ pops the oldest pending (tag, sent at) and checks its correlation id)
//! ```
//!
//! Kafka answers the requests of one connection in the order it received them, so the oldest
//! pending request is always the one a response belongs to; the correlation id is checked
//! anyway, since a mismatch means the stream lost its framing.
//!
//! With `--command-config` ([`use_security`]) every connection is opened by Cohort's client
//! (TLS handshake, ApiVersions, SASL) and its authenticated stream is taken over.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use protocol::frame::{split_frame, FrameStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::BenchError;
use crate::client::auth::ClientSecurity;
use crate::client::connection::Connection;
use crate::client::transport::Stream;

/// Largest response accepted (a Metadata answer for many partitions fits).
const RESPONSE_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Free room the read buffer keeps, so one `read` takes many pipelined responses.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// How long setup calls wait for their answer (a parked JoinGroup waits for the whole join
/// phase: the initial rebalance delay and the other members).
pub const SETUP_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How every connection of this run logs in (`--command-config`), set once before the first
/// connection; PLAINTEXT when never set.
static SECURITY: OnceLock<Arc<ClientSecurity>> = OnceLock::new();

/// Makes every later connection log in as `security` says. Once per process.
pub fn use_security(security: ClientSecurity) -> Result<(), BenchError> {
    SECURITY
        .set(Arc::new(security))
        .map_err(|_| BenchError::Setup("the connections' security was set twice".into()))
}

/// A request on the wire, waiting for its response.
#[derive(Debug)]
struct Pending<T> {
    correlation_id: i32,
    api: ApiKey,
    version: i16,
    tag: T,
}

/// A response, with the tag its request was queued with.
#[derive(Debug)]
pub struct Response<T> {
    pub tag: T,
    pub body: ResponseKind,
}

/// One connection; `T` is what the caller wants back with each response.
pub struct Conn<T> {
    stream: Stream,
    addr: SocketAddr,
    rbuf: BytesMut,
    wbuf: BytesMut,
    next_correlation_id: i32,
    pending: VecDeque<Pending<T>>,
    client_id: StrBytes,
}

impl<T> Conn<T> {
    pub async fn connect(addr: SocketAddr, client_id: &str) -> Result<Conn<T>, BenchError> {
        let stream = match SECURITY.get() {
            Some(security) if security.tls.is_some() || security.sasl.is_some() => {
                Connection::open_with(
                    &addr.to_string(),
                    client_id,
                    Duration::from_secs(10),
                    security,
                )
                .await
                .map_err(|e| {
                    BenchError::Setup(format!("connecting to {addr}: {}", e.java_message()))
                })?
                .into_stream()
            }
            _ => Stream::Plain(Self::tcp(addr).await?),
        };
        Ok(Conn {
            stream,
            addr,
            rbuf: BytesMut::with_capacity(READ_CHUNK_BYTES),
            wbuf: BytesMut::with_capacity(16 * 1024),
            next_correlation_id: 0,
            pending: VecDeque::new(),
            client_id: StrBytes::from_string(client_id.to_string()),
        })
    }

    async fn tcp(addr: SocketAddr) -> Result<TcpStream, BenchError> {
        let stream = tokio::time::timeout(Duration::from_secs(10), TcpStream::connect(addr))
            .await
            .map_err(|_| BenchError::Io {
                what: format!("connecting to {addr}"),
                source: std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
            })?
            .map_err(|source| BenchError::Io {
                what: format!("connecting to {addr}"),
                source,
            })?;
        // Small requests, latency-bound: Nagle would hold back the next batch.
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }

    /// Requests sent (or queued) and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Encodes a request into the write buffer; nothing is sent until [`Conn::flush`].
    pub fn queue(
        &mut self,
        api: ApiKey,
        version: i16,
        body: &RequestKind,
        tag: T,
    ) -> Result<(), BenchError> {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(self.client_id.clone()));
        let start = self.wbuf.len();
        self.wbuf.put_i32(0);
        header
            .encode(&mut self.wbuf, api.request_header_version(version))
            .and_then(|()| body.encode(&mut self.wbuf, version))
            .map_err(|e| BenchError::Protocol(format!("encoding {api:?} v{version}: {e}")))?;
        let size = i32::try_from(self.wbuf.len() - start - 4)
            .map_err(|_| BenchError::Protocol(format!("{api:?} request over 2 GiB")))?;
        self.wbuf[start..start + 4].copy_from_slice(&size.to_be_bytes());
        self.pending.push_back(Pending {
            correlation_id,
            api,
            version,
            tag,
        });
        Ok(())
    }

    /// Sends everything queued.
    pub async fn flush(&mut self) -> Result<(), BenchError> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let addr = self.addr;
        self.stream
            .write_all(&self.wbuf)
            .await
            .map_err(|source| BenchError::Io {
                what: format!("writing to {addr}"),
                source,
            })?;
        // TLS buffers what it encrypted until flushed.
        self.stream.flush().await.map_err(|source| BenchError::Io {
            what: format!("writing to {addr}"),
            source,
        })?;
        self.wbuf.clear();
        Ok(())
    }

    /// A response already in the read buffer, if a whole one is there (no syscall).
    pub fn take_buffered(&mut self) -> Result<Option<Response<T>>, BenchError> {
        let status = split_frame(&mut self.rbuf, RESPONSE_BYTES_MAX)
            .map_err(|e| BenchError::Protocol(format!("response from {}: {e}", self.addr)))?;
        let FrameStatus::Complete(mut frame) = status else {
            return Ok(None);
        };
        let Some(p) = self.pending.pop_front() else {
            return Err(BenchError::Protocol(format!(
                "{} sent a response to no request",
                self.addr
            )));
        };
        let header =
            ResponseHeader::decode(&mut frame, p.api.response_header_version(p.version))
                .map_err(|e| BenchError::Protocol(format!("{:?} response header: {e}", p.api)))?;
        if header.correlation_id != p.correlation_id {
            return Err(BenchError::Protocol(format!(
                "{} answered correlation id {} where {} was due",
                self.addr, header.correlation_id, p.correlation_id
            )));
        }
        let body = ResponseKind::decode(p.api, &mut frame, p.version).map_err(|e| {
            BenchError::Protocol(format!("{:?} v{} response: {e}", p.api, p.version))
        })?;
        Ok(Some(Response { tag: p.tag, body }))
    }

    /// The next response. Cancel-safe: a cancelled call leaves whatever it read buffered.
    pub async fn next_response(&mut self) -> Result<Response<T>, BenchError> {
        loop {
            if let Some(r) = self.take_buffered()? {
                return Ok(r);
            }
            if self.pending.is_empty() {
                return Err(BenchError::Protocol(format!(
                    "waiting for a response from {} with no request pending",
                    self.addr
                )));
            }
            if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK_BYTES / 4 {
                self.rbuf.reserve(READ_CHUNK_BYTES);
            }
            let n = self
                .stream
                .read_buf(&mut self.rbuf)
                .await
                .map_err(|source| BenchError::Io {
                    what: format!("reading from {}", self.addr),
                    source,
                })?;
            if n == 0 {
                return Err(BenchError::Io {
                    what: format!("reading from {}", self.addr),
                    source: std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the broker closed the connection",
                    ),
                });
            }
        }
    }
}

impl Conn<()> {
    /// One request and its response, for setup steps (bounded by [`SETUP_CALL_TIMEOUT`]).
    pub async fn call(
        &mut self,
        api: ApiKey,
        version: i16,
        body: RequestKind,
    ) -> Result<ResponseKind, BenchError> {
        self.queue(api, version, &body, ())?;
        self.flush().await?;
        let started = Instant::now();
        match tokio::time::timeout(SETUP_CALL_TIMEOUT, self.next_response()).await {
            Ok(r) => r.map(|r| r.body),
            Err(_) => Err(BenchError::Setup(format!(
                "{api:?} to {} unanswered after {:?}",
                self.addr,
                started.elapsed()
            ))),
        }
    }
}
