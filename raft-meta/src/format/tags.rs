//! The registry of payload type tags: every tagged payload's type, what it is, and the newest
//! version this binary writes (and therefore the newest it reads).
//!
//! Adding a payload type:
//!  1. pick the next free tag in its kind's range below, add a `pub const` and a row in
//!     [`REGISTRY`] (version 1);
//!  2. write its encoder/decoder next to the type (commands: `cohort_app/codec.rs`);
//!  3. add a golden sample for it in `raft-meta/tests/golden.rs`: the registry test fails until
//!     every (tag, version) has one.
//!
//! Changing a payload type's layout (a field added, removed, reordered or retyped): bump its
//! row's `newest`, keep the previous layout's decoder (for postcard bodies, a frozen copy of
//! the old struct converted to the new one), and add a golden sample for the new version;
//! the old version's sample stays and must keep decoding. Never reuse or renumber a tag.
//! Write the new version only once every node of a cluster runs a binary that reads it: an
//! older node refuses it (and stops) rather than misreading it.
//!
//! Ranges: 0x01xx Raft machinery files, 0x02xx commands (Raft entry payloads), 0x03xx replies,
//! 0x04xx snapshot records of the Cohort application, 0x05xx the broker's data-directory
//! files. Coordinator records (offsets, groups) have their own type and version fields, owned
//! by `coordinator::record` (key type 1 = offset commit, 2 = group metadata, 3–7 the consumer
//! protocol and the topic image, 8 = transaction, 9 = pending transactional offsets,
//! 10 = group config overrides).

use std::fmt;

use super::FormatError;

/// A payload type tag.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag(pub u16);

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match info(*self) {
            Some(i) => write!(f, "{:#06x}({})", self.0, i.name),
            None => write!(f, "{:#06x}", self.0),
        }
    }
}

/// What a tagged payload is, so a payload found in the wrong place is refused by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file the Raft machinery keeps under `<data-dir>/raft`.
    RaftFile,
    /// One command of a Raft log entry.
    Command,
    /// What applying a command answered (crosses nodes when a write was forwarded).
    Reply,
    /// A record of a snapshot (the value; the key carries a namespace byte).
    SnapshotRecord,
    /// A file of the broker's data directory outside `raft/`.
    DataFile,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::RaftFile => "raft file",
            Kind::Command => "command",
            Kind::Reply => "reply",
            Kind::SnapshotRecord => "snapshot record",
            Kind::DataFile => "data-directory file",
        }
    }
}

/// One row of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagInfo {
    pub tag: Tag,
    pub name: &'static str,
    pub kind: Kind,
    /// The version this binary writes; it reads 1..=newest.
    pub newest: u16,
}

pub const SNAPSHOT_META: Tag = Tag(0x0101);
pub const SEGMENT_STORE_STATE: Tag = Tag(0x0102);
pub const STORE_FORMAT: Tag = Tag(0x0103);

pub const JOIN_GROUP: Tag = Tag(0x0201);
pub const SYNC_GROUP: Tag = Tag(0x0202);
pub const LEAVE_GROUP: Tag = Tag(0x0203);
pub const COMMIT_OFFSETS: Tag = Tag(0x0204);
pub const DELETE_OFFSETS: Tag = Tag(0x0205);
pub const DELETE_GROUPS: Tag = Tag(0x0206);
pub const TIMER_FIRED: Tag = Tag(0x0207);
pub const EXPIRE_OFFSETS: Tag = Tag(0x0208);
pub const TOPICS_DELETED: Tag = Tag(0x0209);
pub const CREATE_TOPICS: Tag = Tag(0x020a);
pub const DELETE_TOPICS: Tag = Tag(0x020b);
pub const INIT_CLUSTER: Tag = Tag(0x020c);
pub const ALLOCATE_PRODUCER_IDS: Tag = Tag(0x020d);
pub const CONSUMER_GROUP_HEARTBEAT: Tag = Tag(0x020e);
pub const INSTALL_TARGET_ASSIGNMENT: Tag = Tag(0x020f);
pub const TOPICS_CHANGED: Tag = Tag(0x0210);
pub const INIT_CLUSTER_CONFIG: Tag = Tag(0x0211);
pub const ALTER_CLUSTER_CONFIG: Tag = Tag(0x0212);
pub const ALTER_TOPIC_CONFIGS: Tag = Tag(0x0213);
pub const CREATE_PARTITIONS: Tag = Tag(0x0214);
pub const INIT_TRANSACTIONAL_PRODUCER: Tag = Tag(0x0215);
pub const ADD_PARTITIONS_TO_TXN: Tag = Tag(0x0216);
pub const ADD_OFFSETS_TO_TXN: Tag = Tag(0x0217);
pub const END_TXN: Tag = Tag(0x0218);
pub const TXN_MARKERS_WRITTEN: Tag = Tag(0x0219);
pub const TXN_OFFSET_COMMIT: Tag = Tag(0x021a);
pub const ALTER_SCRAM_CREDENTIALS: Tag = Tag(0x0221);
pub const BOOTSTRAP_SCRAM_CREDENTIALS: Tag = Tag(0x0222);
pub const ALTER_GROUP_CONFIGS: Tag = Tag(0x0229);
pub const CREATE_ACLS: Tag = Tag(0x0223);
pub const DELETE_ACLS: Tag = Tag(0x0224);

