//! The byte encoding of records. Big-endian integers, strings and byte strings as a u32
//! length then the bytes, optional fields behind a 0/1 byte.
//!
//! Decoding treats its input as hostile (the log can be corrupt, the decoder is fuzzed):
//! every length and count is checked against the bytes left before anything is allocated,
//! enumerations and flags are checked, trailing bytes are an error, nothing panics.

use crate::ids::{
    Generation, GroupId, GroupInstanceId, LeaderEpoch, MemberId, Offset, PartitionIndex,
    TimestampMs, TopicName,
};
use crate::record::group_metadata::{
    ClassicGroup, GroupState, InitialDelay, Member, PendingMember,
};
use crate::record::offset_commit::OffsetCommitValue;
use crate::record::{Record, RecordKey};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

const KEY_OFFSET_COMMIT: u16 = 1;
const KEY_GROUP_METADATA: u16 = 2;
const OFFSET_COMMIT_VERSION: u16 = 0;
const GROUP_METADATA_VERSION: u16 = 0;

const MEMBER_AWAITING_JOIN: u8 = 1;
const MEMBER_AWAITING_SYNC: u8 = 2;
const MEMBER_IS_NEW: u8 = 4;

/// Why bytes are not a record.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("truncated: {field} needs more bytes than remain")]
    Truncated { field: &'static str },
    #[error("{0} trailing bytes after the record")]
    TrailingBytes(usize),
    #[error("unknown record type {0}")]
    UnknownRecordType(u16),
    #[error("unsupported version {version} of record type {record_type}")]
    UnsupportedVersion { record_type: u16, version: u16 },
    #[error("{field} is not UTF-8")]
    InvalidUtf8 { field: &'static str },
    #[error("invalid value for {field}")]
    InvalidField { field: &'static str },
    #[error("{field} are not in strictly increasing order")]
    Unordered { field: &'static str },
}

pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(super) fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(super) fn i16(&mut self, v: i16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(super) fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(super) fn len(&mut self, n: usize) {
        // Every length we write is bounded by the coordinator's limits, far below 4 GiB.
        self.0
            .extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
    }
    pub(super) fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.0.extend_from_slice(v);
    }
    pub(super) fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    pub(super) fn opt_str(&mut self, v: Option<&str>) {
        match v {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    pub(super) fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                self.i64(x);
            }
        }
    }
}

pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated { field });
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    pub(super) fn array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let (head, tail) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(DecodeError::Truncated { field })?;
        self.0 = tail;
        Ok(*head)
    }
    pub(super) fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(field)?[0])
    }
    pub(super) fn bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::InvalidField { field }),
        }
    }
    pub(super) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }
    pub(super) fn i16(&mut self, field: &'static str) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array(field)?))
    }
    /// A value's version, which must be `expected` (the only one `record_type` has so far).
    pub(super) fn version(&mut self, expected: u16, record_type: u16) -> Result<(), DecodeError> {
        let version = self.u16("version")?;
        if version != expected {
            return Err(DecodeError::UnsupportedVersion {
                record_type,
                version,
            });
        }
        Ok(())
    }
    pub(super) fn i32(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array(field)?))
    }
    pub(super) fn i64(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }
    /// A count of elements each at least `min_size` bytes: a count the remaining bytes
    /// cannot hold is rejected before anything is allocated.
    pub(super) fn count(
        &mut self,
        min_size: usize,
        field: &'static str,
    ) -> Result<usize, DecodeError> {
        let n = u32::from_be_bytes(self.array(field)?) as usize;
        if n.saturating_mul(min_size.max(1)) > self.0.len() {
            return Err(DecodeError::Truncated { field });
        }
        Ok(n)
    }
    pub(super) fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let n = u32::from_be_bytes(self.array(field)?) as usize;
        self.take(n, field)
    }
    pub(super) fn string(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let raw = self.bytes(field)?;
        std::str::from_utf8(raw)
            .map(str::to_owned)
            .map_err(|_| DecodeError::InvalidUtf8 { field })
    }
    pub(super) fn opt_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<String>, DecodeError> {
        if self.bool(field)? {
            Ok(Some(self.string(field)?))
        } else {
            Ok(None)
        }
    }
    pub(super) fn opt_i64(&mut self, field: &'static str) -> Result<Option<i64>, DecodeError> {
        if self.bool(field)? {
            Ok(Some(self.i64(field)?))
        } else {
            Ok(None)
        }
    }
    pub(super) fn finish(self) -> Result<(), DecodeError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes(self.0.len()))
        }
    }
}

