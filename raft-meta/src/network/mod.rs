//! Peer transport over TCP: length-prefixed postcard frames, persistent pooled connections,
//! deadlines on every call, reconnect with backoff.

pub mod admin;
pub mod client;
pub mod frame;
pub mod rpc;
pub(crate) mod server;

pub use client::NetworkFactory;
