//! One topic partition: a `compaction::Log` of record batches, its producer state and its high
//! watermark. Every method blocks on disk; callers run them with `spawn_blocking`.
//!
//! ```text
//!  append(batch)                        (writer lock held)
//!    producer check ─ duplicate ──────> original offsets, nothing written
//!    rebase: base offset := log end, leader epoch := LEADER_EPOCH (in place, CRC untouched)
//!    log.append(one entry = the whole batch, as it came)
//!                                       (writer lock released)
//!    fsync mode: log.sync_to(end) ── group commit with every concurrent appender
//!    high watermark := durable end ─> wakes long-polling fetches
//! ```
//!
//! The high watermark is what consumers may read. With fsync before ack (the default) it is
//! the durable end, so nothing a consumer sees can vanish in a crash; with `--flush-ms` it is
//! the log end, as in Kafka.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use bytes::{Bytes, BytesMut};
use compaction::{Entry, Log, LogConfig, LogError, Offset, RetentionPolicy, TimestampMs};
use protocol::batch::control::{decode_control_batch, ControlType};
use protocol::batch::{self, BatchError, BatchHeader};
use tokio::sync::watch;
use uuid::Uuid;

use super::epochs::{self, LeaderEpochCache};
use super::producers::{ActiveProducer, ProducerSnapshot, ProducerStates, SequenceError, Verdict};
use super::records::FetchRecords;
use super::transactions::{self, Transactions};
use super::txn_index::{self, AbortedTxn, INDEX_SUFFIX, SNAPSHOT_SUFFIX, TXN_DIR};
use crate::topics::{TopicConfigs, TopicSpec};

/// The leader epoch written into batches, reported in Metadata, DescribeTopicPartitions and
/// ListOffsets, checked in Fetch and ListOffsets and answered by OffsetForLeaderEpoch:
/// leadership never moves while partitions have one replica, so every partition is in its
/// first epoch (decision 0124). The epochs of a partition's log are read back from its
/// batches at open (`epochs`), so data written under other epochs would be answered right.
pub const LEADER_EPOCH: i32 = 0;

/// Why an append was refused.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The batch itself.
    #[error(transparent)]
    Batch(#[from] BatchError),
    /// Larger than `max.message.bytes`.
    #[error("record batch of {size} bytes exceeds max.message.bytes {max}")]
    TooLarge {
        /// Batch size.
        size: usize,
        /// The topic's limit.
        max: usize,
    },
    /// Idempotence rules.
    #[error(transparent)]
    Sequence(#[from] SequenceError),
    /// A non-transactional batch from a producer whose transaction is open (Kafka's
    /// `InvalidTxnStateException`).
    #[error("producer {producer_id} wrote a non-transactional batch inside its open transaction")]
    OpenTransaction {
        /// The producer.
        producer_id: i64,
    },
    /// A transactional batch that would start a transaction in this partition without a
    /// verification of the producer's transaction that still holds (none was made, or a marker
    /// of the producer was written since): Kafka's `InvalidTxnStateException` from
    /// `UnifiedLog`'s verification-guard check (KIP-890, decision 0165).
    #[error("producer {producer_id} epoch {producer_epoch}: transactional batch not verified against its transaction")]
    UnverifiedTransaction {
        /// The producer.
        producer_id: i64,
        /// Its epoch in the batch.
        producer_epoch: i16,
    },
    /// What the marker writer handed in is not a transaction marker.
    #[error("not a transaction marker: {0}")]
    NotAMarker(BatchError),
    /// The log.
    #[error(transparent)]
    Log(#[from] LogError),
}

/// Why a read was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Below the log start or above the log end.
    #[error("offset {offset} is outside [{start}, {end}]")]
    OffsetOutOfRange {
        /// Asked for.
        offset: i64,
        /// Log start.
        start: i64,
        /// Log end.
        end: i64,
    },
    /// The log.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A stored batch that does not decode (looking inside it for a timestamp).
    #[error(transparent)]
    Batch(#[from] BatchError),
}

/// Where an accepted batch landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Offset of its first record.
    pub base_offset: i64,
    /// The log start offset afterwards.
    pub log_start_offset: i64,
    /// Whether it was a resend of a batch already in the log.
    pub duplicate: bool,
}

/// A batch written but maybe not durable yet: where it went, and the log end that must be
/// durable before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appending {
    /// Where it went.
    pub appended: Appended,
    durable_at: Offset,
}

/// What a fetch read: whole batches, their large parts left in the segment files (sent with
/// `sendfile(2)`), the rest slices of the log's read buffers (not copied).
#[derive(Debug, Clone, Default)]
pub struct ReadBatches {
    /// The batches, in offset order.
    pub records: FetchRecords,
    /// Their total size.
    pub bytes: usize,
    /// The offset after the last batch read (`None`: nothing read).
    pub next_offset: Option<i64>,
}

impl ReadBatches {
    /// The batches as one buffer (copies, reading the file parts; for tests).
    pub fn concatenated(&self) -> Result<Bytes, LogError> {
        self.records.to_bytes()
    }
}

/// The marker written in each partition directory: which topic incarnation owns it.
#[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct PartitionMarker {
    /// Topic name.
    pub topic: String,
    /// Topic id.
    pub topic_id: Uuid,
    /// Partition index.
    pub partition: i32,
}

