//! The record batch checks a Produce runs on its records, and looking inside a stored batch
//! (decompressing it) as ListOffsets does, on bytes no CRC vouches for: a typed error or an
//! answer, never a panic, an abort or an allocation past the decompression limit.
//! Seeds: `corpus/record_batch`, a client-encoded batch per codec (written by
//! `protocol/src/batch.rs`'s tests).
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use protocol::batch::{decompress, find_record, validate_produced, Codec, BATCH_HEADER_BYTES};

fuzz_target!(|data: &[u8]| {
    let _ = validate_produced(data);
    let bytes = Bytes::copy_from_slice(data);
    let _ = find_record(&bytes, |r| r.timestamp >= 0);
    // The decoders behind it, on whatever follows a batch header (or on all of a short input).
    let body = if data.len() > BATCH_HEADER_BYTES {
        bytes.slice(BATCH_HEADER_BYTES..)
    } else {
        bytes.clone()
    };
    for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
        let _ = decompress(codec, &body);
    }
});
