//! Cohort's replicated application: the group coordinator and the broker's topic metadata in
//! one Raft state machine.
//!
//! ```text
//!  binary ─ Envelope { origin, body } ─► MetaNode::write ─► Raft log ─► every replica:
//!     CohortApp::decode(bytes) ─► Envelope   (codec: tagged, versioned; refusal halts the node)
//!     CohortApp::apply(index, envelope)
//!        ├─ body Group(cmd)      ─► CoordinatorState::apply ─► Outcome
//!        ├─ body CreateTopics    ─► TopicTable::create (per topic)
//!        ├─ body DeleteTopics    ─► TopicTable::delete + coordinator TopicsDeleted
//!        ├─ InitCluster / AllocateProducerIds ─► ClusterMeta
//!        ├─ InitClusterConfig / AlterClusterConfig ─► ClusterConfig ─► the coordinator's Config
//!        ├─ AlterTopicConfigs    ─► TopicTable::alter_configs (compare-and-set)
//!        ├─ CreatePartitions     ─► TopicTable::add_partitions + coordinator TopicsChanged
//!        ├─ AlterScramCredentials / BootstrapScramCredentials ─► ScramTable
//!        ├─ CreateAcls / DeleteAcls ─► AclTable (read by the broker's authorizer)
//!        ├─ returns AppReply bytes to the writer (raft)
//!        └─ pushes Effect { origin, outcome } to the sink, in log order
//!                └─► the node's coordinator runtime (acts on it only while it leads)
//! ```
//!
//! Why effects go through a sink and not only through the write's reply: a JoinGroup's reply
//! can be "parked" and completed by a *later* command's member replies. If the writer learned
//! of its parking from the write's return value, a member reply applied just after could reach
//! the runtime first. One consumer reading effects in apply order makes that impossible.
//!
//! Snapshot records carry a namespace byte before their key: [`NS_GROUP`] + the coordinator's
//! record key, [`NS_TOPIC`] + topic name, [`NS_CLUSTER`], [`NS_CONFIG`] (once configured),
//! [`NS_SCRAM`] + mechanism type + user name (one per credential) and [`NS_SCRAM`] alone (the
//! bootstrap mark, once bootstrapped), [`NS_ACL`] + the binding's postcard bytes (one per
//! ACL). Byte layouts: [`codec`] and `crate::format`.

pub mod acl;
mod codec;
pub mod scram;
pub mod topics;

use std::sync::Arc;

use bytes::Bytes;
use std::collections::BTreeMap;

use coordinator::{
    ClusterConfig, ConfigChange, ConfigError, CoordinatorState, Outcome, TimestampMs, TopicName,
    WriteCommand,
};
use serde::{Deserialize, Serialize};

use crate::app::{Application, Record, RestoreError, Undecodable};
pub use crate::format::FormatError;
use crate::types::{LogIndex, NodeId};
pub use acl::{
    AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPatternType, AclPermission,
    AclResourceType, AclTable,
};
pub use scram::{
    check_change as check_scram_change, ScramChangeError, ScramCredentialRecord,
    ScramMechanismType, ScramOp, ScramTable, StoredScramCredential, UserScramChange,
};
pub use topics::{
    ClusterMeta, PartitionsAdded, TopicChangeError, TopicConfigChange, TopicLimits, TopicMeta,
    TopicTable,
};

/// Namespace byte of coordinator records in snapshots.
pub const NS_GROUP: u8 = 1;
/// Namespace byte of topic records in snapshots.
pub const NS_TOPIC: u8 = 2;
/// Namespace byte of the cluster record in snapshots.
pub const NS_CLUSTER: u8 = 3;
/// Namespace byte of the replicated configuration's record in snapshots.
pub const NS_CONFIG: u8 = 4;
/// Namespace byte of SCRAM credential records (and of the bootstrap mark) in snapshots.
pub const NS_SCRAM: u8 = 5;
/// Namespace byte of ACL records in snapshots.
pub const NS_ACL: u8 = 6;

/// Most producer ids one command may reserve.
pub const PRODUCER_ID_BLOCK_MAX: u32 = 1_000_000;

/// Names the request a command came from, so the node that submitted it can find the waiting
/// responder when the command is applied. `incarnation` is drawn at process start: a restarted
/// node replaying its log never mistakes an old command for one of its new requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestToken {
    pub node: NodeId,
    pub incarnation: u64,
    pub seq: u64,
}

