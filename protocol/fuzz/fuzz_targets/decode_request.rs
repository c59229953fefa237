//! Request decoding must turn any bytes into a request or a typed error: never a panic, never
//! an abort (an allocation sized from a wire count), never a hang. The same holds for the
//! record batch checks a Produce runs on its records, and for looking inside a batch
//! (decompressing it) as ListOffsets does.
#![no_main]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use protocol::frame::{split_frame, FrameStatus};
use protocol::request::{decode_request, RequestError};
use protocol::response::api_versions_too_new_response;

fuzz_target!(|data: &[u8]| {
    // As the records of a Produce partition, and as a stored batch looked into.
    let _ = protocol::batch::validate_produced(data);
    let bytes = Bytes::copy_from_slice(data);
    let _ = protocol::batch::find_record(&bytes, |r| r.timestamp >= 0);
    // The decoders behind it, on bytes no CRC vouches for.
    use protocol::batch::{decompress, Codec};
    for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
        let _ = decompress(codec, &bytes);
    }
    // As a frame body, the way the connection hands it over.
    check(Bytes::copy_from_slice(data));
    // As a raw stream: split into frames first, with a small maximum so prefixes get refused.
    let mut stream = BytesMut::from(data);
    while let Ok(FrameStatus::Complete(frame)) = split_frame(&mut stream, 1 << 16) {
        check(frame);
    }
});

fn check(frame: Bytes) {
    match decode_request(frame) {
        Ok(req) => {
            let _ = req.client_id();
        }
        Err(RequestError::ApiVersionsTooNew { peek }) => {
            let _ = api_versions_too_new_response(peek.correlation_id, protocol::SUPPORTED_APIS);
        }
        Err(_) => {}
    }
}
