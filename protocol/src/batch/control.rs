//! Transaction markers: the control batches a transaction coordinator has written to every
//! partition of a transaction when it commits or aborts (KIP-98).
//!
//! ```text
//!  batch   magic 2, attributes transactional (0x10) | control (0x20), no compression,
//!          producer id / epoch of the transaction, base sequence −1, one record
//!  record  key   = version i16 (0) | type i16 (0 ABORT, 1 COMMIT)       Kafka's ControlRecordType
//!          value = version i16 (0) | coordinator epoch i32              Kafka's EndTransactionMarker
//! ```
//!
//! [`encode_control_batch`] builds the bytes the marker writer appends; [`decode_control_batch`]
//! reads them back (the data plane's producer state and aborted-transaction index, and tests).

use bytes::{BufMut, Bytes, BytesMut};

use super::{BatchError, BatchHeader, BATCH_HEADER_BYTES, BATCH_LENGTH_OFFSET, CRC_COVERED_FROM};

/// Batch attribute bit of a transactional batch.
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
/// Batch attribute bit of a control batch.
pub const ATTR_CONTROL: i16 = 0x20;

/// What a marker ends the transaction with (Kafka's `ControlRecordType`, types 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlType {
    /// ABORT (0): the transaction's records are to be skipped by read_committed consumers.
    Abort,
    /// COMMIT (1).
    Commit,
}

impl ControlType {
    /// The wire value of the record key's type field.
    pub fn code(self) -> i16 {
        match self {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
        }
    }
}

/// One transaction marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlMarker {
    /// COMMIT or ABORT.
    pub kind: ControlType,
    /// The transaction's producer id.
    pub producer_id: i64,
    /// The producer epoch the marker carries.
    pub producer_epoch: i16,
    /// The coordinator epoch (Kafka's transaction-state partition leader epoch; here the
    /// coordinator's Raft term, truncated to what the field holds).
    pub coordinator_epoch: i32,
    /// The batch's (and record's) timestamp, ms.
    pub timestamp_ms: i64,
}

/// The control record's key and value versions (Kafka writes and accepts only 0).
const CONTROL_RECORD_VERSION: i16 = 0;

