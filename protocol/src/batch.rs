//! Record batches (magic v2) as the broker handles them: checked, re-based, stored whole.
//!
//! ```text
//!   0  base offset        i64   <- rewritten in place with the assigned offset
//!   8  batch length       i32      (bytes after this field)
//!  12  partition leader epoch i32 <- rewritten in place
//!  16  magic              i8       (2)
//!  17  crc                u32      CRC32C of bytes 21.. (so the two rewrites above keep it valid)
//!  21  attributes         i16      compression (bits 0-2), timestamp type (3), transactional
//!                                  (4), control (5)
//!  23  last offset delta  i32
//!  27  base timestamp     i64
//!  35  max timestamp      i64
//!  43  producer id        i64
//!  51  producer epoch     i16
//!  53  base sequence      i32
//!  57  record count       i32
//!  61  records (compressed as a whole when compression != none)
//! ```
//!
//! The header is read at fixed positions: checking and re-basing a batch never decompresses it.
//! Only [`find_record`] looks inside, for ListOffsets by timestamp.

use bytes::Bytes;
use kafka_protocol::records::{Compression, RecordBatchDecoder};

pub mod control;

/// Bytes of the v2 batch header.
pub const BATCH_HEADER_BYTES: usize = 61;
/// Bytes before the batch length's coverage starts (base offset + length).
pub const BATCH_LENGTH_OFFSET: usize = 12;
const MAGIC_OFFSET: usize = 16;
const CRC_OFFSET: usize = 17;
const CRC_COVERED_FROM: usize = 21;
/// Largest decompressed record data looked at (a decompression bomb is an error, not an OOM).
pub const MAX_DECOMPRESSED_BYTES: usize = 256 << 20;

/// The fixed header of a v2 record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// First offset (0 as a client sends it).
    pub base_offset: i64,
    /// Bytes after the length field.
    pub batch_length: i32,
    /// Partition leader epoch.
    pub partition_leader_epoch: i32,
    /// Format version (2).
    pub magic: i8,
    /// CRC32C of the bytes from the attributes on.
    pub crc: u32,
    /// Attribute bits.
    pub attributes: i16,
    /// Last offset minus base offset.
    pub last_offset_delta: i32,
    /// Timestamp of the first record.
    pub base_timestamp: i64,
    /// Largest record timestamp.
    pub max_timestamp: i64,
    /// Idempotent producer id, or -1.
    pub producer_id: i64,
    /// Producer epoch, or -1.
    pub producer_epoch: i16,
    /// Sequence of the first record, or -1.
    pub base_sequence: i32,
    /// Records in the batch.
    pub record_count: i32,
}

/// Compression codecs by their attribute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// 0.
    None,
    /// 1.
    Gzip,
    /// 2.
    Snappy,
    /// 3.
    Lz4,
    /// 4.
    Zstd,
}

/// What is wrong with a batch. [`BatchError::is_corrupt`] tells CORRUPT_MESSAGE (damaged bytes)
/// from INVALID_RECORD (well-formed but not allowed), as Kafka distinguishes them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// Fewer bytes than a header, or than the length field announces.
    #[error("record batch truncated: {have} bytes, {need} needed")]
    Truncated {
        /// Bytes present.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
    /// A length field that cannot be right.
    #[error("record batch length {0} is invalid")]
    BadLength(i32),
    /// CRC mismatch.
    #[error("record batch CRC {stored:#010x} does not match the computed {computed:#010x}")]
    Crc {
        /// CRC in the header.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// An unknown compression codec.
    #[error("unknown compression codec {0}")]
    UnknownCodec(i16),
    /// Not magic v2.
    #[error("record batch magic {0} is not supported (only v2)")]
    UnsupportedMagic(i8),
    /// None, or more than one batch, where exactly one is required.
    #[error("a produce request must carry exactly one record batch per partition, found {0}")]
    BatchCount(usize),
    /// Record count and offset delta disagree, or are not positive.
    #[error("inconsistent batch: {record_count} records, last offset delta {last_offset_delta}")]
    InconsistentCount {
        /// Record count field.
        record_count: i32,
        /// Last offset delta field.
        last_offset_delta: i32,
    },
    /// A control batch from a client.
    #[error("clients may not write control batches")]
    ControlBatch,
    /// An idempotent batch without a sequence.
    #[error("invalid sequence number {0} for an idempotent producer")]
    BadSequence(i32),
    /// The records inside do not decode (or decompress beyond the limit).
    #[error("records do not decode: {0}")]
    Records(String),
    /// Looking inside the batch would take more memory than the caller allows.
    #[error("looking inside this record batch needs more than {limit} bytes")]
    OverBudget {
        /// The bytes allowed.
        limit: usize,
    },
}

impl BatchError {
    /// True for damaged bytes (CORRUPT_MESSAGE); false for a well-formed batch that breaks a
    /// rule (INVALID_RECORD).
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self,
            BatchError::Truncated { .. }
                | BatchError::BadLength(_)
                | BatchError::Crc { .. }
                | BatchError::UnknownCodec(_)
                | BatchError::Records(_)
        )
    }
}

