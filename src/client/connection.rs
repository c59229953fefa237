//! One TCP connection to one broker: size-prefixed frames, request headers with correlation ids,
//! and the ApiVersions handshake (with KIP-511's fallback) that fixes which version of each API
//! we send. Requests go one at a time; the admin operations are sequential per broker.
//!
//! ```text
//!   send(req, v) ─► [len][header v1/v2][body v] ──► broker
//!   response    ◄── [len][header v0/v1][body v] ◄── broker   (correlation id must match)
//! ```

use std::collections::HashMap;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::auth::tls::TlsClient;
use super::auth::ClientSecurity;
use super::error::{ClientError, ClientResult, UNSUPPORTED_VERSION};
use super::transport::{tls_failure, Stream};
use super::versions::{self, BrokerVersions};

/// Largest response we accept. A metadata response for tens of thousands of partitions fits.
pub const RESPONSE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// A connection to one broker, after the ApiVersions handshake.
#[derive(Debug)]
pub struct Connection {
    /// `host:port` we dialled; used in errors.
    addr: String,
    stream: Stream,
    client_id: StrBytes,
    /// Correlation id of the next request; responses must echo it.
    next_correlation_id: i32,
    /// What the broker advertised, so each request picks a version both sides speak.
    versions: BrokerVersions,
    /// Bound on one request/response exchange.
    request_timeout: Duration,
    /// Set while a request is on the wire. A call abandoned mid-exchange (its deadline passed)
    /// leaves it set, and such a connection is never reused: its next bytes belong to the old
    /// request.
    in_flight: bool,
}

impl Connection {
    /// Dials `addr` over PLAINTEXT and negotiates API versions.
    pub async fn open(
        addr: &str,
        client_id: &str,
        request_timeout: Duration,
    ) -> ClientResult<Connection> {
        Self::open_with(addr, client_id, request_timeout, &ClientSecurity::default()).await
    }

