//! LZ4: the frame format of Kafka's `Lz4BlockOutputStream` (64 KiB
//! independent blocks, no checksums). Magic v0 batches carried a wrong
//! header checksum (KAFKA-3160) and Kafka skips checking it there; every
//! v2 batch has the right one, so the standard frame decoder (liblz4,
//! through the `lz4` crate), which checks it, is the right reader.

use std::io::Write;

use lz4::{BlockMode, BlockSize, ContentChecksum, Decoder, EncoderBuilder};

use super::bounded::{read_bounded, DecompressError};

/// Decompresses one LZ4 frame into at most `limit` bytes; a frame cut
/// short is an error.
pub fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut decoder = Decoder::new(input).map_err(|e| DecompressError::Invalid(e.to_string()))?;
    let out = read_bounded(&mut decoder, limit, input.len().saturating_mul(4))?;
    // The decoder reports the end of input as the end of data; whether the
    // frame actually ended is asked here.
    let (_, finished) = decoder.finish();
    finished.map_err(|_| DecompressError::Invalid("the LZ4 frame is cut short".into()))?;
    Ok(out)
}

/// One LZ4 frame as Kafka's Java producer writes it.
pub fn compress(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = EncoderBuilder::new()
        .block_size(BlockSize::Max64KB)
        .block_mode(BlockMode::Independent)
        .checksum(ContentChecksum::NoChecksum)
        .build(Vec::with_capacity(input.len() / 2 + 64))?;
    encoder.write_all(input)?;
    let (out, result) = encoder.finish();
    result.map(|()| out)
}
