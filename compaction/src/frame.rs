//! The on-disk frame around each entry: length and CRC32C first, then a fixed header, the key
//! and the payload.
//!
//! ```text
//!  0      4      8     9            17          21           29        33
//!  +------+------+-----+------------+-----------+------------+---------+-----+---------+
//!  | len  | crc  | att | first_off  | last-first| max_ts_ms  | key_len | key | payload |
//!  | u32  | u32  | u8  | u64        | u32       | i64        | u32     |     |         |
//!  +------+------+-----+------------+-----------+------------+---------+-----+---------+
//!         '--- crc32c covers len (bytes 0..4) and everything from byte 8 to the end ---'
//! ```
//!
//! Little-endian throughout. `len` counts the bytes after the 8-byte prefix. The CRC covers the
//! length too, so a flipped length bit is caught like any other. Unknown attribute bits are
//! refused: a new meaning gets a new segment format version, not a silent reinterpretation.

use crate::entry::Entry;
use crate::types::{Offset, TimestampMs};
use bytes::{BufMut, Bytes};

/// Bytes of the length + CRC prefix.
pub const FRAME_PREFIX_LEN: usize = 8;
/// Bytes of the fixed header after the prefix (attributes, offsets, timestamp, key length).
pub const FRAME_BODY_HEADER_LEN: usize = 25;
/// Bytes of framing around key and payload.
pub const FRAME_HEADER_LEN: usize = FRAME_PREFIX_LEN + FRAME_BODY_HEADER_LEN;
/// The largest frame body the format admits, whatever the configuration: a length above it is
/// damage, not data.
pub const FORMAT_MAX_BODY_LEN: u32 = 1 << 30;

const ATTR_KEYED: u8 = 0b01;
const ATTR_TOMBSTONE: u8 = 0b10;
const ATTR_KNOWN: u8 = ATTR_KEYED | ATTR_TOMBSTONE;

/// The fixed part of a decoded frame; key and payload are located by range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// First offset the entry covers.
    pub first_offset: Offset,
    /// Last offset the entry covers.
    pub last_offset: Offset,
    /// Largest timestamp in the entry.
    pub max_timestamp_ms: TimestampMs,
    /// The entry has a key.
    pub keyed: bool,
    /// The entry is a tombstone (keyed, empty payload).
    pub tombstone: bool,
    /// Key length in bytes (0 when unkeyed).
    pub key_len: u32,
    /// Total frame length, prefix included.
    pub frame_len: u32,
}

impl FrameHeader {
    /// Byte range of the key inside the frame.
    pub fn key_range(&self) -> std::ops::Range<usize> {
        FRAME_HEADER_LEN..FRAME_HEADER_LEN + self.key_len as usize
    }

    /// Byte range of the payload inside the frame.
    pub fn payload_range(&self) -> std::ops::Range<usize> {
        FRAME_HEADER_LEN + self.key_len as usize..self.frame_len as usize
    }

    /// Offset right after this frame's entry.
    pub fn next_offset(&self) -> Offset {
        Offset(self.last_offset.0.saturating_add(1))
    }

    /// Builds the entry from the frame bytes (which must be this frame, from its first byte);
    /// key and payload share `frame`'s buffer.
    pub fn to_entry(&self, frame: &Bytes) -> Entry {
        self.to_entry_at(frame, 0)
    }

    /// Builds the entry of this frame starting at byte `at` of `buf`, sharing `buf`'s memory.
    pub fn to_entry_at(&self, buf: &Bytes, at: usize) -> Entry {
        let key = self.key_range();
        let payload = self.payload_range();
        Entry {
            first_offset: self.first_offset,
            last_offset: self.last_offset,
            max_timestamp_ms: self.max_timestamp_ms,
            key: self.keyed.then(|| buf.slice(at + key.start..at + key.end)),
            payload: buf.slice(at + payload.start..at + payload.end),
            tombstone: self.tombstone,
        }
    }
}

