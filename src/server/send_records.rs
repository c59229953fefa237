//! Writes a spliced Fetch frame in wire order: encoded bytes and records already in memory with
//! vectored writes, records still in segment files with `sendfile(2)`, page cache to socket,
//! as Kafka's `FileRecords.writeTo` does with `transferTo`.
//!
//! ```text
//!  [frame head][prefix] [head of batch 1] | sendfile(rest of batch 1) | [head of batch 2] | ..
//!  └──── one vectored write ─────────────┘                            └ vectored write ┘
//! ```
//!
//! A file part is sent from the file the read located it in, held open: retention, deletion
//! or a compaction swap unlinks or renames the path, never the bytes. Never more than the
//! length located at read time is sent; a file found shorter (EOF early) or cut by a
//! truncation since the read ends the connection instead of sending a short or changed frame
//! (the client retries on a new connection).
//!
//! Over TLS the bytes must pass through the cipher, so the frame is staged instead (as Kafka's
//! `SslTransportLayer` copies file bytes through its buffers): encoded bytes, batch heads and
//! file ranges are gathered into one buffer per answer, file ranges read straight into it, and
//! the buffer handed to the TLS stream whenever it is full. A Fetch answer is thousands of
//! batches; staging makes it a few large TLS writes (big records, few socket writes) instead of
//! two small writes, a buffer allocation and a timer per batch.
//!
//! ```text
//!  TLS: [frame head][prefix][head 1][rest of batch 1 (pread)][head 2][rest 2].. ─ 256 KiB ─► TLS
//! ```
//!
//! Every wait for the socket is bounded by the send timeout: a client that takes no byte of
//! its answer for that long is disconnected, so it cannot hold its task, its request memory
//! and the segment files its answer pins forever.

use std::io;
use std::time::Duration;

use bytes::Buf;
use compaction::{FileSlice, SliceCut};
use protocol::splice::{Chunks, Piece, SplicedFrame};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

use crate::data::{FetchRecords, RecordPart};

/// Most bytes one `sendfile` call is asked for: the call holds the segment's truncation fence
/// and may wait for the disk, so it is kept short.
const SENDFILE_CALL_MAX_BYTES: usize = 4 << 20;

/// Why a frame could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The socket failed (the peer left).
    #[error("socket: {0}")]
    Io(#[from] io::Error),
    /// The client took no byte for this long.
    #[error("the client took no byte for {0:?}")]
    Stalled(Duration),
    /// A segment file was truncated after the read located records in it.
    #[error(transparent)]
    Cut(#[from] SliceCut),
    /// A segment file ended before the records the read located in it.
    #[error("{}: file ended at byte {at}, {missing} bytes before the records located in it end", path.display())]
    ShortFile {
        /// The segment file.
        path: std::path::PathBuf,
        /// Where the file ended.
        at: u64,
        /// Bytes of the frame that could not be sent.
        missing: u64,
    },
}

impl SendError {
    /// `slice`'s file ended at `at`, before the located records' `end`.
    fn short_file(slice: &FileSlice, at: u64, end: u64) -> SendError {
        SendError::ShortFile {
            path: slice.path().to_owned(),
            at,
            missing: end - at,
        }
    }
}

/// Bytes of an answer staged per TLS write.
const TLS_STAGE_BYTES: usize = 256 << 10;

/// A connection's byte stream: plain TCP or TLS over it. The connection code is written once
/// over this; only how segment-file bytes leave differs.
pub trait Transport: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Writes a Fetch answer whose records may still be in segment files, every piece in
    /// order, and flushes it; no progress for `stall` fails it.
    fn write_records_frame(
        &mut self,
        frame: SplicedFrame<FetchRecords>,
        stall: Duration,
    ) -> impl std::future::Future<Output = Result<(), SendError>> + Send;

    /// Pushes out what the transport still holds of an answer (TLS buffers records); nothing
    /// to do on TCP, where every write went to the socket.
    fn flush_within(
        &mut self,
        stall: Duration,
    ) -> impl std::future::Future<Output = Result<(), SendError>> + Send;
}

impl Transport for TcpStream {
    async fn write_records_frame(
        &mut self,
        frame: SplicedFrame<FetchRecords>,
        stall: Duration,
    ) -> Result<(), SendError> {
        write_spliced_sendfile(self, frame, stall).await
    }

    async fn flush_within(&mut self, _stall: Duration) -> Result<(), SendError> {
        Ok(())
    }
}

impl Transport for tokio_rustls::server::TlsStream<TcpStream> {
    async fn write_records_frame(
        &mut self,
        frame: SplicedFrame<FetchRecords>,
        stall: Duration,
    ) -> Result<(), SendError> {
        write_spliced_staged(self, frame, stall).await?;
        self.flush_within(stall).await
    }

    async fn flush_within(&mut self, stall: Duration) -> Result<(), SendError> {
        match tokio::time::timeout(stall, self.flush()).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(SendError::Stalled(stall)),
        }
    }
}

/// Writes all of `buf` (vectored), failing with [`SendError::Stalled`] when the socket takes
/// no byte for `stall`. A transport that buffers ([`Transport::flush_within`]) is flushed by
/// the caller once the whole answer is written.
pub async fn write_all_within<B: Buf, W: AsyncWrite + Unpin>(
    stream: &mut W,
    buf: &mut B,
    stall: Duration,
) -> Result<(), SendError> {
    while buf.has_remaining() {
        match tokio::time::timeout(stall, stream.write_buf(buf)).await {
            Ok(Ok(0)) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => return Err(SendError::Stalled(stall)),
        }
    }
    Ok(())
}

