//! Peer transport over TCP: length-prefixed postcard frames, persistent pooled connections,
//! deadlines on every call, reconnect with backoff; with a cluster secret, peers prove it to
//! each other on connect and seal every frame (`handshake`, decision 0155).

pub mod admin;
pub mod admission;
mod channel;
pub mod client;
pub mod frame;
pub(crate) mod handshake;
pub mod rpc;
pub mod secret;
pub(crate) mod server;

pub use admission::PeerPortLimits;
pub use client::NetworkFactory;
pub use handshake::AuthError;
pub use secret::{ClusterSecret, PeerAuth, SecretError, SecretFileError};
