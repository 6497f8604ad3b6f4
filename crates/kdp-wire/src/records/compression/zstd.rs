//! Zstandard (KIP-110): frames as zstd-jni writes them for Kafka's Java
//! producer; concatenated frames are read like zstd-jni's stream does.

use zstd::stream::read::Decoder;

use super::bounded::{read_bounded, DecompressError};

/// The largest window a frame may ask for, as a power of two: 2^27 bytes
/// is zstd's own default limit (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`), which
/// Kafka's consumers decode with.
pub const WINDOW_LOG_MAX: u32 = 27;
/// Windows up to 2^23 (8 MiB) are always allowed: Kafka's producer writes
/// 2 MiB windows at its default level.
pub const WINDOW_LOG_MIN: u32 = 23;

/// The window a frame may ask for under `limit`: the smallest power of two
/// that holds the limit (a window larger than everything the frame may
/// decompress to serves nothing), within [2^23, 2^27].
pub fn window_log_max(limit: usize) -> u32 {
    let bits = usize::BITS - limit.saturating_sub(1).leading_zeros();
    bits.clamp(WINDOW_LOG_MIN, WINDOW_LOG_MAX)
}

/// The level of Kafka's `compression.zstd.level` default.
const LEVEL: i32 = 3;

/// Decompresses Zstandard frames into at most `limit` bytes.
pub fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let invalid = |e: std::io::Error| DecompressError::Invalid(e.to_string());
    let mut decoder = Decoder::with_buffer(input).map_err(invalid)?;
    decoder
        .window_log_max(window_log_max(limit))
        .map_err(invalid)?;
    read_bounded(decoder, limit, input.len().saturating_mul(4))
}

/// One Zstandard frame at Kafka's default level.
pub fn compress(input: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::bulk::compress(input, LEVEL)
}