/// What one replicated command carries. Its bytes are [`Envelope::encode`]'s, never serde's:
/// each command kind is tagged and versioned on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// `None` for commands no client waits on (timers, expiry).
    pub origin: Option<RequestToken>,
    pub body: Body,
}

// Group commands are nearly every command; boxing them would add an allocation to each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Group(WriteCommand),
    /// Topics fully planned by the leader (id, placement, configs); each is created unless its
    /// name is taken or a limit is reached.
    CreateTopics {
        topics: Vec<TopicMeta>,
    },
    /// Topics removed by name; the coordinator drops their offsets (`TopicsDeleted`).
    DeleteTopics {
        names: Vec<String>,
        now_ms: TimestampMs,
    },
    /// Sets the cluster id if none is set yet (the first leader proposes one).
    InitCluster {
        cluster_id: String,
    },
    /// Reserves `count` producer ids.
    AllocateProducerIds {
        count: u32,
    },
    /// The static layer of the replicated configuration, from the proposing leader's flags:
    /// set if the cluster has none yet (`replace` false: the first leader's flags win), or
    /// replacing it (`replace` true: a one-voter node's flags after a restart).
    InitClusterConfig {
        static_values: BTreeMap<String, i64>,
        replace: bool,
    },
    /// Changes to the dynamic layer (IncrementalAlterConfigs on the cluster-wide BROKER
    /// resource): all of them or, when one is refused, none.
    AlterClusterConfig {
        changes: Vec<ConfigChange>,
    },
    /// A topic's configs replaced, if unchanged since the writer read them.
    AlterTopicConfigs(TopicConfigChange),
    /// Partitions added to a topic; consumer groups using it get a new epoch.
    CreatePartitions(PartitionsAdded),
    /// AlterUserScramCredentials: each change applied unless refused (answered in order).
    AlterScramCredentials {
        changes: Vec<UserScramChange>,
    },
    /// A leader's `--scram-user` credentials: applied once per cluster.
    BootstrapScramCredentials {
        credentials: Vec<ScramCredentialRecord>,
    },
    /// Incremental/AlterConfigs on a GROUP resource: the group's overrides, validated by the
    /// coordinator at this log position (decision 0146).
    AlterGroupConfigs(coordinator::group_config::AlterGroupConfigs),
    /// CreateAcls: each ACL added unless refused (answered in order).
    CreateAcls {
        acls: Vec<AclBinding>,
    },
    /// DeleteAcls: every ACL any filter matches removed; answered per filter.
    DeleteAcls {
        filters: Vec<AclFilter>,
    },
}

impl Envelope {
    /// The command's bytes: tagged by command kind, at the newest version.
    pub fn encode(&self) -> Bytes {
        codec::encode_envelope(self)
    }

    /// Reads any version this binary ever wrote; refuses unknown kinds and newer versions.
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_envelope(bytes)
    }
}

/// What `apply` answers the writer (through Raft's reply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AppReply {
    /// A group command: its outcome went to the effect sink.
    Group,
    CreateTopics(Vec<Result<TopicMeta, TopicChangeError>>),
    DeleteTopics(Vec<Result<TopicMeta, TopicChangeError>>),
    /// The cluster id in force after the command (the first one proposed wins).
    ClusterId(String),
    /// The first of the reserved producer ids.
    ProducerIds {
        first: i64,
    },
    /// The command was out of bounds; nothing changed.
    Rejected(String),
    /// The replicated configuration in force after a config command, or why it was refused
    /// (nothing changed then).
    ClusterConfig(Result<ClusterConfig, ConfigError>),
    /// AlterTopicConfigs, CreatePartitions: the topic after the change, or why nothing changed.
    TopicAltered(Result<TopicMeta, TopicChangeError>),
    /// AlterScramCredentials: one answer per change, in order.
    ScramAltered(Vec<Result<(), ScramChangeError>>),
    /// BootstrapScramCredentials: whether it was applied (false: the cluster had been
    /// bootstrapped before).
    ScramBootstrapped(bool),
    /// AlterGroupConfigs: the group's overrides after the change, or why nothing changed.
    GroupConfigs(
        Result<
            coordinator::group_config::GroupConfigs,
            coordinator::group_config::GroupConfigError,
        >,
    ),
    /// CreateAcls: one answer per ACL, in order (`Err`: why it was refused).
    AclsCreated(Vec<Result<(), String>>),
    /// DeleteAcls: per filter, the ACLs it matched and that were removed.
    AclsDeleted(Vec<Vec<AclBinding>>),
}

