//! What every codec decompresses into: an output that never grows past
//! its limit, and the error that says it would have.

use std::io::Read;

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
