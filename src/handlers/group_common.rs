//! What the group handlers share: reaching the coordinator, turning its answers into codes,
//! and string conversions between the wire and the domain.

use std::net::IpAddr;
use std::sync::Arc;

use coordinator::{
    CommitPartition, CommitTopic, ErrorKind, GroupInstanceId, LeaderEpoch, Offset, PartitionIndex,
    Reply, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::RequestContext;
use crate::errors::{coordinator_error_code, to_kafka_error, BrokerError};
use crate::group_coordinator::{GroupCoordinator, GroupError};

/// The coordinator on this broker, or COORDINATOR_NOT_AVAILABLE when it runs without one.
pub fn groups(ctx: &RequestContext) -> Result<&Arc<GroupCoordinator>, GroupError> {
    ctx.broker
        .groups
        .as_ref()
        .ok_or_else(|| GroupError::NotAvailable("this broker runs no group coordinator".into()))
}

/// The wire code of a domain answer, counted in the error metrics (and a count-limit refusal
/// in its own, `group_limits`).
pub fn domain_code(ctx: &RequestContext, error: Option<ErrorKind>) -> i16 {
    if let Some(kind) = error {
        super::group_limits::note(kind);
    }
    ctx.error(error.map_or(ErrorCode::None, coordinator_error_code))
}

/// The wire code of a node-level failure, counted in the error metrics.
pub fn failure_code(ctx: &RequestContext, error: &GroupError) -> i16 {
    ctx.error(to_kafka_error(&BrokerError::Group(error.clone())))
}

/// A reply of a kind the request cannot produce: a bug, answered as a retriable failure
/// rather than a panic.
pub fn unexpected(reply: &Reply) -> GroupError {
    tracing::error!(?reply, "coordinator answered with an unexpected reply kind");
    GroupError::NotAvailable("unexpected coordinator reply".into())
}

pub fn to_str(s: &StrBytes) -> String {
    s.as_str().to_owned()
}

/// A static member's `group.instance.id` from the wire (absent or null: a dynamic member).
pub fn instance_id(id: Option<&StrBytes>) -> Option<GroupInstanceId> {
    id.map(|i| GroupInstanceId::new(i.as_str()))
}

pub fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

/// The client's address as Kafka shows it in DescribeGroups (`/10.0.0.5`).
pub fn client_host(ctx: &RequestContext) -> String {
    host_of(ctx.peer.ip())
}

/// `/` and the address. An IPv4 address is written digit by digit: through `format!` it took
/// about 1,600 instructions, 7 % of a consumer heartbeat, which sends its host every time.
fn host_of(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return format!("/{ip}");
    };
    let mut host = String::with_capacity(16);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        host.push(if i == 0 { '/' } else { '.' });
        if octet >= 100 {
            host.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            host.push(char::from(b'0' + octet / 10 % 10));
        }
        host.push(char::from(b'0' + octet % 10));
    }
    host
}

/// One partition of an OffsetCommit or TxnOffsetCommit as it came off the wire (the two
/// requests carry the same fields in different structs).
pub struct WireCommit<'a> {
    pub partition: i32,
    pub offset: i64,
    /// −1 where the request's version carries no leader epoch.
    pub leader_epoch: i32,
    pub metadata: Option<&'a StrBytes>,
}

/// The commit's topics for the coordinator, each partition marked known or not against the
/// replicated topic metadata (an unknown one is answered UNKNOWN_TOPIC_OR_PARTITION).
pub fn commit_topics<'a, P>(
    groups: &GroupCoordinator,
    topics: impl IntoIterator<Item = (&'a StrBytes, P)>,
) -> Vec<CommitTopic>
where
    P: IntoIterator<Item = WireCommit<'a>>,
{
    topics
        .into_iter()
        .map(|(name, partitions)| CommitTopic {
            name: TopicName::new(name.as_str()),
            partitions: partitions
                .into_iter()
                .map(|p| CommitPartition {
                    partition: PartitionIndex(p.partition),
                    offset: Offset(p.offset),
                    leader_epoch: LeaderEpoch(p.leader_epoch),
                    metadata: p.metadata.map(to_str),
                    partition_known: groups.partition_known(name.as_str(), p.partition),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::host_of;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    #[test]
    fn a_host_reads_as_the_formatted_address_does() {
        for octet in 0..=255u8 {
            for ip in [
                Ipv4Addr::new(octet, 0, 7, 255),
                Ipv4Addr::new(10, octet, 100, 9),
                Ipv4Addr::new(127, 0, octet, 1),
                Ipv4Addr::new(192, 168, 99, octet),
            ] {
                assert_eq!(host_of(IpAddr::V4(ip)), format!("/{ip}"));
            }
        }
        for ip in [
            Ipv6Addr::LOCALHOST,
            Ipv4Addr::new(10, 0, 0, 5).to_ipv6_mapped(),
        ] {
            assert_eq!(host_of(IpAddr::V6(ip)), format!("/{ip}"));
        }
    }
}