impl AppReply {
    pub fn encode(&self) -> Bytes {
        codec::encode_reply(self)
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_reply(bytes)
    }
}

impl TopicMeta {
    /// The value of this topic's snapshot record.
    pub fn encode_record(&self) -> Bytes {
        codec::encode_topic_record(self)
    }

    pub fn decode_record(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_topic_record(bytes)
    }
}

impl ClusterMeta {
    /// The value of the cluster's snapshot record.
    pub fn encode_record(&self) -> Bytes {
        codec::encode_cluster_record(self)
    }

    pub fn decode_record(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_cluster_record(bytes)
    }
}

impl ScramCredentialRecord {
    /// The value of this credential's snapshot record.
    pub fn encode_record(&self) -> Bytes {
        codec::encode_scram_record(self)
    }

    pub fn decode_record(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_scram_record(bytes)
    }
}

impl AclBinding {
    /// The value of this ACL's snapshot record.
    pub fn encode_record(&self) -> Bytes {
        codec::encode_acl_record(self)
    }

    pub fn decode_record(bytes: &[u8]) -> Result<Self, FormatError> {
        codec::decode_acl_record(bytes)
    }
}

/// The value of the SCRAM bootstrap mark's snapshot record.
pub fn encode_scram_bootstrap_record(bootstrapped: bool) -> Bytes {
    codec::encode_scram_bootstrap_record(bootstrapped)
}

pub fn decode_scram_bootstrap_record(bytes: &[u8]) -> Result<bool, FormatError> {
    codec::decode_scram_bootstrap_record(bytes)
}

/// The value of the replicated configuration's snapshot record.
pub fn encode_cluster_config_record(config: &ClusterConfig) -> Bytes {
    codec::encode_cluster_config_record(config)
}

pub fn decode_cluster_config_record(bytes: &[u8]) -> Result<ClusterConfig, FormatError> {
    codec::decode_cluster_config_record(bytes)
}

/// What applying a command means for the node's runtime, pushed in log order.
// Group outcomes are nearly every effect; boxing them would add an allocation to each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Effect {
    /// A group command's outcome (also the coordinator side of a topic deletion).
    Group {
        origin: Option<RequestToken>,
        index: LogIndex,
        /// The timer whose firing this is, for metrics (expirations, retention).
        fired: Option<coordinator::TimerKey>,
        outcome: Outcome,
    },
    /// Topics appeared or disappeared: nodes create or remove the partition logs they own.
    TopicsChanged {
        created: Vec<Arc<TopicMeta>>,
        deleted: Vec<Arc<TopicMeta>>,
    },
    /// The whole state was replaced by a snapshot: whatever was derived from it is stale.
    Restored,
}

/// Where effects go; the binary's runtime supplies it. It must not block (it runs inside the
/// state machine's apply).
pub type EffectSink = Arc<dyn Fn(Effect) + Send + Sync>;

/// The application: coordinator state, topic table, cluster meta, replicated configuration.
pub struct CohortApp {
    coordinator: CoordinatorState,
    topics: TopicTable,
    cluster: ClusterMeta,
    /// `None` until the first leader's flags are applied (and in logs older than that): the
    /// coordinator then decides with this node's flags, as before replicated configuration.
    cluster_config: Option<ClusterConfig>,
    scram: ScramTable,
    acls: AclTable,
    /// This node's `--scram-user` credentials, hashed: what it proposes as the bootstrap.
    scram_flags: Vec<ScramCredentialRecord>,
    /// This node's own flags: the static layer it proposes, and the base of the fields that
    /// are not replicated.
    flags: coordinator::Config,
    /// Whether this node already said its flags disagree with the cluster's (once per process).
    disagreement_told: bool,
    sink: Option<EffectSink>,
}

