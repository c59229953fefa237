//! Fetch answers without copying their records.
//!
//! A Fetch answer is mostly record batches read from the log, as many separate pieces (the
//! log frames them individually, and may leave them in its files). The codec wants one `Bytes`
//! per partition, which would mean concatenating them, then copying them again into the
//! encoded frame. Instead:
//!
//! ```text
//!  handler:  records = placeholder (16 unique bytes) ──> records kept aside (any type R)
//!  encode:   codec encodes the small body; each placeholder lands behind its length prefix
//!  splice:   [frame up to the prefix + real length prefix] [records R] [bytes] [records R] ..
//! ```
//!
//! The result is a [`SplicedFrame`]: encoded bytes and records in wire order. The codec only
//! learns the records' length ([`SplicedRecords`]); the writer sends them its own way (the
//! broker: `sendfile(2)` from the segment files). The codec is untouched; only the length
//! prefixes of the spliced fields are rewritten (i32 before flexible versions, unsigned varint
//! of length + 1 from them). Tests check the spliced frame is byte-for-byte the frame the codec
//! writes for the concatenated records.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, ResponseKind};

use crate::response::{encode_response, EncodeError};

/// Bytes of a placeholder: 8 random, 4 of a per-splicer index, 4 fixed.
const PLACEHOLDER_BYTES: usize = 16;
const PLACEHOLDER_TAG: [u8; 4] = *b"CoHs";

/// Records a placeholder stands for. The codec only needs their length; whoever writes the
/// frame knows how to send them (from memory, or straight from a file).
pub trait SplicedRecords {
    /// Bytes the records take on the wire.
    fn wire_len(&self) -> usize;
}

impl SplicedRecords for Vec<Bytes> {
    fn wire_len(&self) -> usize {
        self.iter().map(Bytes::len).sum()
    }
}

/// Placeholders handed out for one response, and the records each stands for.
#[derive(Debug, Clone)]
pub struct RecordsSplicer<R = Vec<Bytes>> {
    nonce: u64,
    parts: Vec<(Bytes, R)>,
}

impl<R> Default for RecordsSplicer<R> {
    fn default() -> Self {
        RecordsSplicer::new()
    }
}

impl<R> RecordsSplicer<R> {
    /// A splicer whose placeholders no other splicer (or record) will match by chance.
    pub fn new() -> RecordsSplicer<R> {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x636f_686f_7274);
        RecordsSplicer {
            nonce: h.finish(),
            parts: Vec::new(),
        }
    }

    /// A stand-in for `records` to put in a response's records field.
    pub fn placeholder(&mut self, records: R) -> Bytes {
        let mut p = BytesMut::with_capacity(PLACEHOLDER_BYTES);
        p.put_u64(self.nonce);
        p.put_u32(u32::try_from(self.parts.len()).unwrap_or(u32::MAX));
        p.put_slice(&PLACEHOLDER_TAG);
        let p = p.freeze();
        self.parts.push((p.clone(), records));
        p
    }

    /// The records a placeholder stands for.
    pub fn records(&self, placeholder: &Bytes) -> Option<&R> {
        self.parts
            .iter()
            .find(|(p, _)| p == placeholder)
            .map(|(_, records)| records)
    }

    /// Whether nothing was handed out.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

impl RecordsSplicer<Vec<Bytes>> {
    /// The chunks a placeholder stands for, concatenated (tests).
    pub fn materialize(&self, placeholder: &Bytes) -> Option<Bytes> {
        self.records(placeholder).map(|chunks| concat(chunks))
    }
}

fn concat(chunks: &[Bytes]) -> Bytes {
    match chunks {
        [] => Bytes::new(),
        [one] => one.clone(),
        many => {
            let mut out = BytesMut::with_capacity(many.iter().map(Bytes::len).sum());
            for c in many {
                out.extend_from_slice(c);
            }
            out.freeze()
        }
    }
}

/// One piece of a spliced frame: encoded bytes, or records the writer sends its own way.
#[derive(Debug)]
pub enum Piece<R> {
    /// Bytes the codec wrote (frame length, header, body, length prefixes).
    Bytes(Bytes),
    /// The records of one records field.
    Records(R),
}

