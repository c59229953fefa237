//! Committed offsets: OffsetCommit / TxnOffsetCommit / OffsetFetch / OffsetDelete (the index
//! is `crate::index::offsets`, pending transactional offsets `crate::index::transactions`).

pub(crate) mod commit;
pub(crate) mod delete;
pub(crate) mod fetch;
pub(crate) mod txn_commit;
