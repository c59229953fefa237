//! Kafka's size-prefixed framing, on buffers only (the socket belongs to the binary).
//!
//! ```text
//!   +----------------+-------------------------------+
//!   | size: i32 (BE) | size bytes: header + body     |
//!   +----------------+-------------------------------+
//! ```
//!
//! The size is checked against a maximum *before* any byte of the frame is buffered, so a
//! length prefix of 2 GiB costs four bytes of memory, not two gigabytes.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Bytes in the length prefix.
pub const LENGTH_PREFIX_BYTES: usize = 4;

/// Default largest frame accepted (Kafka's `socket.request.max.bytes` is 100 MiB too).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 100 * 1024 * 1024;

/// A length prefix that can never be a valid frame. The connection must be closed: the stream
/// has lost its framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The prefix announces more than the configured maximum.
    #[error("frame of {size_bytes} bytes exceeds the maximum of {max_bytes} bytes")]
    TooLarge {
        /// The announced size.
        size_bytes: u64,
        /// The configured maximum.
        max_bytes: usize,
    },
    /// The prefix is negative.
    #[error("negative frame size {0}")]
    NegativeSize(i32),
}

/// What the front of a read buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameStatus {
    /// A whole frame (without its prefix), removed from the buffer.
    Complete(Bytes),
    /// Not enough bytes yet; `frame_bytes` is the announced size once the prefix is known,
    /// so the caller can grow its buffer towards it (and no further).
    Incomplete {
        /// The announced size of the frame, once the prefix has arrived.
        frame_bytes: Option<usize>,
    },
}

/// Takes one frame off the front of `buf` if it is complete.
///
/// Never buffers past `max_frame_bytes`: the prefix is validated as soon as its four bytes
/// are there.
pub fn split_frame(buf: &mut BytesMut, max_frame_bytes: usize) -> Result<FrameStatus, FrameError> {
    if buf.len() < LENGTH_PREFIX_BYTES {
        return Ok(FrameStatus::Incomplete { frame_bytes: None });
    }
    let size = frame_size(&buf[..LENGTH_PREFIX_BYTES], max_frame_bytes)?;
    if buf.len() < LENGTH_PREFIX_BYTES + size {
        return Ok(FrameStatus::Incomplete {
            frame_bytes: Some(size),
        });
    }
    buf.advance(LENGTH_PREFIX_BYTES);
    Ok(FrameStatus::Complete(buf.split_to(size).freeze()))
}

/// Validates a four-byte length prefix.
pub fn frame_size(prefix: &[u8], max_frame_bytes: usize) -> Result<usize, FrameError> {
    let mut raw = [0u8; LENGTH_PREFIX_BYTES];
    raw.copy_from_slice(&prefix[..LENGTH_PREFIX_BYTES]);
    let size = i32::from_be_bytes(raw);
    if size < 0 {
        return Err(FrameError::NegativeSize(size));
    }
    let size = size as usize;
    if size > max_frame_bytes {
        return Err(FrameError::TooLarge {
            size_bytes: size as u64,
            max_bytes: max_frame_bytes,
        });
    }
    Ok(size)
}

/// Appends `body` to `out` behind its length prefix.
///
/// # Errors
/// A body above `i32::MAX` bytes cannot be framed.
pub fn write_frame(out: &mut BytesMut, body: &[u8]) -> Result<(), FrameError> {
    let size = i32::try_from(body.len()).map_err(|_| FrameError::TooLarge {
        size_bytes: body.len() as u64,
        max_bytes: i32::MAX as usize,
    })?;
    out.reserve(LENGTH_PREFIX_BYTES + body.len());
    out.put_i32(size);
    out.put_slice(body);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_split_at_every_byte_is_reassembled() {
        let mut wire = BytesMut::new();
        write_frame(&mut wire, b"hello kafka").unwrap();
        write_frame(&mut wire, b"").unwrap();
        let wire = wire.freeze();
        for cut in 0..wire.len() {
            let mut buf = BytesMut::from(&wire[..cut]);
            let mut frames = Vec::new();
            while let FrameStatus::Complete(f) = split_frame(&mut buf, 1024).unwrap() {
                frames.push(f);
            }
            buf.extend_from_slice(&wire[cut..]);
            while let FrameStatus::Complete(f) = split_frame(&mut buf, 1024).unwrap() {
                frames.push(f);
            }
            assert_eq!(
                frames,
                vec![Bytes::from_static(b"hello kafka"), Bytes::new()]
            );
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn an_oversized_prefix_is_refused_before_its_body_arrives() {
        let mut buf = BytesMut::from(&0x7fff_ffffu32.to_be_bytes()[..]);
        assert_eq!(
            split_frame(&mut buf, DEFAULT_MAX_FRAME_BYTES),
            Err(FrameError::TooLarge {
                size_bytes: 0x7fff_ffff,
                max_bytes: DEFAULT_MAX_FRAME_BYTES
            })
        );
        let mut buf = BytesMut::from(&(-5i32).to_be_bytes()[..]);
        assert_eq!(split_frame(&mut buf, 10), Err(FrameError::NegativeSize(-5)));
    }

    #[test]
    fn an_incomplete_frame_reports_its_announced_size() {
        let mut buf = BytesMut::from(&[0u8, 0, 0, 9, 1, 2][..]);
        assert_eq!(
            split_frame(&mut buf, 100),
            Ok(FrameStatus::Incomplete {
                frame_bytes: Some(9)
            })
        );
        assert_eq!(buf.len(), 6, "nothing consumed");
    }
}
