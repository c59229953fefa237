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

use std::io;

use compaction::{FileSlice, SliceCut};
use protocol::splice::{Chunks, Piece, SplicedFrame};
use tokio::io::{AsyncWriteExt, Interest};
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

/// Writes `frame` to `stream`, every piece in order.
pub async fn write_spliced(
    stream: &mut TcpStream,
    frame: SplicedFrame<FetchRecords>,
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
                            stream.write_all_buf(&mut pending).await?;
                            send_file(stream, slice).await?;
                        }
                    }
                }
            }
        }
    }
    stream.write_all_buf(&mut pending).await?;
    Ok(())
}

/// Sends `slice` with `sendfile(2)`, waiting for the socket whenever it is full.
async fn send_file(stream: &TcpStream, slice: &FileSlice) -> Result<(), SendError> {
    let end = slice.position() + slice.len() as u64;
    let mut position = slice.position();
    while position < end {
        stream.writable().await?;
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
            Ok(Ok(0)) => {
                return Err(SendError::ShortFile {
                    path: slice.path().to_owned(),
                    at: position,
                    missing: end - position,
                })
            }
            Ok(Ok(n)) => position += n as u64,
            Ok(Err(cut)) => return Err(cut.into()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
