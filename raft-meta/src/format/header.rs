//! The payload header: `0x02 | tag (u16 BE) | version (u16 BE)`.

use crate::format::tags::Tag;
use crate::format::FormatError;

/// The frame byte of a tagged payload.
pub const TAGGED: u8 = 2;
/// The frame byte of the untagged format (c076aca and before): `0x01 | postcard(..)`.
const UNTAGGED: u8 = 1;
/// Bytes of the header in front of a tagged body.
pub const HEADER_LEN: usize = 5;

/// A payload split at its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framed<'a> {
    /// Written before tags existed; what it is follows from where it was found.
    Untagged(&'a [u8]),
    Tagged {
        tag: Tag,
        version: u16,
        body: &'a [u8],
    },
}

/// Appends the header of a `tag` payload at `version`.
pub fn write_header(out: &mut Vec<u8>, tag: Tag, version: u16) {
    out.push(TAGGED);
    out.extend_from_slice(&tag.0.to_be_bytes());
    out.extend_from_slice(&version.to_be_bytes());
}

fn tagged(bytes: &[u8]) -> Result<Framed<'_>, FormatError> {
    let Some((head, body)) = bytes.split_first_chunk::<HEADER_LEN>() else {
        return Err(FormatError::TruncatedHeader(bytes.len()));
    };
    Ok(Framed::Tagged {
        tag: Tag(u16::from_be_bytes([head[1], head[2]])),
        version: u16::from_be_bytes([head[3], head[4]]),
        body,
    })
}

/// Splits a payload whose untagged form was `0x01 | body` (commands, replies, topic and
/// cluster records).
pub fn split_prefixed(bytes: &[u8]) -> Result<Framed<'_>, FormatError> {
    match bytes.first() {
        None => Err(FormatError::Empty),
        Some(&TAGGED) => tagged(bytes),
        Some(&UNTAGGED) => Ok(Framed::Untagged(&bytes[1..])),
        Some(&other) => Err(FormatError::UnknownFrame(other)),
    }
}

/// Splits a payload whose untagged form was a bare postcard value starting with an `Option`
/// (0x00 or 0x01), never 0x02: the snapshot meta, the segment store's state file.
pub fn split_bare(bytes: &[u8]) -> Result<Framed<'_>, FormatError> {
    match bytes.first() {
        None => Err(FormatError::Empty),
        Some(&TAGGED) => tagged(bytes),
        Some(0 | 1) => Ok(Framed::Untagged(bytes)),
        Some(&other) => Err(FormatError::UnknownFrame(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_short_headers_are_refused() {
        let mut out = Vec::new();
        write_header(&mut out, Tag(0x0201), 7);
        out.extend_from_slice(b"body");
        assert_eq!(out[..HEADER_LEN], [2, 0x02, 0x01, 0, 7]);
        assert_eq!(
            split_prefixed(&out),
            Ok(Framed::Tagged {
                tag: Tag(0x0201),
                version: 7,
                body: b"body"
            })
        );
        for len in 1..HEADER_LEN {
            assert_eq!(
                split_prefixed(&out[..len]),
                Err(FormatError::TruncatedHeader(len))
            );
        }
        assert_eq!(split_prefixed(&[]), Err(FormatError::Empty));
        assert_eq!(split_prefixed(&[9, 1]), Err(FormatError::UnknownFrame(9)));
        assert_eq!(split_prefixed(&[1, 5]), Ok(Framed::Untagged(&[5])));
        assert_eq!(split_bare(&[1, 5]), Ok(Framed::Untagged(&[1, 5])));
        assert_eq!(split_bare(&[0]), Ok(Framed::Untagged(&[0])));
        assert_eq!(split_bare(&[3]), Err(FormatError::UnknownFrame(3)));
    }
}
