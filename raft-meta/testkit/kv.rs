//! A key-value application that exercises the Raft machinery on its own: `Put`/`Delete` go through
//! the log, `get` reads the applied state. Not part of the library: the in-process tests
//! (`tests/common`), the crash-test node (`testkit/kvnode.rs`) and the bake-off example each
//! compile it in with `#[path]`, and each uses a different part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use raft_meta::app::{Application, Record, RestoreError, Undecodable};
use raft_meta::types::LogIndex;

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
    type Command = KvCommand;

    fn decode(command: &[u8]) -> Result<KvCommand, Undecodable> {
        KvCommand::decode(command).map_err(|e| Undecodable(format!("key-value command: {e}")))
    }

    fn apply(&mut self, index: LogIndex, command: KvCommand) -> Bytes {
        self.last_index = Some(index);
        self.apply_command(command).encode()
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