impl CohortApp {
    pub fn new(config: coordinator::Config, limits: TopicLimits, sink: Option<EffectSink>) -> Self {
        Self {
            coordinator: CoordinatorState::new(config.clone()),
            topics: TopicTable::new(limits),
            cluster: ClusterMeta::default(),
            cluster_config: None,
            scram: ScramTable::default(),
            acls: AclTable::default(),
            scram_flags: Vec::new(),
            flags: config,
            disagreement_told: false,
            sink,
        }
    }

    /// With this node's `--scram-user` credentials (already hashed), which it proposes as the
    /// cluster's bootstrap credentials when it leads a cluster that has none yet.
    pub fn with_scram_flags(mut self, credentials: Vec<ScramCredentialRecord>) -> Self {
        self.scram_flags = credentials;
        self
    }

    /// The cluster's SCRAM credentials.
    pub fn scram(&self) -> &ScramTable {
        &self.scram
    }

    /// The cluster's ACLs.
    pub fn acls(&self) -> &AclTable {
        &self.acls
    }

    /// What a leader proposes when it becomes active: its flags' credentials, if it has some
    /// and the cluster was never bootstrapped.
    pub fn scram_bootstrap_to_propose(&self) -> Option<Body> {
        (!self.scram_flags.is_empty() && !self.scram.bootstrapped()).then(|| {
            Body::BootstrapScramCredentials {
                credentials: self.scram_flags.clone(),
            }
        })
    }

    /// The replicated configuration, once the cluster has one.
    pub fn cluster_config(&self) -> Option<&ClusterConfig> {
        self.cluster_config.as_ref()
    }

    /// The configuration this node's flags give (what it proposes as the static layer).
    pub fn flags_config(&self) -> &coordinator::Config {
        &self.flags
    }

    /// Makes `config` the one in force: every replica calls this at the same log position, so
    /// every replica decides with the same values.
    fn install_config(&mut self, config: ClusterConfig) -> Result<(), ConfigError> {
        let effective = config.effective(&self.flags)?;
        self.tell_disagreement(&config);
        self.coordinator.set_config(effective);
        self.cluster_config = Some(config);
        Ok(())
    }

    /// Says once per process which of this node's flags the replicated values override.
    fn tell_disagreement(&mut self, config: &ClusterConfig) {
        if self.disagreement_told {
            return;
        }
        self.disagreement_told = true;
        let differ = config.disagreements(&self.flags);
        if differ.is_empty() {
            return;
        }
        let list = differ
            .iter()
            .map(|(key, flag, cluster)| format!("{key}={cluster} (flag {flag})"))
            .collect::<Vec<_>>()
            .join(", ");
        tracing::warn!(
            "this node's flags differ from the cluster's replicated configuration: {list}; \
             a one-voter node adopts its flags when it leads, a cluster of several keeps the \
             replicated values (change them with IncrementalAlterConfigs on the BROKER resource)"
        );
    }

    pub fn coordinator(&self) -> &CoordinatorState {
        &self.coordinator
    }

    pub fn topics(&self) -> &TopicTable {
        &self.topics
    }

    pub fn cluster(&self) -> &ClusterMeta {
        &self.cluster
    }

    fn emit(&self, effect: Effect) {
        if let Some(sink) = &self.sink {
            sink(effect);
        }
    }

    /// The coordinator's topic image follows the topic table at the same log position on
    /// every replica (consumer groups subscribed to a changed topic get a new epoch); its
    /// outcome goes to the sink like any group command's.
    fn topic_image_changed(
        &mut self,
        index: LogIndex,
        now_ms: TimestampMs,
        upserted: Vec<coordinator::TopicMetadata>,
        deleted: Vec<TopicName>,
    ) {
        let outcome =
            self.coordinator
                .apply(&WriteCommand::TopicsChanged(coordinator::TopicsChanged {
                    now_ms,
                    upserted,
                    deleted,
                }));
        self.emit(Effect::Group {
            origin: None,
            index,
            fired: None,
            outcome,
        });
    }