/// Marker file name.
pub const MARKER_FILE: &str = "partition.json";
/// The log start offset DeleteRecords moved, when it is above the first segment's base
/// (Kafka's `log-start-offset-checkpoint`): decimal, in a checked atomic file.
pub const LOG_START_FILE: &str = "log-start-offset";

/// The marker of the partition directory `dir`, if it has a readable one.
pub fn read_marker(dir: &Path) -> Option<PartitionMarker> {
    let bytes = compaction::read_file_checked(dir, MARKER_FILE).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// One partition.
#[derive(Debug)]
pub struct Partition {
    /// Topic name.
    pub topic: String,
    /// Topic id (a re-created topic is another incarnation).
    pub topic_id: Uuid,
    /// Partition index.
    pub index: i32,
    dir: PathBuf,
    log: Log,
    /// Serializes offset assignment and producer checks (appends are ordered by it).
    writer: Mutex<Writer>,
    /// Open transactions, the last stable offset and the aborted transactions
    /// (`transactions`); locked after `writer` when both are.
    txns: Mutex<Transactions>,
    /// `<dir>/txn`: the segments' `.txnindex` files and the producer state snapshots.
    txn_dir: PathBuf,
    high_watermark: watch::Sender<i64>,
    /// True: acknowledge only fsynced writes (and show consumers only those).
    sync_before_ack: bool,
    /// The topic's configs in force here; replaced when the catalog's change (see
    /// [`Partition::apply_configs`]).
    settings: RwLock<Settings>,
    /// The log start offset DeleteRecords set (persisted in [`LOG_START_FILE`] before it is
    /// used); the log start is the larger of it and the first segment's base. The lock also
    /// serializes DeleteRecords calls.
    deleted_before: Mutex<i64>,
    /// Which epoch starts where in the log (OffsetForLeaderEpoch); rebuilt from the batches at
    /// open, ending with [`LEADER_EPOCH`] assigned at the log end as the partition is taken.
    epochs: Mutex<LeaderEpochCache>,
}

/// A verification of a producer's transaction in progress for one partition (KIP-890's
/// `VerificationGuard`): see [`Partition::start_txn_verification`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnGuard {
    /// The producer.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    id: u64,
}

/// What appends serialize on.
#[derive(Debug)]
struct Writer {
    producers: ProducerStates,
    /// Verifications in progress (KIP-890's `VerificationStateEntry`): producer id → (epoch,
    /// guard id) while the coordinator is asked whether the partition is in its transaction.
    /// Dropped when the batch opens the transaction or a marker of the producer is written.
    verifying: std::collections::HashMap<i64, (i16, u64)>,
    /// The next guard id.
    next_guard: u64,
    /// The base of the segment taking appends as last seen: when the log's differs, it rolled
    /// and the sealed segment's `.txnindex` and a snapshot are written.
    active_base: i64,
}

/// What a partition takes from its topic's configs.
#[derive(Debug, Clone)]
struct Settings {
    /// The configs these were derived from.
    configs: TopicConfigs,
    max_message_bytes: usize,
    retention: RetentionPolicy,
    retention_deletes: bool,
}

impl Settings {
    fn of(configs: &TopicConfigs) -> Settings {
        Settings {
            configs: configs.clone(),
            max_message_bytes: configs.max_message_bytes(),
            retention: RetentionPolicy {
                max_bytes: configs.retention_bytes(),
                max_age_ms: configs.retention_ms(),
            },
            retention_deletes: configs
                .cleanup_policy()
                .map(|p| p.deletes())
                .unwrap_or(true),
        }
    }
}

fn to_offset(v: i64) -> Offset {
    Offset(u64::try_from(v).unwrap_or(0))
}

fn from_offset(o: Offset) -> i64 {
    i64::try_from(o.0).unwrap_or(i64::MAX)
}

