//! The bytes of the Cohort application's commands, replies and snapshot records.
//!
//! ```text
//!  command   0x02 | tag (one per command kind) | version | postcard(origin) | postcard(fields)
//!  reply     0x02 | 0x0301 | version | postcard(AppReply)
//!  records   0x02 | 0x0401 topic / 0x0402 cluster / 0x0403 cluster config /
//!            0x0421 SCRAM credential / 0x0422 SCRAM bootstrap mark / 0x0423 ACL | version |
//!            postcard(TopicMeta / ClusterMeta / ClusterConfig / ScramCredentialRecord / bool /
//!            AclBinding)
//!  untagged (c076aca and before, read only):
//!  command   0x01 | postcard(origin) | varint Body variant [| varint WriteCommand variant] | fields
//!  reply, records  0x01 | postcard(value)
//! ```
//!
//! Each command kind has its own tag so that one kind's layout can change without touching
//! the others. Version 1 of every body is the field layout the untagged format already had,
//! which is why the untagged reader only has to map the variant indexes to tags.

use std::collections::BTreeMap;

use bytes::Bytes;
use coordinator::{ClusterConfig, TimerKey, TimestampMs, TopicName, WriteCommand};
use serde::Serialize;

use crate::cohort_app::acl::AclBinding;
use crate::cohort_app::scram::ScramCredentialRecord;
use crate::cohort_app::{AppReply, Body, ClusterMeta, Envelope, RequestToken, TopicMeta};
use crate::format::tags::{self, Kind, Tag};
use crate::format::{
    from_postcard, put_postcard, split_prefixed, take_postcard, write_header, FormatError, Framed,
    HEADER_LEN,
};

fn tag_of(body: &Body) -> Tag {
    match body {
        Body::Group(command) => match command {
            WriteCommand::JoinGroup(_) => tags::JOIN_GROUP,
            WriteCommand::SyncGroup(_) => tags::SYNC_GROUP,
            WriteCommand::LeaveGroup(_) => tags::LEAVE_GROUP,
            WriteCommand::CommitOffsets(_) => tags::COMMIT_OFFSETS,
            WriteCommand::DeleteOffsets(_) => tags::DELETE_OFFSETS,
            WriteCommand::DeleteGroups(_) => tags::DELETE_GROUPS,
            WriteCommand::TimerFired { .. } => tags::TIMER_FIRED,
            WriteCommand::ExpireOffsets { .. } => tags::EXPIRE_OFFSETS,
            WriteCommand::TopicsDeleted { .. } => tags::TOPICS_DELETED,
            WriteCommand::ConsumerGroupHeartbeat(_) => tags::CONSUMER_GROUP_HEARTBEAT,
            WriteCommand::InstallTargetAssignment(_) => tags::INSTALL_TARGET_ASSIGNMENT,
            WriteCommand::TopicsChanged(_) => tags::TOPICS_CHANGED,
            WriteCommand::InitTransactionalProducer(_) => tags::INIT_TRANSACTIONAL_PRODUCER,
            WriteCommand::AddPartitionsToTxn(_) => tags::ADD_PARTITIONS_TO_TXN,
            WriteCommand::AddOffsetsToTxn(_) => tags::ADD_OFFSETS_TO_TXN,
            WriteCommand::EndTxn(_) => tags::END_TXN,
            WriteCommand::TxnMarkersWritten(_) => tags::TXN_MARKERS_WRITTEN,
            WriteCommand::TxnOffsetCommit(_) => tags::TXN_OFFSET_COMMIT,
        },
        Body::CreateTopics { .. } => tags::CREATE_TOPICS,
        Body::DeleteTopics { .. } => tags::DELETE_TOPICS,
        Body::InitCluster { .. } => tags::INIT_CLUSTER,
        Body::AllocateProducerIds { .. } => tags::ALLOCATE_PRODUCER_IDS,
        Body::InitClusterConfig { .. } => tags::INIT_CLUSTER_CONFIG,
        Body::AlterClusterConfig { .. } => tags::ALTER_CLUSTER_CONFIG,
        Body::AlterTopicConfigs(_) => tags::ALTER_TOPIC_CONFIGS,
        Body::CreatePartitions(_) => tags::CREATE_PARTITIONS,
        Body::AlterScramCredentials { .. } => tags::ALTER_SCRAM_CREDENTIALS,
        Body::BootstrapScramCredentials { .. } => tags::BOOTSTRAP_SCRAM_CREDENTIALS,
        Body::AlterGroupConfigs(_) => tags::ALTER_GROUP_CONFIGS,
        Body::CreateAcls { .. } => tags::CREATE_ACLS,
        Body::DeleteAcls { .. } => tags::DELETE_ACLS,
    }
}

