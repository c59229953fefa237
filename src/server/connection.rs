//! One client connection: frames in, responses out, one request at a time.
//!
//! ```text
//!  loop:
//!    read a frame ─ bad prefix / EOF mid-frame / idle too long ──> log, close
//!    decode ─────── unknown key / unsupported version / garbage ─> log, close
//!               └── ApiVersions too new ──> v0 fallback answer, keep going
//!    dispatch (span: api, version, client id, correlation id)
//!    write the response (none for acks=0)
//! ```
//!
//! Requests on one connection are handled in order, one at a time, as Kafka does (it mutes a
//! channel while its request is in flight), so responses need no reordering. Connections are
//! independent tasks: whatever one client sends never stalls another.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use protocol::frame::{split_frame, FrameError, FrameStatus};
use protocol::request::{decode_request, RequestError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tracing::Instrument;

use crate::broker::Broker;
use crate::handlers::{self, api_name, Reply, RequestContext};
use crate::metrics as m;

/// A connection that sends nothing for this long is closed (Kafka's
/// `connections.max.idle.ms` default).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Buffer growth per read while a large frame arrives: memory follows the bytes received, not
/// the size a prefix announces.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
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
    /// Nothing received for [`IDLE_TIMEOUT`].
    #[error("idle for {0:?}")]
    Idle(Duration),
    /// A request we do not serve or cannot decode.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A decoded request no handler serves.
    #[error(transparent)]
    NotServed(#[from] handlers::NotServed),
    /// A response the codec refused (a bug; the client could not read a partial answer).
    #[error(transparent)]
    Encode(#[from] protocol::EncodeError),
}

impl ConnectionError {
    /// Label for `cohort_bad_requests_total`, or `None` when the client did nothing wrong.
    fn bad_input_reason(&self) -> Option<&'static str> {
        match self {
            ConnectionError::Frame(FrameError::TooLarge { .. }) => Some("frame_too_large"),
            ConnectionError::Frame(FrameError::NegativeSize(_)) => Some("negative_frame_size"),
            ConnectionError::TruncatedFrame { .. } => Some("truncated_frame"),
            ConnectionError::Request(RequestError::Truncated { .. }) => Some("truncated_header"),
            ConnectionError::Request(RequestError::UnknownApiKey { .. }) => Some("unknown_api_key"),
            ConnectionError::Request(RequestError::UnsupportedVersion { .. }) => {
                Some("unsupported_version")
            }
            ConnectionError::Request(RequestError::Malformed { .. }) => Some("malformed"),
            _ => None,
        }
    }
}

/// Serves `stream` until the peer leaves, sends something unservable, or shutdown begins.
pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    broker: Arc<Broker>,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let mut conn = Connection {
        stream,
        peer,
        buf: BytesMut::with_capacity(4096),
        max_frame_bytes: broker.config.max_frame_bytes,
    };
    let result = conn.run(&broker, &mut shutdown).await;
    match result {
        Ok(()) => tracing::debug!(%peer, "connection closed"),
        Err(e) => {
            if let Some(reason) = e.bad_input_reason() {
                metrics::counter!(m::BAD_REQUESTS_TOTAL, "reason" => reason).increment(1);
                tracing::warn!(%peer, error = %e, "closing connection: bad request");
            } else if matches!(
                e,
                ConnectionError::Encode(_) | ConnectionError::NotServed(_)
            ) {
                tracing::error!(%peer, error = %e, "closing connection");
            } else {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
        }
    }
}

struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    buf: BytesMut,
    max_frame_bytes: usize,
}

impl Connection {
    async fn run(
        &mut self,
        broker: &Arc<Broker>,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<(), ConnectionError> {
        loop {
            let Some(frame) = self.read_frame(shutdown).await? else {
                return Ok(());
            };
            let request = match decode_request(frame) {
                Ok(r) => r,
                Err(RequestError::ApiVersionsTooNew { peek }) => {
                    tracing::debug!(peer = %self.peer, version = peek.api_version,
                        "ApiVersions newer than served: answering with the v0 fallback");
                    let frame = protocol::response::api_versions_too_new_response(
                        peek.correlation_id,
                        protocol::SUPPORTED_APIS,
                    )?;
                    self.stream.write_all(&frame).await?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let api = request.api_key;
            let ctx = RequestContext {
                broker: broker.clone(),
                api_key: api,
                version: request.version(),
                client_id: request.client_id().to_string(),
                correlation_id: request.correlation_id(),
                peer: self.peer,
            };
            let span = tracing::info_span!(
                "request",
                api = api_name(api),
                version = ctx.version,
                client_id = %ctx.client_id,
                correlation_id = ctx.correlation_id,
            );
            metrics::counter!(m::REQUESTS_TOTAL, "api" => api_name(api)).increment(1);
            let started = Instant::now();
            let reply = handlers::dispatch(&ctx, request.body)
                .instrument(span.clone())
                .await?;
            let frame = match reply {
                Reply::Body(body) => Some(protocol::encode_response(
                    ctx.correlation_id,
                    api,
                    ctx.version,
                    body.as_ref(),
                )?),
                Reply::Frame(frame) => Some(frame),
                Reply::Nothing => None,
                Reply::Close(why) => {
                    span.in_scope(|| tracing::info!(reason = why, "closing connection"));
                    return Ok(());
                }
            };
            metrics::histogram!(m::REQUEST_DURATION_SECONDS, "api" => api_name(api))
                .record(started.elapsed().as_secs_f64());
            span.in_scope(|| tracing::debug!(elapsed = ?started.elapsed(), "handled"));
            if let Some(frame) = frame {
                self.stream.write_all(&frame).await?;
            }
        }
    }

    /// The next whole frame; `None` when the peer closed cleanly between frames or shutdown
    /// began while no frame was under way.
    async fn read_frame(
        &mut self,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Option<Bytes>, ConnectionError> {
        loop {
            let needed = match split_frame(&mut self.buf, self.max_frame_bytes)? {
                FrameStatus::Complete(frame) => return Ok(Some(frame)),
                FrameStatus::Incomplete { frame_bytes } => frame_bytes
                    .map_or(protocol::frame::LENGTH_PREFIX_BYTES, |n| {
                        n + protocol::frame::LENGTH_PREFIX_BYTES
                    }),
            };
            if self.buf.is_empty() && *shutdown.borrow() {
                return Ok(None);
            }
            let missing = needed.saturating_sub(self.buf.len());
            self.buf.reserve(missing.clamp(1, READ_CHUNK_BYTES));
            let idle = self.buf.is_empty();
            let read = tokio::select! {
                r = tokio::time::timeout(IDLE_TIMEOUT, self.stream.read_buf(&mut self.buf)) => r,
                _ = shutdown.changed(), if idle => return Ok(None),
            };
            let n = read.map_err(|_| ConnectionError::Idle(IDLE_TIMEOUT))??;
            if n == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(ConnectionError::TruncatedFrame {
                        buffered: self.buf.len(),
                    })
                };
            }
        }
    }
}
