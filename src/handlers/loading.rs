//! What the node answers while it is still loading its replicated state (replaying the Raft
//! log at start), before the broker exists.
//!
//! Kafka's listener serves while a coordinator loads its offsets partition: group APIs answer
//! COORDINATOR_LOAD_IN_PROGRESS (clients retry the same node after a backoff) and
//! FindCoordinator names the coordinator. Cohort replays one log holding both the groups and
//! the topic metadata, so only what needs neither is answered here:
//!
//! - ApiVersions: as always (every client sends it first on a connection);
//! - FindCoordinator: a one-voter node will coordinate every group, so it names itself; a
//!   cluster node does not know the leader yet: COORDINATOR_NOT_AVAILABLE;
//! - group APIs: COORDINATOR_LOAD_IN_PROGRESS on a one-voter node; NOT_COORDINATOR on a
//!   cluster node (it is not leading while it replays: clients look the coordinator up);
//! - anything else (Metadata, Produce, Fetch, topics...) waits until the node has loaded.

use kafka_protocol::messages::{
    HeartbeatResponse, LeaveGroupResponse, ListGroupsResponse, OffsetDeleteResponse,
    SyncGroupResponse,
};
use kafka_protocol::messages::{RequestKind, ResponseKind};
use protocol::ErrorCode;

use super::{
    api_versions, delete_groups, describe_groups, find_coordinator, join_group, offset_commit,
    offset_fetch,
};
use crate::cluster::BrokerEndpoint;

/// Who answers group requests while loading.
#[derive(Debug, Clone)]
pub enum LoadingNode {
    /// A one-voter cluster: this node, which will coordinate every group once loaded.
    Coordinator(BrokerEndpoint),
    /// A node of a cluster: the coordinator is whichever node Raft elects.
    ClusterMember,
}

/// What a request gets while the node loads.
#[derive(Debug)]
pub enum WhileLoading {
    Answer(Box<ResponseKind>),
    /// The request, back: it waits for the broker.
    Wait(Box<RequestKind>),
}