fn put_fields(out: &mut Vec<u8>, body: &Body) {
    fn put<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
        put_postcard(out, v);
    }
    match body {
        Body::Group(command) => match command {
            WriteCommand::JoinGroup(c) => put(out, c),
            WriteCommand::SyncGroup(c) => put(out, c),
            WriteCommand::LeaveGroup(c) => put(out, c),
            WriteCommand::CommitOffsets(c) => put(out, c),
            WriteCommand::DeleteOffsets(c) => put(out, c),
            WriteCommand::DeleteGroups(c) => put(out, c),
            WriteCommand::TimerFired { key, now_ms } => put(out, &(key, now_ms)),
            WriteCommand::ExpireOffsets { now_ms } => put(out, now_ms),
            WriteCommand::TopicsDeleted { topics, now_ms } => put(out, &(topics, now_ms)),
            WriteCommand::ConsumerGroupHeartbeat(c) => put(out, c),
            WriteCommand::InstallTargetAssignment(c) => put(out, c),
            WriteCommand::TopicsChanged(c) => put(out, c),
            WriteCommand::InitTransactionalProducer(c) => put(out, c),
            WriteCommand::AddPartitionsToTxn(c) => put(out, c),
            WriteCommand::AddOffsetsToTxn(c) => put(out, c),
            WriteCommand::EndTxn(c) => put(out, c),
            WriteCommand::TxnMarkersWritten(c) => put(out, c),
            WriteCommand::TxnOffsetCommit(c) => put(out, c),
        },
        Body::CreateTopics { topics } => put(out, topics),
        Body::DeleteTopics { names, now_ms } => put(out, &(names, now_ms)),
        Body::InitCluster { cluster_id } => put(out, cluster_id),
        Body::AllocateProducerIds { count } => put(out, count),
        Body::InitClusterConfig {
            static_values,
            replace,
        } => put(out, &(static_values, replace)),
        Body::AlterClusterConfig { changes } => put(out, changes),
        Body::AlterTopicConfigs(c) => put(out, c),
        Body::CreatePartitions(c) => put(out, c),
        Body::AlterScramCredentials { changes } => put(out, changes),
        Body::BootstrapScramCredentials { credentials } => put(out, credentials),
        Body::AlterGroupConfigs(c) => put(out, c),
        Body::CreateAcls { acls } => put(out, acls),
        Body::DeleteAcls { filters } => put(out, filters),
    }
}

pub(crate) fn encode_envelope(envelope: &Envelope) -> Bytes {
    let mut out = Vec::with_capacity(128);
    write_header(&mut out, tag_of(&envelope.body), 1);
    put_postcard(&mut out, &envelope.origin);
    put_fields(&mut out, &envelope.body);
    Bytes::from(out)
}

/// Checks what a command's header says without decoding its body: the leader refuses to
/// replicate a command it could not apply itself.
pub(crate) fn admit_command(bytes: &[u8]) -> Result<(), FormatError> {
    match split_prefixed(bytes)? {
        Framed::Untagged(_) => Ok(()),
        Framed::Tagged { tag, version, .. } => {
            tags::check_kind(tag, version, Kind::Command).map(drop)
        }
    }
}

pub(crate) fn decode_envelope(bytes: &[u8]) -> Result<Envelope, FormatError> {
    match split_prefixed(bytes)? {
        Framed::Untagged(raw) => decode_untagged_envelope(raw),
        Framed::Tagged { tag, version, body } => {
            let info = tags::check_kind(tag, version, Kind::Command)?;
            let (origin, fields) = take_postcard::<Option<RequestToken>>(body, info.name)?;
            // Every command kind is at version 1; a version 2 adds its arm here and converts.
            let body = decode_fields_v1(tag, fields)?;
            Ok(Envelope { origin, body })
        }
    }
}