    fn apply_body(
        &mut self,
        index: LogIndex,
        origin: Option<RequestToken>,
        body: Body,
    ) -> AppReply {
        match body {
            Body::Group(command) => {
                let outcome = self.coordinator.apply(&command);
                let fired = match command {
                    WriteCommand::TimerFired { key, .. } => Some(key),
                    _ => None,
                };
                self.emit(Effect::Group {
                    origin,
                    index,
                    fired,
                    outcome,
                });
                AppReply::Group
            }
            Body::CreateTopics { topics } => {
                let mut created = Vec::new();
                let results = topics
                    .into_iter()
                    .map(|t| {
                        self.topics.create(t).map(|t| {
                            created.push(t.clone());
                            (*t).clone()
                        })
                    })
                    .collect();
                if !created.is_empty() {
                    let upserted = created.iter().map(|t| topic_metadata(t)).collect();
                    self.topic_image_changed(index, TimestampMs(0), upserted, Vec::new());
                    self.emit(Effect::TopicsChanged {
                        created,
                        deleted: Vec::new(),
                    });
                }
                AppReply::CreateTopics(results)
            }
            Body::DeleteTopics { names, now_ms } => {
                let mut deleted = Vec::new();
                let results = names
                    .iter()
                    .map(|n| {
                        self.topics.delete(n).map(|t| {
                            deleted.push(t.clone());
                            (*t).clone()
                        })
                    })
                    .collect();
                if !deleted.is_empty() {
                    let names = deleted.iter().map(|t| TopicName::new(&*t.name)).collect();
                    self.topic_image_changed(index, now_ms, Vec::new(), names);
                    self.emit(Effect::TopicsChanged {
                        created: Vec::new(),
                        deleted,
                    });
                }
                AppReply::DeleteTopics(results)
            }
            Body::AlterTopicConfigs(change) => {
                // Partitions pick up new configs from the topic table (retention, segment size,
                // max message size): nothing to emit beyond the table's new version.
                let result = self.topics.alter_configs(change);
                AppReply::TopicAltered(result.map(|t| (*t).clone()))
            }
            Body::CreatePartitions(change) => {
                let result = self.topics.add_partitions(change);
                if let Ok(topic) = &result {
                    let upserted = vec![topic_metadata(topic)];
                    self.topic_image_changed(index, TimestampMs(0), upserted, Vec::new());
                }
                AppReply::TopicAltered(result.map(|t| (*t).clone()))
            }
            Body::AlterGroupConfigs(change) => {
                let result = self.coordinator.alter_group_configs(&change);
                match &result {
                    Ok(configs) => tracing::info!(group = change.group_id.as_str(),
                        configs = ?configs, "group configs altered"),
                    Err(e) => tracing::debug!(
                        group = change.group_id.as_str(),
                        error = e.message(),
                        "group config change refused"
                    ),
                }
                AppReply::GroupConfigs(result)
            }
            Body::AlterScramCredentials { changes } => {
                let users: Vec<String> = changes.iter().map(|c| c.user.clone()).collect();
                let results = self.scram.alter(changes);
                for (user, result) in users.iter().zip(&results) {
                    // Names and outcomes only: never a salt or a key.
                    match result {
                        Ok(()) => tracing::info!(user = %user, "SCRAM credential changed"),
                        Err(e) => {
                            tracing::info!(user = %user, error = %e, "SCRAM credential change refused")
                        }
                    }
                }
                AppReply::ScramAltered(results)
            }
            Body::BootstrapScramCredentials { credentials } => {
                let count = credentials.len();
                let applied = self.scram.bootstrap(credentials);
                if applied {
                    tracing::info!(
                        credentials = count,
                        "SCRAM credentials bootstrapped from the leader's --scram-user flags"
                    );
                }
                AppReply::ScramBootstrapped(applied)
            }
            Body::CreateAcls { acls } => {
                let results = self.acls.create(acls);
                tracing::info!(
                    created = results.iter().filter(|r| r.is_ok()).count(),
                    refused = results.iter().filter(|r| r.is_err()).count(),
                    total = self.acls.len(),
                    "ACLs created"
                );
                AppReply::AclsCreated(results)
            }
            Body::DeleteAcls { filters } => {
                let removed = self.acls.delete(&filters);
                tracing::info!(
                    removed = removed.iter().map(Vec::len).sum::<usize>(),
                    total = self.acls.len(),
                    "ACLs deleted"
                );
                AppReply::AclsDeleted(removed)
            }
            Body::InitCluster { cluster_id } => {
                let id = self.cluster.cluster_id.get_or_insert(cluster_id).clone();
                AppReply::ClusterId(id)
            }
            Body::AllocateProducerIds { count } => {
                if count == 0 || count > PRODUCER_ID_BLOCK_MAX {
                    return AppReply::Rejected(format!(
                        "producer id block of {count} outside 1..={PRODUCER_ID_BLOCK_MAX}"
                    ));
                }
                let first = self.cluster.next_producer_id;
                match first.checked_add(i64::from(count)) {
                    Some(next) => {
                        self.cluster.next_producer_id = next;
                        AppReply::ProducerIds { first }
                    }
                    None => AppReply::Rejected("producer ids exhausted".to_owned()),
                }
            }
            Body::InitClusterConfig {
                static_values,
                replace,
            } => {
                let next = match (&self.cluster_config, replace) {
                    (Some(current), false) => {
                        return AppReply::ClusterConfig(Ok(current.clone()));
                    }
                    (Some(current), true) => ClusterConfig {
                        static_values,
                        dynamic_values: current.dynamic_values.clone(),
                    },
                    (None, _) => ClusterConfig {
                        static_values,
                        dynamic_values: BTreeMap::new(),
                    },
                };
                self.answer_config(next)
            }
            Body::AlterClusterConfig { changes } => {
                let current = self
                    .cluster_config
                    .clone()
                    .unwrap_or_else(|| ClusterConfig::from_flags(&self.flags));
                match current.altered(&changes, &self.flags) {
                    Ok(next) => self.answer_config(next),
                    Err(e) => AppReply::ClusterConfig(Err(e)),
                }
            }
        }
    }

