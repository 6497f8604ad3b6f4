//! Snappy as Kafka's Java producer writes it: xerial snappy-java's
//! `SnappyOutputStream` framing, not the snappy "framing format".
//!
//! ```text
//! header:  0x82 "SNAPPY" 0x00 | version int32 (1) | compatible version int32 (1)
//! chunks:  length int32 (big-endian) | one raw snappy block of that length
//! ```
//!
//! Like xerial's `SnappyInputStream`, input that does not start with the
//! magic is read as one bare snappy block, and a header repeated between
//! chunks (streams written one after another) is skipped. Every block
//! declares its decompressed size up front; it is checked against what is
//! left of the limit before anything is allocated for it.

use snap::raw::{decompress_len, max_compress_len, Decoder, Encoder};

use super::bounded::{Bounded, DecompressError};

/// xerial's magic: 0x82, "SNAPPY", 0.
pub const MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// The magic, then version 1 and compatible version 1.
const HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];
/// xerial's default block size, which Kafka keeps.
const BLOCK_SIZE: usize = 32 << 10;

fn invalid(what: impl std::fmt::Display) -> DecompressError {
    DecompressError::Invalid(what.to_string())
}

/// One raw block appended to `out`, its declared size checked first.
fn block(decoder: &mut Decoder, input: &[u8], out: &mut Bounded) -> Result<(), DecompressError> {
    let len = decompress_len(input).map_err(invalid)?;
    let spare = out.spare(len)?;
    let written = decoder.decompress(input, spare).map_err(invalid)?;
    out.unspare(len - written);
    Ok(())
}

/// Decompresses xerial-framed (or bare) snappy into at most `limit` bytes.
pub fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut decoder = Decoder::new();
    let mut out = Bounded::new(limit, input.len().saturating_mul(2));
    let framed = input.starts_with(&MAGIC).then(|| input.get(HEADER.len()..));
    let Some(Some(mut rest)) = framed else {
        block(&mut decoder, input, &mut out)?;
        return Ok(out.into_vec());
    };
    while !rest.is_empty() {
        if let Some(after) = rest
            .starts_with(&MAGIC)
            .then(|| rest.get(HEADER.len()..))
            .flatten()
        {
            rest = after;
            continue;
        }
        let Some((len, after)) = rest.split_first_chunk::<4>() else {
            return Err(invalid(format!(
                "a chunk length needs 4 bytes, {} are left",
                rest.len()
            )));
        };
        let len = i32::from_be_bytes(*len);
        let chunk = usize::try_from(len)
            .ok()
            .and_then(|len| after.get(..len))
            .ok_or_else(|| {
                invalid(format!(
                    "chunk length {len} does not fit the {} bytes left",
                    after.len()
                ))
            })?;
        block(&mut decoder, chunk, &mut out)?;
        rest = after.get(chunk.len()..).unwrap_or_default();
    }
    Ok(out.into_vec())
}

/// xerial framing with 32 KiB blocks, as Kafka's Java producer writes.
pub fn compress(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = Encoder::new();
    let mut out = Vec::with_capacity(
        HEADER.len() + max_compress_len(input.len().min(BLOCK_SIZE)) + input.len() / 2,
    );
    out.extend_from_slice(&HEADER);
    let mut scratch = vec![0u8; max_compress_len(BLOCK_SIZE)];
    for piece in input.chunks(BLOCK_SIZE) {
        let n = encoder
            .compress(piece, &mut scratch)
            .map_err(std::io::Error::other)?;
        let len = i32::try_from(n).map_err(std::io::Error::other)?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(scratch.get(..n).unwrap_or_default());
    }
    Ok(out)
}
