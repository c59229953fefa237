//! How much disk each partition this node holds takes (DescribeLogDirs, `cohort log-dirs`):
//! the sum of the sizes of the files in its directory, read from the directory itself rather
//! than from an open log, so a partition not opened since the start is measured without
//! opening (and recovering) its segments.
//!
//! ```text
//!  <data-dir>/topics/<topic>-<partition>/partition.json      counted
//!                                        log-start-offset    counted
//!                                        log/<base>.log      counted (and .index, .timeindex,
//!                                                            a transient .cleaned/.swap)
//! ```
//!
//! A directory whose marker names another topic id holds data of a deleted incarnation that
//! waits to be moved aside (see `reconcile`): none of it is this partition's, so it counts 0.

use std::io;
use std::path::Path;

use uuid::Uuid;

use super::partition::read_marker;

/// Directory levels below a partition's directory that are walked (`log/` is the only one);
/// anything deeper is not the data plane's and is not counted.
const MAX_DEPTH: usize = 2;

/// Bytes the partition of topic id `topic_id` takes in `dir`: 0 when the directory does not
/// exist (never written) or belongs to another incarnation of the topic.
pub fn partition_bytes(dir: &Path, topic_id: Uuid) -> io::Result<u64> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
        Ok(m) if !m.is_dir() => return Ok(0),
        Ok(_) => {}
    }
    if read_marker(dir).is_some_and(|m| m.topic_id != topic_id) {
        return Ok(0);
    }
    files_bytes(dir, MAX_DEPTH)
}

/// The sizes of the regular files under `dir`, `depth` levels deep. A file that vanishes
/// while it is listed (retention deleted a segment, a compaction swapped one) counts 0.
fn files_bytes(dir: &Path, depth: usize) -> io::Result<u64> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        other => other?,
    };
    let mut total = 0u64;
    for entry in entries {
        let entry = entry?;
        let meta = match entry.metadata() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            other => other?,
        };
        if meta.is_file() {
            total = total.saturating_add(meta.len());
        } else if meta.is_dir() && depth > 1 {
            total = total.saturating_add(files_bytes(&entry.path(), depth - 1)?);
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::partition::{PartitionMarker, MARKER_FILE};

    fn marker(dir: &Path, id: Uuid) {
        let m = PartitionMarker {
            topic: "t".into(),
            topic_id: id,
            partition: 0,
        };
        compaction::write_file_atomically(dir, MARKER_FILE, &serde_json::to_vec(&m).unwrap())
            .unwrap();
    }

    #[test]
    fn every_file_of_the_partition_is_counted_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        std::fs::create_dir_all(dir.join("log/deeper")).unwrap();
        marker(&dir, Uuid::from_u128(7));
        std::fs::write(dir.join("log/00000000000000000000.log"), vec![1u8; 1000]).unwrap();
        std::fs::write(dir.join("log/00000000000000000000.index"), vec![1u8; 24]).unwrap();
        std::fs::write(dir.join("log/deeper/not-ours"), vec![1u8; 5000]).unwrap();
        let marker_len = std::fs::metadata(dir.join(MARKER_FILE)).unwrap().len();
        assert_eq!(
            partition_bytes(&dir, Uuid::from_u128(7)).unwrap(),
            marker_len + 1024
        );
        // Another incarnation's directory, and one never written, take nothing of ours.
        assert_eq!(partition_bytes(&dir, Uuid::from_u128(8)).unwrap(), 0);
        assert_eq!(
            partition_bytes(&root.path().join("t-1"), Uuid::from_u128(7)).unwrap(),
            0
        );
    }
}
