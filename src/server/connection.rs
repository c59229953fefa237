//! One client connection: frames in, responses out, one request at a time.
//!
//! ```text
//!  loop:
//!    read a frame (`frame_reader`: paid for from the request memory before its body is
//!                  read; past the budget the socket is not read)
//!                ─ bad prefix / EOF mid-frame / idle too long ──> log, close
//!    decode ─────── unknown key / unsupported version / garbage ─> log, close
//!               └── ApiVersions too new ──> v0 fallback answer, keep going
//!    not loaded yet ─ group API / ApiVersions / FindCoordinator ─> the loading answer
//!                   └─ anything else ──> wait for the broker
//!    dispatch (span: api, version, client id, correlation id)
//!    write the response (none for acks=0; a Fetch answer's records from the segment files
//!    with sendfile, see `send_records`); a client that takes no byte of it for the send
//!    timeout is disconnected; the request's memory goes back once its answer is out
//! ```
//!
//! Requests on one connection are answered in order. They are handled one at a time, as Kafka
//! does (it mutes a channel while its request is in flight), with one exception: a Produce is
//! *written* in arrival order and then waits for its fsync while the connection reads on, so
//! consecutive produces of one client share group commits (up to `MAX_PIPELINED_PRODUCES`).
//! Any other request first waits for those answers to go out. Connections are independent
//! tasks: whatever one client sends never stalls another.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use protocol::frame::FrameError;
use protocol::request::{decode_request, RequestError};
use protocol::splice::{Chunks, SplicedFrame};
use tokio::sync::watch;
use tracing::Instrument;

use super::authenticate::{self, After, Gate};
use super::frame_reader::{FrameReader, ReadError, ReadTimeouts};
use super::front::Front;
use super::listener::Listener;
use super::reauth::{Reauth, Session, Verdict};
use super::request_memory::RequestBytes;
use super::send_records::{write_all_within, SendError, Transport};
use crate::broker::Broker;
use crate::data::FetchRecords;
use crate::handlers::{self, api_name, loading, produce, Reply, RequestContext};
use crate::metrics as m;
use crate::security::principal::Principal;
use crate::security::sasl::{self, SaslSession};
use kafka_protocol::messages::RequestKind;

/// Produce requests of one connection written but not yet acknowledged, at most. Clients
/// pipeline (Java: 5 in flight, librdkafka: many); the broker keeps reading while earlier
/// batches wait for their fsync, so one producer's requests share group commits too.
pub const MAX_PIPELINED_PRODUCES: usize = 16;

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The peer went away or the socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// No frame could be read: bad prefix, EOF mid-frame, idle too long.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The client took no byte of an answer for `--connections-send-timeout-ms`.
    #[error("the client took no byte of its answer for {0:?}")]
    SendStalled(Duration),
    /// A request we do not serve or cannot decode.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A decoded request no handler serves.
    #[error(transparent)]
    NotServed(#[from] handlers::NotServed),
    /// A response the codec refused (a bug; the client could not read a partial answer).
    #[error(transparent)]
    Encode(#[from] protocol::EncodeError),
    /// The TLS handshake and SASL exchange did not finish within `--authentication-timeout-ms`.
    #[error("not authenticated within {0:?}")]
    AuthenticationTimeout(Duration),
    /// A request came after the SASL session ended without a re-authentication (KIP-368).
    #[error("SASL session of {0:?} ended without re-authentication")]
    SessionExpired(Duration),
    /// Records a Fetch located in a segment file changed or vanished before they were sent:
    /// closing is the only way not to send a short or wrong frame.
    #[error("fetch answer abandoned: {0}")]
    RecordsGone(SendError),
}

impl From<SendError> for ConnectionError {
    fn from(e: SendError) -> Self {
        match e {
            SendError::Io(io) => ConnectionError::Io(io),
            SendError::Stalled(after) => ConnectionError::SendStalled(after),
            gone => ConnectionError::RecordsGone(gone),
        }
    }
}

impl ConnectionError {
    /// Label for `cohort_bad_requests_total`, or `None` when the client did nothing wrong.
    fn bad_input_reason(&self) -> Option<&'static str> {
        match self {
            ConnectionError::Read(ReadError::Frame(FrameError::TooLarge { .. })) => {
                Some("frame_too_large")
            }
            ConnectionError::Read(ReadError::Frame(FrameError::NegativeSize(_))) => {
                Some("negative_frame_size")
            }
            ConnectionError::Read(ReadError::TruncatedFrame { .. }) => Some("truncated_frame"),
            ConnectionError::Request(RequestError::Truncated { .. }) => Some("truncated_header"),
            ConnectionError::Request(RequestError::UnknownApiKey { .. }) => Some("unknown_api_key"),
            ConnectionError::Request(RequestError::UnsupportedVersion { .. }) => {
                Some("unsupported_version")
            }
            ConnectionError::Request(RequestError::Malformed { .. }) => Some("malformed"),
            _ => None,
        }
    }

    /// Label for `cohort_connections_closed_total` when a connection limit closed it.
    fn limit_reason(&self) -> Option<&'static str> {
        match self {
            ConnectionError::Read(ReadError::Idle(_)) => Some("idle"),
            ConnectionError::Read(ReadError::SlowRequest(_)) => Some("receive_timeout"),
            ConnectionError::SendStalled(_) => Some("send_timeout"),
            ConnectionError::AuthenticationTimeout(_) => Some("authentication_timeout"),
            ConnectionError::SessionExpired(_) => Some("session_expired"),
            _ => None,
        }
    }
}

