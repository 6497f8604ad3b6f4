//! Requests framed and responses read over a raw socket, for the tests that
//! talk to the mock as a client would, byte by byte.
#![allow(dead_code)] // each test binary uses a different subset

use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::{Request, RequestHeader};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::{timeout, Duration};

/// How long a test waits for something that should happen at once before
/// it fails instead of hanging. Not a timing requirement.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// `req` as a whole request frame of `version`.
pub fn frame<R: Request>(req: &R, version: i16, correlation_id: i32) -> Vec<u8> {
    request_frame_to_vec(
        &RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id,
            client_id: Some("kdp-test".into()),
            ..Default::default()
        },
        req,
    )
}

/// The next response frame on `s`, size prefix included.
pub async fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut size = [0u8; 4];
    timeout(HANG_GUARD, s.read_exact(&mut size))
        .await
        .expect("a response, not a hang")
        .expect("response size");
    let n = usize::try_from(i32::from_be_bytes(size)).expect("a non-negative size");
    let mut out = size.to_vec();
    out.resize(4 + n, 0);
    timeout(HANG_GUARD, s.read_exact(&mut out[4..]))
        .await
        .expect("a whole response, not a hang")
        .expect("response body");
    out
}
