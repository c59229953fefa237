//! The versioned formats of everything a node replicates or keeps on disk, and the rule they
//! follow (docs/decisions/0109-replicated-formats.md).
//!
//! ```text
//!  payload = 0x02 | tag (u16 BE) | version (u16 BE) | body      the body's layout is fixed by
//!                                                               (tag, version), forever
//!  reader:  frame byte 0x01 ─► the untagged format of c076aca and before (read, never written)
//!           frame byte 0x02 ─► tag in the registry?  no ─► FormatError::UnknownTag
//!                              version ≤ newest?     no ─► FormatError::NewerVersion
//!                              decode that version's body (older ones are converted up)
//! ```
//!
//! The compatibility rule: a binary reads every version it ever wrote; it refuses, loudly, a
//! tag it does not know and a version newer than it reads. For a committed Raft entry the
//! refusal stops the node's apply loop (`state_machine`), for a snapshot or a metadata file it
//! stops start-up: nothing is skipped or defaulted, so replicas never diverge silently.
//!
//! Tags are allocated in [`tags`], the one registry. Our own structs are postcard bodies pinned
//! by golden bytes (`tests/golden.rs`): a change of a struct changes its bytes and fails the
//! test, which is the prompt to add a version. openraft's types (log ids, votes, memberships)
//! get explicit codecs ([`wire`]), since a dependency bump may change their serde layout.

mod error;
mod header;
pub mod openraft_codec;
pub mod tags;
pub mod wire;

pub use error::FormatError;
pub use header::{split_bare, split_prefixed, write_header, Framed, HEADER_LEN, TAGGED};
pub use tags::{Kind, Tag, TagInfo};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Appends `value`'s postcard bytes. Our payload types (derived structs and enums of known
/// lengths) cannot fail to serialize; if one ever did, the body is left empty and every decoder
/// refuses the payload rather than misreading it.
pub fn put_postcard<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    match postcard::to_extend(value, std::mem::take(out)) {
        Ok(v) => *out = v,
        Err(e) => {
            tracing::error!(error = %e, "postcard refused a payload; writing an empty body");
            out.truncate(start);
        }
    }
}

/// Reads one postcard value from the front of `bytes`, returning it and what follows.
pub fn take_postcard<'a, T: DeserializeOwned>(
    bytes: &'a [u8],
    what: &'static str,
) -> Result<(T, &'a [u8]), FormatError> {
    postcard::take_from_bytes(bytes).map_err(|e| FormatError::Malformed {
        what,
        reason: e.to_string(),
    })
}

/// Reads a postcard value that must fill `bytes` exactly.
pub fn from_postcard<T: DeserializeOwned>(
    bytes: &[u8],
    what: &'static str,
) -> Result<T, FormatError> {
    let (value, rest) = take_postcard(bytes, what)?;
    if !rest.is_empty() {
        return Err(FormatError::TrailingBytes {
            what,
            count: rest.len(),
        });
    }
    Ok(value)
}
