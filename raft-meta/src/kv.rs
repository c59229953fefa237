//! A key-value application that exercises the Raft machinery on its own: `Put`/`Delete` go through
//! the log, `get` reads the applied state. Used by the tests, the crash-test node and the bake-off.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::app::{Application, Record, RestoreError};
use crate::types::LogIndex;

/// Keys and values are bounded so a bad command cannot grow one record without limit.
pub const KV_KEY_BYTES_MAX: usize = 4 * 1024;
pub const KV_VALUE_BYTES_MAX: usize = 256 * 1024;

/// A write to the key-value store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KvCommand {
    Put { key: Bytes, value: Bytes },
    Delete { key: Bytes },
}

/// What applying a [`KvCommand`] answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KvReply {
    /// The command took effect; `previous` is the value it replaced or removed.
    Done { previous: Option<Bytes> },
    /// The command was malformed or over a limit and changed nothing.
    Rejected { reason: String },
}

impl KvCommand {
    pub fn encode(&self) -> Bytes {
        Bytes::from(postcard::to_stdvec(self).unwrap_or_default())
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, postcard::Error> {
        postcard::from_bytes(bytes)
    }
}

impl KvReply {
    pub fn encode(&self) -> Bytes {
        Bytes::from(postcard::to_stdvec(self).unwrap_or_default())
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, postcard::Error> {
        postcard::from_bytes(bytes)
    }
}

/// The replicated map. `last_index` records the entry that last changed it, which lets tests
/// check replicas converge to the same point, not just the same contents.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KvApp {
    entries: BTreeMap<Bytes, Bytes>,
    last_index: Option<LogIndex>,
}

impl KvApp {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &[u8]) -> Option<Bytes> {
        self.entries.get(key).cloned()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, &Bytes)> {
        self.entries.iter()
    }

    fn apply_command(&mut self, command: KvCommand) -> KvReply {
        match command {
            KvCommand::Put { key, value } => {
                if key.len() > KV_KEY_BYTES_MAX || value.len() > KV_VALUE_BYTES_MAX {
                    return KvReply::Rejected {
                        reason: format!(
                            "key {} bytes / value {} bytes over the {KV_KEY_BYTES_MAX}/{KV_VALUE_BYTES_MAX} limit",
                            key.len(),
                            value.len()
                        ),
                    };
                }
                KvReply::Done {
                    previous: self.entries.insert(key, value),
                }
            }
            KvCommand::Delete { key } => KvReply::Done {
                previous: self.entries.remove(&key),
            },
        }
    }
}

impl Application for KvApp {
    fn apply(&mut self, index: LogIndex, command: &[u8]) -> Bytes {
        self.last_index = Some(index);
        let reply = match KvCommand::decode(command) {
            Ok(command) => self.apply_command(command),
            Err(e) => KvReply::Rejected {
                reason: format!("undecodable command: {e}"),
            },
        };
        reply.encode()
    }

    fn snapshot_records(&self) -> Vec<Record> {
        self.entries
            .iter()
            .map(|(key, value)| Record {
                key: key.clone(),
                value: value.clone(),
            })
            .collect()
    }

    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError> {
        if let Some(r) = records
            .iter()
            .find(|r| r.key.len() > KV_KEY_BYTES_MAX || r.value.len() > KV_VALUE_BYTES_MAX)
        {
            return Err(RestoreError(format!(
                "record over the size limit (key {} bytes)",
                r.key.len()
            )));
        }
        // Snapshot records come in key order; collecting lets the map build itself in bulk
        // rather than by a million searches.
        self.entries = records.into_iter().map(|r| (r.key, r.value)).collect();
        self.last_index = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(k: &str, v: &str) -> Bytes {
        KvCommand::Put {
            key: Bytes::from(k.to_owned()),
            value: Bytes::from(v.to_owned()),
        }
        .encode()
    }

    #[test]
    fn put_then_delete_reports_previous_values() {
        let mut app = KvApp::new();
        let r1 = KvReply::decode(&app.apply(LogIndex(1), &put("a", "1"))).unwrap();
        assert_eq!(r1, KvReply::Done { previous: None });
        let r2 = KvReply::decode(&app.apply(LogIndex(2), &put("a", "2"))).unwrap();
        assert_eq!(
            r2,
            KvReply::Done {
                previous: Some(Bytes::from_static(b"1"))
            }
        );
        let del = KvCommand::Delete {
            key: Bytes::from_static(b"a"),
        }
        .encode();
        let r3 = KvReply::decode(&app.apply(LogIndex(3), &del)).unwrap();
        assert_eq!(
            r3,
            KvReply::Done {
                previous: Some(Bytes::from_static(b"2"))
            }
        );
        assert!(app.is_empty());
    }

    #[test]
    fn garbage_command_is_rejected_without_changing_state() {
        let mut app = KvApp::new();
        app.apply(LogIndex(1), &put("k", "v"));
        let reply = KvReply::decode(&app.apply(LogIndex(2), &[0xff, 0xff, 0xff])).unwrap();
        assert!(matches!(reply, KvReply::Rejected { .. }));
        assert_eq!(app.get(b"k"), Some(Bytes::from_static(b"v")));
    }

    #[test]
    fn oversized_value_is_rejected() {
        let mut app = KvApp::new();
        let big = KvCommand::Put {
            key: Bytes::from_static(b"k"),
            value: Bytes::from(vec![0u8; KV_VALUE_BYTES_MAX + 1]),
        }
        .encode();
        let reply = KvReply::decode(&app.apply(LogIndex(1), &big)).unwrap();
        assert!(matches!(reply, KvReply::Rejected { .. }));
        assert!(app.is_empty());
    }

    #[test]
    fn restore_round_trips_snapshot_records() {
        let mut app = KvApp::new();
        for i in 0..10 {
            app.apply(LogIndex(i), &put(&format!("k{i}"), &format!("v{i}")));
        }
        let mut other = KvApp::new();
        other.restore(app.snapshot_records()).unwrap();
        assert_eq!(other.entries, app.entries);
    }
}
