//! Peer transport over TCP: length-prefixed postcard frames, persistent pooled connections,
//! deadlines on every call, reconnect with backoff.

pub mod admin;
pub mod admission;
pub mod client;
pub mod frame;
pub mod rpc;
pub(crate) mod server;

pub use admission::PeerPortLimits;
pub use client::NetworkFactory;
