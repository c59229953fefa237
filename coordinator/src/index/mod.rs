//! The indexes the state keeps its groups and offsets in: a packed table of groups in id
//! order, the compact store of group records, and the committed-offset index.

pub(crate) mod group_table;
pub mod offsets;
pub(crate) mod stored_group;
