//! The byte encoding of the consumer-protocol records and the topic record, in the same
//! format as the classic ones (`codec.rs`): a u16 key type, a u16 value version, big-endian
//! integers, u32-length strings, 0/1-prefixed options; decoding checks every length and order
//! and fails on anything else. Golden bytes: `coordinator/tests/codec_consumer.rs`.
//!
//! | key type | key fields          | value (version 0)                                          |
//! |----------|---------------------|------------------------------------------------------------|
//! | 3        | group               | group epoch i32, assignment epoch i32                      |
//! | 4        | group, member       | instance?, rack?, client id, client host, [topic name], regex?, assignor?, rebalance timeout i32 |
//! | 4 (v1)   | group, member       | version 0's fields, then a classic member's session timeout i32 and [protocol name, metadata bytes] |
//! | 5        | group, member       | assignment                                                 |
//! | 6        | group, member       | member epoch i32, previous epoch i32, state u8, assigned, pending revocation |
//! | 7        | topic name          | topic id u128, partitions i32                              |
//!
//! A member record is written at version 0 unless the member uses the classic protocol inside
//! a consumer group (online migration), which version 1 adds; a version-0 reader refuses a
//! version-1 value by name (fail closed), never half-reads it.
//!
//! An assignment is a u32 topic count, then per topic (ids strictly increasing) the 16-byte id,
//! a u32 partition count and the partitions (strictly increasing, at least one).

use super::assignment::Assignment;
use super::codec::{DecodeError, Reader, Writer};
use super::consumer_group::{
    ClassicMemberMetadata, ConsumerGroupValue, ConsumerMemberValue, CurrentAssignment, MemberState,
    TopicValue,
};
use super::{Record, RecordKey};
use crate::ids::{GroupId, GroupInstanceId, MemberId, PartitionIndex, TopicId, TopicName};
use bytes::Bytes;
use std::collections::BTreeMap;

pub(super) const KEY_CONSUMER_GROUP: u16 = 3;
pub(super) const KEY_CONSUMER_MEMBER: u16 = 4;
pub(super) const KEY_CONSUMER_TARGET: u16 = 5;
pub(super) const KEY_CONSUMER_CURRENT: u16 = 6;
pub(super) const KEY_TOPIC: u16 = 7;
const VERSION: u16 = 0;
/// The member record of a classic member of a consumer group.
const MEMBER_CLASSIC_VERSION: u16 = 1;

pub(super) fn encode_key(w: &mut Writer, key: &RecordKey) {
    let (tag, group, member) = match key {
        RecordKey::ConsumerGroup { group_id } => (KEY_CONSUMER_GROUP, group_id, None),
        RecordKey::ConsumerMember {
            group_id,
            member_id,
        } => (KEY_CONSUMER_MEMBER, group_id, Some(member_id)),
        RecordKey::ConsumerTarget {
            group_id,
            member_id,
        } => (KEY_CONSUMER_TARGET, group_id, Some(member_id)),
        RecordKey::ConsumerCurrent {
            group_id,
            member_id,
        } => (KEY_CONSUMER_CURRENT, group_id, Some(member_id)),
        RecordKey::Topic { name } => {
            w.u16(KEY_TOPIC);
            w.str(name.as_str());
            return;
        }
        // The classic keys are written by `codec.rs`.
        RecordKey::OffsetCommit { .. }
        | RecordKey::GroupMetadata { .. }
        | RecordKey::Transaction { .. }
        | RecordKey::TxnOffsets { .. }
        | RecordKey::GroupConfig { .. } => return,
    };
    w.u16(tag);
    w.str(group.as_str());
    if let Some(member) = member {
        w.str(member.as_str());
    }
}

pub(super) fn decode_key(r: &mut Reader<'_>, tag: u16) -> Result<RecordKey, DecodeError> {
    let group = |r: &mut Reader<'_>| -> Result<GroupId, DecodeError> {
        Ok(GroupId::new(r.string("group id")?))
    };
    let member = |r: &mut Reader<'_>| -> Result<MemberId, DecodeError> {
        Ok(MemberId::new(r.string("member id")?))
    };
    Ok(match tag {
        KEY_CONSUMER_GROUP => RecordKey::ConsumerGroup {
            group_id: group(r)?,
        },
        KEY_CONSUMER_MEMBER => RecordKey::ConsumerMember {
            group_id: group(r)?,
            member_id: member(r)?,
        },
        KEY_CONSUMER_TARGET => RecordKey::ConsumerTarget {
            group_id: group(r)?,
            member_id: member(r)?,
        },
        KEY_CONSUMER_CURRENT => RecordKey::ConsumerCurrent {
            group_id: group(r)?,
            member_id: member(r)?,
        },
        KEY_TOPIC => RecordKey::Topic {
            name: TopicName::new(r.string("topic")?),
        },
        other => return Err(DecodeError::UnknownRecordType(other)),
    })
}