fn i16_at(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(raw)
}

impl BatchHeader {
    /// Reads the header at the front of `bytes` (no CRC check).
    pub fn parse(bytes: &[u8]) -> Result<BatchHeader, BatchError> {
        if bytes.len() < BATCH_HEADER_BYTES {
            return Err(BatchError::Truncated {
                have: bytes.len(),
                need: BATCH_HEADER_BYTES,
            });
        }
        Ok(BatchHeader {
            base_offset: i64_at(bytes, 0),
            batch_length: i32_at(bytes, 8),
            partition_leader_epoch: i32_at(bytes, 12),
            magic: bytes[MAGIC_OFFSET] as i8,
            crc: u32::from_be_bytes([
                bytes[CRC_OFFSET],
                bytes[CRC_OFFSET + 1],
                bytes[CRC_OFFSET + 2],
                bytes[CRC_OFFSET + 3],
            ]),
            attributes: i16_at(bytes, 21),
            last_offset_delta: i32_at(bytes, 23),
            base_timestamp: i64_at(bytes, 27),
            max_timestamp: i64_at(bytes, 35),
            producer_id: i64_at(bytes, 43),
            producer_epoch: i16_at(bytes, 51),
            base_sequence: i32_at(bytes, 53),
            record_count: i32_at(bytes, 57),
        })
    }

    /// Total bytes of the batch, header included.
    pub fn total_bytes(&self) -> usize {
        BATCH_LENGTH_OFFSET + self.batch_length.max(0) as usize
    }

    /// The compression codec.
    pub fn codec(&self) -> Result<Codec, BatchError> {
        Ok(match self.attributes & 0x07 {
            0 => Codec::None,
            1 => Codec::Gzip,
            2 => Codec::Snappy,
            3 => Codec::Lz4,
            4 => Codec::Zstd,
            other => return Err(BatchError::UnknownCodec(other)),
        })
    }

    /// Part of a transaction.
    pub fn is_transactional(&self) -> bool {
        self.attributes & 0x10 != 0
    }

    /// A control batch (transaction marker).
    pub fn is_control(&self) -> bool {
        self.attributes & 0x20 != 0
    }

    /// Written by an idempotent producer.
    pub fn is_idempotent(&self) -> bool {
        self.producer_id >= 0
    }

    /// Sequence of the last record (wrapping as Kafka's sequences do).
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence < 0 {
            return -1;
        }
        let last = i64::from(self.base_sequence) + i64::from(self.last_offset_delta);
        (last % (i64::from(i32::MAX) + 1)) as i32
    }
}

/// Checks the records of one Produce partition: exactly one v2 batch, whole, CRC intact,
/// counts consistent, no control batch; returns its header.
pub fn validate_produced(records: &[u8]) -> Result<BatchHeader, BatchError> {
    if records.is_empty() {
        return Err(BatchError::BatchCount(0));
    }
    let header = BatchHeader::parse(records)?;
    if header.magic != 2 {
        return Err(BatchError::UnsupportedMagic(header.magic));
    }
    if (header.batch_length as i64) < (BATCH_HEADER_BYTES - BATCH_LENGTH_OFFSET) as i64 {
        return Err(BatchError::BadLength(header.batch_length));
    }
    let total = header.total_bytes();
    if records.len() < total {
        return Err(BatchError::Truncated {
            have: records.len(),
            need: total,
        });
    }
    if records.len() > total {
        // Whatever follows must be another batch: Produce v3+ allows exactly one.
        return Err(BatchError::BatchCount(2));
    }
    let computed = crc32c::crc32c(&records[CRC_COVERED_FROM..total]);
    if computed != header.crc {
        return Err(BatchError::Crc {
            stored: header.crc,
            computed,
        });
    }
    header.codec()?;
    if header.record_count <= 0
        || header.last_offset_delta < 0
        || i64::from(header.last_offset_delta) + 1 != i64::from(header.record_count)
    {
        return Err(BatchError::InconsistentCount {
            record_count: header.record_count,
            last_offset_delta: header.last_offset_delta,
        });
    }
    if header.is_control() {
        return Err(BatchError::ControlBatch);
    }
    if header.is_idempotent() && header.base_sequence < 0 {
        return Err(BatchError::BadSequence(header.base_sequence));
    }
    Ok(header)
}

