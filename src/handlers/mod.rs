//! One file per Kafka API (Redpanda's `handlers/` shape); [`dispatch`] routes a decoded request
//! to its handler.
//!
//! A handler takes the request body and a [`RequestContext`] and returns the response body. It
//! never fails as a whole: per-item failures are error codes inside the response (picked by
//! `errors::to_kafka_error`). Adding an API means a file here, a match arm in [`dispatch`], and
//! a row in `protocol::SUPPORTED_APIS`; a handler that needs the group coordinator awaits its
//! handle the same way `create_topics` awaits the catalog.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use protocol::ErrorCode;

use crate::broker::Broker;
use crate::cluster::BrokerEndpoint;
use crate::config::AdvertisedListener;

pub mod acl_common;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_configs;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod authorize;
pub mod config_entries;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_topic_partitions;
pub mod describe_user_scram_credentials;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod group_common;
pub mod group_configs;
pub mod group_limits;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod loading;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl;
pub mod sync_group;
pub mod txn_common;
pub mod txn_offset_commit;
pub mod write_txn_markers;
// Transaction operator APIs (decision 0143).
pub mod describe_producers;
pub mod describe_transactions;
pub mod list_transactions;

/// What a handler knows about the request besides its body.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// Shared broker state.
    pub broker: Arc<Broker>,
    /// The API.
    pub api_key: ApiKey,
    /// The version the client used; the response uses it too.
    pub version: i16,
    /// Header client id ("" when absent).
    pub client_id: String,
    /// Header correlation id.
    pub correlation_id: i32,
    /// The client's address.
    pub peer: SocketAddr,
    /// The listener the request came in on, as its clients are told to reach this node.
    pub listener: Arc<AdvertisedListener>,
    /// Who the client authenticated as (`User:ANONYMOUS` without authentication).
    pub principal: Arc<crate::security::principal::Principal>,
}

impl RequestContext {
    /// The cluster's brokers as this client is told of them (Kafka's rule): every broker at
    /// its advertised address on the listener the request came in on, this node included; a
    /// broker without that listener is left out.
    pub fn brokers(&self) -> Vec<BrokerEndpoint> {
        let me = self.broker.cluster.local_node_id();
        let mut brokers = self
            .broker
            .cluster
            .brokers_on(self.listener.protocol.name());
        for b in brokers.iter_mut().filter(|b| b.node_id == me) {
            b.host.clone_from(&self.listener.host);
            b.port = self.listener.port;
        }
        brokers
    }

    /// Records `code` in the per-API error counters and returns its wire value: handlers write
    /// every error code through here so `/metrics` counts them.
    pub fn error(&self, code: ErrorCode) -> i16 {
        if !code.is_none() {
            metrics::counter!(
                crate::metrics::REQUEST_ERRORS_TOTAL,
                "api" => api_name(self.api_key),
                "error" => code.name(),
            )
            .increment(1);
        }
        code.code()
    }
}

