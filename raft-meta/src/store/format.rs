//! `<raft-dir>/store-kind`: which log store a Raft directory holds, and the version of that
//! store's layout.
//!
//! ```text
//!  tagged (0x0103):  0x02 | 0x0103 | version u16 | store u8 (1 sled, 2 segments)
//!  untagged (c076aca and before): the store's name as text ("sled", "segments")
//! ```
//!
//! Version 1 of the layout: each log entry is `postcard(openraft::Entry<TypeConfig>)` of
//! openraft 0.9 (pinned by golden bytes), sled's meta values are postcard, the segment store's
//! state file is tagged on its own. An entry layout change is a new version here, with a reader
//! for version 1 kept; a directory of a newer version is refused at start-up by name.

use std::path::Path;

use crate::format::tags;
use crate::format::wire::{Reader, Writer};
use crate::format::{split_bare, write_header, FormatError, Framed};
use crate::store::RaftStore;

pub const STORE_FORMAT_FILE: &str = "store-kind";
/// The log store layout this binary writes.
pub const STORE_LAYOUT_VERSION: u16 = 1;

/// What a Raft directory's `store-kind` file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreFormat {
    pub store: RaftStore,
    pub version: u16,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreFormatError {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: compaction::AtomicFileError,
    },
    #[error("{path}: {source}")]
    Format {
        path: std::path::PathBuf,
        source: FormatError,
    },
}

fn store_code(store: RaftStore) -> u8 {
    match store {
        RaftStore::Sled => 1,
        RaftStore::Segments => 2,
    }
}

impl StoreFormat {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(8));
        write_header(&mut w.0, tags::STORE_FORMAT, self.version);
        w.u8(store_code(self.store));
        w.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        match split_bare(bytes)? {
            Framed::Untagged(_) => Err(FormatError::Malformed {
                what: "log store format",
                reason: "not tagged".to_owned(),
            }),
            Framed::Tagged { tag, version, body } => {
                tags::check_exact(tag, version, tags::STORE_FORMAT)?;
                let mut r = Reader::new(body, "log store format");
                let store = match r.u8("store")? {
                    1 => RaftStore::Sled,
                    2 => RaftStore::Segments,
                    other => {
                        return Err(FormatError::Malformed {
                            what: "log store format",
                            reason: format!("unknown store {other}"),
                        })
                    }
                };
                r.finish()?;
                Ok(StoreFormat { store, version })
            }
        }
    }

    /// Reads the file in `raft_dir`: `None` if there is none yet.
    pub fn read(raft_dir: &Path) -> Result<Option<StoreFormat>, StoreFormatError> {
        let path = raft_dir.join(STORE_FORMAT_FILE);
        // The untagged file was bare text, not one of compaction's checked files.
        if let Ok(raw) = std::fs::read(&path) {
            match raw.as_slice() {
                b"sled" => return Ok(Some(Self::v1(RaftStore::Sled))),
                b"segments" => return Ok(Some(Self::v1(RaftStore::Segments))),
                _ => {}
            }
        }
        let raw = compaction::read_file_checked(raft_dir, STORE_FORMAT_FILE).map_err(|source| {
            StoreFormatError::Io {
                path: path.clone(),
                source,
            }
        })?;
        raw.map(|raw| Self::decode(&raw))
            .transpose()
            .map_err(|source| StoreFormatError::Format { path, source })
    }

    fn v1(store: RaftStore) -> StoreFormat {
        StoreFormat { store, version: 1 }
    }

    /// Writes the file (atomically, durably).
    pub fn write(&self, raft_dir: &Path) -> Result<(), StoreFormatError> {
        compaction::write_file_atomically(raft_dir, STORE_FORMAT_FILE, &self.encode()).map_err(
            |source| StoreFormatError::Io {
                path: raft_dir.join(STORE_FORMAT_FILE),
                source,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_and_tagged_files_read_and_newer_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(StoreFormat::read(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join(STORE_FORMAT_FILE), b"segments").unwrap();
        assert_eq!(
            StoreFormat::read(dir.path()).unwrap(),
            Some(StoreFormat::v1(RaftStore::Segments))
        );
        StoreFormat::v1(RaftStore::Sled).write(dir.path()).unwrap();
        assert_eq!(
            StoreFormat::read(dir.path()).unwrap(),
            Some(StoreFormat::v1(RaftStore::Sled))
        );
        let newer = StoreFormat {
            store: RaftStore::Sled,
            version: STORE_LAYOUT_VERSION + 1,
        };
        newer.write(dir.path()).unwrap();
        let err = StoreFormat::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("store-kind") && err.contains("newer"), "{err}");
        std::fs::write(dir.path().join(STORE_FORMAT_FILE), b"segmentz").unwrap();
        assert!(StoreFormat::read(dir.path()).is_err());
    }
}
