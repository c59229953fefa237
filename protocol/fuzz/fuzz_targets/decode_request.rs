//! Request decoding must turn any bytes into a request or a typed error: never a panic, never
//! an abort (an allocation sized from a wire count), never a hang. Each input is tried as one
//! frame body, the way the connection hands it over, and as a raw stream split into frames.
//! Seeds: `corpus/decode_request`, one frame per served API and version (written by
//! `protocol/tests/round_trip.rs`) and the frames real clients sent (`protocol/tests/golden`).
#![no_main]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use protocol::frame::{split_frame, FrameStatus};
use protocol::request::{decode_request, RequestError};
use protocol::response::api_versions_too_new_response;

fuzz_target!(|data: &[u8]| {
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