/// Assigns `base_offset` (and the leader epoch) by rewriting the header in place. Both fields
/// lie before the CRC's coverage, so the batch stays valid.
pub fn rebase(batch: &mut [u8], base_offset: i64, partition_leader_epoch: i32) {
    if batch.len() >= BATCH_HEADER_BYTES {
        batch[0..8].copy_from_slice(&base_offset.to_be_bytes());
        batch[12..16].copy_from_slice(&partition_leader_epoch.to_be_bytes());
    }
}

/// A record inside a batch: its absolute offset and timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordPosition {
    /// Absolute offset (the batch's base offset + the record's delta).
    pub offset: i64,
    /// The record's timestamp.
    pub timestamp: i64,
}

/// Memory one decoded record takes besides its bytes (the decoder builds them all at once).
pub const DECODED_RECORD_BYTES: usize = std::mem::size_of::<kafka_protocol::records::Record>();

/// The first record in `batch` (a stored, re-based batch) for which `wanted` holds, looking
/// inside compressed batches with pure-Rust decoders.
pub fn find_record(
    batch: &Bytes,
    wanted: impl FnMut(&RecordPosition) -> bool,
) -> Result<Option<RecordPosition>, BatchError> {
    find_record_within(batch, MAX_DECOMPRESSED_BYTES, wanted)
}

/// A first estimate of the memory [`find_record_within`] needs for `batch`: its records as
/// decoded structures, plus four times its compressed records (most batches decompress to
/// less; a larger one is refused and can be retried with more).
pub fn lookup_bytes_estimate(batch: &[u8]) -> Result<usize, BatchError> {
    let header = BatchHeader::parse(batch)?;
    let records = record_structs_bytes(&header);
    let data = match header.codec()? {
        Codec::None => 0,
        _ => header.total_bytes().saturating_mul(4),
    };
    Ok(records.saturating_add(data))
}

fn record_structs_bytes(header: &BatchHeader) -> usize {
    usize::try_from(header.record_count.max(0))
        .unwrap_or(usize::MAX)
        .saturating_mul(DECODED_RECORD_BYTES)
}

/// [`find_record`] within `limit` bytes of memory: the decoded records and the decompressed
/// data together. A batch needing more is [`BatchError::OverBudget`], found before the
/// allocation that would pass the limit.
pub fn find_record_within(
    batch: &Bytes,
    limit: usize,
    mut wanted: impl FnMut(&RecordPosition) -> bool,
) -> Result<Option<RecordPosition>, BatchError> {
    let header = BatchHeader::parse(batch)?;
    let codec = header.codec()?;
    let records_bytes = record_structs_bytes(&header);
    let Some(data_limit) = limit.checked_sub(records_bytes) else {
        return Err(BatchError::OverBudget { limit });
    };
    let mut buf = batch.slice(..header.total_bytes().min(batch.len()));
    let over_budget = std::cell::Cell::new(false);
    let decoded = RecordBatchDecoder::decode_with_custom_compression(
        &mut buf,
        Some(
            |data: &mut Bytes, _: Compression| -> anyhow::Result<Bytes> {
                match decompress_within(codec, data, data_limit) {
                    Err(Decompress::OverLimit) => {
                        over_budget.set(true);
                        Err(anyhow::anyhow!("over the lookup budget"))
                    }
                    Err(Decompress::Invalid(e)) => Err(anyhow::anyhow!(e)),
                    Ok(out) => Ok(out),
                }
            },
        ),
    );
    if over_budget.get() {
        return Err(BatchError::OverBudget { limit });
    }
    let set = decoded.map_err(|e| BatchError::Records(e.to_string()))?;
    Ok(set
        .records
        .iter()
        .map(|r| RecordPosition {
            offset: r.offset,
            timestamp: r.timestamp,
        })
        .find(|p| wanted(p)))
}

