//! The log engine: CRC-framed segment files, indexes, recovery, retention, key-based compaction.