/// The marker as one v2 batch at base offset 0 and partition leader epoch −1 (the append path
/// re-bases both, outside the CRC's coverage).
pub fn encode_control_batch(marker: &ControlMarker) -> Bytes {
    let mut key = [0u8; 4];
    key[0..2].copy_from_slice(&CONTROL_RECORD_VERSION.to_be_bytes());
    key[2..4].copy_from_slice(&marker.kind.code().to_be_bytes());
    let mut value = [0u8; 6];
    value[0..2].copy_from_slice(&CONTROL_RECORD_VERSION.to_be_bytes());
    value[2..6].copy_from_slice(&marker.coordinator_epoch.to_be_bytes());

    // The record: attributes, timestamp delta, offset delta, key, value, no headers.
    let mut record = BytesMut::with_capacity(24);
    record.put_i8(0);
    put_varint(&mut record, 0);
    put_varint(&mut record, 0);
    put_varint(&mut record, key.len() as i64);
    record.put_slice(&key);
    put_varint(&mut record, value.len() as i64);
    record.put_slice(&value);
    put_varint(&mut record, 0);

    let mut out = BytesMut::with_capacity(BATCH_HEADER_BYTES + record.len() + 1);
    out.put_i64(0);
    out.put_i32(0); // batch length, set below
    out.put_i32(-1);
    out.put_i8(2);
    out.put_u32(0); // crc, set below
    out.put_i16(ATTR_TRANSACTIONAL | ATTR_CONTROL);
    out.put_i32(0); // last offset delta: one record
    out.put_i64(marker.timestamp_ms);
    out.put_i64(marker.timestamp_ms);
    out.put_i64(marker.producer_id);
    out.put_i16(marker.producer_epoch);
    out.put_i32(-1);
    out.put_i32(1);
    put_varint(&mut out, record.len() as i64);
    out.put_slice(&record);
    let batch_length = (out.len() - BATCH_LENGTH_OFFSET) as i32;
    out[8..12].copy_from_slice(&batch_length.to_be_bytes());
    let crc = crc32c::crc32c(&out[CRC_COVERED_FROM..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    out.freeze()
}

/// Reads a control batch back: its header says control and transactional, it holds exactly
/// one uncompressed control record of version 0, and its CRC holds. Returns the marker.
pub fn decode_control_batch(batch: &[u8]) -> Result<ControlMarker, BatchError> {
    let header = BatchHeader::parse(batch)?;
    let total = header.total_bytes();
    if header.magic != 2 {
        return Err(BatchError::UnsupportedMagic(header.magic));
    }
    if total < BATCH_HEADER_BYTES || batch.len() < total {
        return Err(BatchError::Truncated {
            have: batch.len(),
            need: total.max(BATCH_HEADER_BYTES),
        });
    }
    let computed = crc32c::crc32c(&batch[CRC_COVERED_FROM..total]);
    if computed != header.crc {
        return Err(BatchError::Crc {
            stored: header.crc,
            computed,
        });
    }
    let bad = |why: &str| BatchError::Records(format!("control batch: {why}"));
    if !header.is_control() || !header.is_transactional() || header.attributes & 0x07 != 0 {
        return Err(bad(
            "attributes are not an uncompressed transactional control batch",
        ));
    }
    if header.record_count != 1 {
        return Err(bad("a marker holds exactly one record"));
    }
    let mut at = BATCH_HEADER_BYTES;
    let body = &batch[..total];
    let _record_len = get_varint(body, &mut at).ok_or_else(|| bad("record length"))?;
    let _attributes = *body.get(at).ok_or_else(|| bad("record attributes"))?;
    at += 1;
    get_varint(body, &mut at).ok_or_else(|| bad("timestamp delta"))?;
    get_varint(body, &mut at).ok_or_else(|| bad("offset delta"))?;
    let key = get_bytes(body, &mut at).ok_or_else(|| bad("key"))?;
    let value = get_bytes(body, &mut at).ok_or_else(|| bad("value"))?;
    if key.len() < 4 || i16::from_be_bytes([key[0], key[1]]) != CONTROL_RECORD_VERSION {
        return Err(bad("key version"));
    }
    let kind = match i16::from_be_bytes([key[2], key[3]]) {
        0 => ControlType::Abort,
        1 => ControlType::Commit,
        other => return Err(bad(&format!("unknown control type {other}"))),
    };
    if value.len() < 6 || i16::from_be_bytes([value[0], value[1]]) != CONTROL_RECORD_VERSION {
        return Err(bad("value version"));
    }
    let coordinator_epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
    Ok(ControlMarker {
        kind,
        producer_id: header.producer_id,
        producer_epoch: header.producer_epoch,
        coordinator_epoch,
        timestamp_ms: header.base_timestamp,
    })
}

fn put_varint(out: &mut BytesMut, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.put_u8((z as u8) | 0x80);
        z >>= 7;
    }
    out.put_u8(z as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<i64> {
    let mut z: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        z |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(((z >> 1) as i64) ^ -((z & 1) as i64));
        }
    }
    None
}

fn get_bytes<'a>(b: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(get_varint(b, at)?).ok()?;
    let end = at.checked_add(len)?;
    let out = b.get(*at..end)?;
    *at = end;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::records::RecordBatchDecoder;

    fn marker(kind: ControlType) -> ControlMarker {
        ControlMarker {
            kind,
            producer_id: 4242,
            producer_epoch: 7,
            coordinator_epoch: 3,
            timestamp_ms: 1_700_000_000_000,
        }
    }

    #[test]
    fn round_trips_and_is_what_kafka_writes() {
        for kind in [ControlType::Commit, ControlType::Abort] {
            let m = marker(kind);
            let bytes = encode_control_batch(&m);
            assert_eq!(bytes.len(), 78);
            assert_eq!(decode_control_batch(&bytes), Ok(m));
            let h = BatchHeader::parse(&bytes).unwrap();
            assert!(h.is_control() && h.is_transactional());
            assert_eq!(
                (h.producer_id, h.producer_epoch, h.base_sequence),
                (4242, 7, -1)
            );
            assert_eq!((h.record_count, h.last_offset_delta), (1, 0));
            // An independent decoder (kafka-protocol's) reads the same record.
            let mut buf = bytes.clone();
            let set = RecordBatchDecoder::decode(&mut buf).unwrap();
            let r = &set.records[0];
            assert!(r.control && r.transactional);
            let key = r.key.as_ref().unwrap();
            assert_eq!(key.as_ref(), &[0, 0, 0, kind.code() as u8]);
            assert_eq!(r.value.as_ref().unwrap().as_ref(), &[0, 0, 0, 0, 0, 3]);
        }
    }

    #[test]
    fn golden_commit_marker() {
        let bytes = encode_control_batch(&ControlMarker {
            kind: ControlType::Commit,
            producer_id: 1,
            producer_epoch: 0,
            coordinator_epoch: 0,
            timestamp_ms: 0,
        });
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        // base offset, length 66, leader epoch -1, magic 2, CRC32C, attributes 0x30, last
        // offset delta 0, timestamps 0, producer 1 / epoch 0, sequence -1, one record; then
        // the 17-byte record: key 0000 0001, value 0000 00000000.
        assert_eq!(
            hex,
            "000000000000000000000042ffffffff02bda9896c00300000000000000000000000000000\
             00000000000000000000000000010000ffffffff000000012000000008000000010c000000\
             00000000"
        );
    }

    #[test]
    fn damaged_or_foreign_batches_are_refused() {
        let good = encode_control_batch(&marker(ControlType::Abort));
        for cut in [0, 10, 60, 77] {
            assert!(decode_control_batch(&good[..cut]).is_err());
        }
        let mut flipped = good.to_vec();
        flipped[70] ^= 1;
        assert!(matches!(
            decode_control_batch(&flipped),
            Err(BatchError::Crc { .. })
        ));
    }
}