/// Decompresses a batch's record data (Kafka's framing for each codec), capped at
/// [`MAX_DECOMPRESSED_BYTES`].
pub fn decompress(codec: Codec, data: &Bytes) -> Result<Bytes, String> {
    decompress_within(codec, data, MAX_DECOMPRESSED_BYTES).map_err(|e| match e {
        Decompress::OverLimit => {
            format!("decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes")
        }
        Decompress::Invalid(e) => e,
    })
}

/// Why [`decompress_within`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decompress {
    /// The output would pass the limit.
    OverLimit,
    /// The data does not decompress.
    Invalid(String),
}

/// Decompresses at most `limit` bytes (and never more than [`MAX_DECOMPRESSED_BYTES`]):
/// output past it is never allocated.
pub fn decompress_within(codec: Codec, data: &Bytes, limit: usize) -> Result<Bytes, Decompress> {
    use std::io::Read;
    let limit = limit.min(MAX_DECOMPRESSED_BYTES);
    let cap = limit as u64 + 1;
    let mut out = Vec::new();
    let read = |r: &mut dyn Read, out: &mut Vec<u8>| -> Result<(), Decompress> {
        r.take(cap)
            .read_to_end(out)
            .map(|_| ())
            .map_err(|e| Decompress::Invalid(e.to_string()))
    };
    match codec {
        // Uncompressed record data is a slice of the batch: nothing is allocated.
        Codec::None => return Ok(data.clone()),
        Codec::Gzip => read(&mut flate2::read::GzDecoder::new(&data[..]), &mut out)?,
        Codec::Lz4 => read(&mut lz4_flex::frame::FrameDecoder::new(&data[..]), &mut out)?,
        Codec::Zstd => {
            let mut d = ruzstd::decoding::StreamingDecoder::new(&data[..])
                .map_err(|e| Decompress::Invalid(format!("zstd: {e}")))?;
            read(&mut d, &mut out)?;
        }
        Codec::Snappy => out = snappy(data, limit)?,
    }
    if out.len() > limit {
        return Err(Decompress::OverLimit);
    }
    Ok(Bytes::from(out))
}

/// The most a raw snappy block can expand: its densest element is a 3-byte copy of 64 bytes
/// (the format's 2-byte-offset copy), 21.3 times its size; literals and other copies expand less.
const SNAPPY_MAX_EXPANSION: usize = 22;