/// What to send back.
#[derive(Debug)]
pub enum Reply {
    /// A response body to encode at the request's version (boxed: bodies are large).
    Body(Box<ResponseKind>),
    /// A response already encoded as a whole frame (versions the codec cannot encode).
    Frame(Bytes),
    /// A body whose records fields are placeholders for the splicer's batches (Fetch).
    Spliced(
        Box<ResponseKind>,
        protocol::splice::RecordsSplicer<crate::data::FetchRecords>,
    ),
    /// Nothing: a Produce with `acks=0`.
    Nothing,
    /// No answer, and the connection closed: how Kafka tells an `acks=0` producer that a
    /// write failed.
    Close(&'static str),
}

/// A decoded request that no handler serves: a bug (the served table and [`dispatch`] disagree),
/// answered by closing the connection rather than leaving the client waiting.
#[derive(Debug, thiserror::Error)]
#[error("no handler serves {0}")]
pub struct NotServed(&'static str);

/// Routes a request through the authorization gate ([`authorize::before`]) to its handler.
pub async fn dispatch(ctx: &RequestContext, body: RequestKind) -> Result<Reply, NotServed> {
    match authorize::before(ctx, body) {
        authorize::Gated::Answer(reply) => Ok(reply),
        authorize::Gated::Run(body, amend) => Ok(amend.apply(ctx, serve(ctx, *body).await?)),
    }
}

/// Routes a request, already authorized, to its handler. The future is as large as its
/// largest arm and is moved whole a few times per request, so the large futures of rare
/// requests (rebalances, ACL and config changes) are boxed: 4.0 → 2.6 KB moved for every
/// commit and heartbeat.
async fn serve(ctx: &RequestContext, body: RequestKind) -> Result<Reply, NotServed> {
    let response = match body {
        RequestKind::Produce(r) => return Ok(Box::pin(produce::handle(ctx, r)).await),
        RequestKind::Fetch(r) => {
            let answer = fetch::handle(ctx, r).await;
            return Ok(Reply::Spliced(
                Box::new(ResponseKind::Fetch(answer.body)),
                answer.splicer,
            ));
        }
        RequestKind::ListOffsets(r) => {
            ResponseKind::ListOffsets(list_offsets::handle(ctx, r).await)
        }
        RequestKind::ApiVersions(r) => ResponseKind::ApiVersions(api_versions::handle(ctx, r)),
        RequestKind::Metadata(r) => ResponseKind::Metadata(metadata::handle(ctx, r).await),
        RequestKind::CreateTopics(r) => {
            ResponseKind::CreateTopics(create_topics::handle(ctx, r).await)
        }
        RequestKind::DeleteTopics(r) => {
            ResponseKind::DeleteTopics(delete_topics::handle(ctx, r).await)
        }
        RequestKind::InitProducerId(r) => {
            ResponseKind::InitProducerId(init_producer_id::handle(ctx, r).await)
        }
        RequestKind::FindCoordinator(r) => {
            ResponseKind::FindCoordinator(find_coordinator::handle(ctx, r).await)
        }
        RequestKind::JoinGroup(r) => {
            ResponseKind::JoinGroup(Box::pin(join_group::handle(ctx, r)).await)
        }
        RequestKind::SyncGroup(r) => {
            ResponseKind::SyncGroup(Box::pin(sync_group::handle(ctx, r)).await)
        }
        RequestKind::Heartbeat(r) => ResponseKind::Heartbeat(heartbeat::handle(ctx, r).await),
        RequestKind::LeaveGroup(r) => ResponseKind::LeaveGroup(leave_group::handle(ctx, r).await),
        RequestKind::OffsetCommit(r) => {
            ResponseKind::OffsetCommit(offset_commit::handle(ctx, r).await)
        }
        RequestKind::OffsetFetch(r) => {
            ResponseKind::OffsetFetch(offset_fetch::handle(ctx, r).await)
        }
        RequestKind::OffsetDelete(r) => {
            ResponseKind::OffsetDelete(offset_delete::handle(ctx, r).await)
        }
        RequestKind::DeleteGroups(r) => {
            ResponseKind::DeleteGroups(delete_groups::handle(ctx, r).await)
        }
        RequestKind::ListGroups(r) => ResponseKind::ListGroups(list_groups::handle(ctx, r).await),
        RequestKind::DescribeGroups(r) => {
            ResponseKind::DescribeGroups(describe_groups::handle(ctx, r).await)
        }
        RequestKind::ConsumerGroupHeartbeat(r) => {
            ResponseKind::ConsumerGroupHeartbeat(consumer_group_heartbeat::handle(ctx, r).await)
        }
        RequestKind::ConsumerGroupDescribe(r) => {
            ResponseKind::ConsumerGroupDescribe(consumer_group_describe::handle(ctx, r).await)
        }
        RequestKind::DescribeConfigs(r) => {
            ResponseKind::DescribeConfigs(describe_configs::handle(ctx, r).await)
        }
        RequestKind::IncrementalAlterConfigs(r) => ResponseKind::IncrementalAlterConfigs(
            Box::pin(incremental_alter_configs::handle(ctx, r)).await,
        ),
        RequestKind::AlterConfigs(r) => {
            ResponseKind::AlterConfigs(Box::pin(alter_configs::handle(ctx, r)).await)
        }
        RequestKind::CreatePartitions(r) => {
            ResponseKind::CreatePartitions(create_partitions::handle(ctx, r).await)
        }
        RequestKind::DeleteRecords(r) => {
            ResponseKind::DeleteRecords(delete_records::handle(ctx, r).await)
        }
        RequestKind::DescribeLogDirs(r) => {
            ResponseKind::DescribeLogDirs(describe_log_dirs::handle(ctx, r).await)
        }
        RequestKind::DescribeCluster(r) => {
            ResponseKind::DescribeCluster(describe_cluster::handle(ctx, r))
        }
        RequestKind::DescribeTopicPartitions(r) => {
            ResponseKind::DescribeTopicPartitions(describe_topic_partitions::handle(ctx, r).await)
        }
        RequestKind::OffsetForLeaderEpoch(r) => {
            ResponseKind::OffsetForLeaderEpoch(offset_for_leader_epoch::handle(ctx, r).await)
        }
        RequestKind::DescribeUserScramCredentials(r) => ResponseKind::DescribeUserScramCredentials(
            describe_user_scram_credentials::handle(ctx, r).await,
        ),
        RequestKind::AlterUserScramCredentials(r) => ResponseKind::AlterUserScramCredentials(
            Box::pin(alter_user_scram_credentials::handle(ctx, r)).await,
        ),
        RequestKind::DescribeAcls(r) => {
            ResponseKind::DescribeAcls(describe_acls::handle(ctx, r).await)
        }
        RequestKind::CreateAcls(r) => {
            ResponseKind::CreateAcls(Box::pin(create_acls::handle(ctx, r)).await)
        }
        RequestKind::DeleteAcls(r) => {
            ResponseKind::DeleteAcls(Box::pin(delete_acls::handle(ctx, r)).await)
        }
        RequestKind::AddPartitionsToTxn(r) => {
            ResponseKind::AddPartitionsToTxn(add_partitions_to_txn::handle(ctx, r).await)
        }
        RequestKind::AddOffsetsToTxn(r) => {
            ResponseKind::AddOffsetsToTxn(add_offsets_to_txn::handle(ctx, r).await)
        }
        RequestKind::EndTxn(r) => ResponseKind::EndTxn(end_txn::handle(ctx, r).await),
        RequestKind::TxnOffsetCommit(r) => {
            ResponseKind::TxnOffsetCommit(txn_offset_commit::handle(ctx, r).await)
        }
        RequestKind::WriteTxnMarkers(r) => {
            ResponseKind::WriteTxnMarkers(write_txn_markers::handle(ctx, r).await)
        }
        RequestKind::DescribeTransactions(r) => {
            ResponseKind::DescribeTransactions(describe_transactions::handle(ctx, r).await)
        }
        RequestKind::ListTransactions(r) => {
            ResponseKind::ListTransactions(list_transactions::handle(ctx, r).await)
        }
        RequestKind::DescribeProducers(r) => {
            ResponseKind::DescribeProducers(describe_producers::handle(ctx, r).await)
        }
        RequestKind::SaslHandshake(r) => ResponseKind::SaslHandshake(sasl::handshake(ctx, r)),
        RequestKind::SaslAuthenticate(r) => {
            ResponseKind::SaslAuthenticate(sasl::authenticate(ctx, r))
        }
        // `decode_request` only yields APIs listed in `protocol::SUPPORTED_APIS`, and each of
        // them has an arm above; `dispatch_covers_every_served_api` holds that invariant.
        _ => return Err(NotServed(api_name(ctx.api_key))),
    };
    Ok(Reply::Body(Box::new(response)))
}

/// A stable, short label for metrics and logs.
pub fn api_name(key: ApiKey) -> &'static str {
    match key {
        ApiKey::Produce => "Produce",
        ApiKey::Fetch => "Fetch",
        ApiKey::ListOffsets => "ListOffsets",
        ApiKey::Metadata => "Metadata",
        ApiKey::OffsetCommit => "OffsetCommit",
        ApiKey::OffsetFetch => "OffsetFetch",
        ApiKey::FindCoordinator => "FindCoordinator",
        ApiKey::JoinGroup => "JoinGroup",
        ApiKey::Heartbeat => "Heartbeat",
        ApiKey::LeaveGroup => "LeaveGroup",
        ApiKey::SyncGroup => "SyncGroup",
        ApiKey::DescribeGroups => "DescribeGroups",
        ApiKey::ListGroups => "ListGroups",
        ApiKey::ApiVersions => "ApiVersions",
        ApiKey::CreateTopics => "CreateTopics",
        ApiKey::DeleteTopics => "DeleteTopics",
        ApiKey::InitProducerId => "InitProducerId",
        ApiKey::DeleteGroups => "DeleteGroups",
        ApiKey::OffsetDelete => "OffsetDelete",
        ApiKey::ConsumerGroupHeartbeat => "ConsumerGroupHeartbeat",
        ApiKey::ConsumerGroupDescribe => "ConsumerGroupDescribe",
        ApiKey::DescribeConfigs => "DescribeConfigs",
        ApiKey::IncrementalAlterConfigs => "IncrementalAlterConfigs",
        ApiKey::AlterConfigs => "AlterConfigs",
        ApiKey::CreatePartitions => "CreatePartitions",
        ApiKey::DeleteRecords => "DeleteRecords",
        ApiKey::DescribeLogDirs => "DescribeLogDirs",
        ApiKey::OffsetForLeaderEpoch => "OffsetForLeaderEpoch",
        ApiKey::DescribeCluster => "DescribeCluster",
        ApiKey::DescribeTopicPartitions => "DescribeTopicPartitions",
        ApiKey::SaslHandshake => "SaslHandshake",
        ApiKey::SaslAuthenticate => "SaslAuthenticate",
        ApiKey::DescribeUserScramCredentials => "DescribeUserScramCredentials",
        ApiKey::AlterUserScramCredentials => "AlterUserScramCredentials",
        ApiKey::DescribeAcls => "DescribeAcls",
        ApiKey::CreateAcls => "CreateAcls",
        ApiKey::DeleteAcls => "DeleteAcls",
        ApiKey::AddPartitionsToTxn => "AddPartitionsToTxn",
        ApiKey::AddOffsetsToTxn => "AddOffsetsToTxn",
        ApiKey::EndTxn => "EndTxn",
        ApiKey::TxnOffsetCommit => "TxnOffsetCommit",
        ApiKey::WriteTxnMarkers => "WriteTxnMarkers",
        ApiKey::DescribeTransactions => "DescribeTransactions",
        ApiKey::ListTransactions => "ListTransactions",
        ApiKey::DescribeProducers => "DescribeProducers",
        _ => "Other",
    }
}

#[cfg(test)]
mod file_catalog;

#[cfg(test)]
pub(crate) mod test_support {
    //! A broker over a temp dir, for handler tests.
    use super::file_catalog::FileCatalog;
    use super::*;
    use crate::cluster::{BrokerEndpoint, SingleNode};
    use crate::config::{BrokerConfig, ServeArgs};
    use clap::Parser;
    use kafka_protocol::messages::BrokerId;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: ServeArgs,
    }