/// The answer to `body` while loading, or the request back if it must wait for the broker.
pub fn answer(version: i16, body: RequestKind, node: &LoadingNode) -> WhileLoading {
    let (group_code, single) = match node {
        LoadingNode::Coordinator(me) => (ErrorCode::CoordinatorLoadInProgress, Some(me)),
        LoadingNode::ClusterMember => (ErrorCode::NotCoordinator, None),
    };
    let code = group_code.code();
    let response = match body {
        RequestKind::ApiVersions(r) => ResponseKind::ApiVersions(api_versions::answer(version, &r)),
        RequestKind::FindCoordinator(r) => {
            let located = if !find_coordinator::serves_key_type(r.key_type) {
                Err((
                    ErrorCode::InvalidRequest.code(),
                    find_coordinator::KEY_TYPE_REFUSED.to_string(),
                ))
            } else if let Some(me) = single {
                Ok(me.clone())
            } else {
                Err((
                    ErrorCode::CoordinatorNotAvailable.code(),
                    "this node is still loading the replicated state".to_string(),
                ))
            };
            ResponseKind::FindCoordinator(find_coordinator::respond(version, &r, located))
        }
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
        RequestKind::OffsetCommit(r) => {
            ResponseKind::OffsetCommit(offset_commit::refused(&r, code))
        }
        RequestKind::OffsetFetch(r) => {
            ResponseKind::OffsetFetch(offset_fetch::refused(version, &r, code))
        }
        RequestKind::OffsetDelete(_) => {
            ResponseKind::OffsetDelete(OffsetDeleteResponse::default().with_error_code(code))
        }
        RequestKind::DescribeGroups(r) => {
            ResponseKind::DescribeGroups(describe_groups::refused(version, &r, code))
        }
        RequestKind::ListGroups(_) => match node {
            // Kafka's ListGroups says COORDINATOR_LOAD_IN_PROGRESS while any of its group
            // partitions loads; a cluster node coordinates nothing yet: an empty list.
            LoadingNode::Coordinator(_) => {
                ResponseKind::ListGroups(ListGroupsResponse::default().with_error_code(code))
            }
            LoadingNode::ClusterMember => ResponseKind::ListGroups(ListGroupsResponse::default()),
        },
        RequestKind::DeleteGroups(r) => {
            ResponseKind::DeleteGroups(delete_groups::refused(&r, code))
        }
        other => return WhileLoading::Wait(Box::new(other)),
    };
    WhileLoading::Answer(Box::new(response))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::group_common::str_bytes;
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
    use kafka_protocol::messages::{
        BrokerId, FindCoordinatorRequest, GroupId, HeartbeatRequest, ListGroupsRequest,
        MetadataRequest, OffsetFetchRequest,
    };

    fn answered(version: i16, body: RequestKind, node: &LoadingNode) -> ResponseKind {
        match answer(version, body, node) {
            WhileLoading::Answer(r) => *r,
            WhileLoading::Wait(r) => panic!("{r:?} waits while loading"),
        }
    }

    fn me() -> LoadingNode {
        LoadingNode::Coordinator(BrokerEndpoint {
            node_id: BrokerId(1),
            host: "127.0.0.1".into(),
            port: 9092,
            rack: None,
        })
    }

    #[test]
    fn a_single_node_names_itself_and_answers_groups_load_in_progress() {
        let find = FindCoordinatorRequest::default().with_coordinator_keys(vec![str_bytes("g")]);
        let ResponseKind::FindCoordinator(found) =
            answered(4, RequestKind::FindCoordinator(find), &me())
        else {
            panic!("not a FindCoordinator response");
        };
        let c = &found.coordinators[0];
        assert_eq!((c.error_code, c.node_id.0, c.port), (0, 1, 9092));
        let heartbeat = RequestKind::Heartbeat(HeartbeatRequest::default());
        let ResponseKind::Heartbeat(hb) = answered(4, heartbeat, &me()) else {
            panic!("not a Heartbeat response");
        };
        assert_eq!(hb.error_code, 14);
        let fetch = OffsetFetchRequest::default().with_groups(vec![
            OffsetFetchRequestGroup::default().with_group_id(GroupId(str_bytes("g"))),
        ]);
        let ResponseKind::OffsetFetch(f) = answered(8, RequestKind::OffsetFetch(fetch), &me())
        else {
            panic!("not an OffsetFetch response");
        };
        assert_eq!(f.groups[0].error_code, 14);
        let list = RequestKind::ListGroups(ListGroupsRequest::default());
        let ResponseKind::ListGroups(l) = answered(4, list, &me()) else {
            panic!("not a ListGroups response");
        };
        assert_eq!(l.error_code, 14);
    }

    #[test]
    fn a_cluster_node_sends_clients_elsewhere_and_metadata_waits() {
        let node = LoadingNode::ClusterMember;
        let find = FindCoordinatorRequest::default().with_key(str_bytes("g"));
        let ResponseKind::FindCoordinator(found) =
            answered(3, RequestKind::FindCoordinator(find), &node)
        else {
            panic!("not a FindCoordinator response");
        };
        assert_eq!(found.error_code, 15);
        let heartbeat = RequestKind::Heartbeat(HeartbeatRequest::default());
        let ResponseKind::Heartbeat(hb) = answered(4, heartbeat, &node) else {
            panic!("not a Heartbeat response");
        };
        assert_eq!(hb.error_code, 16);
        let ResponseKind::ListGroups(l) = answered(
            4,
            RequestKind::ListGroups(ListGroupsRequest::default()),
            &node,
        ) else {
            panic!("not a ListGroups response");
        };
        assert_eq!((l.error_code, l.groups.len()), (0, 0));
        assert!(matches!(
            answer(12, RequestKind::Metadata(MetadataRequest::default()), &node),
            WhileLoading::Wait(r) if matches!(*r, RequestKind::Metadata(_))
        ));
    }
}