fn u128(w: &mut Writer, v: u128) {
    w.0.extend_from_slice(&v.to_be_bytes());
}

fn read_u128(r: &mut Reader<'_>, field: &'static str) -> Result<u128, DecodeError> {
    Ok(u128::from_be_bytes(r.array(field)?))
}

fn encode_assignment(w: &mut Writer, a: &Assignment) {
    let topics: Vec<_> = a.topics().collect();
    w.len(topics.len());
    for (topic, partitions) in topics {
        u128(w, topic.0);
        w.len(partitions.len());
        for p in partitions {
            w.i32(p.0);
        }
    }
}

fn decode_assignment(r: &mut Reader<'_>) -> Result<Assignment, DecodeError> {
    // A topic takes at least 16 + 4 + 4 bytes.
    let count = r.count(24, "assignment topics")?;
    let mut topics: BTreeMap<TopicId, Vec<PartitionIndex>> = BTreeMap::new();
    for _ in 0..count {
        let topic = TopicId(read_u128(r, "assignment topic id")?);
        if topics
            .last_key_value()
            .is_some_and(|(last, _)| *last >= topic)
        {
            return Err(DecodeError::Unordered {
                field: "assignment topics",
            });
        }
        let n = r.count(4, "assignment partitions")?;
        if n == 0 {
            return Err(DecodeError::InvalidField {
                field: "assignment partitions",
            });
        }
        let mut partitions = Vec::with_capacity(n);
        for _ in 0..n {
            let p = PartitionIndex(r.i32("assignment partition")?);
            if partitions.last().is_some_and(|last| *last >= p) {
                return Err(DecodeError::Unordered {
                    field: "assignment partitions",
                });
            }
            partitions.push(p);
        }
        topics.insert(topic, partitions);
    }
    Ok(Assignment::from_sorted_topics(topics))
}

pub(super) fn encode_value(w: &mut Writer, record: &Record) {
    match record {
        Record::ConsumerGroup { value: Some(v), .. } => {
            w.u16(VERSION);
            w.i32(v.group_epoch);
            w.i32(v.assignment_epoch);
        }
        Record::ConsumerMember { value: Some(v), .. } => {
            w.u16(if v.classic.is_some() {
                MEMBER_CLASSIC_VERSION
            } else {
                VERSION
            });
            w.opt_str(v.instance_id.as_ref().map(GroupInstanceId::as_str));
            w.opt_str(v.rack_id.as_deref());
            w.str(&v.client_id);
            w.str(&v.client_host);
            w.len(v.subscribed_topic_names.len());
            for name in &v.subscribed_topic_names {
                w.str(name.as_str());
            }
            w.opt_str(v.subscribed_topic_regex.as_deref());
            w.opt_str(v.server_assignor.as_deref());
            w.i32(v.rebalance_timeout_ms);
            if let Some(classic) = &v.classic {
                w.i32(classic.session_timeout_ms);
                w.len(classic.protocols.len());
                for (name, metadata) in &classic.protocols {
                    w.str(name);
                    w.bytes(metadata);
                }
            }
        }
        Record::ConsumerTarget { value: Some(a), .. } => {
            w.u16(VERSION);
            encode_assignment(w, a);
        }
        Record::ConsumerCurrent { value: Some(c), .. } => {
            w.u16(VERSION);
            w.i32(c.member_epoch);
            w.i32(c.previous_member_epoch);
            w.u8(c.state.tag());
            encode_assignment(w, &c.assigned);
            encode_assignment(w, &c.pending_revocation);
        }
        Record::Topic { value: Some(t), .. } => {
            w.u16(VERSION);
            u128(w, t.id.0);
            w.i32(t.partitions);
        }
        // Tombstones have an empty value; classic records are written by `codec.rs`.
        _ => {}
    }
}