/// Writes `frame` to a plain TCP stream, every piece in order: encoded bytes and batch heads
/// with vectored writes, file ranges with `sendfile`; no progress for `stall` fails it.
async fn write_spliced_sendfile(
    stream: &mut TcpStream,
    frame: SplicedFrame<FetchRecords>,
    stall: Duration,
) -> Result<(), SendError> {
    let mut pending = Chunks::default();
    for piece in frame.into_pieces() {
        match piece {
            Piece::Bytes(b) => pending.push(b),
            Piece::Records(records) => {
                for part in records.parts() {
                    match part {
                        RecordPart::Memory(b) => pending.push(b.clone()),
                        RecordPart::File(slice) => {
                            write_all_within(stream, &mut pending, stall).await?;
                            send_file(stream, slice, stall).await?;
                        }
                    }
                }
            }
        }
    }
    write_all_within(stream, &mut pending, stall).await
}

/// Writes `frame` through a stream that must see every byte (TLS), staged: pieces are gathered
/// into one buffer, file ranges read straight into it, and the buffer written whenever it is
/// full. The caller flushes.
async fn write_spliced_staged<W: AsyncWrite + Unpin>(
    stream: &mut W,
    frame: SplicedFrame<FetchRecords>,
    stall: Duration,
) -> Result<(), SendError> {
    let mut stage = Stage::new(frame.len().min(TLS_STAGE_BYTES));
    for piece in frame.into_pieces() {
        match piece {
            Piece::Bytes(b) => stage.put(stream, &b, stall).await?,
            Piece::Records(records) => {
                for part in records.parts() {
                    match part {
                        RecordPart::Memory(b) => stage.put(stream, b, stall).await?,
                        RecordPart::File(slice) => stage.put_file(stream, slice, stall).await?,
                    }
                }
            }
        }
    }
    stage.drain(stream, stall).await
}

/// The staging buffer of one answer: `buf[..filled]` is waiting to be written.
struct Stage {
    buf: Vec<u8>,
    filled: usize,
}

impl Stage {
    fn new(capacity: usize) -> Stage {
        Stage {
            buf: vec![0u8; capacity.max(1)],
            filled: 0,
        }
    }

    /// Writes out what is staged.
    async fn drain<W: AsyncWrite + Unpin>(
        &mut self,
        stream: &mut W,
        stall: Duration,
    ) -> Result<(), SendError> {
        let mut staged = &self.buf[..self.filled];
        write_all_within(stream, &mut staged, stall).await?;
        self.filled = 0;
        Ok(())
    }

    /// Stages `bytes`, writing out whenever the buffer fills.
    async fn put<W: AsyncWrite + Unpin>(
        &mut self,
        stream: &mut W,
        mut bytes: &[u8],
        stall: Duration,
    ) -> Result<(), SendError> {
        while !bytes.is_empty() {
            if self.filled == self.buf.len() {
                self.drain(stream, stall).await?;
            }
            let n = bytes.len().min(self.buf.len() - self.filled);
            self.buf[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// Stages `slice` of a segment file, read straight into the buffer (from the page cache,
    /// as `sendfile`'s reads would be); a file found shorter ends the answer.
    async fn put_file<W: AsyncWrite + Unpin>(
        &mut self,
        stream: &mut W,
        slice: &FileSlice,
        stall: Duration,
    ) -> Result<(), SendError> {
        use std::os::unix::fs::FileExt;
        let end = slice.position() + slice.len() as u64;
        let mut position = slice.position();
        while position < end {
            if self.filled == self.buf.len() {
                self.drain(stream, stall).await?;
            }
            let want = ((end - position) as usize).min(self.buf.len() - self.filled);
            let buf = &mut self.buf[self.filled..self.filled + want];
            match slice.with_file(|file| file.read_exact_at(buf, position)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(SendError::short_file(slice, position, end))
                }
                Ok(Err(e)) => return Err(e.into()),
                Err(cut) => return Err(cut.into()),
            }
            self.filled += want;
            position += want as u64;
        }
        Ok(())
    }
}

/// Sends `slice` with `sendfile(2)`, waiting (at most `stall` each time) for the socket
/// whenever it is full.
async fn send_file(
    stream: &TcpStream,
    slice: &FileSlice,
    stall: Duration,
) -> Result<(), SendError> {
    let end = slice.position() + slice.len() as u64;
    let mut position = slice.position();
    while position < end {
        tokio::time::timeout(stall, stream.writable())
            .await
            .map_err(|_| SendError::Stalled(stall))??;
        let count = ((end - position) as usize).min(SENDFILE_CALL_MAX_BYTES);
        let sent = stream.try_io(Interest::WRITABLE, || {
            let mut at = position;
            match slice.with_file(|file| rustix::fs::sendfile(stream, file, Some(&mut at), count)) {
                Ok(Ok(n)) => Ok(Ok(n)),
                Ok(Err(errno)) => Err(io::Error::from(errno)),
                Err(cut) => Ok(Err(cut)),
            }
        });
        match sent {
            Ok(Ok(0)) => return Err(SendError::short_file(slice, position, end)),
            Ok(Ok(n)) => position += n as u64,
            Ok(Err(cut)) => return Err(cut.into()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
