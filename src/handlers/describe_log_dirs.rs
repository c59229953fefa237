//! DescribeLogDirs (35), v1–v4 (Kafka 4.0 dropped v0, which v1 repeats, and the codec has
//! none): this node's one log directory, the data dir, with every partition placed here and
//! its size on disk (`data::sizes`: the partition directory's files), `offset_lag` 0 and
//! `is_future` false (there are no replica moves between directories); from v4 the total and
//! usable bytes of the data dir's filesystem.
//!
//! As Kafka's broker answers: null topics = every partition held here; a named topic or
//! partition not held here (unknown, or placed on another node) is left out, and a topic left
//! with no partitions is omitted. In a cluster every node answers for the partitions it holds,
//! so a client asks each broker (`cohort log-dirs`, the Admin clients do). A directory that
//! cannot be measured answers KAFKA_STORAGE_ERROR for the directory, as Kafka's offline one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::{DescribeLogDirsRequest, DescribeLogDirsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::RequestContext;
use crate::data::sizes::partition_bytes;
use crate::data::HeldPartition;
use crate::disk::{filesystem_space, FilesystemSpace};

/// What one log directory holds, measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDirReport {
    /// The directory, absolute.
    pub path: PathBuf,
    /// Bytes per partition: (topic, index) in order.
    pub partitions: BTreeMap<(String, i32), u64>,
    /// Its filesystem.
    pub space: FilesystemSpace,
}

/// Describes the data dir.
pub async fn handle(ctx: &RequestContext, req: DescribeLogDirsRequest) -> DescribeLogDirsResponse {
    let wanted: Option<BTreeMap<String, BTreeSet<i32>>> = req.topics.map(|topics| {
        let mut w: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for t in topics {
            w.entry(t.topic.0.to_string())
                .or_default()
                .extend(t.partitions);
        }
        w
    });
    let held: Vec<HeldPartition> = ctx
        .broker
        .data
        .held_partitions()
        .into_iter()
        .filter(|p| {
            wanted.as_ref().is_none_or(|w| {
                w.get(&p.topic)
                    .is_some_and(|parts| parts.contains(&p.index))
            })
        })
        .collect();
    let data_dir = std::path::absolute(&ctx.broker.config.data_dir)
        .unwrap_or_else(|_| ctx.broker.config.data_dir.clone());
    let dir = data_dir.clone();
    let measured = tokio::task::spawn_blocking(move || measure(dir, &held))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    let log_dir = StrBytes::from_string(data_dir.to_string_lossy().into_owned());
    let result = match measured {
        Ok(report) => ok_result(ctx, log_dir, &report),
        Err(e) => {
            tracing::warn!(dir = %data_dir.display(), error = %e,
                "describe log dirs: the data dir cannot be measured");
            DescribeLogDirsResult::default()
                .with_log_dir(log_dir)
                .with_error_code(ctx.error(ErrorCode::KafkaStorageError))
        }
    };
    DescribeLogDirsResponse::default().with_results(vec![result])
}

/// Measures `dir`'s filesystem and the partitions' directories (blocking).
pub fn measure(dir: PathBuf, held: &[HeldPartition]) -> std::io::Result<LogDirReport> {
    let space = filesystem_space(&dir)?;
    let mut partitions = BTreeMap::new();
    for p in held {
        partitions.insert(
            (p.topic.clone(), p.index),
            partition_bytes(&p.dir, p.topic_id)?,
        );
    }
    Ok(LogDirReport {
        path: dir,
        partitions,
        space,
    })
}