impl Partition {
    /// Opens (creating if needed) the partition's directory and log, recovers it and rebuilds
    /// its producer state from the log tail.
    pub fn open(
        dir: &Path,
        spec: &TopicSpec,
        index: i32,
        sync_before_ack: bool,
        files: &compaction::OpenFiles,
        space: Option<&super::DataSpace>,
    ) -> Result<Partition, LogError> {
        let io = |op, e| LogError::Io {
            op,
            path: dir.to_path_buf(),
            source: e,
        };
        compaction::create_dir_durably(dir)?;
        let marker = PartitionMarker {
            topic: spec.name.clone(),
            topic_id: spec.id,
            partition: index,
        };
        if read_marker(dir).as_ref() != Some(&marker) {
            let marker_bytes = serde_json::to_vec(&marker)
                .map_err(|e| io("encode marker", std::io::Error::other(e)))?;
            compaction::write_file_atomically(dir, MARKER_FILE, &marker_bytes)
                .map_err(|e| io("write marker", std::io::Error::other(e)))?;
        }
        let configs = &spec.configs;
        // The entry limit is the largest `max.message.bytes` any topic may have, so that the
        // config can be raised while the log is open; Produce checks the topic's own limit.
        let log_config = LogConfig {
            max_segment_bytes: configs.segment_bytes(),
            segment_ms: Some(configs.segment_ms()),
            max_entry_bytes: u32::try_from(
                usize::try_from(crate::topics::configs::MAX_MAX_MESSAGE_BYTES).unwrap_or(64 << 20)
                    + compaction::frame::FRAME_HEADER_LEN,
            )
            .unwrap_or(u32::MAX),
            ..LogConfig::default()
        };
        let log = Log::open_with_files(dir.join("log"), log_config, files.clone())?;
        let log = match space {
            Some(space) => log.with_space(space.log.clone(), Some(space.index.clone())),
            None => log,
        };
        let deleted_before = read_log_start(dir)?;
        let txn_dir = dir.join(TXN_DIR);
        let (producers, txns) = recover_transactions(&log, &txn_dir)?;
        let active_base = from_offset(log.active_base_offset());
        let end = from_offset(log.next_offset());
        let mut epochs = epochs::rebuild(&log)?;
        epochs.assign(LEADER_EPOCH, end);
        let (high_watermark, _) = watch::channel(end);
        Ok(Partition {
            topic: spec.name.clone(),
            topic_id: spec.id,
            index,
            dir: dir.to_path_buf(),
            log,
            writer: Mutex::new(Writer {
                producers,
                verifying: std::collections::HashMap::new(),
                next_guard: 0,
                active_base,
            }),
            txns: Mutex::new(txns),
            txn_dir,
            high_watermark,
            sync_before_ack,
            settings: RwLock::new(Settings::of(configs)),
            deleted_before: Mutex::new(deleted_before),
            epochs: Mutex::new(epochs),
        })
    }

    /// Takes the topic's current configs if they changed: `max.message.bytes` from the next
    /// Produce, `segment.bytes`/`segment.ms` from the next append, retention and cleanup
    /// policy from the next retention pass. Cheap when nothing changed (one comparison).
    pub fn apply_configs(&self, configs: &TopicConfigs) {
        if self.read_settings().configs == *configs {
            return;
        }
        let mut settings = self.settings.write().unwrap_or_else(|e| e.into_inner());
        if settings.configs == *configs {
            return;
        }
        if let Err(e) = self
            .log
            .set_roll_limits(configs.segment_bytes(), Some(configs.segment_ms()))
        {
            // Validated before it was replicated; keep the previous roll limits.
            tracing::warn!(topic = %self.topic, partition = self.index, error = %e,
                "segment limits not applied");
        }
        *settings = Settings::of(configs);
        tracing::info!(topic = %self.topic, partition = self.index, "topic configs applied");
    }

    fn read_settings(&self) -> std::sync::RwLockReadGuard<'_, Settings> {
        self.settings.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Its directory is about to be removed (a deleted topic): segment files closed by the
    /// open-file budget are never reopened by path (see `Log::forget_paths`).
    pub fn forget_paths(&self) {
        self.log.forget_paths();
    }

    /// The partition's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// First offset still in the log: the first segment's base, or the offset DeleteRecords
    /// moved it to.
    pub fn log_start_offset(&self) -> i64 {
        let deleted_before = *self
            .deleted_before
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        from_offset(self.log.start_offset()).max(deleted_before)
    }

    /// DeleteRecords: moves the log start offset to `offset` (-1: the high watermark), which
    /// must not be past the high watermark; deletes the segments wholly below it. Returns the
    /// log start offset afterwards (unchanged if it was already past `offset`). The new start
    /// is durable before it is answered or used.
    pub fn delete_records_before(&self, offset: i64) -> Result<i64, ReadError> {
        let hw = self.high_watermark();
        let target = if offset == -1 { hw } else { offset };
        if target < 0 || target > hw {
            return Err(ReadError::OffsetOutOfRange {
                offset,
                start: self.log_start_offset(),
                end: hw,
            });
        }
        let mut deleted_before = self
            .deleted_before
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let start = from_offset(self.log.start_offset()).max(*deleted_before);
        if target <= start {
            return Ok(start);
        }
        compaction::write_file_atomically(&self.dir, LOG_START_FILE, target.to_string().as_bytes())
            .map_err(|e| LogError::Io {
                op: "write log start offset",
                path: self.dir.join(LOG_START_FILE),
                source: std::io::Error::other(e.to_string()),
            })?;
        *deleted_before = target;
        drop(deleted_before);
        let deleted = self.log.purge_to(to_offset(target))?;
        if deleted.segments > 0 {
            self.forget_deleted_segments();
        }
        tracing::info!(topic = %self.topic, partition = self.index, log_start = target,
            segments = deleted.segments, "records deleted");
        Ok(self.log_start_offset())
    }

    /// The partition's current leader epoch (the one its appends write).
    pub fn leader_epoch(&self) -> i32 {
        LEADER_EPOCH
    }