/// A whole frame as encoded bytes and records, in wire order.
#[derive(Debug)]
pub struct SplicedFrame<R> {
    pieces: Vec<Piece<R>>,
    len: usize,
}

impl<R> SplicedFrame<R> {
    /// Bytes of the whole frame, length prefix included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the frame is empty (never, for an encoded frame).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in wire order.
    pub fn into_pieces(self) -> Vec<Piece<R>> {
        self.pieces
    }
}

impl SplicedFrame<Vec<Bytes>> {
    /// The frame as chunks for a vectored write.
    pub fn into_chunks(self) -> Chunks {
        let mut out = Chunks::default();
        for piece in self.pieces {
            match piece {
                Piece::Bytes(b) => out.push(b),
                Piece::Records(chunks) => chunks.into_iter().for_each(|c| out.push(c)),
            }
        }
        out
    }
}

/// Encodes `body` (whose records fields hold `splicer`'s placeholders) as a whole frame, with
/// the records spliced in.
pub fn encode_spliced<R: SplicedRecords>(
    correlation_id: i32,
    api_key: ApiKey,
    version: i16,
    body: &ResponseKind,
    splicer: RecordsSplicer<R>,
) -> Result<SplicedFrame<R>, EncodeError> {
    let small = encode_response(correlation_id, api_key, version, body)?;
    let fail = |reason: String| EncodeError {
        api_key,
        version,
        reason,
    };
    let compact = api_key.response_header_version(version) >= 1;
    let mut pieces = Vec::with_capacity(splicer.parts.len() * 3 + 1);
    let mut at = 0usize;
    let mut total = 0usize;
    for (placeholder, records) in splicer.parts {
        let found = find(&small[at..], &placeholder)
            .map(|i| at + i)
            .ok_or_else(|| fail("a records placeholder is missing from the frame".into()))?;
        let (prefix_len, expected) = if compact {
            (1, vec![(PLACEHOLDER_BYTES + 1) as u8])
        } else {
            (4, (PLACEHOLDER_BYTES as i32).to_be_bytes().to_vec())
        };
        if found < at + prefix_len || small[found - prefix_len..found] != expected[..] {
            return Err(fail(
                "a records placeholder has an unexpected length prefix".into(),
            ));
        }
        let len = records.wire_len();
        let mut head = BytesMut::with_capacity(found - prefix_len - at + 5);
        head.extend_from_slice(&small[at..found - prefix_len]);
        if compact {
            put_uvarint(
                &mut head,
                u32::try_from(len + 1).map_err(|_| fail("records too large".into()))?,
            );
        } else {
            head.put_i32(i32::try_from(len).map_err(|_| fail("records too large".into()))?);
        }
        total += head.len() + len;
        pieces.push(Piece::Bytes(head.freeze()));
        if len > 0 {
            pieces.push(Piece::Records(records));
        }
        at = found + PLACEHOLDER_BYTES;
    }
    let tail = small.slice(at..);
    total += tail.len();
    pieces.push(Piece::Bytes(tail));
    // The frame's own length prefix counts what follows it.
    let size = i32::try_from(total - 4).map_err(|_| fail("frame too large".into()))?;
    if let Some(Piece::Bytes(first)) = pieces.first_mut() {
        if first.len() >= 4 {
            let mut head = BytesMut::from(&first[..]);
            head[..4].copy_from_slice(&size.to_be_bytes());
            *first = head.freeze();
        }
    }
    Ok(SplicedFrame { pieces, len: total })
}