/// Snappy as Kafka clients write it: the Java client uses xerial's block framing (a magic
/// header, then length-prefixed raw blocks); librdkafka and others write one raw block. Each
/// block announces its decompressed length, checked against `limit` before it is allocated.
fn snappy(data: &[u8], limit: usize) -> Result<Vec<u8>, Decompress> {
    const XERIAL_MAGIC: &[u8] = &[0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
    const XERIAL_HEADER_BYTES: usize = 16;
    let invalid = |e: String| Decompress::Invalid(e);
    let raw = |block: &[u8], out: &mut Vec<u8>| -> Result<(), Decompress> {
        let len = snap::raw::decompress_len(block).map_err(|e| invalid(format!("snappy: {e}")))?;
        // The length is a header anyone can write: believed as it is, five bytes made us
        // zero-fill up to the limit before the decoder found the block short (the
        // record-batch fuzzer's slowest inputs). No block can claim more than it can produce.
        if len > block.len().saturating_mul(SNAPPY_MAX_EXPANSION) {
            return Err(invalid(format!(
                "snappy: a {}-byte block claims {len} bytes, more than snappy can expand to",
                block.len()
            )));
        }
        if out.len().saturating_add(len) > limit {
            return Err(Decompress::OverLimit);
        }
        let start = out.len();
        out.resize(start + len, 0);
        snap::raw::Decoder::new()
            .decompress(block, &mut out[start..])
            .map_err(|e| invalid(format!("snappy: {e}")))?;
        Ok(())
    };
    let mut out = Vec::new();
    if data.len() >= XERIAL_HEADER_BYTES && data.starts_with(XERIAL_MAGIC) {
        let mut at = XERIAL_HEADER_BYTES;
        while at < data.len() {
            if at + 4 > data.len() {
                return Err(invalid("snappy: truncated xerial block length".into()));
            }
            let len = i32_at(data, at);
            let len = usize::try_from(len)
                .map_err(|_| invalid("snappy: negative block length".into()))?;
            at += 4;
            let end = at
                .checked_add(len)
                .filter(|e| *e <= data.len())
                .ok_or_else(|| invalid("snappy: truncated xerial block".into()))?;
            raw(&data[at..end], &mut out)?;
            at = end;
        }
    } else {
        raw(data, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use kafka_protocol::records::{Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType};

    /// A batch of `n` records with timestamps 1000, 1010, ... as a client encodes it.
    pub(crate) fn batch(n: i64, compression: Compression) -> BytesMut {
        let records: Vec<Record> = (0..n)
            .map(|i| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: 7,
                producer_epoch: 0,
                timestamp_type: TimestampType::Creation,
                offset: i,
                sequence: i as i32,
                timestamp: 1000 + 10 * i,
                key: Some(Bytes::from(format!("k{i}"))),
                value: Some(Bytes::from(vec![b'v'; 100])),
                headers: Default::default(),
            })
            .collect();
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode_with_custom_compression(
            &mut buf,
            records.iter(),
            &RecordEncodeOptions {
                version: 2,
                compression,
            },
            Some(|input: &mut BytesMut, out: &mut BytesMut, c: Compression| {
                let compressed: Vec<u8> = match c {
                    Compression::None => input.to_vec(),
                    Compression::Lz4 => {
                        let mut w = lz4_flex::frame::FrameEncoder::new(Vec::new());
                        std::io::Write::write_all(&mut w, input)?;
                        w.finish()?
                    }
                    Compression::Snappy => snap::raw::Encoder::new().compress_vec(input)?,
                    Compression::Gzip => {
                        let mut w =
                            flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                        std::io::Write::write_all(&mut w, input)?;
                        w.finish()?
                    }
                    Compression::Zstd => ruzstd::encoding::compress_to_vec(
                        &input[..],
                        ruzstd::encoding::CompressionLevel::Fastest,
                    ),
                };
                out.extend_from_slice(&compressed);
                Ok(())
            }),
        )
        .unwrap();
        buf
    }

    #[test]
    fn a_client_batch_validates_and_rebases_without_breaking_its_crc() {
        let mut b = batch(3, Compression::None);
        let h = validate_produced(&b).unwrap();
        assert_eq!(
            (h.base_offset, h.record_count, h.last_offset_delta),
            (0, 3, 2)
        );
        assert_eq!(
            (h.producer_id, h.base_sequence, h.last_sequence()),
            (7, 0, 2)
        );
        assert_eq!(h.max_timestamp, 1020);
        rebase(&mut b, 1000, 0);
        let h2 = validate_produced(&b).unwrap();
        assert_eq!(h2.base_offset, 1000);
        let found = find_record(&b.freeze(), |r| r.timestamp >= 1010).unwrap();
        assert_eq!(
            found,
            Some(RecordPosition {
                offset: 1001,
                timestamp: 1010
            })
        );
    }

    /// The record-batch fuzzer (`protocol/fuzz`) starts from a client-encoded batch per codec:
    /// `COHORT_WRITE_FUZZ_SEEDS=1` writes them, otherwise they must be what is kept.
    #[test]
    fn the_batch_fuzz_corpus_has_a_batch_per_codec() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/record_batch");
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let b = batch(3, c);
            let path = dir.join(format!("{c:?}"));
            if std::env::var_os("COHORT_WRITE_FUZZ_SEEDS").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &b).unwrap();
                continue;
            }
            let kept = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; COHORT_WRITE_FUZZ_SEEDS=1 writes it",
                    path.display()
                )
            });
            assert_eq!(kept, &b[..], "{} is stale", path.display());
        }
    }

    #[test]
    fn a_snappy_block_is_not_believed_past_what_it_can_expand_to() {
        // The densest input there is still decodes: a mebibyte of zeros, as snap encodes it.
        let zeros = vec![0u8; 1 << 20];
        let dense = snap::raw::Encoder::new().compress_vec(&zeros).unwrap();
        let out = decompress(Codec::Snappy, &Bytes::from(dense)).unwrap();
        assert_eq!(out.len(), zeros.len());
        // Six bytes claiming 200 MiB are refused before anything is allocated for them.
        let mut claim = Vec::new();
        let mut n = 200u64 << 20;
        while n >= 0x80 {
            claim.push((n as u8) | 0x80);
            n >>= 7;
        }
        claim.push(n as u8);
        claim.extend_from_slice(&[0, 0]);
        let err = decompress(Codec::Snappy, &Bytes::from(claim)).unwrap_err();
        assert!(err.contains("claims 209715200 bytes"), "{err}");
    }

    #[test]
    fn every_codec_is_looked_into() {
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut b = batch(50, c);
            validate_produced(&b).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            rebase(&mut b, 500, 0);
            let found = find_record(&b.freeze(), |r| r.timestamp >= 1255).unwrap();
            assert_eq!(
                found,
                Some(RecordPosition {
                    offset: 526,
                    timestamp: 1260
                }),
                "{c:?}"
            );
        }
    }

    #[test]
    fn damage_and_rule_breaking_are_told_apart() {
        let good = batch(2, Compression::None);
        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        let err = validate_produced(&flipped).unwrap_err();
        assert!(
            matches!(err, BatchError::Crc { .. }) && err.is_corrupt(),
            "{err}"
        );

        let err = validate_produced(&good[..good.len() - 1]).unwrap_err();
        assert!(
            matches!(err, BatchError::Truncated { .. }) && err.is_corrupt(),
            "{err}"
        );

        let mut two = good.clone();
        two.extend_from_slice(&good);
        let err = validate_produced(&two).unwrap_err();
        assert_eq!(err, BatchError::BatchCount(2));
        assert!(!err.is_corrupt());

        let mut old = good.clone();
        old[MAGIC_OFFSET] = 1;
        assert_eq!(
            validate_produced(&old),
            Err(BatchError::UnsupportedMagic(1))
        );
        assert_eq!(validate_produced(&[]), Err(BatchError::BatchCount(0)));
    }

    #[test]
    fn a_lookup_stops_at_its_budget_for_every_codec() {
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut b = batch(50, c);
            rebase(&mut b, 500, 0);
            let b = b.freeze();
            let records = 50 * DECODED_RECORD_BYTES;
            // Room for the decoded records only: any decompression passes it.
            let tight = find_record_within(&b, records, |r| r.timestamp >= 1255);
            if c == Compression::None {
                assert!(tight.unwrap().is_some(), "{c:?}");
            } else {
                assert_eq!(
                    tight,
                    Err(BatchError::OverBudget { limit: records }),
                    "{c:?}"
                );
                assert!(!BatchError::OverBudget { limit: 1 }.is_corrupt());
            }
            assert_eq!(
                find_record_within(&b, 0, |_| true),
                Err(BatchError::OverBudget { limit: 0 }),
                "{c:?}"
            );
            // The estimate is a first guess (4x the compressed bytes; the caller takes the
            // whole budget when decoding passes it): small, very compressible test batches
            // can pass it, so the lookup is checked within a roomy budget instead.
            let estimate = lookup_bytes_estimate(&b).unwrap();
            assert!(estimate >= records, "{c:?}: {estimate}");
            let roomy = records + (64 << 10);
            let found = find_record_within(&b, roomy, |r| r.timestamp >= 1255).unwrap();
            assert_eq!(found.map(|r| r.offset), Some(526), "{c:?} within {roomy}");
        }
    }

    #[test]
    fn a_decompression_bomb_is_refused_before_it_is_allocated() {
        use std::io::Write;
        // 64 MiB of zeros gzip to ~64 KiB.
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = Bytes::from(enc.finish().unwrap());
        assert!(bomb.len() < 1 << 20);
        assert_eq!(
            decompress_within(Codec::Gzip, &bomb, 1 << 20),
            Err(Decompress::OverLimit)
        );
        assert_eq!(
            decompress_within(Codec::Gzip, &bomb, 64 << 20)
                .unwrap()
                .len(),
            64 << 20
        );
    }

    #[test]
    fn xerial_framed_snappy_is_read_too() {
        let payload = b"hello hello hello hello snappy".repeat(10);
        let block = snap::raw::Encoder::new().compress_vec(&payload).unwrap();
        let mut framed = vec![
            0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
        ];
        framed.extend_from_slice(&(block.len() as i32).to_be_bytes());
        framed.extend_from_slice(&block);
        let out = decompress(Codec::Snappy, &Bytes::from(framed)).unwrap();
        assert_eq!(&out[..], &payload[..]);
    }
}