/// Serves `stream` (plain TCP or TLS, accepted on `listener`) until the peer leaves, sends
/// something unservable, or shutdown begins.
///
/// `principal` is who the transport says the client is (`User:ANONYMOUS`, or a client
/// certificate's); on a SASL listener the connection must authenticate first, within the
/// authentication timeout counted from `accepted`.
pub async fn serve<S: Transport>(
    stream: S,
    peer: SocketAddr,
    listener: Arc<Listener>,
    front: Arc<Front>,
    mut shutdown: watch::Receiver<bool>,
    principal: Principal,
    accepted: Instant,
) {
    let limits = front.limits();
    let (auth, auth_deadline, first_max_frame) = match &listener.sasl {
        Some(sasl) => (
            Auth::Sasl(Box::default()),
            Some((accepted + sasl.timeout).into()),
            limits.max_frame_bytes.min(sasl::MAX_RECEIVE_BYTES),
        ),
        None => (
            Auth::Done(Arc::new(principal)),
            None,
            limits.max_frame_bytes,
        ),
    };
    let mut conn = Connection {
        stream,
        peer,
        listener,
        reader: FrameReader::new(
            front.request_memory().connection(),
            first_max_frame,
            ReadTimeouts {
                idle: limits.idle_timeout,
                receive: limits.receive_timeout,
            },
        ),
        send_timeout: limits.send_timeout,
        max_frame_bytes: limits.max_frame_bytes,
        auth,
        auth_deadline,
        session: None,
        reauth: None,
    };
    let result = conn.run(&front, &mut shutdown).await;
    match result {
        Ok(()) => tracing::debug!(%peer, "connection closed"),
        Err(e) => {
            if let Some(reason) = e.limit_reason() {
                metrics::counter!(m::CONNECTIONS_CLOSED_TOTAL, "reason" => reason).increment(1);
                let why = match reason {
                    "idle" => "idle too long (--connections-max-idle-ms)",
                    "receive_timeout" => {
                        "a request arrived too slowly (--request-receive-timeout-ms)"
                    }
                    "authentication_timeout" => {
                        "not authenticated in time (--authentication-timeout-ms)"
                    }
                    "session_expired" => {
                        "the SASL session expired without re-authentication \
                         (--connections-max-reauth-ms)"
                    }
                    _ => "the client stopped reading its answers (--connections-send-timeout-ms)",
                };
                tracing::info!(%peer, error = %e, "closing connection: {why}");
            } else if let Some(reason) = e.bad_input_reason() {
                metrics::counter!(m::BAD_REQUESTS_TOTAL, "reason" => reason).increment(1);
                tracing::warn!(%peer, error = %e, "closing connection: bad request");
            } else if matches!(
                e,
                ConnectionError::Encode(_) | ConnectionError::NotServed(_)
            ) {
                tracing::error!(%peer, error = %e, "closing connection");
            } else if matches!(e, ConnectionError::RecordsGone(_)) {
                tracing::warn!(%peer, error = %e, "closing connection mid-answer");
            } else {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
        }
    }
}

struct Connection<S> {
    stream: S,
    peer: SocketAddr,
    /// The listener it came in on: what it is told about this node, how it authenticates.
    listener: Arc<Listener>,
    reader: FrameReader,
    /// Longest wait for the client to take a byte of an answer.
    send_timeout: Duration,
    /// `--max-frame-bytes`, once authenticated.
    max_frame_bytes: usize,
    /// Who the client is, or the SASL exchange that will say.
    auth: Auth,
    /// Until authenticated: by when (from accept).
    auth_deadline: Option<tokio::time::Instant>,
    /// KIP-368: when the SASL session ends, with `--connections-max-reauth-ms` set.
    session: Option<Session>,
    /// A re-authentication under way: the principal and session it renews.
    reauth: Option<Reauth>,
}

/// Who a connection is.
enum Auth {
    Done(Arc<Principal>),
    Sasl(Box<SaslSession>),
}

/// What a finished request sends.
enum Outgoing {
    Frame(Chunks),
    /// A Fetch answer: records in memory and in segment files.
    Spliced(SplicedFrame<FetchRecords>),
    Nothing,
    Close(&'static str),
}

/// A pipelined Produce being made durable, and the request memory its frame holds until the
/// answer is out.
type Pending = (
    tokio::task::JoinHandle<Result<Outgoing, ConnectionError>>,
    RequestBytes,
);

impl<S: Transport> Connection<S> {
    async fn run(
        &mut self,
        front: &Arc<Front>,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<(), ConnectionError> {
        let mut pending: VecDeque<Pending> = VecDeque::new();
        let mut ready: Option<Arc<Broker>> = None;
        loop {
            // An unpaid (small, over-budget) request is answered before anything more is read.
            let can_read = pending.len() < MAX_PIPELINED_PRODUCES
                && pending.iter().all(|(_, held)| held.is_paid());
            let next = match pending.front_mut() {
                Some((head, _)) => tokio::select! {
                    biased;
                    done = head => {
                        let held = pending.pop_front().map(|(_, held)| held);
                        if self.deliver(done, &mut pending).await? {
                            drop(held);
                            continue;
                        }
                        return Ok(());
                    }
                    frame = self.reader.next(&mut self.stream, shutdown), if can_read => frame?,
                },
                None => self.read_frame(shutdown).await?,
            };
            let Some(frame) = next else {
                self.drain(&mut pending).await?;
                return Ok(());
            };
            // Dropped once this request's answer is out (a Produce carries it into `pending`).
            let held = frame.held;
            if let (Auth::Sasl(session), Some(sasl)) = (&mut self.auth, &self.listener.sasl) {
                if session.expects_raw_token() {
                    let gate =
                        authenticate::raw_token(session, sasl, self.reauth.as_ref(), &frame.bytes);
                    if self.pass_gate(gate).await? {
                        continue;
                    }
                    return Ok(());
                }
            }
            let request = match decode_request(frame.bytes) {
                Ok(r) => r,
                Err(RequestError::ApiVersionsTooNew { peek }) => {
                    tracing::debug!(peer = %self.peer, version = peek.api_version,
                        "ApiVersions newer than served: answering with the v0 fallback");
                    let frame = protocol::response::api_versions_too_new_response(
                        peek.correlation_id,
                        protocol::SUPPORTED_APIS,
                    )?;
                    if !self.drain(&mut pending).await? {
                        return Ok(());
                    }
                    self.write_frame(frame).await?;
                    continue;
                }
                Err(e) => {
                    // Answer what came before, then close.
                    let _ = self.drain(&mut pending).await;
                    return Err(e.into());
                }
            };
            if let (Auth::Done(principal), Some(session), Some(sasl)) =
                (&self.auth, &mut self.session, &self.listener.sasl)
            {
                match session.on_request(request.api_key, Instant::now()) {
                    Verdict::Serve => {}
                    Verdict::Expired => {
                        let lifetime = sasl.max_reauth;
                        let _ = self.drain(&mut pending).await;
                        return Err(ConnectionError::SessionExpired(lifetime));
                    }
                    Verdict::Reauthenticate => {
                        // Earlier answers go out first; then the connection authenticates
                        // again, within the authentication timeout, before serving more.
                        let renewing = Reauth {
                            previous: principal.clone(),
                            session: session.clone(),
                            bad_mechanism: None,
                        };
                        let timeout = sasl.timeout;
                        if !self.drain(&mut pending).await? {
                            return Ok(());
                        }
                        tracing::debug!(peer = %self.peer, "re-authentication begins");
                        self.reauth = Some(renewing);
                        self.auth = Auth::Sasl(Box::default());
                        self.auth_deadline = Some((Instant::now() + timeout).into());
                    }
                }
            }
            let request = match (&mut self.auth, &self.listener.sasl) {
                (Auth::Sasl(session), Some(sasl)) => {
                    match authenticate::request(session, sasl, self.reauth.as_mut(), request)? {
                        Gate::Pass(request) => *request,
                        gate => {
                            if self.pass_gate(gate).await? {
                                continue;
                            }
                            return Ok(());
                        }
                    }
                }
                _ => request,
            };
            let api = request.api_key;
            let (version, correlation_id) = (request.version(), request.correlation_id());
            let client_id = request.client_id().to_string();
            let mut body = request.body;
            // Once ready the broker stays: asked of the front only until then.
            if ready.is_none() {
                ready = front.broker();
            }
            let broker = match &ready {
                Some(broker) => broker.clone(),
                None => match loading::answer(
                    version,
                    body,
                    &self.listener.loading_as(front.loading_as()),
                ) {
                    loading::WhileLoading::Answer(response) => {
                        m::count_request(api);
                        let frame =
                            protocol::encode_response(correlation_id, api, version, &response)?;
                        self.write_frame(frame).await?;
                        continue;
                    }
                    loading::WhileLoading::Wait(waiting) => {
                        body = *waiting;
                        match front.wait_broker(shutdown).await {
                            Some(broker) => ready.insert(broker).clone(),
                            None => return Ok(()),
                        }
                    }
                },
            };
            let ctx = RequestContext {
                broker,
                api_key: api,
                version,
                client_id,
                correlation_id,
                peer: self.peer,
                listener: self.listener.advertised.clone(),
                principal: match &self.auth {
                    Auth::Done(p) => p.clone(),
                    // Only ApiVersions passes the gate before authentication.
                    Auth::Sasl(_) => Arc::new(Principal::anonymous()),
                },
            };
            // DEBUG, not INFO: an enabled span formats its fields into a new string for every
            // request (a tenth of a commit's CPU under load); with `RUST_LOG=debug` each
            // request's log lines carry them again.
            let span = tracing::debug_span!(
                "request",
                api = api_name(api),
                version = ctx.version,
                client_id = %ctx.client_id,
                correlation_id = ctx.correlation_id,
            );
            m::count_request(api);
            let started = Instant::now();
            if let RequestKind::Produce(produce) = body {
                // The gate first: the topics without WRITE are answered, not written.
                let (produce, amend) = match handlers::authorize::before_produce(&ctx, produce) {
                    Ok(allowed) => allowed,
                    Err(reply) => {
                        let task = tokio::spawn(async move { outgoing(&ctx, reply, started) });
                        pending.push_back((task, held));
                        continue;
                    }
                };
                // Written now, in arrival order; acknowledged when durable, in arrival order,
                // while the next requests are read (their fsyncs join the same group commit).
                // Nothing to overlap with when the client has not sent more yet.
                let sync_now = pending.is_empty() && !self.reader.has_buffered();
                let started_produce = produce::begin(&ctx, produce, sync_now)
                    .instrument(span.clone())
                    .await;
                let task = tokio::spawn(
                    async move {
                        let reply = match started_produce {
                            produce::Started::Ready(reply) => reply,
                            produce::Started::Pending(in_flight) => in_flight.finish().await,
                        };
                        let reply = amend.apply(&ctx, reply);
                        outgoing(&ctx, reply, started)
                    }
                    .instrument(span),
                );
                pending.push_back((task, held));
                continue;
            }
            // Anything else runs alone, after every earlier answer is out.
            if !self.drain(&mut pending).await? {
                return Ok(());
            }
            let reply = handlers::dispatch(&ctx, body)
                .instrument(span.clone())
                .await?;
            let out = span.in_scope(|| outgoing(&ctx, reply, started))?;
            if !self.send(out).await? {
                return Ok(());
            }
            drop(held);
        }
    }

    /// The next frame; before authentication, within the authentication deadline.
    async fn read_frame(
        &mut self,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Option<super::frame_reader::Frame>, ConnectionError> {
        match self.auth_deadline {
            None => Ok(self.reader.next(&mut self.stream, shutdown).await?),
            Some(at) => {
                let timeout = self
                    .listener
                    .sasl
                    .as_ref()
                    .map_or(Duration::ZERO, |s| s.timeout);
                match tokio::time::timeout_at(at, self.reader.next(&mut self.stream, shutdown))
                    .await
                {
                    Ok(frame) => Ok(frame?),
                    Err(_) => Err(ConnectionError::AuthenticationTimeout(timeout)),
                }
            }
        }
    }

    /// Acts on the SASL gate's answer: true to read on, false to close.
    async fn pass_gate(&mut self, gate: Gate) -> Result<bool, ConnectionError> {
        let Gate::Answer { frame, then } = gate else {
            return Ok(true);
        };
        let mechanism_log = |outcome: &'static str| {
            metrics::counter!(m::AUTHENTICATIONS_TOTAL, "result" => outcome).increment(1);
        };
        match then {
            After::Continue => {
                if let Some(frame) = frame {
                    self.write_frame(frame).await?;
                }
                Ok(true)
            }
            After::Authenticated(principal) => {
                if let Some(frame) = frame {
                    self.write_frame(frame).await?;
                }
                mechanism_log("ok");
                let mechanism = match &self.auth {
                    Auth::Sasl(s) => s.mechanism(),
                    Auth::Done(_) => None,
                };
                let renewed = self.reauth.take();
                let lifetime = self
                    .listener
                    .sasl
                    .as_ref()
                    .map_or(Duration::ZERO, |s| s.max_reauth);
                self.session = match mechanism {
                    Some(m) if !lifetime.is_zero() => Some(Session::start(
                        Instant::now(),
                        lifetime,
                        m,
                        renewed.as_ref().map(|r| &r.session),
                    )),
                    _ => None,
                };
                let principal = match renewed {
                    // The gate checked it is the same principal.
                    Some(r) => {
                        tracing::debug!(peer = %self.peer, principal = %r.previous,
                            "re-authenticated");
                        r.previous
                    }
                    None => {
                        tracing::debug!(peer = %self.peer, %principal, "authenticated");
                        Arc::new(principal)
                    }
                };
                self.auth = Auth::Done(principal);
                self.auth_deadline = None;
                self.reader.set_max_frame_bytes(self.max_frame_bytes);
                Ok(true)
            }
            After::Close {
                delay,
                reason,
                outcome,
            } => {
                mechanism_log(outcome);
                // One line per refused connection; Kafka's delay makes guessing slow, and the
                // connection keeps its slot meanwhile.
                tracing::info!(peer = %self.peer, listener = %self.listener.protocol, %reason,
                    "closing connection: authentication refused");
                tokio::time::sleep(delay).await;
                if let Some(frame) = frame {
                    // The client may be gone already; the close is what matters.
                    let _ = self.write_frame(frame).await;
                }
                Ok(false)
            }
        }
    }

    /// Writes one encoded frame, bounded by the send timeout.
    async fn write_frame(&mut self, frame: Bytes) -> Result<(), ConnectionError> {
        let mut chunks = Chunks::single(frame);
        write_all_within(&mut self.stream, &mut chunks, self.send_timeout).await?;
        self.stream.flush_within(self.send_timeout).await?;
        Ok(())
    }

    /// Writes a finished request's answer and those of the requests after it that are
    /// finished too (pipelined produces acknowledged by one fsync), in order, encoded frames
    /// together in one vectored write; false when the connection must close.
    async fn deliver(
        &mut self,
        done: TaskResult,
        pending: &mut VecDeque<Pending>,
    ) -> Result<bool, ConnectionError> {
        let first = answer_of(done)?;
        if !pending.front().is_some_and(|(next, _)| next.is_finished()) {
            return self.send(first).await;
        }
        let mut ready = vec![first];
        let mut written_with = Vec::new();
        let mut failed = None;
        while pending.front().is_some_and(|(next, _)| next.is_finished()) {
            let Some((next, held)) = pending.pop_front() else {
                break;
            };
            written_with.push(held);
            match answer_of(next.await) {
                Ok(out) => ready.push(out),
                Err(e) => {
                    // The answers before it still go out, as they would have one by one.
                    failed = Some(e);
                    break;
                }
            }
        }
        let mut frames: Option<Chunks> = None;
        for out in ready {
            match (out, &mut frames) {
                (Outgoing::Frame(more), Some(all)) => all.append(more),
                (Outgoing::Frame(first), None) => frames = Some(first),
                (other, _) => {
                    if let Some(all) = frames.take() {
                        self.send(Outgoing::Frame(all)).await?;
                    }
                    if !self.send(other).await? {
                        return Ok(false);
                    }
                }
            }
        }
        if let Some(all) = frames {
            self.send(Outgoing::Frame(all)).await?;
        }
        drop(written_with);
        match failed {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    async fn send(&mut self, out: Outgoing) -> Result<bool, ConnectionError> {
        match out {
            Outgoing::Frame(mut frame) => {
                // One vectored write per batch of chunks: spliced records are not copied.
                write_all_within(&mut self.stream, &mut frame, self.send_timeout).await?;
                self.stream.flush_within(self.send_timeout).await?;
                Ok(true)
            }
            Outgoing::Spliced(frame) => {
                self.stream
                    .write_records_frame(frame, self.send_timeout)
                    .await?;
                Ok(true)
            }
            Outgoing::Nothing => Ok(true),
            Outgoing::Close(why) => {
                tracing::info!(peer = %self.peer, reason = why, "closing connection");
                Ok(false)
            }
        }
    }

    /// Writes every pending answer in order; false when one of them closes the connection.
    async fn drain(&mut self, pending: &mut VecDeque<Pending>) -> Result<bool, ConnectionError> {
        while let Some((head, held)) = pending.pop_front() {
            if !self.deliver(head.await, pending).await? {
                return Ok(false);
            }
            drop(held);
        }
        Ok(true)
    }
}

type TaskResult = Result<Result<Outgoing, ConnectionError>, tokio::task::JoinError>;

fn answer_of(done: TaskResult) -> Result<Outgoing, ConnectionError> {
    done.map_err(|e| std::io::Error::other(format!("request task: {e}")))?
}

/// Encodes a handler's reply and records its latency.
fn outgoing(
    ctx: &RequestContext,
    reply: Reply,
    started: Instant,
) -> Result<Outgoing, ConnectionError> {
    let out = match reply {
        Reply::Body(body) => Outgoing::Frame(Chunks::single(protocol::encode_response(
            ctx.correlation_id,
            ctx.api_key,
            ctx.version,
            body.as_ref(),
        )?)),
        Reply::Spliced(body, splicer) => Outgoing::Spliced(protocol::splice::encode_spliced(
            ctx.correlation_id,
            ctx.api_key,
            ctx.version,
            body.as_ref(),
            splicer,
        )?),
        Reply::Frame(frame) => Outgoing::Frame(Chunks::single(frame)),
        Reply::Nothing => Outgoing::Nothing,
        Reply::Close(why) => Outgoing::Close(why),
    };
    m::record_request_duration(ctx.api_key, started.elapsed());
    tracing::debug!(elapsed = ?started.elapsed(), "handled");
    Ok(out)
}