    /// The epochs as of now, with what lies below the log start collapsed into it.
    fn epochs(&self) -> std::sync::MutexGuard<'_, LeaderEpochCache> {
        let log_start = self.log_start_offset();
        let mut epochs = self.epochs.lock().unwrap_or_else(|e| e.into_inner());
        epochs.truncate_from_start(log_start);
        epochs
    }

    /// OffsetForLeaderEpoch: the largest epoch ≤ `requested` and the offset it ends at (the
    /// log end for the current epoch), or `None` (Kafka's -1, -1).
    pub fn end_offset_for_epoch(&self, requested: i32) -> Option<(i32, i64)> {
        let log_end = self.log_end_offset();
        self.epochs().end_offset_for(requested, log_end)
    }

    /// The epoch the record at `offset` was written in (ListOffsets reports it).
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        self.epochs().epoch_for_offset(offset)
    }

    /// Offset the next batch will get.
    pub fn log_end_offset(&self) -> i64 {
        from_offset(self.log.next_offset())
    }

    /// What consumers may read up to (exclusive).
    pub fn high_watermark(&self) -> i64 {
        *self.high_watermark.borrow()
    }

    /// Changes whenever the high watermark moves.
    pub fn watch_high_watermark(&self) -> watch::Receiver<i64> {
        self.high_watermark.subscribe()
    }

    fn publish_high_watermark(&self) {
        let end = if self.sync_before_ack {
            from_offset(self.log.durable_offset())
        } else {
            from_offset(self.log.next_offset())
        };
        self.high_watermark.send_if_modified(|hw| {
            if end > *hw {
                *hw = end;
                true
            } else {
                false
            }
        });
    }

    /// Checks, places and stores one produced batch; in fsync mode returns once it is durable.
    pub fn append(
        &self,
        records: BytesMut,
        header: BatchHeader,
        now_ms: i64,
    ) -> Result<Appended, AppendError> {
        let appending = self.append_unsynced(records, header, now_ms)?;
        self.wait_durable(&appending)?;
        Ok(appending.appended)
    }

    /// Appends a transaction marker (`protocol::batch::control::encode_control_batch`'s
    /// bytes) and waits until it is durable: closes the producer's open transaction; an ABORT
    /// adds an aborted-transaction entry. A marker whose epoch is older than the producer's is
    /// refused (INVALID_PRODUCER_EPOCH) and changes nothing. Blocks: run it off the runtime.
    pub fn append_marker(&self, marker: &[u8], now_ms: i64) -> Result<Appended, AppendError> {
        let decoded = decode_control_batch(marker).map_err(AppendError::NotAMarker)?;
        let header = BatchHeader::parse(marker)?;
        if header.last_offset_delta != 0 {
            return Err(AppendError::NotAMarker(BatchError::InconsistentCount {
                record_count: header.record_count,
                last_offset_delta: header.last_offset_delta,
            }));
        }
        let records = BytesMut::from(&marker[..header.total_bytes()]);
        let appending = self.append_inner(
            records,
            header,
            now_ms,
            Some((decoded.kind, decoded.coordinator_epoch)),
            None,
        )?;
        self.wait_durable(&appending)?;
        Ok(appending.appended)
    }

    /// The first half of [`Partition::append`]: checks, places and writes the batch (readers do
    /// not see it yet). Transactional batches are not verified here (the bench, tests, and
    /// Produce with `--transaction-partition-verification-enable=false`); Produce otherwise
    /// appends through [`Partition::append_produced`]. Appends are ordered by the order of these calls; the durability waits
    /// ([`Partition::wait_durable`]) of many appends may then overlap and share fsyncs.
    pub fn append_unsynced(
        &self,
        records: BytesMut,
        header: BatchHeader,
        now_ms: i64,
    ) -> Result<Appending, AppendError> {
        self.check_produced(&records, &header)?;
        self.append_inner(records, header, now_ms, None, None)
    }

    /// Starts the verification of a transactional batch of `producer_id` at `producer_epoch`
    /// (KIP-890 part 1): `None` when the producer's transaction is already open here at that
    /// epoch (its first batch was verified; the append checks again), else a guard the append
    /// must present after the coordinator confirmed the partition is in the transaction. A
    /// marker of the producer written in between voids the guard.
    pub fn start_txn_verification(
        &self,
        producer_id: i64,
        producer_epoch: i16,
    ) -> Option<TxnGuard> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.txn_open_at(&writer, producer_id, producer_epoch) {
            return None;
        }
        writer.next_guard = writer.next_guard.wrapping_add(1);
        let id = writer.next_guard;
        writer.verifying.insert(producer_id, (producer_epoch, id));
        Some(TxnGuard {
            producer_id,
            producer_epoch,
            id,
        })
    }

    /// Forgets a verification the coordinator refused (its batch is not appended), unless a
    /// newer one of the producer replaced it: refused producers leave nothing behind.
    pub fn drop_txn_verification(&self, guard: TxnGuard) {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if writer.verifying.get(&guard.producer_id) == Some(&(guard.producer_epoch, guard.id)) {
            writer.verifying.remove(&guard.producer_id);
        }
    }

    /// Whether `producer_id` has a transaction open here and its producer state is at
    /// `producer_epoch` (Kafka's `hasOngoingTransaction(producerId, producerEpoch)`).
    fn txn_open_at(&self, writer: &Writer, producer_id: i64, producer_epoch: i16) -> bool {
        writer.producers.epoch_of(producer_id) == Some(producer_epoch)
            && self.txns().is_open(producer_id)
    }

    /// [`Partition::append_unsynced`] for a Produce request: a transactional batch that would
    /// open a transaction here is appended only with the guard of a verification that still
    /// holds (`guard`: what [`Partition::start_txn_verification`] returned, then confirmed by
    /// the coordinator). Non-transactional batches ignore `guard`.
    pub fn append_produced(
        &self,
        records: BytesMut,
        header: BatchHeader,
        now_ms: i64,
        guard: Option<TxnGuard>,
    ) -> Result<Appending, AppendError> {
        self.check_produced(&records, &header)?;
        self.append_inner(records, header, now_ms, None, Some(guard))
    }

    fn check_produced(&self, records: &BytesMut, header: &BatchHeader) -> Result<(), AppendError> {
        let max_message_bytes = self.read_settings().max_message_bytes;
        if records.len() > max_message_bytes {
            return Err(AppendError::TooLarge {
                size: records.len(),
                max: max_message_bytes,
            });
        }
        if header.is_control() {
            return Err(AppendError::Batch(BatchError::ControlBatch));
        }
        Ok(())
    }

    fn txns(&self) -> std::sync::MutexGuard<'_, Transactions> {
        self.txns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append_inner(
        &self,
        mut records: BytesMut,
        header: BatchHeader,
        now_ms: i64,
        marker: Option<(ControlType, i32)>,
        verified: Option<Option<TxnGuard>>,
    ) -> Result<Appending, AppendError> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, coordinator_epoch)) = marker {
            writer.producers.check_marker(
                header.producer_id,
                header.producer_epoch,
                coordinator_epoch,
            )?;
        } else {
            if let Verdict::Duplicate(placement) = writer.producers.check(&header)? {
                // Acknowledged again once the original is durable (it may still be in flight).
                return Ok(Appending {
                    appended: Appended {
                        base_offset: placement.first_offset,
                        log_start_offset: self.log_start_offset(),
                        duplicate: true,
                    },
                    durable_at: to_offset(placement.last_offset.saturating_add(1)),
                });
            }
            if header.is_idempotent()
                && !header.is_transactional()
                && self.txns().is_open(header.producer_id)
            {
                return Err(AppendError::OpenTransaction {
                    producer_id: header.producer_id,
                });
            }
            if let Some(guard) = verified {
                if header.is_transactional()
                    && !self.txn_open_at(&writer, header.producer_id, header.producer_epoch)
                {
                    let holds = guard.is_some_and(|g| {
                        g.producer_id == header.producer_id
                            && g.producer_epoch == header.producer_epoch
                            && writer.verifying.get(&g.producer_id)
                                == Some(&(g.producer_epoch, g.id))
                    });
                    if !holds {
                        return Err(AppendError::UnverifiedTransaction {
                            producer_id: header.producer_id,
                            producer_epoch: header.producer_epoch,
                        });
                    }
                }
            }
        }
        let base = self.log.next_offset();
        let base_offset = from_offset(base);
        let last_offset = base_offset + i64::from(header.last_offset_delta);
        batch::rebase(&mut records, base_offset, LEADER_EPOCH);
        let entry = Entry::batch(
            base,
            to_offset(last_offset),
            TimestampMs(header.max_timestamp),
            records.freeze(),
        );
        let info = self.log.append(&[entry], TimestampMs(now_ms))?;
        let mut txns = self.txns();
        let active = from_offset(self.log.active_base_offset());
        if active != writer.active_base {
            // The log rolled: this batch opens the new segment, so the state before it is the
            // state at the new base.
            self.seal_segment(
                writer.active_base,
                active,
                base_offset,
                &writer.producers,
                &txns,
            );
            writer.active_base = active;
        }
        if marker.is_some() || header.is_transactional() {
            // A marker ends the transaction a verification was for; a transactional batch
            // opened it (or was inside it): either way the entry has done its work.
            writer.verifying.remove(&header.producer_id);
        }
        match marker {
            Some((_, coordinator_epoch)) => writer.producers.record_marker(
                header.producer_id,
                header.producer_epoch,
                coordinator_epoch,
                header.max_timestamp,
            ),
            None => writer.producers.record(&header, base_offset, last_offset),
        }
        txns.observe(
            &header,
            base_offset,
            last_offset,
            marker.map(|(kind, _)| kind),
        );
        Ok(Appending {
            appended: Appended {
                base_offset,
                log_start_offset: self.log_start_offset(),
                duplicate: false,
            },
            durable_at: info.next_offset,
        })
    }

    /// The segment `[sealed, next)` was sealed: writes its `.txnindex` whole and, when the
    /// producer state is the state at `next` (`at == next`), a snapshot there. A failure is
    /// logged, not returned: the batch is in the log, and a missing file is rebuilt at open.
    fn seal_segment(
        &self,
        sealed: i64,
        next: i64,
        at: i64,
        producers: &ProducerStates,
        txns: &Transactions,
    ) {
        let entries = txns.aborted_in(sealed, next);
        if let Err(e) = txn_index::write(&self.txn_dir, sealed, &entries) {
            tracing::warn!(topic = %self.topic, partition = self.index, error = %e,
                "transaction index not written (rebuilt at open)");
        }
        if at != next {
            return;
        }
        let snapshot = transactions::encode_snapshot(next, &producer_snapshot(producers, txns));
        let name = txn_index::file_name(next, SNAPSHOT_SUFFIX);
        if let Err(e) = compaction::write_file_atomically(&self.txn_dir, &name, &snapshot) {
            tracing::warn!(topic = %self.topic, partition = self.index, error = %e,
                "producer state snapshot not written");
        }
    }

    /// Deletes the transaction files of segments the log no longer has (retention,
    /// DeleteRecords) and forgets their aborted entries.
    fn forget_deleted_segments(&self) {
        let start = from_offset(self.log.start_offset());
        self.txns().drop_aborted_below(start);
        let removed = remove_txn_files_below(&self.txn_dir, start);
        if let Err(e) = removed {
            tracing::warn!(topic = %self.topic, partition = self.index, error = %e,
                "transaction files of deleted segments not removed (removed at open)");
        }
    }

    /// The last stable offset: below it every transaction is decided (read_committed
    /// consumers read up to it); the high watermark when no transaction is open.
    pub fn last_stable_offset(&self) -> i64 {
        let hw = self.high_watermark();
        let start = self.log_start_offset();
        self.txns().last_stable_offset(hw, start)
    }

    /// The open transactions, `(producer id, first offset)`, by first offset.
    pub fn open_transactions(&self) -> Vec<(i64, i64)> {
        let mut open: Vec<(i64, i64)> = self.txns().open_transactions().collect();
        open.sort_by_key(|(_, first)| *first);
        open
    }

    /// Every producer this partition remembers, with the first offset of its open transaction
    /// (DescribeProducers; Kafka's `activeProducerState`).
    pub fn active_producers(&self) -> Vec<(ActiveProducer, Option<i64>)> {
        let producers = {
            let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            writer.producers.active()
        };
        let open: std::collections::HashMap<i64, i64> = self.txns().open_transactions().collect();
        producers
            .into_iter()
            .map(|p| {
                let first = open.get(&p.producer_id).copied();
                (p, first)
            })
            .collect()
    }

    /// Every aborted transaction of the log's segments, in marker order.
    pub fn aborted_transactions(&self) -> Vec<AbortedTxn> {
        self.txns().aborted().to_vec()
    }

    /// The second half of [`Partition::append`]: in fsync mode waits (group commit) until the
    /// batch is durable; then moves the high watermark, waking long polls.
    pub fn wait_durable(&self, appending: &Appending) -> Result<(), LogError> {
        if self.sync_before_ack {
            let end = appending.durable_at.min(self.log.next_offset());
            self.log.sync_to(end)?;
        }
        self.publish_high_watermark();
        Ok(())
    }

    /// Whole batches from the one holding `offset`, below the high watermark, up to
    /// `max_bytes` (at least one batch when `min_one`, as Kafka returns an oversized first
    /// batch to guarantee progress).
    pub fn read(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
    ) -> Result<ReadBatches, ReadError> {
        self.read_below(offset, max_bytes, min_one, self.high_watermark())
    }

    /// A read_committed fetch: [`Partition::read`] below the last stable offset, and the
    /// aborted transactions that overlap what was read (the consumer drops their records).
    pub fn read_committed(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
    ) -> Result<(ReadBatches, Vec<AbortedTxn>), ReadError> {
        let read = self.read_below(offset, max_bytes, min_one, self.last_stable_offset())?;
        let aborted = match read.next_offset {
            Some(upper) => self.txns().aborted_overlapping(offset, upper),
            None => Vec::new(),
        };
        Ok((read, aborted))
    }

    fn read_below(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        hw: i64,
    ) -> Result<ReadBatches, ReadError> {
        let start = self.log_start_offset();
        let end = self.log_end_offset();
        if offset < start || offset > end {
            return Err(ReadError::OffsetOutOfRange { offset, start, end });
        }
        if offset >= hw {
            return Ok(ReadBatches::default());
        }
        let entries = match self.log.read_located(to_offset(offset), max_bytes.max(1)) {
            Ok(e) => e,
            // Retention moved the start between the check above and the read.
            Err(LogError::OffsetOutOfRange { .. }) => {
                return Err(ReadError::OffsetOutOfRange {
                    offset,
                    start: self.log_start_offset(),
                    end: self.log_end_offset(),
                })
            }
            Err(e) => return Err(e.into()),
        };
        let mut bytes = 0usize;
        let mut records = FetchRecords::default();
        let mut next_offset = None;
        for e in entries {
            if from_offset(e.first_offset) >= hw {
                break;
            }
            let size = e.len();
            if bytes + size > max_bytes && !(records.is_empty() && min_one) {
                break;
            }
            bytes += size;
            next_offset = Some(from_offset(e.last_offset) + 1);
            records.push_entry(e);
        }
        Ok(ReadBatches {
            records,
            bytes,
            next_offset,
        })
    }

    /// The batch (below the high watermark) holding the first record whose timestamp is
    /// `>= target`, and the batch's max timestamp; looking inside it is
    /// `timestamp_lookup`'s, within its memory budget.
    pub fn batch_for_timestamp(&self, target: i64) -> Result<Option<(Bytes, i64)>, ReadError> {
        let hw = self.high_watermark();
        let Some(mut entry) = self.log.find_by_timestamp(TimestampMs(target))? else {
            return Ok(None);
        };
        let start = self.log_start_offset();
        if from_offset(entry.last_offset) < start {
            // Below the start DeleteRecords set: the first batch from the start on that
            // reaches the timestamp.
            let mut at = to_offset(start);
            loop {
                let entries = match self.log.read(at, 1 << 20) {
                    Ok(e) => e,
                    Err(LogError::OffsetOutOfRange { .. }) => return Ok(None),
                    Err(e) => return Err(e.into()),
                };
                let Some(last) = entries.last() else {
                    return Ok(None);
                };
                at = last.next_offset();
                if let Some(e) = entries.into_iter().find(|e| e.max_timestamp_ms.0 >= target) {
                    entry = e;
                    break;
                }
                if from_offset(at) >= hw {
                    return Ok(None);
                }
            }
        }
        if from_offset(entry.first_offset) >= hw {
            return Ok(None);
        }
        Ok(Some((entry.payload, entry.max_timestamp_ms.0)))
    }

    /// The first batch (below the high watermark) holding the log's largest timestamp
    /// (ListOffsets -3, KIP-734), and that timestamp.
    pub fn batch_with_max_timestamp(&self) -> Result<Option<(Bytes, i64)>, ReadError> {
        let hw = self.high_watermark();
        let Some(entry) = self.log.find_max_timestamp()? else {
            return Ok(None);
        };
        if from_offset(entry.first_offset) >= hw {
            return Ok(None);
        }
        Ok(Some((entry.payload, entry.max_timestamp_ms.0)))
    }

    /// The largest record timestamp in the log, from the segments' summaries kept in memory
    /// (no read): the timestamp ListOffsets' max timestamp (-3) answers, and on a
    /// `LogAppendTime` topic the time of the last append. `None` while the log is empty.
    pub fn max_timestamp_ms(&self) -> Option<i64> {
        self.log
            .segments()
            .iter()
            .filter_map(|s| s.max_timestamp)
            .map(|t| t.0)
            .max()
    }

    /// fdatasyncs run on this partition's log since it opened (group commit shares them).
    pub fn sync_count(&self) -> u64 {
        self.log.sync_count()
    }

    /// Makes every appended batch durable and visible (the `--flush-ms` flusher, shutdown).
    pub fn flush(&self) -> Result<(), LogError> {
        if self.log.has_unsynced() {
            self.log.sync()?;
        }
        self.publish_high_watermark();
        Ok(())
    }

    /// Deletes segments past `retention.ms` / `retention.bytes` (topics whose cleanup policy
    /// deletes). Returns the number of segments deleted.
    pub fn apply_retention(&self, now_ms: i64) -> Result<usize, LogError> {
        let (deletes, retention) = {
            let settings = self.read_settings();
            (settings.retention_deletes, settings.retention)
        };
        if !deletes {
            return Ok(0);
        }
        let deleted = self.log.apply_retention(retention, TimestampMs(now_ms))?;
        if deleted.segments > 0 {
            self.forget_deleted_segments();
        }
        Ok(deleted.segments)
    }
}