/// Why bytes are not a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameFault {
    /// The length prefix is below a header or above the format cap.
    #[error("frame length {0} out of range")]
    BadLength(u32),
    /// The CRC32C does not match the bytes.
    #[error("crc mismatch")]
    BadCrc,
    /// Attribute bits this format version does not define.
    #[error("unknown attribute bits {0:#04x}")]
    BadAttributes(u8),
    /// The key length runs past the frame.
    #[error("key length {key_len} exceeds frame body {body_len}")]
    BadKeyLength { key_len: u32, body_len: u32 },
    /// Header fields that contradict each other.
    #[error("inconsistent header: {0}")]
    Inconsistent(&'static str),
    /// The frame is cut short by the end of the file.
    #[error("frame runs past the end of the file")]
    PastEnd,
}

/// The result of looking for a frame at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A whole, valid frame.
    Frame(FrameHeader),
    /// The buffer holds fewer bytes than the frame needs; `frame_len` is the length the prefix
    /// claims, when the prefix is complete and the claimed length is within the format cap.
    Incomplete { frame_len: Option<u32> },
    /// The bytes are not a valid frame.
    Invalid(FrameFault),
}

/// Decodes the frame at the start of `buf`, verifying its CRC.
pub fn decode(buf: &[u8]) -> Decoded {
    decode_with(buf, true)
}

/// [`decode`], optionally trusting the CRC (a caller whose payloads carry their own checksum
/// may skip ours on the hot read path). Header sanity is always checked.
pub fn decode_with(buf: &[u8], verify_crc: bool) -> Decoded {
    if buf.len() < FRAME_PREFIX_LEN {
        return Decoded::Incomplete { frame_len: None };
    }
    let body_len = read_u32(buf, 0);
    if (body_len as usize) < FRAME_BODY_HEADER_LEN || body_len > FORMAT_MAX_BODY_LEN {
        return Decoded::Invalid(FrameFault::BadLength(body_len));
    }
    let frame_len = body_len + FRAME_PREFIX_LEN as u32;
    if buf.len() < frame_len as usize {
        return Decoded::Incomplete {
            frame_len: Some(frame_len),
        };
    }
    let frame = &buf[..frame_len as usize];
    if verify_crc {
        let stored_crc = read_u32(frame, 4);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&frame[0..4]), &frame[FRAME_PREFIX_LEN..]);
        if crc != stored_crc {
            return Decoded::Invalid(FrameFault::BadCrc);
        }
    }
    match parse_header(frame, frame_len) {
        Ok(header) => Decoded::Frame(header),
        Err(fault) => Decoded::Invalid(fault),
    }
}

/// Parses the fixed header at the start of `buf` without checking the CRC: a cheap filter
/// before the CRC when hunting for frames in damaged bytes.
pub fn peek(buf: &[u8]) -> Option<FrameHeader> {
    if buf.len() < FRAME_HEADER_LEN {
        return None;
    }
    let body_len = read_u32(buf, 0);
    if (body_len as usize) < FRAME_BODY_HEADER_LEN || body_len > FORMAT_MAX_BODY_LEN {
        return None;
    }
    parse_header(buf, body_len + FRAME_PREFIX_LEN as u32).ok()
}

/// Parses the fixed header of a frame whose CRC is already known good (or not needed).
fn parse_header(frame: &[u8], frame_len: u32) -> Result<FrameHeader, FrameFault> {
    let body_len = frame_len - FRAME_PREFIX_LEN as u32;
    let attributes = frame[8];
    if attributes & !ATTR_KNOWN != 0 {
        return Err(FrameFault::BadAttributes(attributes));
    }
    let keyed = attributes & ATTR_KEYED != 0;
    let tombstone = attributes & ATTR_TOMBSTONE != 0;
    let first_offset = read_u64(frame, 9);
    let delta = read_u32(frame, 17);
    let max_timestamp_ms = read_u64(frame, 21) as i64;
    let key_len = read_u32(frame, 29);
    if key_len > body_len - FRAME_BODY_HEADER_LEN as u32 {
        return Err(FrameFault::BadKeyLength { key_len, body_len });
    }
    if !keyed && key_len != 0 {
        return Err(FrameFault::Inconsistent("unkeyed frame with a key"));
    }
    let payload_len = body_len - FRAME_BODY_HEADER_LEN as u32 - key_len;
    if tombstone && (!keyed || payload_len != 0) {
        return Err(FrameFault::Inconsistent(
            "tombstone without key or with payload",
        ));
    }
    let last = first_offset.checked_add(u64::from(delta));
    let Some(last) = last.filter(|l| *l <= Offset::MAX.0) else {
        return Err(FrameFault::Inconsistent("offset past the maximum"));
    };
    Ok(FrameHeader {
        first_offset: Offset(first_offset),
        last_offset: Offset(last),
        max_timestamp_ms: TimestampMs(max_timestamp_ms),
        keyed,
        tombstone,
        key_len,
        frame_len,
    })
}

