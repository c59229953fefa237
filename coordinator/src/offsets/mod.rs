//! Committed offsets: the index, and OffsetCommit / OffsetFetch / OffsetDelete.

pub(crate) mod commit;
pub(crate) mod delete;
pub(crate) mod fetch;
pub(crate) mod index;