pub const APP_REPLY: Tag = Tag(0x0301);

pub const TOPIC_RECORD: Tag = Tag(0x0401);
pub const CLUSTER_RECORD: Tag = Tag(0x0402);
pub const CLUSTER_CONFIG_RECORD: Tag = Tag(0x0403);
pub const SCRAM_CREDENTIAL_RECORD: Tag = Tag(0x0421);
pub const SCRAM_BOOTSTRAP_RECORD: Tag = Tag(0x0422);
pub const ACL_RECORD: Tag = Tag(0x0423);

const fn row(tag: Tag, name: &'static str, kind: Kind, newest: u16) -> TagInfo {
    TagInfo {
        tag,
        name,
        kind,
        newest,
    }
}

/// Every tag this binary knows.
pub const REGISTRY: &[TagInfo] = &[
    row(SNAPSHOT_META, "snapshot meta", Kind::RaftFile, 1),
    row(
        SEGMENT_STORE_STATE,
        "segment store state",
        Kind::RaftFile,
        1,
    ),
    row(STORE_FORMAT, "log store format", Kind::RaftFile, 1),
    row(JOIN_GROUP, "JoinGroup command", Kind::Command, 1),
    row(SYNC_GROUP, "SyncGroup command", Kind::Command, 1),
    row(LEAVE_GROUP, "LeaveGroup command", Kind::Command, 1),
    row(COMMIT_OFFSETS, "CommitOffsets command", Kind::Command, 1),
    row(DELETE_OFFSETS, "DeleteOffsets command", Kind::Command, 1),
    row(DELETE_GROUPS, "DeleteGroups command", Kind::Command, 1),
    row(TIMER_FIRED, "TimerFired command", Kind::Command, 1),
    row(EXPIRE_OFFSETS, "ExpireOffsets command", Kind::Command, 1),
    row(TOPICS_DELETED, "TopicsDeleted command", Kind::Command, 1),
    row(CREATE_TOPICS, "CreateTopics command", Kind::Command, 1),
    row(DELETE_TOPICS, "DeleteTopics command", Kind::Command, 1),
    row(INIT_CLUSTER, "InitCluster command", Kind::Command, 1),
    row(
        ALLOCATE_PRODUCER_IDS,
        "AllocateProducerIds command",
        Kind::Command,
        1,
    ),
    row(
        CONSUMER_GROUP_HEARTBEAT,
        "ConsumerGroupHeartbeat command",
        Kind::Command,
        1,
    ),
    row(
        INSTALL_TARGET_ASSIGNMENT,
        "InstallTargetAssignment command",
        Kind::Command,
        1,
    ),
    row(TOPICS_CHANGED, "TopicsChanged command", Kind::Command, 1),
    row(
        INIT_CLUSTER_CONFIG,
        "InitClusterConfig command",
        Kind::Command,
        1,
    ),
    row(
        ALTER_CLUSTER_CONFIG,
        "AlterClusterConfig command",
        Kind::Command,
        1,
    ),
    row(
        ALTER_TOPIC_CONFIGS,
        "AlterTopicConfigs command",
        Kind::Command,
        1,
    ),
    row(
        CREATE_PARTITIONS,
        "CreatePartitions command",
        Kind::Command,
        1,
    ),
    row(
        INIT_TRANSACTIONAL_PRODUCER,
        "InitTransactionalProducer command",
        Kind::Command,
        1,
    ),
    row(
        ADD_PARTITIONS_TO_TXN,
        "AddPartitionsToTxn command",
        Kind::Command,
        1,
    ),
    row(
        ADD_OFFSETS_TO_TXN,
        "AddOffsetsToTxn command",
        Kind::Command,
        1,
    ),
    row(END_TXN, "EndTxn command", Kind::Command, 1),
    row(
        TXN_MARKERS_WRITTEN,
        "TxnMarkersWritten command",
        Kind::Command,
        1,
    ),
    row(
        TXN_OFFSET_COMMIT,
        "TxnOffsetCommit command",
        Kind::Command,
        1,
    ),
    row(
        ALTER_SCRAM_CREDENTIALS,
        "AlterScramCredentials command",
        Kind::Command,
        1,
    ),
    row(
        BOOTSTRAP_SCRAM_CREDENTIALS,
        "BootstrapScramCredentials command",
        Kind::Command,
        1,
    ),
    row(
        ALTER_GROUP_CONFIGS,
        "AlterGroupConfigs command",
        Kind::Command,
        1,
    ),
    row(CREATE_ACLS, "CreateAcls command", Kind::Command, 1),
    row(DELETE_ACLS, "DeleteAcls command", Kind::Command, 1),
    row(APP_REPLY, "application reply", Kind::Reply, 1),
    row(TOPIC_RECORD, "topic record", Kind::SnapshotRecord, 1),
    row(CLUSTER_RECORD, "cluster record", Kind::SnapshotRecord, 1),
    row(
        CLUSTER_CONFIG_RECORD,
        "cluster config record",
        Kind::SnapshotRecord,
        1,
    ),
    row(
        SCRAM_CREDENTIAL_RECORD,
        "SCRAM credential record",
        Kind::SnapshotRecord,
        1,
    ),
    row(
        SCRAM_BOOTSTRAP_RECORD,
        "SCRAM bootstrap record",
        Kind::SnapshotRecord,
        1,
    ),
    row(ACL_RECORD, "ACL record", Kind::SnapshotRecord, 1),
];