    /// A broker (node 1, auto-create on) whose data lives in `dir`.
    pub fn broker(dir: &std::path::Path, flags: &[&str]) -> Arc<Broker> {
        let mut argv = vec!["serve", "--data-dir"];
        let dir_str = dir.to_str().unwrap();
        argv.push(dir_str);
        argv.extend_from_slice(flags);
        let args = Wrap::parse_from(argv).args;
        let config = BrokerConfig::resolve(&args, "127.0.0.1:9092".parse().unwrap()).unwrap();
        let catalog = Arc::new(FileCatalog::open(dir).unwrap());
        let data = Arc::new(
            crate::data::DataPlane::open(
                dir,
                catalog.clone(),
                config.node_id,
                true,
                crate::data::DataLimits {
                    list_offsets_decompress_bytes: config.list_offsets_decompress_bytes,
                    open_files: compaction::OpenFiles::new(config.open_segment_files_max),
                    space: None,
                },
            )
            .unwrap(),
        );
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let config_authorizer = config.authorizer.clone();
        Arc::new(Broker {
            cluster: Arc::new(SingleNode {
                endpoint: BrokerEndpoint {
                    node_id: BrokerId(config.node_id),
                    host: config.advertised_host.clone(),
                    port: config.advertised_port,
                    rack: None,
                },
            }),
            config,
            catalog: catalog.clone(),
            producer_ids: catalog,
            data,
            shutdown,
            groups: None,
            authorizer: Arc::new(crate::security::authorizer::Authorizer::new(
                config_authorizer,
                None,
            )),
        })
    }