pub(crate) fn encode_key(key: &RecordKey) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    match key {
        RecordKey::OffsetCommit {
            group_id,
            topic,
            partition,
        } => {
            w.u16(KEY_OFFSET_COMMIT);
            w.str(group_id.as_str());
            w.str(topic.as_str());
            w.i32(partition.0);
        }
        RecordKey::GroupMetadata { group_id } => {
            w.u16(KEY_GROUP_METADATA);
            w.str(group_id.as_str());
        }
        RecordKey::Transaction { .. } | RecordKey::TxnOffsets { .. } => {
            super::codec_txn::encode_key(&mut w, key)
        }
        RecordKey::GroupConfig { group_id } => {
            super::codec_group_config::encode_key(&mut w, group_id)
        }
        other => super::codec_consumer::encode_key(&mut w, other),
    }
    w.0
}

pub(crate) fn decode_key(bytes: &[u8]) -> Result<RecordKey, DecodeError> {
    let mut r = Reader(bytes);
    let key = match r.u16("key type")? {
        KEY_OFFSET_COMMIT => RecordKey::OffsetCommit {
            group_id: GroupId::new(r.string("group id")?),
            topic: TopicName::new(r.string("topic")?),
            partition: PartitionIndex(r.i32("partition")?),
        },
        KEY_GROUP_METADATA => RecordKey::GroupMetadata {
            group_id: GroupId::new(r.string("group id")?),
        },
        tag @ (super::codec_txn::KEY_TRANSACTION | super::codec_txn::KEY_TXN_OFFSETS) => {
            super::codec_txn::decode_key(&mut r, tag)?
        }
        super::codec_group_config::KEY_GROUP_CONFIG => {
            super::codec_group_config::decode_key(&mut r)?
        }
        other => super::codec_consumer::decode_key(&mut r, other)?,
    };
    r.finish()?;
    Ok(key)
}

pub(crate) fn encode_value(record: &Record) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    match record {
        Record::OffsetCommit { value: None, .. } | Record::GroupMetadata { value: None, .. } => {}
        other if other.is_tombstone() => {}
        Record::OffsetCommit { value: Some(v), .. } => {
            w.u16(OFFSET_COMMIT_VERSION);
            w.i64(v.offset.0);
            w.i32(v.leader_epoch.0);
            w.str(&v.metadata);
            w.i64(v.commit_timestamp.0);
            w.opt_i64(v.expire_timestamp.map(|t| t.0));
        }
        Record::GroupMetadata { value: Some(g), .. } => {
            w.u16(GROUP_METADATA_VERSION);
            encode_group(&mut w, g);
        }
        Record::Transaction { .. } | Record::TxnOffsets { .. } => {
            super::codec_txn::encode_value(&mut w, record)
        }
        Record::GroupConfig { value: Some(v), .. } => {
            super::codec_group_config::encode_value(&mut w, v)
        }
        other => super::codec_consumer::encode_value(&mut w, other),
    }
    w.0
}

fn encode_group(w: &mut Writer, g: &ClassicGroup) {
    w.u8(g.state.tag());
    w.i64(g.state_timestamp.0);
    w.i32(g.generation.0);
    w.opt_str(g.protocol_type.as_deref());
    w.opt_str(g.protocol_name.as_deref());
    w.opt_str(g.leader.as_ref().map(MemberId::as_str));
    match g.initial_delay {
        None => w.u8(0),
        Some(d) => {
            w.u8(1);
            w.i32(d.delay_ms);
            w.i32(d.remaining_ms);
        }
    }
    w.u8(u8::from(g.new_member_added));
    w.opt_i64(g.join_deadline.map(|t| t.0));
    w.opt_i64(g.sync_deadline.map(|t| t.0));
    w.len(g.members.len());
    for (id, m) in &g.members {
        w.str(id.as_str());
        w.opt_str(m.group_instance_id.as_ref().map(GroupInstanceId::as_str));
        w.str(&m.client_id);
        w.str(&m.client_host);
        w.i32(m.rebalance_timeout_ms);
        w.i32(m.session_timeout_ms);
        w.str(&m.protocol_type);
        w.len(m.protocols.len());
        for (name, metadata) in &m.protocols {
            w.str(name);
            w.bytes(metadata);
        }
        w.bytes(&m.assignment);
        let mut flags = 0u8;
        if m.awaiting_join {
            flags |= MEMBER_AWAITING_JOIN;
        }
        if m.awaiting_sync {
            flags |= MEMBER_AWAITING_SYNC;
        }
        if m.is_new {
            flags |= MEMBER_IS_NEW;
        }
        w.u8(flags);
    }
    w.len(g.pending_members.len());
    for (id, p) in &g.pending_members {
        w.str(id.as_str());
        w.i32(p.session_timeout_ms);
    }
    w.len(g.pending_sync.len());
    for id in &g.pending_sync {
        w.str(id.as_str());
    }
}