/// The log start offset DeleteRecords left in `dir` (0 when it never ran).
fn read_log_start(dir: &Path) -> Result<i64, LogError> {
    let path = dir.join(LOG_START_FILE);
    let bad = |reason: String| LogError::Io {
        op: "read log start offset",
        path: path.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, reason),
    };
    match compaction::read_file_checked(dir, LOG_START_FILE) {
        Ok(None) => Ok(0),
        Ok(Some(bytes)) => std::str::from_utf8(&bytes)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|v| *v >= 0)
            .ok_or_else(|| bad("not a log start offset".to_owned())),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// The producer state as a snapshot holds it: every producer, and the open transactions of
/// producers the state had forgotten (epoch -1, no batches).
fn producer_snapshot(producers: &ProducerStates, txns: &Transactions) -> Vec<ProducerSnapshot> {
    let open: std::collections::HashMap<i64, i64> = txns.open_transactions().collect();
    let mut out = producers.snapshot(|pid| open.get(&pid).copied());
    let known: std::collections::HashSet<i64> = out.iter().map(|p| p.producer_id).collect();
    let mut forgotten: Vec<(i64, i64)> = open
        .iter()
        .filter(|(pid, _)| !known.contains(pid))
        .map(|(p, f)| (*p, *f))
        .collect();
    forgotten.sort_unstable();
    out.extend(forgotten.into_iter().map(|(pid, first)| ProducerSnapshot {
        producer_id: pid,
        epoch: -1,
        txn_first_offset: Some(first),
        batches: Vec::new(),
    }));
    out
}

