//! This node's replica of the Raft meta service (topics, groups, producer ids) as the rest of
//! the broker sees it: the flags that start it, and the topic catalog and cluster view that
//! the front end reads from its applied state.

pub mod args;
pub mod catalog;