fn put_uvarint(out: &mut BytesMut, mut v: u32) {
    while v >= 0x80 {
        out.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A frame as a list of byte chunks; a [`Buf`], so it is written with vectored writes.
#[derive(Debug, Default, Clone)]
pub struct Chunks {
    chunks: VecDeque<Bytes>,
    remaining: usize,
}

impl Chunks {
    /// One whole frame.
    pub fn single(frame: Bytes) -> Chunks {
        let mut c = Chunks::default();
        c.push(frame);
        c
    }

    /// Appends a chunk (empty ones are skipped).
    pub fn push(&mut self, b: Bytes) {
        if !b.is_empty() {
            self.remaining += b.len();
            self.chunks.push_back(b);
        }
    }

    /// Appends every chunk of `other`: answers that go out in one vectored write.
    pub fn append(&mut self, other: Chunks) {
        self.remaining += other.remaining;
        self.chunks.extend(other.chunks);
    }

    /// Everything, concatenated (tests).
    pub fn to_bytes(&self) -> Bytes {
        concat(&self.chunks.iter().cloned().collect::<Vec<_>>())
    }
}

impl Buf for Chunks {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.chunks.front().map_or(&[], |b| &b[..])
    }

    fn advance(&mut self, mut cnt: usize) {
        cnt = cnt.min(self.remaining);
        self.remaining -= cnt;
        while cnt > 0 {
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            if cnt < front.len() {
                front.advance(cnt);
                break;
            }
            cnt -= front.len();
            self.chunks.pop_front();
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [std::io::IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, chunk) in dst.iter_mut().zip(self.chunks.iter()) {
            *slot = std::io::IoSlice::new(chunk);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::fetch_response::{
        FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
    };
    use kafka_protocol::messages::{BrokerId, FetchResponse, TopicName};
    use kafka_protocol::protocol::StrBytes;

    fn response(records: &[Option<Bytes>], version: i16) -> FetchResponse {
        let partitions = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut p = PartitionData::default()
                    .with_partition_index(i as i32)
                    .with_high_watermark(1000)
                    .with_last_stable_offset(1000)
                    .with_records(r.clone());
                if version >= 5 {
                    p = p.with_log_start_offset(0);
                }
                // From v16 a leadership hint is a tagged field after the records.
                if version >= 16 && i == 0 {
                    p = p.with_current_leader(
                        LeaderIdAndEpoch::default()
                            .with_leader_id(BrokerId(2))
                            .with_leader_epoch(0),
                    );
                }
                p
            })
            .collect();
        // From v13 topics are named by id.
        let topic = if version >= 13 {
            FetchableTopicResponse::default().with_topic_id(uuid::Uuid::from_u128(42))
        } else {
            FetchableTopicResponse::default()
                .with_topic(TopicName(StrBytes::from_static_str("spliced")))
        };
        let mut r =
            FetchResponse::default().with_responses(vec![topic.with_partitions(partitions)]);
        if version >= 16 {
            r = r.with_node_endpoints(vec![NodeEndpoint::default()
                .with_node_id(BrokerId(2))
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(9093)]);
        }
        r
    }

    #[test]
    fn spliced_frames_equal_what_the_codec_writes_at_every_fetch_version() {
        let chunk_sets: Vec<Vec<Bytes>> = vec![
            vec![Bytes::from(vec![1u8; 70_000]), Bytes::from(vec![2u8; 5])],
            vec![],
            vec![Bytes::from_static(b"one")],
            (0..200)
                .map(|i| Bytes::from(vec![i as u8; 100 + i]))
                .collect(),
        ];
        for version in 4..=17 {
            let mut splicer = RecordsSplicer::new();
            let placeholders: Vec<Option<Bytes>> = chunk_sets
                .iter()
                .map(|c| Some(splicer.placeholder(c.clone())))
                .collect();
            let spliced = encode_spliced(
                77,
                ApiKey::Fetch,
                version,
                &ResponseKind::Fetch(response(&placeholders, version)),
                splicer,
            )
            .unwrap();
            let frame_len = spliced.len();
            let spliced = spliced.into_chunks();
            let whole: Vec<Option<Bytes>> = chunk_sets.iter().map(|c| Some(concat(c))).collect();
            let expected = encode_response(
                77,
                ApiKey::Fetch,
                version,
                &ResponseKind::Fetch(response(&whole, version)),
            )
            .unwrap();
            assert_eq!(frame_len, expected.len(), "v{version}");
            assert_eq!(spliced.remaining(), expected.len(), "v{version}");
            assert_eq!(spliced.to_bytes(), expected, "v{version}");
        }
    }

    #[test]
    fn the_buf_walks_every_chunk() {
        let mut c = Chunks::default();
        c.push(Bytes::from_static(b"ab"));
        c.push(Bytes::from_static(b"cde"));
        c.push(Bytes::from_static(b"f"));
        let mut out = Vec::new();
        while c.has_remaining() {
            let n = c.chunk().len().min(2);
            out.extend_from_slice(&c.chunk()[..n]);
            c.advance(n);
        }
        assert_eq!(out, b"abcdef");
    }
}