fn ok_result(
    ctx: &RequestContext,
    log_dir: StrBytes,
    report: &LogDirReport,
) -> DescribeLogDirsResult {
    let mut topics: Vec<DescribeLogDirsTopic> = Vec::new();
    for ((topic, index), bytes) in &report.partitions {
        let partition = DescribeLogDirsPartition::default()
            .with_partition_index(*index)
            .with_partition_size(i64::try_from(*bytes).unwrap_or(i64::MAX))
            .with_offset_lag(0)
            .with_is_future_key(false);
        match topics.last_mut() {
            Some(t) if t.name.0.as_str() == topic.as_str() => t.partitions.push(partition),
            _ => topics.push(
                DescribeLogDirsTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.clone())))
                    .with_partitions(vec![partition]),
            ),
        }
    }
    let mut result = DescribeLogDirsResult::default()
        .with_error_code(0)
        .with_log_dir(log_dir)
        .with_topics(topics);
    if ctx.version >= 4 {
        // Kafka reports a size Java's `long` cannot hold as Long.MAX_VALUE.
        result = result
            .with_total_bytes(i64::try_from(report.space.total_bytes).unwrap_or(i64::MAX))
            .with_usable_bytes(i64::try_from(report.space.usable_bytes).unwrap_or(i64::MAX));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx, plain_batch};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    fn on_disk(dir: &std::path::Path) -> u64 {
        let mut total = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            total += if m.is_dir() {
                on_disk(&e.path())
            } else {
                m.len()
            };
        }
        total
    }

    fn sizes(resp: &DescribeLogDirsResponse) -> Vec<(String, i32, i64)> {
        resp.results[0]
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.0.to_string(), p.partition_index, p.partition_size))
            })
            .collect()
    }

    #[tokio::test]
    async fn every_held_partition_with_its_bytes_on_disk_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for (name, count) in [("b", 1), ("a", 2)] {
            let new = NewTopic {
                name: name.into(),
                num_partitions: count,
                replication_factor: 1,
                ..NewTopic::default()
            };
            b.create_topic(&new, false).await.unwrap();
        }
        let p = b.data.partition("a", 1).await.unwrap();
        for _ in 0..3 {
            let batch = bytes::BytesMut::from(&plain_batch(10)[..]);
            let header = protocol::batch::BatchHeader::parse(&batch).unwrap();
            p.append(batch, header, 0).unwrap();
        }
        let a1 = on_disk(&dir.path().join("topics/a-1"));
        assert!(a1 > 3 * plain_batch(10).len() as u64, "{a1}");
        for v in 1..=4 {
            let c = ctx(&b, ApiKey::DescribeLogDirs, v);
            let resp = handle(&c, DescribeLogDirsRequest::default().with_topics(None)).await;
            assert_eq!(resp.results.len(), 1);
            let r = &resp.results[0];
            assert_eq!((r.error_code, resp.error_code), (0, 0));
            assert_eq!(
                r.log_dir.as_str(),
                std::path::absolute(dir.path()).unwrap().to_str().unwrap()
            );
            // a-0 and b-0 were never written: no directory, nothing on disk.
            assert_eq!(
                sizes(&resp),
                vec![
                    ("a".into(), 0, 0),
                    ("a".into(), 1, a1 as i64),
                    ("b".into(), 0, 0)
                ],
                "v{v}"
            );
            assert!(r.topics[0]
                .partitions
                .iter()
                .all(|p| p.offset_lag == 0 && !p.is_future_key));
            if v >= 4 {
                assert!(r.total_bytes > 0 && r.usable_bytes > 0);
                assert!(r.usable_bytes <= r.total_bytes);
            } else {
                assert_eq!((r.total_bytes, r.usable_bytes), (-1, -1));
            }
            assert_encodes(&c, &ResponseKind::DescribeLogDirs(resp));
        }
    }

    #[tokio::test]
    async fn named_topics_filter_and_unknown_ones_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "a", 3, &[]).await;
        let c = ctx(&b, ApiKey::DescribeLogDirs, 4);
        let want = |t: &str, parts: Vec<i32>| {
            DescribableLogDirTopic::default()
                .with_topic(TopicName(StrBytes::from_string(t.into())))
                .with_partitions(parts)
        };
        let resp = handle(
            &c,
            DescribeLogDirsRequest::default()
                .with_topics(Some(vec![want("a", vec![2, 0, 9]), want("nope", vec![0])])),
        )
        .await;
        assert_eq!(sizes(&resp), vec![("a".into(), 0, 0), ("a".into(), 2, 0)]);
        let none = handle(
            &c,
            DescribeLogDirsRequest::default().with_topics(Some(vec![])),
        )
        .await;
        assert_eq!(none.results.len(), 1);
        assert!(none.results[0].topics.is_empty());
        let only_unknown = handle(
            &c,
            DescribeLogDirsRequest::default().with_topics(Some(vec![want("nope", vec![0])])),
        )
        .await;
        assert!(only_unknown.results[0].topics.is_empty());
    }
}