/// The exact length of a group record's value, without encoding it: membership handlers
/// check it against `Config::group_record_max_bytes` on every change that can grow a group.
pub(crate) fn group_value_len(g: &ClassicGroup) -> usize {
    const LEN: usize = 4;
    let opt_str = |s: Option<&str>| 1 + s.map_or(0, |s| LEN + s.len());
    let mut n = 2 + 1 + 8 + 4;
    n += opt_str(g.protocol_type.as_deref());
    n += opt_str(g.protocol_name.as_deref());
    n += opt_str(g.leader.as_ref().map(MemberId::as_str));
    n += 1 + if g.initial_delay.is_some() { 8 } else { 0 };
    n += 1;
    n += 1 + if g.join_deadline.is_some() { 8 } else { 0 };
    n += 1 + if g.sync_deadline.is_some() { 8 } else { 0 };
    n += LEN;
    for (id, m) in &g.members {
        n += LEN + id.as_str().len();
        n += opt_str(m.group_instance_id.as_ref().map(GroupInstanceId::as_str));
        n += LEN + m.client_id.len() + LEN + m.client_host.len();
        n += 4 + 4;
        n += LEN + m.protocol_type.len();
        n += LEN;
        for (name, metadata) in &m.protocols {
            n += LEN + name.len() + LEN + metadata.len();
        }
        n += LEN + m.assignment.len();
        n += 1;
    }
    n += LEN;
    for id in g.pending_members.keys() {
        n += LEN + id.as_str().len() + 4;
    }
    n += LEN;
    for id in &g.pending_sync {
        n += LEN + id.as_str().len();
    }
    n
}

pub(crate) fn decode(key: &[u8], value: &[u8]) -> Result<Record, DecodeError> {
    let key = decode_key(key)?;
    match key {
        RecordKey::OffsetCommit {
            group_id,
            topic,
            partition,
        } => {
            let value = if value.is_empty() {
                None
            } else {
                Some(decode_offset_value(value)?)
            };
            Ok(Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value,
            })
        }
        RecordKey::GroupMetadata { group_id } => {
            let value = if value.is_empty() {
                None
            } else {
                Some(Box::new(decode_group_value(value)?))
            };
            Ok(Record::GroupMetadata { group_id, value })
        }
        key @ (RecordKey::Transaction { .. } | RecordKey::TxnOffsets { .. }) => {
            super::codec_txn::decode_value(key, value)
        }
        RecordKey::GroupConfig { group_id } => Ok(Record::GroupConfig {
            group_id,
            value: super::codec_group_config::decode_value(value)?,
        }),
        other => super::codec_consumer::decode_value(other, value),
    }
}

fn decode_offset_value(bytes: &[u8]) -> Result<OffsetCommitValue, DecodeError> {
    let mut r = Reader(bytes);
    r.version(OFFSET_COMMIT_VERSION, KEY_OFFSET_COMMIT)?;
    let value = OffsetCommitValue {
        offset: Offset(r.i64("offset")?),
        leader_epoch: LeaderEpoch(r.i32("leader epoch")?),
        metadata: r.string("metadata")?,
        commit_timestamp: TimestampMs(r.i64("commit timestamp")?),
        expire_timestamp: r.opt_i64("expire timestamp")?.map(TimestampMs),
    };
    r.finish()?;
    Ok(value)
}