    fn answer_config(&mut self, next: ClusterConfig) -> AppReply {
        match self.install_config(next.clone()) {
            Ok(()) => {
                tracing::info!(
                    dynamic = ?next.dynamic_values,
                    "cluster configuration in force"
                );
                AppReply::ClusterConfig(Ok(next))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cluster configuration refused; the previous one stays");
                AppReply::ClusterConfig(Err(e))
            }
        }
    }
}

impl Application for CohortApp {
    type Command = Envelope;

    fn admit(command: &[u8]) -> Result<(), Undecodable> {
        codec::admit_command(command).map_err(|e| Undecodable(e.to_string()))
    }

    fn decode(command: &[u8]) -> Result<Envelope, Undecodable> {
        Envelope::decode(command).map_err(|e| Undecodable(e.to_string()))
    }

    fn apply(&mut self, index: LogIndex, command: Envelope) -> Bytes {
        let Envelope { origin, body } = command;
        self.apply_body(index, origin, body).encode()
    }

    fn snapshot_records(&self) -> Vec<Record> {
        let mut out = Vec::with_capacity(
            self.coordinator.offset_count()
                + self.coordinator.group_count()
                + self.topics.len()
                + 1,
        );
        for record in self.coordinator.snapshot_records() {
            out.push(Record {
                key: prefixed(NS_GROUP, &record.encode_key()),
                value: Bytes::from(record.encode_value()),
            });
        }
        for topic in self.topics.iter() {
            out.push(Record {
                key: prefixed(NS_TOPIC, topic.name.as_bytes()),
                value: topic.encode_record(),
            });
        }
        out.push(Record {
            key: Bytes::from_static(&[NS_CLUSTER]),
            value: self.cluster.encode_record(),
        });
        if let Some(config) = &self.cluster_config {
            out.push(Record {
                key: Bytes::from_static(&[NS_CONFIG]),
                value: encode_cluster_config_record(config),
            });
        }
        for (user, mechanism, credential) in self.scram.iter() {
            let record = ScramCredentialRecord {
                user: user.to_owned(),
                mechanism,
                credential: credential.clone(),
            };
            out.push(Record {
                key: scram_key(user, mechanism),
                value: record.encode_record(),
            });
        }
        if self.scram.bootstrapped() {
            out.push(Record {
                key: Bytes::from_static(&[NS_SCRAM]),
                value: codec::encode_scram_bootstrap_record(true),
            });
        }
        for acl in self.acls.iter() {
            out.push(Record {
                key: codec::acl_key(acl),
                value: codec::encode_acl_record(acl),
            });
        }
        out
    }

    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError> {
        // Replaying records reads no setting: the configuration is installed at the end.
        let mut coordinator = CoordinatorState::new(self.flags.clone());
        let mut topics = Vec::new();
        let mut cluster = ClusterMeta::default();
        let mut cluster_config = None;
        let mut scram_records = Vec::new();
        let mut scram_bootstrapped = false;
        let mut acls = Vec::new();
        for record in records {
            let Some((&ns, key)) = record.key.split_first() else {
                return Err(RestoreError(
                    "a snapshot record has an empty key".to_owned(),
                ));
            };
            match ns {
                NS_GROUP => {
                    let r = coordinator::Record::decode(key, &record.value)
                        .map_err(|e| RestoreError(format!("group record: {e}")))?;
                    coordinator.replay(&r);
                }
                NS_CONFIG => {
                    let c = decode_cluster_config_record(&record.value)
                        .map_err(|e| RestoreError(format!("cluster config record: {e}")))?;
                    cluster_config = Some(c);
                }
                NS_SCRAM if key.is_empty() => {
                    scram_bootstrapped = codec::decode_scram_bootstrap_record(&record.value)
                        .map_err(|e| RestoreError(format!("SCRAM bootstrap record: {e}")))?;
                }
                NS_SCRAM => {
                    let r = codec::decode_scram_record(&record.value)
                        .map_err(|e| RestoreError(format!("SCRAM credential record: {e}")))?;
                    if scram_key(&r.user, r.mechanism)[1..] != *key {
                        return Err(RestoreError(format!(
                            "a SCRAM credential record of user {:?} under another user's key",
                            r.user
                        )));
                    }
                    scram_records.push(r);
                }
                NS_ACL => {
                    let acl = codec::decode_acl_record(&record.value)
                        .map_err(|e| RestoreError(format!("ACL record: {e}")))?;
                    if codec::acl_key(&acl) != record.key {
                        return Err(RestoreError(format!(
                            "an ACL record of {acl:?} under another ACL's key"
                        )));
                    }
                    acls.push(acl);
                }
                NS_TOPIC => {
                    let t = TopicMeta::decode_record(&record.value)
                        .map_err(|e| RestoreError(format!("topic record: {e}")))?;
                    if t.name.as_bytes() != key {
                        return Err(RestoreError(format!(
                            "topic record under key {:?} holds topic {:?}",
                            String::from_utf8_lossy(key),
                            t.name
                        )));
                    }
                    topics.push(t);
                }
                NS_CLUSTER => {
                    cluster = ClusterMeta::decode_record(&record.value)
                        .map_err(|e| RestoreError(format!("cluster record: {e}")))?;
                }
                other => {
                    return Err(RestoreError(format!(
                        "snapshot record in unknown namespace {other}"
                    )))
                }
            }
        }
        if let Some(c) = &cluster_config {
            let config = c
                .effective(&self.flags)
                .map_err(|e| RestoreError(format!("cluster config record: {e}")))?;
            coordinator.set_config(config);
            self.tell_disagreement(c);
        }
        // A snapshot written before the coordinator kept a topic image has none: rebuild it
        // from the topic table (the same on every replica restoring this snapshot).
        coordinator.sync_topic_image(topics.iter().map(topic_metadata));
        self.coordinator = coordinator;
        self.topics.restore(topics);
        self.cluster = cluster;
        self.cluster_config = cluster_config;
        self.scram.restore(scram_records, scram_bootstrapped);
        self.acls.restore(acls);
        self.emit(Effect::Restored);
        Ok(())
    }
}

/// A topic as the coordinator's image holds it.
fn topic_metadata(t: &TopicMeta) -> coordinator::TopicMetadata {
    coordinator::TopicMetadata {
        name: TopicName::new(&*t.name),
        id: coordinator::TopicId(t.id),
        partitions: i32::try_from(t.partitions.len()).unwrap_or(i32::MAX),
    }
}

/// The snapshot key of a credential: namespace, Kafka's mechanism type, the user name.
fn scram_key(user: &str, mechanism: ScramMechanismType) -> Bytes {
    let mut out = Vec::with_capacity(user.len() + 2);
    out.push(NS_SCRAM);
    out.push(mechanism.kafka_type().to_be_bytes()[0]);
    out.extend_from_slice(user.as_bytes());
    Bytes::from(out)
}

fn prefixed(ns: u8, key: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.push(ns);
    out.extend_from_slice(key);
    Bytes::from(out)
}

#[cfg(test)]
mod tests;
