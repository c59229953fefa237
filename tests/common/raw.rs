//! A raw Kafka client on a blocking socket: for requests no client library sends (bad input,
//! exact versions) and for checking exact response fields.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// One connection.
pub struct RawClient {
    /// The socket, for tests that write bytes of their own.
    pub stream: TcpStream,
    next_correlation_id: i32,
}

impl RawClient {
    /// Connects with a 30 s read timeout.
    pub fn connect(addr: SocketAddr) -> RawClient {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        RawClient {
            stream,
            next_correlation_id: 1,
        }
    }

    /// Encodes a request frame (length prefix included).
    pub fn frame(&mut self, key: ApiKey, version: i16, body: &RequestKind) -> (i32, Vec<u8>) {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id += 1;
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(StrBytes::from_static_str("raw-test")));
        let mut buf = BytesMut::new();
        header
            .encode(&mut buf, key.request_header_version(version))
            .unwrap();
        body.encode(&mut buf, version).unwrap();
        let mut out = (buf.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(&buf);
        (correlation_id, out)
    }

    /// Sends a request and reads its response.
    pub fn call(&mut self, key: ApiKey, version: i16, body: RequestKind) -> ResponseKind {
        let (correlation_id, frame) = self.frame(key, version, &body);
        self.stream.write_all(&frame).unwrap();
        let (got, body) = self.read_response(key, version);
        assert_eq!(got, correlation_id, "correlation id");
        body
    }

    /// Reads one response frame: (correlation id, body).
    pub fn read_response(&mut self, key: ApiKey, version: i16) -> (i32, ResponseKind) {
        let mut frame = self.read_frame().expect("a response");
        let header =
            ResponseHeader::decode(&mut frame, key.response_header_version(version)).unwrap();
        let body = ResponseKind::decode(key, &mut frame, version).unwrap();
        (header.correlation_id, body)
    }

    /// Reads one frame (without its prefix); `None` if the broker closed the connection.
    pub fn read_frame(&mut self) -> Option<Bytes> {
        let mut size = [0u8; 4];
        if self.stream.read_exact(&mut size).is_err() {
            return None;
        }
        let size = i32::from_be_bytes(size);
        let mut body = vec![0u8; usize::try_from(size).ok()?];
        self.stream.read_exact(&mut body).ok()?;
        Some(Bytes::from(body))
    }

    /// Whether the broker closed the connection (EOF or reset) within the read timeout.
    pub fn closed_by_broker(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.stream.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            ),
        }
    }

    /// ApiVersions v3: the served table.
    pub fn api_versions(&mut self) -> kafka_protocol::messages::ApiVersionsResponse {
        let req = kafka_protocol::messages::ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("raw-test"))
            .with_client_software_version(StrBytes::from_static_str("1.0"));
        match self.call(ApiKey::ApiVersions, 3, RequestKind::ApiVersions(req)) {
            ResponseKind::ApiVersions(r) => r,
            other => panic!("{other:?}"),
        }
    }
}

/// The body of a response frame after its v0 header.
pub fn skip_header_v0(mut frame: Bytes) -> (i32, Bytes) {
    let correlation_id = frame.get_i32();
    (correlation_id, frame)
}
