//! Why bytes are not a payload this binary reads.

/// A payload this binary cannot read. [`FormatError::is_from_newer_binary`] tells an upgrade
/// in progress (the fix is to upgrade this node) from damage or a bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("empty payload")]
    Empty,
    #[error("unknown frame byte {0:#04x}: this binary reads 0x01 (untagged) and 0x02 (tagged)")]
    UnknownFrame(u8),
    #[error("payload of {0} bytes is shorter than its header")]
    TruncatedHeader(usize),
    #[error(
        "unknown type tag {tag:#06x} where a {expected} was expected (written by a newer binary?)"
    )]
    UnknownTag { tag: u16, expected: &'static str },
    #[error("tag {tag:#06x} ({name}) found where a {expected} was expected")]
    Misplaced {
        tag: u16,
        name: &'static str,
        expected: &'static str,
    },
    #[error(
        "{name} version {version} is newer than this binary reads (up to {newest}): \
         upgrade this node"
    )]
    NewerVersion {
        name: &'static str,
        version: u16,
        newest: u16,
    },
    #[error("{name} version {version} was never written by any binary")]
    UnknownVersion { name: &'static str, version: u16 },
    #[error("malformed {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    #[error("{count} trailing bytes after the {what}")]
    TrailingBytes { what: &'static str, count: usize },
}

impl FormatError {
    /// The payload names a type or version a newer binary writes: this node must be upgraded,
    /// the bytes themselves are fine.
    pub fn is_from_newer_binary(&self) -> bool {
        matches!(
            self,
            FormatError::UnknownTag { .. }
                | FormatError::NewerVersion { .. }
                | FormatError::UnknownFrame(_)
        )
    }
}
