//! The output of `kafka-log-dirs.sh --describe`, byte for byte: Jackson's compact JSON of the
//! `HashMap`s Kafka's `LogDirsCommand` builds, so every object's keys, the brokers and the
//! partitions come in the iteration order of those Java maps (`java_order`), not sorted.
//!
//! ```text
//!  {"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"orders-0","size":4096,
//!    "offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data"}]}],"version":1}
//! ```
//!
//! (Kafka's Scala tool before 3.7 printed `version` first, from Scala's small ordered maps; the
//! Java tool of 3.7 and later prints the hash order above.)

use std::collections::{BTreeMap, HashSet};

use protocol::ErrorCode;

use super::super::groups::java_order::{self, Construction};
use crate::client::log_dirs::LogDirDescription;
use crate::client::{NodeId, TopicPartition};

/// A JSON value as Jackson writes it (objects keep the order given).
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Array(Vec<Json>),
    /// Keys in the order of the Java `HashMap` that held them.
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    /// An object from the entries of a `new HashMap<String, Object>() {{ put(..) }}`.
    fn hash_map(entries: Vec<(&'static str, Json)>) -> Json {
        let order = java_order::strings(
            Construction::Default,
            entries.iter().map(|(k, _)| (*k).to_owned()),
        );
        let mut entries = entries;
        let mut out = Vec::with_capacity(entries.len());
        for key in order {
            if let Some(at) = entries.iter().position(|(k, _)| *k == key) {
                out.push(entries.swap_remove(at));
            }
        }
        Json::Object(out)
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::Str(s) => out.push_str(&serde_json::Value::String(s.clone()).to_string()),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    Json::Str((*k).to_owned()).write(out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// The order of a Java `Set<Integer>`/`Map<Integer, _>` built the way `construction` says,
/// from `ids` in order (an `Integer` hashes to its value).
pub fn broker_order(construction: Construction, ids: &[i32]) -> Vec<i32> {
    java_order::order_by(construction, ids.iter().copied(), |id| *id)
}

/// Brokers joined with commas, as `commaDelimitedStringFromIntegerSet` prints them.
pub fn broker_list(ids: &[i32]) -> String {
    ids.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

/// The JSON document of `formatAsJson`: the brokers in `queried` order (the tool's
/// `existingBrokers` set), each with its log dirs; partitions of topics outside `topics`
/// (when it is not empty) left out.
pub fn document(
    queried: &[i32],
    described: &BTreeMap<NodeId, Vec<LogDirDescription>>,
    topics: &HashSet<String>,
) -> String {
    // Admin.describeLogDirs fills `new HashMap<>(brokers.size())` in the set's order; the
    // result copies it (`new HashMap<>(futures)`), and allDescriptions() copies that again
    // into `new HashMap<>(futures.size())`.
    let futures = broker_order(Construction::WithCapacity(queried.len()), queried);
    let copied = broker_order(Construction::CopyOf(futures.len()), &futures);
    let order = broker_order(Construction::WithCapacity(copied.len()), &copied);
    let brokers: Vec<Json> = order
        .iter()
        .filter_map(|id| described.get(&NodeId(*id)).map(|dirs| (*id, dirs)))
        .map(|(id, dirs)| {
            Json::hash_map(vec![
                ("broker", Json::Int(i64::from(id))),
                ("logDirs", Json::Array(log_dirs(dirs, topics))),
            ])
        })
        .collect();
    let mut out = String::new();
    Json::hash_map(vec![
        ("version", Json::Int(1)),
        ("brokers", Json::Array(brokers)),
    ])
    .write(&mut out);
    out
}

fn log_dirs(dirs: &[LogDirDescription], topics: &HashSet<String>) -> Vec<Json> {
    // `logDirDescriptions` builds `new HashMap<>(results.size())` keyed by path.
    let order = java_order::strings(
        Construction::WithCapacity(dirs.len()),
        dirs.iter().map(|d| d.path.clone()),
    );
    order
        .iter()
        .filter_map(|path| dirs.iter().find(|d| &d.path == path))
        .map(|dir| {
            let error = match &dir.error {
                None => Json::Null,
                Some(e) => Json::Str(
                    ErrorCode::from_code(e.code)
                        .unwrap_or(ErrorCode::UnknownServerError)
                        .java_exception()
                        .to_owned(),
                ),
            };
            Json::hash_map(vec![
                ("logDir", Json::Str(dir.path.clone())),
                ("error", error),
                ("partitions", Json::Array(partitions(dir, topics))),
            ])
        })
        .collect()
}

fn partitions(dir: &LogDirDescription, topics: &HashSet<String>) -> Vec<Json> {
    // The Admin's `replicaInfoMap` (a default HashMap, filled in response order), then the
    // tool's filtered `Collectors.toMap` copy of it.
    let all: Vec<TopicPartition> = dir
        .replicas
        .iter()
        .map(|r| TopicPartition::new(&r.topic, r.partition))
        .collect();
    let admin_order = java_order::topic_partitions(Construction::Default, all);
    let kept: Vec<TopicPartition> = admin_order
        .into_iter()
        .filter(|tp| topics.is_empty() || topics.contains(&tp.topic))
        .collect();
    java_order::topic_partitions(Construction::Default, kept)
        .iter()
        .filter_map(|tp| {
            dir.replicas
                .iter()
                .find(|r| r.topic == tp.topic && r.partition == tp.partition)
        })
        .map(|r| {
            Json::hash_map(vec![
                (
                    "partition",
                    Json::Str(format!("{}-{}", r.topic, r.partition)),
                ),
                ("size", Json::Int(r.size)),
                ("offsetLag", Json::Int(r.offset_lag)),
                ("isFuture", Json::Bool(r.is_future)),
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::log_dirs::ReplicaInfo;
    use crate::client::KafkaError;

    fn replica(topic: &str, partition: i32, size: i64) -> ReplicaInfo {
        ReplicaInfo {
            topic: topic.into(),
            partition,
            size,
            offset_lag: 0,
            is_future: false,
        }
    }

    #[test]
    fn the_document_is_kafkas_byte_for_byte() {
        // A broker holding these six partitions, listed in this order: the partitions come in
        // the order kafka-log-dirs.sh printed them for such a broker (TopicPartition hash
        // buckets; t1-0 and t3-2 share bucket 14, t3-1 and t2-0 bucket 15, each pair in the
        // order the broker listed them), the keys in the Java tool's HashMap order (brokers
        // before version, partitions/error/logDir), as Kafka 3.7+ prints them.
        let dirs = vec![LogDirDescription {
            path: "/tmp/kafka-logs".into(),
            error: None,
            replicas: vec![
                replica("t1", 0, 0),
                replica("t3", 0, 0),
                replica("t3", 1, 0),
                replica("t3", 2, 0),
                replica("t3", 3, 0),
                replica("t2", 0, 0),
            ],
            total_bytes: None,
            usable_bytes: None,
        }];
        let described = BTreeMap::from([(NodeId(0), dirs)]);
        let text = document(&[0], &described, &HashSet::new());
        assert_eq!(
            text,
            "{\"brokers\":[{\"broker\":0,\"logDirs\":[{\"partitions\":[{\"partition\":\"t3-0\",\"size\":0,\"offsetLag\":0,\"isFuture\":false},{\"partition\":\"t3-3\",\"size\":0,\"offsetLag\":0,\"isFuture\":false},{\"partition\":\"t1-0\",\"size\":0,\"offsetLag\":0,\"isFuture\":false},{\"partition\":\"t3-2\",\"size\":0,\"offsetLag\":0,\"isFuture\":false},{\"partition\":\"t3-1\",\"size\":0,\"offsetLag\":0,\"isFuture\":false},{\"partition\":\"t2-0\",\"size\":0,\"offsetLag\":0,\"isFuture\":false}],\"error\":null,\"logDir\":\"/tmp/kafka-logs\"}]}],\"version\":1}"
        );
    }

    #[test]
    fn topics_filter_partitions_and_errors_name_the_java_exception() {
        let dirs = vec![LogDirDescription {
            path: "/d".into(),
            error: Some(KafkaError::new(ErrorCode::KafkaStorageError.code())),
            replicas: vec![replica("a", 0, 10), replica("b", 0, 20)],
            total_bytes: Some(100),
            usable_bytes: Some(50),
        }];
        let described = BTreeMap::from([(NodeId(2), dirs.clone()), (NodeId(1), vec![])]);
        let text = document(&[1, 2], &described, &HashSet::from(["b".to_string()]));
        assert_eq!(
            text,
            "{\"brokers\":[{\"broker\":1,\"logDirs\":[]},{\"broker\":2,\"logDirs\":[{\"partitions\":[{\"partition\":\"b-0\",\"size\":20,\"offsetLag\":0,\"isFuture\":false}],\"error\":\"org.apache.kafka.common.errors.KafkaStorageException\",\"logDir\":\"/d\"}]}],\"version\":1}"
        );
    }

    #[test]
    fn broker_sets_iterate_as_java_sets_of_integers() {
        assert_eq!(
            broker_order(Construction::Default, &[3, 1, 2]),
            vec![1, 2, 3]
        );
        // 17 and 1 share a bucket of 16: insertion order.
        assert_eq!(broker_order(Construction::Default, &[17, 1]), vec![17, 1]);
        assert_eq!(broker_list(&[1, 2, 3]), "1,2,3");
    }
}
