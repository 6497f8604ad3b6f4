//! The four codecs Kafka writes, through well-kept crates (flate2, snap,
//! lz4, zstd), with the decompressed size bounded before it is allocated.
//!
//! **The memory bound.** Decompressing one batch's records allocates at
//! most `limit` bytes of output (the caller's, [`DEFAULT_MAX_DECOMPRESSED`]
//! unless it says otherwise): the output buffer grows in steps that never
//! pass the limit, and the codec is stopped, with
//! [`DecompressError::TooLarge`], as soon as it would write past it.
//! Snappy blocks declare their size, which is checked before anything is
//! allocated for them. Beside the output, each codec keeps a bounded
//! working set: gzip its 32 KiB window, LZ4 one block (at most 4 MiB, what
//! the frame header allows), Zstandard its window: at most the smallest
//! power of two that holds the limit, and never less than 8 MiB nor more
//! than 128 MiB (zstd's own default cap, which Kafka's Java consumer
//! decodes with); a frame asking for more is refused before the window is
//! allocated. With the default limit that is 64 MiB of output and a 64 MiB
//! window at most.
//!
//! - [`gzip`], [`snappy`] (xerial's framing), [`lz4`] (the LZ4 frame) and
//!   [`zstd`]: one file per codec, each a `decompress` and a `compress`.

use std::borrow::Cow;

use super::attributes::Compression;

mod bounded;
pub mod gzip;
pub mod lz4;
pub mod snappy;
pub mod zstd;

pub use bounded::DecompressError;

/// The default bound on one batch's decompressed records: 64 MiB, well
/// above what a producer writes (its `batch.size` is 16 KiB by default and
/// a broker's `message.max.bytes` 1 MiB of compressed data) and small
/// enough that a hostile batch cannot take the process's memory.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 64 << 20;

/// The codec's own failure to compress (in practice, only memory).
#[derive(Debug, thiserror::Error)]
#[error("{codec} compression failed: {source}")]
pub struct CompressError {
    /// The codec.
    pub codec: Compression,
    /// What it said.
    #[source]
    pub source: std::io::Error,
}

/// Decompresses `input` with `codec` into at most `limit` bytes; records
/// without compression are returned as they are.
pub fn decompress(
    codec: Compression,
    input: &[u8],
    limit: usize,
) -> Result<Cow<'_, [u8]>, DecompressError> {
    match codec {
        Compression::None => Ok(Cow::Borrowed(input)),
        Compression::Gzip => gzip::decompress(input, limit).map(Cow::Owned),
        Compression::Snappy => snappy::decompress(input, limit).map(Cow::Owned),
        Compression::Lz4 => lz4::decompress(input, limit).map(Cow::Owned),
        Compression::Zstd => zstd::decompress(input, limit).map(Cow::Owned),
    }
}

/// Compresses `input` as Kafka's Java producer does with `codec`.
pub fn compress(codec: Compression, input: &[u8]) -> Result<Vec<u8>, CompressError> {
    let wrap = |source| CompressError { codec, source };
    match codec {
        Compression::None => Ok(input.to_vec()),
        Compression::Gzip => gzip::compress(input).map_err(wrap),
        Compression::Snappy => snappy::compress(input).map_err(wrap),
        Compression::Lz4 => lz4::compress(input).map_err(wrap),
        Compression::Zstd => zstd::compress(input).map_err(wrap),
    }
}
