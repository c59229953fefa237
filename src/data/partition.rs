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
use protocol::batch::{self, BatchError, BatchHeader};
use tokio::sync::watch;
use uuid::Uuid;

use super::epochs::{self, LeaderEpochCache};
use super::producers::{ProducerStates, SequenceError, Verdict};
use super::records::FetchRecords;
use crate::topics::{TopicConfigs, TopicSpec};

/// The leader epoch written into batches, reported in Metadata, DescribeTopicPartitions and
/// ListOffsets, checked in Fetch and ListOffsets and answered by OffsetForLeaderEpoch:
/// leadership never moves while partitions have one replica, so every partition is in its
/// first epoch (decision 0124). The epochs of a partition's log are read back from its
/// batches at open (`epochs`), so data written under other epochs would be answered right.
pub const LEADER_EPOCH: i32 = 0;
/// Bytes of the log tail replayed at open to rebuild producer state.
const PRODUCER_STATE_REPLAY_BYTES: u64 = 64 << 20;

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
    /// A transactional batch: transactions are not served.
    #[error("transactional batches are not served")]
    Transactional,
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
    writer: Mutex<ProducerStates>,
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
        let mut producers = ProducerStates::default();
        replay_producers(&log, &mut producers)?;
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
            writer: Mutex::new(producers),
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

    /// The first half of [`Partition::append`]: checks, places and writes the batch (readers do
    /// not see it yet). Appends are ordered by the order of these calls; the durability waits
    /// ([`Partition::wait_durable`]) of many appends may then overlap and share fsyncs.
    pub fn append_unsynced(
        &self,
        mut records: BytesMut,
        header: BatchHeader,
        now_ms: i64,
    ) -> Result<Appending, AppendError> {
        let max_message_bytes = self.read_settings().max_message_bytes;
        if records.len() > max_message_bytes {
            return Err(AppendError::TooLarge {
                size: records.len(),
                max: max_message_bytes,
            });
        }
        if header.is_transactional() {
            return Err(AppendError::Transactional);
        }
        let mut producers = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Verdict::Duplicate(placement) = producers.check(&header)? {
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
        producers.record(&header, base_offset, last_offset);
        Ok(Appending {
            appended: Appended {
                base_offset,
                log_start_offset: self.log_start_offset(),
                duplicate: false,
            },
            durable_at: info.next_offset,
        })
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
        let hw = self.high_watermark();
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
        for e in entries {
            if from_offset(e.first_offset) >= hw {
                break;
            }
            let size = e.len();
            if bytes + size > max_bytes && !(records.is_empty() && min_one) {
                break;
            }
            bytes += size;
            records.push_entry(e);
        }
        Ok(ReadBatches { records, bytes })
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

/// Rebuilds producer state from the batches of the log's last segments (at most
/// [`PRODUCER_STATE_REPLAY_BYTES`]): producers silent for longer are forgotten, which Kafka's
/// rules allow (an unknown producer may continue at any sequence).
fn replay_producers(log: &Log, producers: &mut ProducerStates) -> Result<(), LogError> {
    let segments = log.segments();
    let mut from = log.next_offset();
    let mut bytes = 0u64;
    for s in segments.iter().rev() {
        if bytes > 0 && bytes + s.size_bytes > PRODUCER_STATE_REPLAY_BYTES {
            break;
        }
        bytes += s.size_bytes;
        from = s.base_offset;
    }
    let end = log.next_offset();
    let mut at = from.max(log.start_offset());
    while at < end {
        let entries = log.read(at, 4 << 20)?;
        let Some(last) = entries.last() else { break };
        at = last.next_offset();
        for e in &entries {
            if let Ok(h) = BatchHeader::parse(&e.payload) {
                producers.record(&h, from_offset(e.first_offset), from_offset(e.last_offset));
            }
        }
    }
    Ok(())
}
