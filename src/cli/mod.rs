//! Command-line tools of the `cohort` binary.

pub mod groups;
pub mod topics;