fn decode_fields_v1(tag: Tag, fields: &[u8]) -> Result<Body, FormatError> {
    let what = tags::info(tag).map_or("command", |i| i.name);
    let group = |command| Ok(Body::Group(command));
    match tag {
        tags::JOIN_GROUP => group(WriteCommand::JoinGroup(from_postcard(fields, what)?)),
        tags::SYNC_GROUP => group(WriteCommand::SyncGroup(from_postcard(fields, what)?)),
        tags::LEAVE_GROUP => group(WriteCommand::LeaveGroup(from_postcard(fields, what)?)),
        tags::COMMIT_OFFSETS => group(WriteCommand::CommitOffsets(from_postcard(fields, what)?)),
        tags::DELETE_OFFSETS => group(WriteCommand::DeleteOffsets(from_postcard(fields, what)?)),
        tags::DELETE_GROUPS => group(WriteCommand::DeleteGroups(from_postcard(fields, what)?)),
        tags::TIMER_FIRED => {
            let (key, now_ms): (TimerKey, TimestampMs) = from_postcard(fields, what)?;
            group(WriteCommand::TimerFired { key, now_ms })
        }
        tags::EXPIRE_OFFSETS => group(WriteCommand::ExpireOffsets {
            now_ms: from_postcard(fields, what)?,
        }),
        tags::TOPICS_DELETED => {
            let (topics, now_ms): (Vec<TopicName>, TimestampMs) = from_postcard(fields, what)?;
            group(WriteCommand::TopicsDeleted { topics, now_ms })
        }
        tags::CONSUMER_GROUP_HEARTBEAT => group(WriteCommand::ConsumerGroupHeartbeat(
            from_postcard(fields, what)?,
        )),
        tags::INSTALL_TARGET_ASSIGNMENT => group(WriteCommand::InstallTargetAssignment(
            from_postcard(fields, what)?,
        )),
        tags::TOPICS_CHANGED => group(WriteCommand::TopicsChanged(from_postcard(fields, what)?)),
        tags::INIT_TRANSACTIONAL_PRODUCER => group(WriteCommand::InitTransactionalProducer(
            from_postcard(fields, what)?,
        )),
        tags::ADD_PARTITIONS_TO_TXN => group(WriteCommand::AddPartitionsToTxn(from_postcard(
            fields, what,
        )?)),
        tags::ADD_OFFSETS_TO_TXN => {
            group(WriteCommand::AddOffsetsToTxn(from_postcard(fields, what)?))
        }
        tags::END_TXN => group(WriteCommand::EndTxn(from_postcard(fields, what)?)),
        tags::TXN_MARKERS_WRITTEN => group(WriteCommand::TxnMarkersWritten(from_postcard(
            fields, what,
        )?)),
        tags::TXN_OFFSET_COMMIT => {
            group(WriteCommand::TxnOffsetCommit(from_postcard(fields, what)?))
        }
        tags::CREATE_TOPICS => Ok(Body::CreateTopics {
            topics: from_postcard(fields, what)?,
        }),
        tags::DELETE_TOPICS => {
            let (names, now_ms): (Vec<String>, TimestampMs) = from_postcard(fields, what)?;
            Ok(Body::DeleteTopics { names, now_ms })
        }
        tags::INIT_CLUSTER => Ok(Body::InitCluster {
            cluster_id: from_postcard(fields, what)?,
        }),
        tags::ALLOCATE_PRODUCER_IDS => Ok(Body::AllocateProducerIds {
            count: from_postcard(fields, what)?,
        }),
        tags::INIT_CLUSTER_CONFIG => {
            let (static_values, replace): (BTreeMap<String, i64>, bool) =
                from_postcard(fields, what)?;
            Ok(Body::InitClusterConfig {
                static_values,
                replace,
            })
        }
        tags::ALTER_CLUSTER_CONFIG => Ok(Body::AlterClusterConfig {
            changes: from_postcard(fields, what)?,
        }),
        tags::ALTER_TOPIC_CONFIGS => Ok(Body::AlterTopicConfigs(from_postcard(fields, what)?)),
        tags::CREATE_PARTITIONS => Ok(Body::CreatePartitions(from_postcard(fields, what)?)),
        tags::ALTER_SCRAM_CREDENTIALS => Ok(Body::AlterScramCredentials {
            changes: from_postcard(fields, what)?,
        }),
        tags::BOOTSTRAP_SCRAM_CREDENTIALS => Ok(Body::BootstrapScramCredentials {
            credentials: from_postcard(fields, what)?,
        }),
        tags::ALTER_GROUP_CONFIGS => Ok(Body::AlterGroupConfigs(from_postcard(fields, what)?)),
        tags::CREATE_ACLS => Ok(Body::CreateAcls {
            acls: from_postcard(fields, what)?,
        }),
        tags::DELETE_ACLS => Ok(Body::DeleteAcls {
            filters: from_postcard(fields, what)?,
        }),
        other => Err(FormatError::UnknownTag {
            tag: other.0,
            expected: "command",
        }),
    }
}

/// Variant indexes of the untagged `Body` and `WriteCommand` enums, in their declaration
/// order at c076aca. Frozen: they are what the old log holds.
const UNTAGGED_BODY: [Option<Tag>; 5] = [
    None, // Group(WriteCommand): a second index follows
    Some(tags::CREATE_TOPICS),
    Some(tags::DELETE_TOPICS),
    Some(tags::INIT_CLUSTER),
    Some(tags::ALLOCATE_PRODUCER_IDS),
];
const UNTAGGED_GROUP: [Tag; 9] = [
    tags::JOIN_GROUP,
    tags::SYNC_GROUP,
    tags::LEAVE_GROUP,
    tags::COMMIT_OFFSETS,
    tags::DELETE_OFFSETS,
    tags::DELETE_GROUPS,
    tags::TIMER_FIRED,
    tags::EXPIRE_OFFSETS,
    tags::TOPICS_DELETED,
];