/// Removes the `.txnindex` files of segments based below `start` and the snapshots below it.
fn remove_txn_files_below(txn_dir: &Path, start: i64) -> Result<(), LogError> {
    let mut removed = false;
    for suffix in [INDEX_SUFFIX, SNAPSHOT_SUFFIX] {
        for offset in txn_index::list(txn_dir, suffix)? {
            if offset < start {
                txn_index::remove(txn_dir, offset, suffix)?;
                removed = true;
            }
        }
    }
    if removed {
        compaction::sync_dir(txn_dir)?;
    }
    Ok(())
}

/// Rebuilds producer and transaction state at open (decision 0128):
///
/// ```text
///  1. delete orphans: .txnindex of segments the log lacks, snapshots outside [start, end]
///  2. read every sealed segment's .txnindex; a missing or corrupt one must be rebuilt
///  3. replay from the newest snapshot at or before the first segment to rebuild (at the
///     latest the active segment's base; none usable: the log start, empty state)
///  4. aborted entries = the files' for sound segments, the replay's for the others, whose
///     files are rewritten
/// ```
///
/// Entries and snapshots past the recovered log end (a torn tail) are dropped with it.
fn recover_transactions(
    log: &Log,
    txn_dir: &Path,
) -> Result<(ProducerStates, Transactions), LogError> {
    compaction::create_dir_durably(txn_dir)?;
    let segments = log.segments();
    let start = from_offset(log.start_offset());
    let end = from_offset(log.next_offset());
    let bases: Vec<i64> = segments
        .iter()
        .map(|s| from_offset(s.base_offset))
        .collect();
    let mut removed = false;
    for base in txn_index::list(txn_dir, INDEX_SUFFIX)? {
        if !bases.contains(&base) {
            txn_index::remove(txn_dir, base, INDEX_SUFFIX)?;
            removed = true;
        }
    }
    let mut snapshots = Vec::new();
    for offset in txn_index::list(txn_dir, SNAPSHOT_SUFFIX)? {
        if offset < start || offset > end {
            txn_index::remove(txn_dir, offset, SNAPSHOT_SUFFIX)?;
            removed = true;
        } else {
            snapshots.push(offset);
        }
    }
    if removed {
        compaction::sync_dir(txn_dir)?;
    }
    let sealed = &segments[..segments.len().saturating_sub(1)];
    let active_base = bases.last().copied().unwrap_or(start);
    let mut loaded = Vec::with_capacity(sealed.len());
    let mut rebuild_from = active_base;
    for s in sealed {
        let (base, next) = (from_offset(s.base_offset), from_offset(s.next_offset));
        let entries = match txn_index::read(txn_dir, base, next)? {
            Some(Ok(entries)) => Some(entries),
            Some(Err(e)) => {
                tracing::warn!(dir = %txn_dir.display(), segment = base, error = %e,
                    "corrupt transaction index: rebuilding it from the log");
                None
            }
            None => None,
        };
        if entries.is_none() {
            rebuild_from = rebuild_from.min(base);
        }
        loaded.push(entries);
    }
    let mut producers = ProducerStates::default();
    let mut txns = Transactions::default();
    let mut from = start;
    for offset in snapshots.iter().rev().filter(|o| **o <= rebuild_from) {
        let name = txn_index::file_name(*offset, SNAPSHOT_SUFFIX);
        let decoded = match compaction::read_file_checked(txn_dir, &name) {
            Ok(Some(bytes)) => transactions::decode_snapshot(&bytes),
            _ => None,
        };
        match decoded {
            Some((at, state)) if at == *offset => {
                producers.restore(&state);
                txns.restore_open(&state);
                from = at;
                break;
            }
            _ => tracing::warn!(dir = %txn_dir.display(), snapshot = offset,
                "unreadable producer state snapshot: trying an older one"),
        }
    }
    let log_end = log.next_offset();
    let mut at = to_offset(from);
    while at < log_end {
        let entries = log.read(at, 4 << 20)?;
        let Some(last) = entries.last() else { break };
        at = last.next_offset();
        for e in &entries {
            let Ok(h) = BatchHeader::parse(&e.payload) else {
                continue;
            };
            let (first, last) = (from_offset(e.first_offset), from_offset(e.last_offset));
            if h.is_control() {
                match decode_control_batch(&e.payload) {
                    Ok(marker) => {
                        let kind = marker.kind;
                        producers.record_marker(
                            h.producer_id,
                            h.producer_epoch,
                            marker.coordinator_epoch,
                            h.max_timestamp,
                        );
                        txns.observe(&h, first, last, Some(kind));
                    }
                    Err(err) => tracing::warn!(dir = %txn_dir.display(), offset = first,
                        error = %err, "unreadable control batch skipped"),
                }
            } else {
                producers.record(&h, first, last);
                txns.observe(&h, first, last, None);
            }
        }
    }
    let mut replayed = Transactions::default();
    replayed.set_aborted(txns.aborted().to_vec());
    let mut aborted = Vec::new();
    for (s, entries) in sealed.iter().zip(loaded) {
        let (base, next) = (from_offset(s.base_offset), from_offset(s.next_offset));
        match entries {
            Some(entries) => aborted.extend(entries),
            None => {
                let rebuilt = replayed.aborted_in(base, next);
                if let Err(e) = txn_index::write(txn_dir, base, &rebuilt) {
                    tracing::warn!(dir = %txn_dir.display(), segment = base, error = %e,
                        "rebuilt transaction index not written");
                }
                aborted.extend(rebuilt);
            }
        }
    }
    aborted.extend(replayed.aborted_in(active_base, i64::MAX));
    txns.set_aborted(aborted);
    Ok((producers, txns))
}
