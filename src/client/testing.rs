//! A scripted Kafka peer on real loopback TCP for the client's and the tools' tests: it decodes
//! each request with `kafka-protocol` and answers with whatever the test's handler returns, so a
//! test can stage protocol situations a real cluster produces only by accident.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{decode_request_header_from_buffer, Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a scripted broker does with one request.
pub(crate) enum Reply {
    /// Answer at the request's version.
    Respond(ResponseKind),
    /// Answer encoded at another version (KIP-511's v0 fallback body).
    RespondAt(ResponseKind, i16),
    /// Never answer.
    Silence,
    /// Send these bytes as the whole frame body after the size.
    Raw(Vec<u8>),
}

pub(crate) type Handler = Arc<dyn Fn(&RequestHeader, RequestKind) -> Reply + Send + Sync>;

pub(crate) struct Scripted {
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) seen: Arc<Mutex<Vec<(i16, i16)>>>,
}

pub(crate) async fn scripted(handler: Handler) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(serve(sock, handler.clone(), seen2.clone()));
        }
    });
    Scripted { addr, seen }
}

async fn serve(mut sock: TcpStream, handler: Handler, seen: Arc<Mutex<Vec<(i16, i16)>>>) {
    loop {
        let Ok(size) = sock.read_i32().await else {
            return;
        };
        let mut buf = vec![0u8; size as usize];
        if sock.read_exact(&mut buf).await.is_err() {
            return;
        }
        let mut bytes = Bytes::from(buf);
        let header = decode_request_header_from_buffer(&mut bytes).unwrap();
        let key = ApiKey::try_from(header.request_api_key).unwrap();
        seen.lock()
            .unwrap()
            .push((header.request_api_key, header.request_api_version));
        // An ApiVersions request at a version we pretend not to know cannot be decoded; the
        // handler sees it as a default request.
        let request = RequestKind::decode(key, &mut bytes, header.request_api_version)
            .unwrap_or(RequestKind::ApiVersions(ApiVersionsRequest::default()));
        let (body, version) = match handler(&header, request) {
            Reply::Respond(r) => (r, header.request_api_version),
            Reply::RespondAt(r, v) => (r, v),
            Reply::Silence => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            Reply::Raw(b) => {
                let mut frame = BytesMut::new();
                frame.put_i32(b.len() as i32);
                frame.put_slice(&b);
                let _ = sock.write_all(&frame).await;
                continue;
            }
        };
        let mut out = BytesMut::new();
        let header_version = if key == ApiKey::ApiVersions {
            0
        } else {
            key.response_header_version(header.request_api_version)
        };
        ResponseHeader::default()
            .with_correlation_id(header.correlation_id)
            .encode(&mut out, header_version)
            .unwrap();
        body.encode(&mut out, version).unwrap();
        let mut frame = BytesMut::new();
        frame.put_i32(out.len() as i32);
        frame.put_slice(&out);
        if sock.write_all(&frame).await.is_err() {
            return;
        }
    }
}

/// The ApiVersions answer of a broker supporting `ranges`.
pub(crate) fn api_versions(ranges: &[(ApiKey, i16, i16)]) -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_api_keys(
        ranges
            .iter()
            .map(|(k, lo, hi)| {
                ApiVersion::default()
                    .with_api_key(*k as i16)
                    .with_min_version(*lo)
                    .with_max_version(*hi)
            })
            .collect(),
    )
}

/// Metadata naming `nodes` as the brokers (the first as controller).
pub(crate) fn metadata_for(nodes: &[(i32, std::net::SocketAddr)]) -> MetadataResponse {
    MetadataResponse::default()
        .with_controller_id(BrokerId(nodes[0].0))
        .with_brokers(
            nodes
                .iter()
                .map(|(id, addr)| {
                    MetadataResponseBroker::default()
                        .with_node_id(BrokerId(*id))
                        .with_host(StrBytes::from_string(addr.ip().to_string()))
                        .with_port(addr.port() as i32)
                })
                .collect(),
        )
}