/// The registry row of `tag`.
pub fn info(tag: Tag) -> Option<&'static TagInfo> {
    REGISTRY.iter().find(|i| i.tag == tag)
}

/// Checks that `tag` is a known `kind` and `version` one this binary reads; returns its row.
pub fn check_kind(tag: Tag, version: u16, kind: Kind) -> Result<&'static TagInfo, FormatError> {
    let Some(info) = info(tag) else {
        return Err(FormatError::UnknownTag {
            tag: tag.0,
            expected: kind.name(),
        });
    };
    if info.kind != kind {
        return Err(FormatError::Misplaced {
            tag: tag.0,
            name: info.name,
            expected: kind.name(),
        });
    }
    check_version(info, version)
}

/// Checks a payload found where only `expected` belongs (a file, a record of a namespace).
pub fn check_exact(tag: Tag, version: u16, expected: Tag) -> Result<&'static TagInfo, FormatError> {
    let want = info(expected).map_or("payload", |i| i.name);
    match info(tag) {
        Some(found) if found.tag == expected => check_version(found, version),
        Some(found) => Err(FormatError::Misplaced {
            tag: tag.0,
            name: found.name,
            expected: want,
        }),
        None => Err(FormatError::UnknownTag {
            tag: tag.0,
            expected: want,
        }),
    }
}

fn check_version(info: &'static TagInfo, version: u16) -> Result<&'static TagInfo, FormatError> {
    if version > info.newest {
        return Err(FormatError::NewerVersion {
            name: info.name,
            version,
            newest: info.newest,
        });
    }
    if version == 0 {
        return Err(FormatError::UnknownVersion {
            name: info.name,
            version,
        });
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn tags_and_names_are_unique_and_in_their_kind_range() {
        let tags: BTreeSet<u16> = REGISTRY.iter().map(|i| i.tag.0).collect();
        let names: BTreeSet<&str> = REGISTRY.iter().map(|i| i.name).collect();
        assert_eq!(tags.len(), REGISTRY.len(), "a tag is listed twice");
        assert_eq!(names.len(), REGISTRY.len(), "a name is listed twice");
        for i in REGISTRY {
            let range = match i.kind {
                Kind::RaftFile => 0x01,
                Kind::Command => 0x02,
                Kind::Reply => 0x03,
                Kind::SnapshotRecord => 0x04,
                Kind::DataFile => 0x05,
            };
            assert_eq!(i.tag.0 >> 8, range, "{} outside its kind's range", i.name);
            assert!(i.newest >= 1);
        }
    }

    #[test]
    fn check_refuses_unknown_tags_wrong_kinds_and_newer_versions() {
        assert!(check_kind(JOIN_GROUP, 1, Kind::Command).is_ok());
        assert!(matches!(
            check_kind(Tag(0x02ff), 1, Kind::Command),
            Err(FormatError::UnknownTag { tag: 0x02ff, .. })
        ));
        assert!(matches!(
            check_kind(APP_REPLY, 1, Kind::Command),
            Err(FormatError::Misplaced { .. })
        ));
        assert!(matches!(
            check_exact(TOPIC_RECORD, 1, CLUSTER_RECORD),
            Err(FormatError::Misplaced { .. })
        ));
        assert!(matches!(
            check_exact(Tag(0x04ff), 1, CLUSTER_RECORD),
            Err(FormatError::UnknownTag { .. })
        ));
        assert!(matches!(
            check_kind(JOIN_GROUP, 2, Kind::Command),
            Err(FormatError::NewerVersion {
                version: 2,
                newest: 1,
                ..
            })
        ));
        assert!(matches!(
            check_kind(JOIN_GROUP, 0, Kind::Command),
            Err(FormatError::UnknownVersion { .. })
        ));
    }
}
