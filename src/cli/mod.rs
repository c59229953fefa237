//! Command-line tools of the `cohort` binary.

pub mod acls;
pub mod cluster;
pub mod configs;
pub mod entry;
pub mod groups;
pub mod log_dirs;
pub mod records;
pub mod topics;
pub mod transactions;
pub mod users;
