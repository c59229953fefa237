//! SaslHandshake (17) v0–v1 and SaslAuthenticate (36) v0–v2 once a connection needs no more
//! authentication, and what a SASL listener answers to other requests before it is done.
//!
//! The exchange itself belongs to the connection (`server::authenticate` over
//! `security::sasl`): it changes who the connection is. A request that reaches [`dispatch`]
//! comes from an authenticated connection or one on a listener without SASL, so, as Kafka's
//! `KafkaApis` does, both APIs answer ILLEGAL_SASL_STATE there.
//!
//! [`dispatch`]: super::dispatch

use kafka_protocol::messages::fetch_request::FetchTopic;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::metadata_response::MetadataResponseTopic;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{
    FetchResponse, HeartbeatResponse, InitProducerIdResponse, LeaveGroupResponse,
    ListGroupsResponse, ListOffsetsResponse, MetadataResponse, OffsetDeleteResponse,
    ProduceResponse, RequestKind, ResponseKind, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest, SaslHandshakeResponse, SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::{
    delete_groups, describe_groups, find_coordinator, join_group, offset_commit, offset_fetch,
    RequestContext,
};

/// SaslHandshake on a connection that is not authenticating.
pub fn handshake(ctx: &RequestContext, _req: SaslHandshakeRequest) -> SaslHandshakeResponse {
    SaslHandshakeResponse::default().with_error_code(ctx.error(ErrorCode::IllegalSaslState))
}

/// SaslAuthenticate on a connection that is not authenticating.
pub fn authenticate(
    ctx: &RequestContext,
    _req: SaslAuthenticateRequest,
) -> SaslAuthenticateResponse {
    SaslAuthenticateResponse::default()
        .with_error_code(ctx.error(ErrorCode::IllegalSaslState))
        .with_error_message(Some(StrBytes::from_static_str(
            "SaslAuthenticate request received after successful authentication",
        )))
}

/// Kafka's answer to `body` arriving on a SASL listener before authentication completed:
/// the request's own error response with ILLEGAL_SASL_STATE (the connection is closed after
/// it). `None` for APIs whose error response is not built here: the connection is closed
/// without one, as Kafka closes a connection whose first request is not ApiVersions or
/// SaslHandshake.
pub fn refused_before_authentication(version: i16, body: &RequestKind) -> Option<ResponseKind> {
    let code = ErrorCode::IllegalSaslState.code();
    Some(match body {
        RequestKind::SaslAuthenticate(_) => ResponseKind::SaslAuthenticate(
            SaslAuthenticateResponse::default()
                .with_error_code(code)
                .with_error_message(Some(StrBytes::from_static_str(
                    "SaslAuthenticate before SaslHandshake",
                ))),
        ),
        RequestKind::Metadata(r) => {
            let topics = r
                .topics
                .iter()
                .flatten()
                .map(|t| {
                    MetadataResponseTopic::default()
                        .with_error_code(code)
                        .with_name(t.name.clone())
                        .with_topic_id(t.topic_id)
                })
                .collect();
            ResponseKind::Metadata(MetadataResponse::default().with_topics(topics))
        }
        // acks=0: Kafka builds no response for a Produce that asked for none.
        RequestKind::Produce(r) if r.acks != 0 => ResponseKind::Produce(
            ProduceResponse::default().with_responses(
                r.topic_data
                    .iter()
                    .map(|t| {
                        TopicProduceResponse::default()
                            .with_name(t.name.clone())
                            .with_topic_id(t.topic_id)
                            .with_partition_responses(
                                t.partition_data
                                    .iter()
                                    .map(|p| {
                                        PartitionProduceResponse::default()
                                            .with_index(p.index)
                                            .with_error_code(code)
                                            .with_base_offset(-1)
                                            .with_log_append_time_ms(-1)
                                            .with_log_start_offset(-1)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            ),
        ),
        RequestKind::Fetch(r) => {
            let topic = |t: &FetchTopic| {
                FetchableTopicResponse::default()
                    .with_topic(t.topic.clone())
                    .with_topic_id(t.topic_id)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                PartitionData::default()
                                    .with_partition_index(p.partition)
                                    .with_error_code(code)
                                    .with_high_watermark(-1)
                                    .with_last_stable_offset(-1)
                                    .with_log_start_offset(-1)
                            })
                            .collect(),
                    )
            };
            ResponseKind::Fetch(
                FetchResponse::default()
                    .with_error_code(code)
                    .with_responses(r.topics.iter().map(topic).collect()),
            )
        }
        RequestKind::ListOffsets(r) => ResponseKind::ListOffsets(
            ListOffsetsResponse::default().with_topics(
                r.topics
                    .iter()
                    .map(|t| {
                        ListOffsetsTopicResponse::default()
                            .with_name(t.name.clone())
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        ListOffsetsPartitionResponse::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(code)
                                            .with_timestamp(-1)
                                            .with_offset(-1)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            ),
        ),
        RequestKind::FindCoordinator(r) => ResponseKind::FindCoordinator(
            find_coordinator::respond(version, r, Err((code, "not authenticated".to_owned()))),
        ),
        RequestKind::JoinGroup(r) => ResponseKind::JoinGroup(join_group::refused(
            version,
            code,
            r.member_id.as_str().to_owned(),
        )),
        RequestKind::SyncGroup(_) => {
            ResponseKind::SyncGroup(SyncGroupResponse::default().with_error_code(code))
        }
        RequestKind::Heartbeat(_) => {
            ResponseKind::Heartbeat(HeartbeatResponse::default().with_error_code(code))
        }
        RequestKind::LeaveGroup(_) => {
            ResponseKind::LeaveGroup(LeaveGroupResponse::default().with_error_code(code))
        }
        RequestKind::OffsetCommit(r) => ResponseKind::OffsetCommit(offset_commit::refused(r, code)),
        RequestKind::OffsetFetch(r) => {
            ResponseKind::OffsetFetch(offset_fetch::refused(version, r, code))
        }
        RequestKind::OffsetDelete(_) => {
            ResponseKind::OffsetDelete(OffsetDeleteResponse::default().with_error_code(code))
        }
        RequestKind::DescribeGroups(r) => {
            ResponseKind::DescribeGroups(describe_groups::refused(version, r, code))
        }
        RequestKind::ListGroups(_) => {
            ResponseKind::ListGroups(ListGroupsResponse::default().with_error_code(code))
        }
        RequestKind::DeleteGroups(r) => ResponseKind::DeleteGroups(delete_groups::refused(r, code)),
        RequestKind::InitProducerId(_) => ResponseKind::InitProducerId(
            InitProducerIdResponse::default()
                .with_error_code(code)
                .with_producer_id(kafka_protocol::messages::ProducerId(-1))
                .with_producer_epoch(-1),
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{broker, ctx};
    use kafka_protocol::messages::ApiKey;

    #[test]
    fn both_apis_answer_illegal_state_once_authenticated() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for v in 0..=1 {
            let r = handshake(&ctx(&b, ApiKey::SaslHandshake, v), Default::default());
            assert_eq!(r.error_code, 34);
        }
        for v in 0..=2 {
            let r = authenticate(&ctx(&b, ApiKey::SaslAuthenticate, v), Default::default());
            assert_eq!(r.error_code, 34);
        }
    }

    #[test]
    fn requests_before_authentication_get_their_own_error_response() {
        let md = RequestKind::Metadata(
            kafka_protocol::messages::MetadataRequest::default().with_topics(Some(vec![
                kafka_protocol::messages::metadata_request::MetadataRequestTopic::default()
                    .with_name(Some(kafka_protocol::messages::TopicName(
                        StrBytes::from_static_str("t"),
                    ))),
            ])),
        );
        match refused_before_authentication(12, &md) {
            Some(ResponseKind::Metadata(m)) => assert_eq!(m.topics[0].error_code, 34),
            other => panic!("{other:?}"),
        }
        let auth = RequestKind::SaslAuthenticate(Default::default());
        assert!(matches!(
            refused_before_authentication(2, &auth),
            Some(ResponseKind::SaslAuthenticate(r)) if r.error_code == 34
        ));
        let produce = |acks| {
            RequestKind::Produce(
                kafka_protocol::messages::ProduceRequest::default()
                    .with_acks(acks)
                    .with_topic_data(vec![
                        kafka_protocol::messages::produce_request::TopicProduceData::default()
                            .with_partition_data(vec![Default::default()]),
                    ]),
            )
        };
        assert!(matches!(
            refused_before_authentication(9, &produce(-1)),
            Some(ResponseKind::Produce(r)) if r.responses[0].partition_responses[0].error_code == 34
        ));
        assert!(refused_before_authentication(9, &produce(0)).is_none());
        let fetch = RequestKind::Fetch(
            kafka_protocol::messages::FetchRequest::default().with_topics(vec![
                FetchTopic::default().with_partitions(vec![Default::default()]),
            ]),
        );
        assert!(matches!(
            refused_before_authentication(12, &fetch),
            Some(ResponseKind::Fetch(r)) if r.error_code == 34 && r.responses[0].partitions[0].error_code == 34
        ));
        let create = RequestKind::CreateTopics(Default::default());
        assert!(refused_before_authentication(7, &create).is_none());
    }
}
