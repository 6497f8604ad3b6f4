//! A frame's size prefix: the largest size accepted and its check.

use crate::error::{DecodeError, DecodeErrorKind};

/// Kafka's default `socket.request.max.bytes` (100 MiB).
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Checks a frame's size prefix: not negative, not above `max`.
pub fn frame_size(prefix: [u8; 4], max: usize) -> Result<usize, DecodeError> {
    let size = i32::from_be_bytes(prefix);
    if size < 0 {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::InvalidFrameSize {
                size: i64::from(size),
                reason: "negative",
            },
        )
        .in_field("Size"));
    }
    let size = size as usize;
    if size > max {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::InvalidFrameSize {
                size: size as i64,
                reason: "above the maximum frame size",
            },
        )
        .in_field("Size"));
    }
    Ok(size)
}
