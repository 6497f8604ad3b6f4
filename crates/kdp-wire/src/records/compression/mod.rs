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
use std::io::Read;

use super::attributes::Compression;

pub mod gzip;
pub mod lz4;
pub mod snappy;
pub mod zstd;

/// The default bound on one batch's decompressed records: 64 MiB, well
/// above what a producer writes (its `batch.size` is 16 KiB by default and
/// a broker's `message.max.bytes` 1 MiB of compressed data) and small
/// enough that a hostile batch cannot take the process's memory.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 64 << 20;

/// Why records could not be decompressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecompressError {
    /// The output would pass the limit; stopped before allocating more.
    #[error("decompresses to more than the {limit}-byte limit")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The codec refused the input.
    #[error("{0}")]
    Invalid(String),
}

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

/// An output buffer that never grows past its limit.
pub(crate) struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl Bounded {
    /// An empty buffer, with a first allocation of at most `hint` bytes.
    pub(crate) fn new(limit: usize, hint: usize) -> Self {
        Bounded {
            buf: Vec::with_capacity(hint.min(limit)),
            limit,
        }
    }

    /// Makes room for `n` more bytes, or fails if that passes the limit.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), DecompressError> {
        let needed = self
            .buf
            .len()
            .checked_add(n)
            .filter(|&needed| needed <= self.limit)
            .ok_or(DecompressError::TooLarge { limit: self.limit })?;
        if needed > self.buf.capacity() {
            // Double, as Vec would, but never past the limit.
            let target = needed
                .max(self.buf.capacity().saturating_mul(2))
                .min(self.limit);
            self.buf.reserve_exact(target - self.buf.len());
        }
        Ok(())
    }

    /// Appends `n` zero bytes and hands them out to be written over.
    pub(crate) fn spare(&mut self, n: usize) -> Result<&mut [u8], DecompressError> {
        self.reserve(n)?;
        let start = self.buf.len();
        self.buf.resize(start + n, 0);
        Ok(self.buf.get_mut(start..).unwrap_or_default())
    }

    /// Drops the last `n` bytes (what `spare` gave and was not written).
    pub(crate) fn unspare(&mut self, n: usize) {
        let len = self.buf.len().saturating_sub(n);
        self.buf.truncate(len);
    }

    pub(crate) fn into_vec(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads a decoder to its end into at most `limit` bytes. One byte past
/// the limit is asked for, so that output of exactly `limit` bytes passes
/// and one more fails.
pub(crate) fn read_bounded(
    mut reader: impl Read,
    limit: usize,
    hint: usize,
) -> Result<Vec<u8>, DecompressError> {
    const STEP: usize = 32 << 10;
    let mut out = Bounded::new(limit, hint);
    loop {
        let room = out.limit - out.buf.len();
        if room == 0 {
            // Full: anything more is too much.
            let mut probe = [0u8; 1];
            return match reader.read(&mut probe) {
                Ok(0) => Ok(out.into_vec()),
                Ok(_) => Err(DecompressError::TooLarge { limit }),
                Err(e) => Err(DecompressError::Invalid(e.to_string())),
            };
        }
        let step = STEP
            .min(room)
            .max(out.buf.capacity() - out.buf.len())
            .min(room);
        let spare = out.spare(step)?;
        match reader.read(spare) {
            Ok(0) => {
                out.unspare(step);
                return Ok(out.into_vec());
            }
            Ok(n) => out.unspare(step - n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => out.unspare(step),
            Err(e) => return Err(DecompressError::Invalid(e.to_string())),
        }
    }
}
