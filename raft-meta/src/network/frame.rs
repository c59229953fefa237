//! Length-prefixed frames on a byte stream: `u32 length (big-endian) | u8 version | payload`.
//! The length is checked against [`FRAME_BYTES_MAX`] but never allocated up front: the body's
//! buffer grows with the bytes that actually arrive, so a peer announcing 64 MiB and sending
//! nothing costs nothing. Anything over the maximum, or an unknown version, is garbage and
//! closes the connection.
//!
//! On a port with a cluster secret, frames after the handshake (`handshake`) are sealed:
//! `u32 length | u8 2 | payload | HMAC-SHA256 tag`, the tag over the frame's sequence number in
//! its direction, the version byte and the payload, with that direction's session key. A frame
//! changed, dropped, replayed or reordered on the way fails its tag and closes the connection.

use ring::hmac;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame accepted: an AppendEntries of `max_payload_entries` batches, or a snapshot chunk,
/// stays well under it.
pub const FRAME_BYTES_MAX: usize = 64 * 1024 * 1024;
const FRAME_VERSION: u8 = 1;
const FRAME_VERSION_SEALED: u8 = 2;
const TAG_BYTES: usize = 32;
/// Buffer reserved before a frame's body starts arriving; it grows (doubling) from there.
const FIRST_READ_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection io: {0}")]
    Io(#[from] std::io::Error),
    #[error("peer closed the connection")]
    Closed,
    #[error("frame of {0} bytes is over the {FRAME_BYTES_MAX}-byte limit")]
    TooLarge(usize),
    #[error("frame version {0} is not {FRAME_VERSION}")]
    BadVersion(u8),
    #[error("undecodable frame: {0}")]
    Decode(postcard::Error),
    #[error("cannot encode frame: {0}")]
    Encode(postcard::Error),
    #[error("frame failed its authentication tag (changed, replayed or out of order on the way)")]
    BadTag,
}

/// One authenticated connection's session keys and frame counts (`handshake` derives them).
pub struct Seal {
    send_key: hmac::Key,
    receive_key: hmac::Key,
    sent: u64,
    received: u64,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seal")
            .field("sent", &self.sent)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl Seal {
    pub(crate) fn new(send_key: hmac::Key, receive_key: hmac::Key) -> Seal {
        Seal {
            send_key,
            receive_key,
            sent: 0,
            received: 0,
        }
    }
}

/// Writes `message` sealed with `seal`'s send key.
pub async fn write_sealed<W, T>(w: &mut W, seal: &mut Seal, message: &T) -> Result<(), FrameError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(&[0, 0, 0, 0, FRAME_VERSION_SEALED]);
    let mut buf = postcard::to_extend(message, buf).map_err(FrameError::Encode)?;
    let len = buf.len() - 4 + TAG_BYTES;
    if len > FRAME_BYTES_MAX {
        return Err(FrameError::TooLarge(len));
    }
    let mut ctx = hmac::Context::with_key(&seal.send_key);
    ctx.update(&seal.sent.to_be_bytes());
    ctx.update(&buf[4..]);
    buf.extend_from_slice(ctx.sign().as_ref());
    buf[..4].copy_from_slice(&(len as u32).to_be_bytes());
    w.write_all(&buf).await?;
    w.flush().await?;
    seal.sent += 1;
    Ok(())
}

/// Reads a frame sealed with `seal`'s receive key; anything else is an error.
pub async fn read_sealed<R, T>(r: &mut R, seal: &mut Seal) -> Result<T, FrameError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    // The sequence number goes in front of the body, so the tag is checked over one slice.
    let buf = read_body(r, &seal.received.to_be_bytes()).await?;
    let body = &buf[8..];
    if body[0] != FRAME_VERSION_SEALED {
        return Err(FrameError::BadVersion(body[0]));
    }
    if body.len() < 1 + TAG_BYTES {
        return Err(FrameError::BadTag);
    }
    let (signed, tag) = buf.split_at(buf.len() - TAG_BYTES);
    hmac::verify(&seal.receive_key, signed, tag).map_err(|_| FrameError::BadTag)?;
    seal.received += 1;
    postcard::from_bytes(&signed[9..]).map_err(FrameError::Decode)
}

pub async fn write_frame<W, T>(w: &mut W, message: &T) -> Result<(), FrameError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(&[0, 0, 0, 0, FRAME_VERSION]);
    let mut buf = postcard::to_extend(message, buf).map_err(FrameError::Encode)?;
    let len = buf.len() - 4;
    if len > FRAME_BYTES_MAX {
        return Err(FrameError::TooLarge(len));
    }
    buf[..4].copy_from_slice(&(len as u32).to_be_bytes());
    w.write_all(&buf).await?;
    w.flush().await?;
    Ok(())
}

pub async fn read_frame<R, T>(r: &mut R) -> Result<T, FrameError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let body = read_body(r, &[]).await?;
    if body[0] != FRAME_VERSION {
        return Err(FrameError::BadVersion(body[0]));
    }
    postcard::from_bytes(&body[1..]).map_err(FrameError::Decode)
}

/// `prefix` followed by one frame's body (at least one byte: its version), length-checked.
async fn read_body<R>(r: &mut R, prefix: &[u8]) -> Result<Vec<u8>, FrameError>
where
    R: AsyncRead + Unpin,
{
    let mut header = [0u8; 4];
    match r.read_exact(&mut header).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(header) as usize;
    if len > FRAME_BYTES_MAX {
        return Err(FrameError::TooLarge(len));
    }
    if len == 0 {
        return Err(FrameError::BadVersion(0));
    }
    let mut body = Vec::with_capacity(prefix.len() + len.min(FIRST_READ_BYTES));
    body.extend_from_slice(prefix);
    let read = (&mut *r).take(len as u64).read_to_end(&mut body).await?;
    if read < len {
        return Err(FrameError::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trip() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        write_frame(&mut a, &(7u64, "hello".to_owned()))
            .await
            .unwrap();
        let got: (u64, String) = read_frame(&mut b).await.unwrap();
        assert_eq!(got, (7, "hello".to_owned()));
    }

    #[tokio::test]
    async fn oversized_length_is_refused_before_allocating() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
        let got: Result<u64, _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::TooLarge(_))));
    }

    #[tokio::test]
    async fn wrong_version_and_garbage_are_refused() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(&[0, 0, 0, 2, 9, 1]).await.unwrap();
        let got: Result<u64, _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::BadVersion(9))));

        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(&[0, 0, 0, 3, FRAME_VERSION, 0xff, 0xff])
            .await
            .unwrap();
        let got: Result<(u64, String), _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::Decode(_))));
    }

    #[tokio::test]
    async fn a_body_cut_short_is_an_error() {
        let (mut a, mut b) = tokio::io::duplex(1 << 20);
        a.write_all(&(FRAME_BYTES_MAX as u32).to_be_bytes())
            .await
            .unwrap();
        a.write_all(&[FRAME_VERSION, 1, 2, 3]).await.unwrap();
        drop(a);
        // The peer left 4 bytes into a 64 MiB frame (memory: tests/limits_raft.rs measures it).
        let got: Result<u64, _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::Io(_))), "{got:?}");
    }

    #[tokio::test]
    async fn eof_is_closed() {
        let (a, mut b) = tokio::io::duplex(1024);
        drop(a);
        let got: Result<u64, _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::Closed)));
    }
}
