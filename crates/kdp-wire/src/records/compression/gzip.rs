//! gzip: what Kafka's `GzipCompression` writes through Java's
//! `GZIPOutputStream`, and reads back with `GZIPInputStream`
//! (concatenated members included).

use std::io::Write;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use super::bounded::{read_bounded, DecompressError};

/// Decompresses gzip members into at most `limit` bytes.
pub fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    read_bounded(
        MultiGzDecoder::new(input),
        limit,
        input.len().saturating_mul(4),
    )
}

/// One gzip member at the default level.
pub fn compress(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        flate2::Compression::default(),
    );
    encoder.write_all(input)?;
    encoder.finish()
}
