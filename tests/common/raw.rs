//! A raw Kafka client on a blocking socket: for requests no client library sends (bad input,
//! exact versions) and for checking exact response fields.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// A request frame, length prefix included.
pub fn encode_frame(
    correlation_id: i32,
    client_id: &'static str,
    key: ApiKey,
    version: i16,
    body: &RequestKind,
) -> Result<Vec<u8>, String> {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str(client_id)));
    let mut buf = BytesMut::new();
    header
        .encode(&mut buf, key.request_header_version(version))
        .map_err(|e| e.to_string())?;
    body.encode(&mut buf, version).map_err(|e| e.to_string())?;
    let mut frame = (buf.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&buf);
    Ok(frame)
}

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
        let frame = encode_frame(correlation_id, "raw-test", key, version, body).unwrap();
        (correlation_id, frame)
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

/// Record batches as a client builds them.
pub mod batches {
    use bytes::{Bytes, BytesMut};
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };

    /// One uncompressed v2 batch of `values`, timestamps `ts0, ts0+1, ...`; an idempotent one
    /// when `producer` is `Some((id, epoch, first_sequence))`.
    pub fn batch(values: &[&[u8]], ts0: i64, producer: Option<(i64, i16, i32)>) -> Bytes {
        encode(values, ts0, producer, false)
    }

    /// The same batch as part of its producer's transaction (the header's transactional bit).
    #[allow(dead_code)] // not every test binary writes transactions
    pub fn transactional_batch(values: &[&[u8]], ts0: i64, producer: (i64, i16, i32)) -> Bytes {
        encode(values, ts0, Some(producer), true)
    }

    fn encode(
        values: &[&[u8]],
        ts0: i64,
        producer: Option<(i64, i16, i32)>,
        transactional: bool,
    ) -> Bytes {
        let (pid, epoch, seq0) = producer.unwrap_or((-1, -1, -1));
        let records: Vec<Record> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Record {
                transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: pid,
                producer_epoch: epoch,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                // The encoder starts a new batch when `offset - sequence` changes: keep it
                // constant, also without a producer (sequence -1 then means "none" only for
                // the first record, which is what the header carries).
                sequence: if seq0 >= 0 {
                    seq0 + i as i32
                } else {
                    i as i32 - 1
                },
                timestamp: ts0 + i as i64,
                key: Some(Bytes::from(format!("k{i}"))),
                value: Some(Bytes::copy_from_slice(v)),
                headers: Default::default(),
            })
            .collect();
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            records.iter(),
            &RecordEncodeOptions {
                version: 2,
                compression: Compression::None,
            },
        )
        .unwrap();
        buf.freeze()
    }
}

impl RawClient {
    /// Connects and authenticates with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2),
    /// asserting both succeed.
    #[allow(dead_code)] // only the binaries of SASL listeners use it
    pub fn connect_plain(addr: SocketAddr, user: &str, password: &str) -> RawClient {
        use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
        let mut c = RawClient::connect(addr);
        let req =
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str("PLAIN"));
        match c.call(ApiKey::SaslHandshake, 1, RequestKind::SaslHandshake(req)) {
            ResponseKind::SaslHandshake(r) => assert_eq!(r.error_code, 0),
            other => panic!("{other:?}"),
        }
        let token = format!("\0{user}\0{password}").into_bytes();
        let req = SaslAuthenticateRequest::default().with_auth_bytes(token.into());
        match c.call(
            ApiKey::SaslAuthenticate,
            2,
            RequestKind::SaslAuthenticate(req),
        ) {
            ResponseKind::SaslAuthenticate(r) => {
                assert_eq!(r.error_code, 0, "{:?}", r.error_message)
            }
            other => panic!("{other:?}"),
        }
        c
    }

    /// CreateTopics v7 for one topic; returns the error code.
    pub fn create_topic(&mut self, name: &str, partitions: i32, configs: &[(&str, &str)]) -> i16 {
        use kafka_protocol::messages::create_topics_request::{
            CreatableTopic, CreatableTopicConfig,
        };
        use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
        let topic = CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(name.to_string())))
            .with_num_partitions(partitions)
            .with_replication_factor(1)
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        CreatableTopicConfig::default()
                            .with_name(StrBytes::from_string(k.to_string()))
                            .with_value(Some(StrBytes::from_string(v.to_string())))
                    })
                    .collect(),
            );
        let req = CreateTopicsRequest::default().with_topics(vec![topic]);
        match self.call(ApiKey::CreateTopics, 7, RequestKind::CreateTopics(req)) {
            ResponseKind::CreateTopics(r) => r.topics[0].error_code,
            other => panic!("{other:?}"),
        }
    }

    /// Produce v9 of `records` to one partition; the partition's response.
    pub fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        records: Bytes,
    ) -> kafka_protocol::messages::produce_response::PartitionProduceResponse {
        use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
        use kafka_protocol::messages::{ProduceRequest, TopicName};
        let req = ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(records))])]);
        match self.call(ApiKey::Produce, 9, RequestKind::Produce(req)) {
            ResponseKind::Produce(mut r) => r.responses.remove(0).partition_responses.remove(0),
            other => panic!("{other:?}"),
        }
    }

    /// Fetch v12 of one partition.
    pub fn fetch(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
        max_wait_ms: i32,
        min_bytes: i32,
    ) -> kafka_protocol::messages::fetch_response::PartitionData {
        use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
        use kafka_protocol::messages::{FetchRequest, TopicName};
        let req = FetchRequest::default()
            .with_max_wait_ms(max_wait_ms)
            .with_min_bytes(min_bytes)
            .with_max_bytes(50 << 20)
            .with_session_epoch(-1)
            .with_topics(vec![FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(partition)
                    .with_fetch_offset(offset)
                    .with_partition_max_bytes(1 << 20)])]);
        match self.call(ApiKey::Fetch, 12, RequestKind::Fetch(req)) {
            ResponseKind::Fetch(mut r) => r.responses.remove(0).partitions.remove(0),
            other => panic!("{other:?}"),
        }
    }

    /// ListOffsets v7 of one partition: (error code, offset, timestamp).
    pub fn list_offset(&mut self, topic: &str, partition: i32, timestamp: i64) -> (i16, i64, i64) {
        use kafka_protocol::messages::list_offsets_request::{
            ListOffsetsPartition, ListOffsetsTopic,
        };
        use kafka_protocol::messages::{BrokerId, ListOffsetsRequest, TopicName};
        let req = ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(vec![ListOffsetsPartition::default()
                    .with_partition_index(partition)
                    .with_timestamp(timestamp)])]);
        match self.call(ApiKey::ListOffsets, 7, RequestKind::ListOffsets(req)) {
            ResponseKind::ListOffsets(r) => {
                let p = &r.topics[0].partitions[0];
                (p.error_code, p.offset, p.timestamp)
            }
            other => panic!("{other:?}"),
        }
    }
}