fn decode_untagged_envelope(raw: &[u8]) -> Result<Envelope, FormatError> {
    const WHAT: &str = "untagged command";
    let (origin, rest) = take_postcard::<Option<RequestToken>>(raw, WHAT)?;
    let (variant, rest) = take_postcard::<u32>(rest, WHAT)?;
    let unknown = |v: u32| FormatError::Malformed {
        what: WHAT,
        reason: format!("unknown variant {v}"),
    };
    let entry = UNTAGGED_BODY
        .get(variant as usize)
        .ok_or_else(|| unknown(variant))?;
    let (tag, fields) = match entry {
        Some(tag) => (*tag, rest),
        None => {
            let (command, rest) = take_postcard::<u32>(rest, WHAT)?;
            let tag = UNTAGGED_GROUP
                .get(command as usize)
                .ok_or_else(|| unknown(command))?;
            (*tag, rest)
        }
    };
    Ok(Envelope {
        origin,
        body: decode_fields_v1(tag, fields)?,
    })
}

fn encode_tagged<T: Serialize>(tag: Tag, value: &T) -> Bytes {
    let mut out = Vec::with_capacity(HEADER_LEN + 64);
    write_header(&mut out, tag, 1);
    put_postcard(&mut out, value);
    Bytes::from(out)
}

/// Decodes a one-struct payload of `tag` (version 1 = the untagged body).
fn decode_single<T: serde::de::DeserializeOwned>(bytes: &[u8], tag: Tag) -> Result<T, FormatError> {
    let what = tags::info(tag).map_or("payload", |i| i.name);
    match split_prefixed(bytes)? {
        Framed::Untagged(raw) => from_postcard(raw, what),
        Framed::Tagged {
            tag: found,
            version,
            body,
        } => {
            tags::check_exact(found, version, tag)?;
            from_postcard(body, what)
        }
    }
}

pub(crate) fn encode_reply(reply: &AppReply) -> Bytes {
    encode_tagged(tags::APP_REPLY, reply)
}

pub(crate) fn decode_reply(bytes: &[u8]) -> Result<AppReply, FormatError> {
    decode_single(bytes, tags::APP_REPLY)
}

pub(crate) fn encode_topic_record(topic: &TopicMeta) -> Bytes {
    encode_tagged(tags::TOPIC_RECORD, topic)
}

pub(crate) fn decode_topic_record(bytes: &[u8]) -> Result<TopicMeta, FormatError> {
    decode_single(bytes, tags::TOPIC_RECORD)
}

pub(crate) fn encode_cluster_record(cluster: &ClusterMeta) -> Bytes {
    encode_tagged(tags::CLUSTER_RECORD, cluster)
}

pub(crate) fn decode_cluster_record(bytes: &[u8]) -> Result<ClusterMeta, FormatError> {
    decode_single(bytes, tags::CLUSTER_RECORD)
}

pub(crate) fn encode_cluster_config_record(config: &ClusterConfig) -> Bytes {
    encode_tagged(tags::CLUSTER_CONFIG_RECORD, config)
}

pub(crate) fn decode_cluster_config_record(bytes: &[u8]) -> Result<ClusterConfig, FormatError> {
    decode_single(bytes, tags::CLUSTER_CONFIG_RECORD)
}

pub(crate) fn encode_scram_record(record: &ScramCredentialRecord) -> Bytes {
    encode_tagged(tags::SCRAM_CREDENTIAL_RECORD, record)
}

pub(crate) fn decode_scram_record(bytes: &[u8]) -> Result<ScramCredentialRecord, FormatError> {
    decode_single(bytes, tags::SCRAM_CREDENTIAL_RECORD)
}

pub(crate) fn encode_scram_bootstrap_record(bootstrapped: bool) -> Bytes {
    encode_tagged(tags::SCRAM_BOOTSTRAP_RECORD, &bootstrapped)
}

pub(crate) fn decode_scram_bootstrap_record(bytes: &[u8]) -> Result<bool, FormatError> {
    decode_single(bytes, tags::SCRAM_BOOTSTRAP_RECORD)
}

pub(crate) fn encode_acl_record(acl: &AclBinding) -> Bytes {
    encode_tagged(tags::ACL_RECORD, acl)
}

pub(crate) fn decode_acl_record(bytes: &[u8]) -> Result<AclBinding, FormatError> {
    decode_single(bytes, tags::ACL_RECORD)
}

/// The snapshot key of an ACL: its namespace, then the binding's postcard bytes (unique per
/// ACL, as the table is a set).
pub(crate) fn acl_key(acl: &AclBinding) -> Bytes {
    let mut out = vec![crate::cohort_app::NS_ACL];
    put_postcard(&mut out, acl);
    Bytes::from(out)
}