/// Appends the frame of `entry` to `out`. Callers validate the entry first (`Log::append`
/// checks every entry), so lengths and the offset delta fit their fields.
pub(crate) fn encode_into(entry: &Entry, out: &mut Vec<u8>) {
    encode_parts(
        FrameParts {
            first_offset: entry.first_offset,
            last_offset: entry.last_offset,
            max_timestamp_ms: entry.max_timestamp_ms,
            key: entry.key.as_deref(),
            payload: &entry.payload,
            tombstone: entry.tombstone,
        },
        out,
    );
}

/// The fields of a frame, borrowed: encoding needs no `Entry` (and no `Bytes` allocation).
pub(crate) struct FrameParts<'a> {
    pub first_offset: Offset,
    pub last_offset: Offset,
    pub max_timestamp_ms: TimestampMs,
    pub key: Option<&'a [u8]>,
    pub payload: &'a [u8],
    pub tombstone: bool,
}

/// Appends the frame of `parts` to `out` (see [`encode_into`] for the caller's duties).
pub(crate) fn encode_parts(parts: FrameParts<'_>, out: &mut Vec<u8>) {
    let key: &[u8] = parts.key.unwrap_or(&[]);
    let body_len = FRAME_BODY_HEADER_LEN + key.len() + parts.payload.len();
    let start = out.len();
    out.reserve(FRAME_PREFIX_LEN + body_len);
    out.put_u32_le(body_len as u32);
    out.put_u32_le(0); // CRC, filled in below once the body is written.
    let mut attributes = 0u8;
    if parts.key.is_some() {
        attributes |= ATTR_KEYED;
    }
    if parts.tombstone {
        attributes |= ATTR_TOMBSTONE;
    }
    out.put_u8(attributes);
    out.put_u64_le(parts.first_offset.0);
    out.put_u32_le(parts.last_offset.0.saturating_sub(parts.first_offset.0) as u32);
    out.put_u64_le(parts.max_timestamp_ms.0 as u64);
    out.put_u32_le(key.len() as u32);
    out.extend_from_slice(key);
    out.extend_from_slice(parts.payload);
    let crc = crc32c::crc32c_append(
        crc32c::crc32c(&out[start..start + 4]),
        &out[start + FRAME_PREFIX_LEN..],
    );
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

pub(crate) fn read_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

pub(crate) fn read_u64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Entry {
        Entry::keyed(
            Offset(42),
            TimestampMs(7),
            Bytes::from_static(b"k"),
            Some(Bytes::from_static(b"value")),
        )
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let entries = [
            sample(),
            Entry::keyed(Offset(1), TimestampMs(-1), Bytes::from_static(b"key"), None),
            Entry::batch(
                Offset(10),
                Offset(19),
                TimestampMs(99),
                Bytes::from_static(b"b"),
            ),
            Entry::single(Offset(0), TimestampMs(0), Bytes::new()),
        ];
        for entry in entries {
            let mut buf = Vec::new();
            encode_into(&entry, &mut buf);
            assert_eq!(buf.len() as u64, entry.frame_len());
            let Decoded::Frame(header) = decode(&buf) else {
                panic!("not a frame: {:?}", decode(&buf));
            };
            assert_eq!(header.to_entry(&Bytes::from(buf)), entry);
        }
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let mut buf = Vec::new();
        encode_into(&sample(), &mut buf);
        for bit in 0..buf.len() * 8 {
            let mut damaged = buf.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert!(
                !matches!(decode(&damaged), Decoded::Frame(_)),
                "bit {bit} flipped unnoticed"
            );
        }
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let mut buf = Vec::new();
        encode_into(&sample(), &mut buf);
        for cut in 0..buf.len() {
            assert!(
                matches!(decode(&buf[..cut]), Decoded::Incomplete { .. }),
                "cut {cut}"
            );
        }
    }
}