/// Decodes the value of a consumer-protocol or topic key; empty bytes are a tombstone.
pub(super) fn decode_value(key: RecordKey, value: &[u8]) -> Result<Record, DecodeError> {
    let tombstone = value.is_empty();
    let mut r = Reader(value);
    let record = match key {
        RecordKey::ConsumerGroup { group_id } => Record::ConsumerGroup {
            group_id,
            value: if tombstone {
                None
            } else {
                r.version(VERSION, KEY_CONSUMER_GROUP)?;
                Some(ConsumerGroupValue {
                    group_epoch: r.i32("group epoch")?,
                    assignment_epoch: r.i32("assignment epoch")?,
                })
            },
        },
        RecordKey::ConsumerMember {
            group_id,
            member_id,
        } => Record::ConsumerMember {
            group_id,
            member_id,
            value: if tombstone {
                None
            } else {
                let version = r.u16("version")?;
                if version != VERSION && version != MEMBER_CLASSIC_VERSION {
                    return Err(DecodeError::UnsupportedVersion {
                        record_type: KEY_CONSUMER_MEMBER,
                        version,
                    });
                }
                let instance_id = r.opt_string("instance id")?.map(GroupInstanceId::new);
                let rack_id = r.opt_string("rack id")?;
                let client_id = r.string("client id")?;
                let client_host = r.string("client host")?;
                let n = r.count(4, "subscribed topics")?;
                let mut subscribed_topic_names = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = TopicName::new(r.string("subscribed topic")?);
                    if subscribed_topic_names
                        .last()
                        .is_some_and(|last: &TopicName| *last >= name)
                    {
                        return Err(DecodeError::Unordered {
                            field: "subscribed topics",
                        });
                    }
                    subscribed_topic_names.push(name);
                }
                let subscribed_topic_regex = r.opt_string("regex")?;
                let server_assignor = r.opt_string("server assignor")?;
                let rebalance_timeout_ms = r.i32("rebalance timeout")?;
                let classic = if version == MEMBER_CLASSIC_VERSION {
                    let session_timeout_ms = r.i32("session timeout")?;
                    let n = r.count(8, "classic protocols")?;
                    let mut protocols = Vec::with_capacity(n);
                    for _ in 0..n {
                        let name = r.string("protocol name")?;
                        let metadata = Bytes::copy_from_slice(r.bytes("protocol metadata")?);
                        protocols.push((name, metadata));
                    }
                    Some(ClassicMemberMetadata {
                        session_timeout_ms,
                        protocols,
                    })
                } else {
                    None
                };
                Some(Box::new(ConsumerMemberValue {
                    instance_id,
                    rack_id,
                    client_id,
                    client_host,
                    subscribed_topic_names,
                    subscribed_topic_regex,
                    server_assignor,
                    rebalance_timeout_ms,
                    classic,
                }))
            },
        },
        RecordKey::ConsumerTarget {
            group_id,
            member_id,
        } => Record::ConsumerTarget {
            group_id,
            member_id,
            value: if tombstone {
                None
            } else {
                r.version(VERSION, KEY_CONSUMER_TARGET)?;
                Some(decode_assignment(&mut r)?)
            },
        },
        RecordKey::ConsumerCurrent {
            group_id,
            member_id,
        } => Record::ConsumerCurrent {
            group_id,
            member_id,
            value: if tombstone {
                None
            } else {
                r.version(VERSION, KEY_CONSUMER_CURRENT)?;
                Some(Box::new(CurrentAssignment {
                    member_epoch: r.i32("member epoch")?,
                    previous_member_epoch: r.i32("previous member epoch")?,
                    state: MemberState::from_tag(r.u8("member state")?),
                    assigned: decode_assignment(&mut r)?,
                    pending_revocation: decode_assignment(&mut r)?,
                }))
            },
        },
        RecordKey::Topic { name } => Record::Topic {
            name,
            value: if tombstone {
                None
            } else {
                r.version(VERSION, KEY_TOPIC)?;
                Some(TopicValue {
                    id: TopicId(read_u128(&mut r, "topic id")?),
                    partitions: r.i32("partitions")?,
                })
            },
        },
        RecordKey::OffsetCommit { .. }
        | RecordKey::GroupMetadata { .. }
        | RecordKey::Transaction { .. }
        | RecordKey::TxnOffsets { .. }
        | RecordKey::GroupConfig { .. } => return Err(DecodeError::InvalidField { field: "key" }),
    };
    r.finish()?;
    Ok(record)
}
