//! Kafka wire protocol for Cohort: framing, request headers, the served-API table, error codes.
//!
//! Pure: buffers in, buffers out. No sockets, no disk, no knowledge of groups or Raft (DESIGN.md
//! §2). Messages themselves are encoded and decoded by `kafka-protocol` (re-exported), whose
//! version this crate pins for the whole workspace.
//!
//! ```text
//!  bytes ──frame::split_frame──> frame ──request::decode_request──> Request { header, body }
//!                                                                     │ (the binary's handlers)
//!  bytes <──────────────── response::encode_response <──────── ResponseKind
//! ```

pub mod apis;
pub mod batch;
pub mod error_code;
pub mod frame;
pub mod request;
pub mod response;
pub mod splice;

pub use apis::{ApiRange, SUPPORTED_APIS, TRANSACTIONS_SERVED};
pub use error_code::ErrorCode;
pub use frame::{FrameError, FrameStatus, DEFAULT_MAX_FRAME_BYTES};
pub use kafka_protocol;
pub use request::{decode_request, peek_request, Request, RequestError, RequestPeek};
pub use response::{encode_response, EncodeError};
pub use uuid::Uuid;