    /// Dials `addr`, runs the TLS handshake if `security` asks for one, negotiates API
    /// versions, then authenticates with SASL if `security` asks for it.
    pub async fn open_with(
        addr: &str,
        client_id: &str,
        request_timeout: Duration,
        security: &ClientSecurity,
    ) -> ClientResult<Connection> {
        let timed_out = |what: &str| ClientError::Io {
            addr: addr.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::TimedOut, format!("{what} timed out")),
        };
        let tcp = tokio::time::timeout(request_timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| timed_out("connect"))?
            .map_err(|source| ClientError::Io {
                addr: addr.to_string(),
                source,
            })?;
        // Requests are small and latency-bound; Nagle would only add delay.
        let _ = tcp.set_nodelay(true);
        let stream = match &security.tls {
            None => Stream::Plain(tcp),
            Some(tls) => {
                let name = TlsClient::server_name(addr)?;
                let tls = tokio::time::timeout(request_timeout, tls.connector().connect(name, tcp))
                    .await
                    .map_err(|_| timed_out("TLS handshake"))?
                    .map_err(|e| ClientError::SslHandshake {
                        addr: addr.to_string(),
                        detail: tls_failure(&e).unwrap_or_else(|| e.to_string()),
                    })?;
                Stream::Tls(Box::new(tls))
            }
        };
        let mut conn = Connection {
            addr: addr.to_string(),
            stream,
            client_id: StrBytes::from_string(client_id.to_string()),
            next_correlation_id: 0,
            versions: BrokerVersions::default(),
            request_timeout,
            in_flight: false,
        };
        conn.negotiate().await?;
        if let Some(login) = &security.sasl {
            super::auth::sasl::authenticate(&mut conn, login).await?;
        }
        Ok(conn)
    }

    /// The socket after the handshakes (TLS, ApiVersions, SASL), for a caller that frames
    /// its own requests (the benchmarks' pipelined connections).
    pub fn into_stream(self) -> Stream {
        self.stream
    }

    /// What the broker advertised.
    pub fn versions(&self) -> &BrokerVersions {
        &self.versions
    }

    /// False once a request was abandoned mid-exchange or the socket failed.
    pub fn is_usable(&self) -> bool {
        !self.in_flight
    }

    /// ApiVersions at our highest version; a broker that does not know that version answers
    /// UNSUPPORTED_VERSION in a v0 body listing its own range (KIP-511), and we retry at the
    /// highest version it supports.
    async fn negotiate(&mut self) -> ClientResult<()> {
        let (_, our_max) = versions::ours(ApiKey::ApiVersions).unwrap_or((0, 0));
        let mut version = our_max;
        for _ in 0..3 {
            let request = if version >= 3 {
                ApiVersionsRequest::default()
                    .with_client_software_name(StrBytes::from_static_str("cohort"))
                    .with_client_software_version(StrBytes::from_static_str(env!(
                        "CARGO_PKG_VERSION"
                    )))
            } else {
                ApiVersionsRequest::default()
            };
            let body = self
                .exchange(ApiKey::ApiVersions as i16, version, |buf| {
                    request.encode(buf, version)
                })
                .await?;
            let response = match ApiVersionsResponse::decode(&mut body.clone(), version) {
                Ok(r) if r.error_code != UNSUPPORTED_VERSION => r,
                _ => ApiVersionsResponse::decode(&mut body.clone(), 0)
                    .map_err(|e| self.protocol(format!("ApiVersions response: {e}")))?,
            };
            if response.error_code == UNSUPPORTED_VERSION {
                let broker_max = response
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiKey::ApiVersions as i16)
                    .map(|k| k.max_version)
                    .unwrap_or(0);
                let next = broker_max.min(our_max);
                if next >= version {
                    return Err(self.protocol(format!(
                        "broker rejected ApiVersions v{version} but advertises v{broker_max}"
                    )));
                }
                version = next;
                continue;
            }
            if response.error_code != 0 {
                return Err(ClientError::Kafka(super::error::KafkaError::new(
                    response.error_code,
                )));
            }
            let ranges: HashMap<i16, (i16, i16)> = response
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect();
            self.versions = BrokerVersions::new(ranges);
            return Ok(());
        }
        Err(self.protocol("ApiVersions negotiation did not converge".to_string()))
    }

    /// Sends `request` at `version` (the caller picked it from `versions()`).
    pub async fn send_at<R: Request>(
        &mut self,
        request: &R,
        version: i16,
    ) -> ClientResult<R::Response> {
        let mut body = self
            .exchange(R::KEY, version, |buf| request.encode(buf, version))
            .await?;
        R::Response::decode(&mut body, version).map_err(|e| {
            self.protocol(format!(
                "cannot decode response to api {} v{version}: {e}",
                R::KEY
            ))
        })
    }

    /// Writes one framed request and reads its response; returns the response body (the bytes
    /// after the response header).
    async fn exchange<E: std::fmt::Display>(
        &mut self,
        api_key: i16,
        version: i16,
        encode_body: impl FnOnce(&mut BytesMut) -> Result<(), E>,
    ) -> ClientResult<Bytes> {
        let key = ApiKey::try_from(api_key)
            .map_err(|_| ClientError::UnsupportedVersion(format!("api key {api_key}")))?;
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);

        let header = RequestHeader::default()
            .with_request_api_key(api_key)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(self.client_id.clone()));
        let mut frame = BytesMut::with_capacity(256);
        frame.put_i32(0); // size, patched below
        header
            .encode(&mut frame, key.request_header_version(version))
            .map_err(|e| ClientError::UnsupportedVersion(format!("{key:?} header: {e}")))?;
        encode_body(&mut frame)
            .map_err(|e| ClientError::UnsupportedVersion(format!("{key:?} v{version}: {e}")))?;
        let size = i32::try_from(frame.len() - 4)
            .map_err(|_| ClientError::Config(format!("{key:?} request too large")))?;
        frame[..4].copy_from_slice(&size.to_be_bytes());

        self.in_flight = true;
        let timeout = self.request_timeout;
        let reply = tokio::time::timeout(timeout, self.write_then_read(&frame)).await;
        let mut response = match reply {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(ClientError::Io {
                    addr: self.addr.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no response to {key:?} within {} ms", timeout.as_millis()),
                    ),
                })
            }
        };
        self.in_flight = false;

        let header_version = response_header_version(key, version);
        let header = ResponseHeader::decode(&mut response, header_version)
            .map_err(|e| self.protocol(format!("response header: {e}")))?;
        if header.correlation_id != correlation_id {
            self.in_flight = true; // the stream is out of step; never reuse it
            return Err(self.protocol(format!(
                "correlation id {} does not match request {correlation_id}",
                header.correlation_id
            )));
        }
        Ok(response)
    }

    async fn write_then_read(&mut self, frame: &[u8]) -> ClientResult<Bytes> {
        let addr = self.addr.clone();
        // TLS refusing us (an alert after the handshake, as TLS 1.3 sends a missing client
        // certificate's) is no network blip: it is reported as the handshake failure it is.
        let io = |source: std::io::Error| match tls_failure(&source) {
            Some(detail) => ClientError::SslHandshake {
                addr: addr.clone(),
                detail,
            },
            None => ClientError::Io {
                addr: addr.clone(),
                source,
            },
        };
        self.stream.write_all(frame).await.map_err(io)?;
        self.stream.flush().await.map_err(io)?;
        let size = self.stream.read_i32().await.map_err(io)?;
        let size = usize::try_from(size)
            .ok()
            .filter(|s| *s <= RESPONSE_BYTES_MAX)
            .ok_or_else(|| self.protocol(format!("response size {size} out of range")))?;
        let mut buf = vec![0u8; size];
        self.stream.read_exact(&mut buf).await.map_err(io)?;
        let mut bytes = Bytes::from(buf);
        if bytes.remaining() < 4 {
            return Err(self.protocol("response shorter than its header".to_string()));
        }
        bytes = bytes.slice(..);
        Ok(bytes)
    }

    fn protocol(&self, detail: String) -> ClientError {
        ClientError::Protocol {
            addr: self.addr.clone(),
            detail,
        }
    }
}

/// ApiVersions responses always use header v0 (so a client can read them before it knows the
/// broker's versions); every other API follows the generated table.
fn response_header_version(key: ApiKey, version: i16) -> i16 {
    if key == ApiKey::ApiVersions {
        ApiVersionsResponse::header_version(version)
    } else {
        key.response_header_version(version)
    }
}
