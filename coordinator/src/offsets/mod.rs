//! Committed offsets: OffsetCommit / OffsetFetch / OffsetDelete (the index is `crate::index::offsets`).

pub(crate) mod commit;
pub(crate) mod delete;
pub(crate) mod fetch;