    /// Creates topic `name` with `partitions` partitions, replication factor 1 and `configs`.
    pub async fn create_topic(
        b: &Broker,
        name: &str,
        partitions: i32,
        configs: &[(&str, &str)],
    ) -> Arc<crate::topics::TopicSpec> {
        let new = crate::topics::NewTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            configs: configs
                .iter()
                .map(|(k, v)| ((*k).to_string(), Some((*v).to_string())))
                .collect(),
            ..crate::topics::NewTopic::default()
        };
        b.create_topic(&new, false).await.unwrap()
    }

    /// A context for `key` at `version`.
    pub fn ctx(broker: &Arc<Broker>, key: ApiKey, version: i16) -> RequestContext {
        RequestContext {
            broker: broker.clone(),
            api_key: key,
            version,
            client_id: "test".into(),
            correlation_id: 1,
            peer: "127.0.0.1:1".parse().unwrap(),
            listener: Arc::new(broker.config.listeners[0].clone()),
            principal: Arc::new(crate::security::principal::Principal::anonymous()),
        }
    }

    #[tokio::test]
    async fn dispatch_covers_every_served_api() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for api in protocol::SUPPORTED_APIS {
            let version = api.max;
            let body = default_request(api.key);
            let c = ctx(&b, api.key, version);
            assert!(
                dispatch(&c, body).await.is_ok(),
                "{:?} is advertised but not dispatched",
                api.key
            );
        }
    }

    fn default_request(key: ApiKey) -> RequestKind {
        use kafka_protocol::messages::*;
        match key {
            ApiKey::Produce => RequestKind::Produce(ProduceRequest::default()),
            ApiKey::Fetch => RequestKind::Fetch(FetchRequest::default()),
            ApiKey::ListOffsets => RequestKind::ListOffsets(ListOffsetsRequest::default()),
            ApiKey::Metadata => RequestKind::Metadata(MetadataRequest::default()),
            ApiKey::ApiVersions => RequestKind::ApiVersions(ApiVersionsRequest::default()),
            ApiKey::CreateTopics => RequestKind::CreateTopics(CreateTopicsRequest::default()),
            ApiKey::DeleteTopics => RequestKind::DeleteTopics(DeleteTopicsRequest::default()),
            ApiKey::InitProducerId => RequestKind::InitProducerId(InitProducerIdRequest::default()),
            ApiKey::FindCoordinator => {
                RequestKind::FindCoordinator(FindCoordinatorRequest::default())
            }
            ApiKey::JoinGroup => RequestKind::JoinGroup(JoinGroupRequest::default()),
            ApiKey::SyncGroup => RequestKind::SyncGroup(SyncGroupRequest::default()),
            ApiKey::Heartbeat => RequestKind::Heartbeat(HeartbeatRequest::default()),
            ApiKey::LeaveGroup => RequestKind::LeaveGroup(LeaveGroupRequest::default()),
            ApiKey::OffsetCommit => RequestKind::OffsetCommit(OffsetCommitRequest::default()),
            ApiKey::OffsetFetch => RequestKind::OffsetFetch(OffsetFetchRequest::default()),
            ApiKey::OffsetDelete => RequestKind::OffsetDelete(OffsetDeleteRequest::default()),
            ApiKey::DeleteGroups => RequestKind::DeleteGroups(DeleteGroupsRequest::default()),
            ApiKey::ListGroups => RequestKind::ListGroups(ListGroupsRequest::default()),
            ApiKey::DescribeGroups => RequestKind::DescribeGroups(DescribeGroupsRequest::default()),
            ApiKey::ConsumerGroupHeartbeat => {
                RequestKind::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest::default())
            }
            ApiKey::ConsumerGroupDescribe => {
                RequestKind::ConsumerGroupDescribe(ConsumerGroupDescribeRequest::default())
            }
            ApiKey::DescribeConfigs => {
                RequestKind::DescribeConfigs(DescribeConfigsRequest::default())
            }
            ApiKey::IncrementalAlterConfigs => {
                RequestKind::IncrementalAlterConfigs(IncrementalAlterConfigsRequest::default())
            }
            ApiKey::AlterConfigs => RequestKind::AlterConfigs(AlterConfigsRequest::default()),
            ApiKey::CreatePartitions => {
                RequestKind::CreatePartitions(CreatePartitionsRequest::default())
            }
            ApiKey::DeleteRecords => RequestKind::DeleteRecords(DeleteRecordsRequest::default()),
            ApiKey::DescribeLogDirs => {
                RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default())
            }
            ApiKey::OffsetForLeaderEpoch => {
                RequestKind::OffsetForLeaderEpoch(OffsetForLeaderEpochRequest::default())
            }
            ApiKey::DescribeCluster => {
                RequestKind::DescribeCluster(DescribeClusterRequest::default())
            }
            ApiKey::DescribeTopicPartitions => {
                RequestKind::DescribeTopicPartitions(DescribeTopicPartitionsRequest::default())
            }
            ApiKey::SaslHandshake => RequestKind::SaslHandshake(SaslHandshakeRequest::default()),
            ApiKey::SaslAuthenticate => {
                RequestKind::SaslAuthenticate(SaslAuthenticateRequest::default())
            }
            ApiKey::DescribeUserScramCredentials => RequestKind::DescribeUserScramCredentials(
                DescribeUserScramCredentialsRequest::default(),
            ),
            ApiKey::AlterUserScramCredentials => {
                RequestKind::AlterUserScramCredentials(AlterUserScramCredentialsRequest::default())
            }
            ApiKey::DescribeAcls => RequestKind::DescribeAcls(DescribeAclsRequest::default()),
            ApiKey::CreateAcls => RequestKind::CreateAcls(CreateAclsRequest::default()),
            ApiKey::DeleteAcls => RequestKind::DeleteAcls(DeleteAclsRequest::default()),
            ApiKey::AddPartitionsToTxn => {
                RequestKind::AddPartitionsToTxn(AddPartitionsToTxnRequest::default())
            }
            ApiKey::AddOffsetsToTxn => {
                RequestKind::AddOffsetsToTxn(AddOffsetsToTxnRequest::default())
            }
            ApiKey::EndTxn => RequestKind::EndTxn(EndTxnRequest::default()),
            ApiKey::TxnOffsetCommit => {
                RequestKind::TxnOffsetCommit(TxnOffsetCommitRequest::default())
            }
            ApiKey::WriteTxnMarkers => {
                RequestKind::WriteTxnMarkers(WriteTxnMarkersRequest::default())
            }
            ApiKey::DescribeTransactions => {
                RequestKind::DescribeTransactions(DescribeTransactionsRequest::default())
            }
            ApiKey::ListTransactions => {
                RequestKind::ListTransactions(ListTransactionsRequest::default())
            }
            ApiKey::DescribeProducers => {
                RequestKind::DescribeProducers(DescribeProducersRequest::default())
            }
            other => panic!("add a default request for {other:?}"),
        }
    }

    /// An uncompressed batch of `n` records, as a client sends it.
    pub fn plain_batch(n: usize) -> bytes::Bytes {
        client_batch(None, n, false, |_| bytes::Bytes::from(vec![b'v'; 10]))
    }

    /// An uncompressed batch of `n` records with values `value(i)`, timestamps from 1,000; an
    /// idempotent one when `producer` is `Some((id, epoch, first_sequence))`, transactional
    /// when asked.
    pub fn client_batch(
        producer: Option<(i64, i16, i32)>,
        n: usize,
        transactional: bool,
        value: impl Fn(usize) -> bytes::Bytes,
    ) -> bytes::Bytes {
        use kafka_protocol::records::{
            Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
        };
        let (pid, epoch, seq0) = producer.unwrap_or((-1, -1, -1));
        let records: Vec<Record> = (0..n)
            .map(|i| Record {
                transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: pid,
                producer_epoch: epoch,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                // The encoder starts a new batch when `offset - sequence` changes: keep it
                // constant, also without a producer.
                sequence: if seq0 >= 0 {
                    seq0 + i as i32
                } else {
                    i as i32 - 1
                },
                timestamp: 1_000 + i as i64,
                key: None,
                value: Some(value(i)),
                headers: Default::default(),
            })
            .collect();
        let mut buf = bytes::BytesMut::new();
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

    /// Encodes `body` at the context's version, failing the test if the codec refuses it.
    pub fn assert_encodes(ctx: &RequestContext, body: &ResponseKind) {
        protocol::encode_response(1, ctx.api_key, ctx.version, body)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[cfg(test)]
mod future_size {
    use super::*;

    fn future_size<'a, R, Fut>(_: impl FnOnce(&'a RequestContext, R) -> Fut) -> usize {
        std::mem::size_of::<Fut>()
    }

    /// Every request moves the dispatch future a few times (into its span, into the
    /// connection's own future): a new large handler future belongs in a `Box::pin` arm.
    #[test]
    fn the_dispatch_future_stays_small() {
        let size = future_size(dispatch);
        assert!(size <= 3 * 1024, "dispatch's future is {size} bytes");
    }
}