fn decode_group_value(bytes: &[u8]) -> Result<ClassicGroup, DecodeError> {
    let mut r = Reader(bytes);
    r.version(GROUP_METADATA_VERSION, KEY_GROUP_METADATA)?;
    let state = GroupState::from_tag(r.u8("state")?)
        .filter(|s| *s != GroupState::Dead)
        .ok_or(DecodeError::InvalidField { field: "state" })?;
    let state_timestamp = TimestampMs(r.i64("state timestamp")?);
    let generation = Generation(r.i32("generation")?);
    let protocol_type = r.opt_string("protocol type")?;
    let protocol_name = r.opt_string("protocol name")?;
    let leader = r.opt_string("leader")?.map(MemberId::new);
    let initial_delay = if r.bool("initial delay")? {
        Some(InitialDelay {
            delay_ms: r.i32("initial delay")?,
            remaining_ms: r.i32("initial delay remaining")?,
        })
    } else {
        None
    };
    let new_member_added = r.bool("new member added")?;
    let join_deadline = r.opt_i64("join deadline")?.map(TimestampMs);
    let sync_deadline = r.opt_i64("sync deadline")?.map(TimestampMs);

    // A member takes at least 4+1+4+4+4+4+4+4+4+1 bytes.
    let member_count = r.count(38, "members")?;
    let mut members = BTreeMap::new();
    for _ in 0..member_count {
        let id = MemberId::new(r.string("member id")?);
        let group_instance_id = r.opt_string("instance id")?.map(GroupInstanceId::new);
        let client_id = r.string("client id")?;
        let client_host = r.string("client host")?;
        let rebalance_timeout_ms = r.i32("rebalance timeout")?;
        let session_timeout_ms = r.i32("session timeout")?;
        let protocol_type = r.string("member protocol type")?;
        let protocol_count = r.count(8, "protocols")?;
        let mut protocols = Vec::with_capacity(protocol_count);
        for _ in 0..protocol_count {
            let name = r.string("protocol name")?;
            let metadata = Bytes::copy_from_slice(r.bytes("protocol metadata")?);
            protocols.push((name, metadata));
        }
        let assignment = Bytes::copy_from_slice(r.bytes("assignment")?);
        let flags = r.u8("member flags")?;
        if flags & !(MEMBER_AWAITING_JOIN | MEMBER_AWAITING_SYNC | MEMBER_IS_NEW) != 0 {
            return Err(DecodeError::InvalidField {
                field: "member flags",
            });
        }
        let member = Member {
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            protocols,
            assignment,
            awaiting_join: flags & MEMBER_AWAITING_JOIN != 0,
            awaiting_sync: flags & MEMBER_AWAITING_SYNC != 0,
            is_new: flags & MEMBER_IS_NEW != 0,
        };
        // Strictly increasing ids: no duplicates, and one encoding per group.
        if members
            .last_key_value()
            .is_some_and(|(last, _)| *last >= id)
        {
            return Err(DecodeError::Unordered { field: "members" });
        }
        members.insert(id, member);
    }
    let pending_count = r.count(8, "pending members")?;
    let mut pending_members = BTreeMap::new();
    for _ in 0..pending_count {
        let id = MemberId::new(r.string("pending member id")?);
        let session_timeout_ms = r.i32("pending session timeout")?;
        if pending_members
            .last_key_value()
            .is_some_and(|(last, _)| *last >= id)
        {
            return Err(DecodeError::Unordered {
                field: "pending members",
            });
        }
        pending_members.insert(id, PendingMember { session_timeout_ms });
    }
    let sync_count = r.count(4, "pending sync")?;
    let mut pending_sync = BTreeSet::new();
    for _ in 0..sync_count {
        let id = MemberId::new(r.string("pending sync member")?);
        if pending_sync.last().is_some_and(|last| *last >= id) {
            return Err(DecodeError::Unordered {
                field: "pending sync",
            });
        }
        pending_sync.insert(id);
    }
    r.finish()?;
    Ok(ClassicGroup {
        state,
        state_timestamp,
        generation,
        protocol_type,
        protocol_name,
        leader,
        members,
        pending_members,
        pending_sync,
        initial_delay,
        new_member_added,
        join_deadline,
        sync_deadline,
    })
}

/// The byte forms of a record, through this module's functions.
impl Record {
    /// The key's bytes: a 2-byte type tag, then the key fields.
    pub fn encode_key(&self) -> Vec<u8> {
        encode_key(&self.key())
    }

    /// The value's bytes: a 2-byte version, then the fields; empty for a tombstone.
    pub fn encode_value(&self) -> Vec<u8> {
        encode_value(self)
    }

    /// Decodes a record from its key and value bytes. Never panics; garbage is an error.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Record, DecodeError> {
        decode(key, value)
    }
}

impl RecordKey {
    pub fn encode(&self) -> Vec<u8> {
        encode_key(self)
    }

    pub fn decode(key: &[u8]) -> Result<RecordKey, DecodeError> {
        decode_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::group_metadata::PendingMember;

    #[test]
    fn group_value_len_is_the_encoded_length() {
        let mut g = ClassicGroup::new(TimestampMs(1));
        assert_eq!(group_value_len(&g), encode_value_of(&g).len());
        g.protocol_type = Some("consumer".into());
        g.leader = Some("m".into());
        g.initial_delay = Some(InitialDelay {
            delay_ms: 1,
            remaining_ms: 2,
        });
        g.join_deadline = Some(TimestampMs(5));
        g.members.insert(
            "m".into(),
            Member {
                group_instance_id: Some("i".into()),
                client_id: "c".into(),
                client_host: "h".into(),
                rebalance_timeout_ms: 1,
                session_timeout_ms: 2,
                protocol_type: "consumer".into(),
                protocols: vec![("range".into(), Bytes::from_static(b"abc"))],
                assignment: Bytes::from_static(b"xy"),
                awaiting_join: true,
                awaiting_sync: false,
                is_new: false,
            },
        );
        g.pending_members.insert(
            "p".into(),
            PendingMember {
                session_timeout_ms: 3,
            },
        );
        g.pending_sync.insert("m".into());
        assert_eq!(group_value_len(&g), encode_value_of(&g).len());
    }

    fn encode_value_of(g: &ClassicGroup) -> Vec<u8> {
        encode_value(&Record::GroupMetadata {
            group_id: "g".into(),
            value: Some(Box::new(g.clone())),
        })
    }
}
