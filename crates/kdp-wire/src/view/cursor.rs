//! [`Cursor`]: reads Kafka's primitives from bytes a check has accepted.
//!
//! It is total without being strict: the bytes were validated, so every
//! read fits; were one not to (a view misused on other bytes), it yields
//! zero, an empty string or null and moves past the end, never a panic
//! or an out-of-bounds read. Only this crate makes cursors, over bytes its
//! checks accepted.
//!
//! A cursor also carries what the check proved of the whole body beyond
//! its validity: that every array of fixed-size structs in it lies at a
//! fixed stride (no element has tagged fields), so that skipping one is a
//! multiplication rather than a walk.

use crate::codec::reader::fixed_structs;
use crate::codec::Uuid;

/// A position in validated bytes: the bytes from it on.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    rest: &'a [u8],
    /// The check found no element of an array of fixed-size structs with
    /// tagged fields ([`Reader::fixed_structs_strided`]).
    ///
    /// [`Reader::fixed_structs_strided`]: crate::codec::Reader
    strided: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor at the first byte of `buf`, assuming nothing beyond its
    /// validity.
    #[inline]
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor {
            rest: buf,
            strided: false,
        }
    }

    /// A cursor at the first byte of a body whose check found (`strided`)
    /// or did not find every array of fixed-size structs at a fixed stride.
    #[inline]
    pub(crate) fn checked(buf: &'a [u8], strided: bool) -> Self {
        Cursor { rest: buf, strided }
    }

    /// A cursor over `buf`, bytes of the same body, with what this one knows.
    #[inline]
    pub(crate) fn over(&self, buf: &'a [u8]) -> Self {
        Cursor {
            rest: buf,
            strided: self.strided,
        }
    }

    /// True when every array of fixed-size structs in the body lies at a
    /// fixed stride: each element's tag section is its one zero byte.
    #[inline]
    pub(crate) fn strided(&self) -> bool {
        self.strided
    }

    /// The bytes from the cursor on.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Moves `n` bytes on (to the end, if fewer are left).
    #[inline]
    pub fn advance(&mut self, n: usize) {
        self.rest = self.rest.get(n..).unwrap_or_default();
    }

    /// The next `n` bytes (fewer at the end of the input).
    #[inline]
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.rest.split_at_checked(n).unwrap_or((self.rest, &[]));
        self.rest = rest;
        taken
    }

    #[inline]
    fn fixed<const N: usize>(&mut self) -> [u8; N] {
        match self.rest.split_first_chunk::<N>() {
            Some((value, rest)) => {
                self.rest = rest;
                *value
            }
            None => {
                self.rest = &[];
                [0; N]
            }
        }
    }

    /// An `int8`.
    #[inline]
    pub fn i8(&mut self) -> i8 {
        i8::from_be_bytes(self.fixed())
    }

    /// An `int16`.
    #[inline]
    pub fn i16(&mut self) -> i16 {
        i16::from_be_bytes(self.fixed())
    }

    /// An `int32`.
    #[inline]
    pub fn i32(&mut self) -> i32 {
        i32::from_be_bytes(self.fixed())
    }

    /// An `int64`.
    #[inline]
    pub fn i64(&mut self) -> i64 {
        i64::from_be_bytes(self.fixed())
    }

    /// Two `int32`s in a row, read as one big-endian int64 (the view of a
    /// struct reads a pair of adjacent int32 fields through this, so that
    /// its two accessors share one load and one byte swap).
    #[inline]
    pub fn i32_pair(&mut self) -> (i32, i32) {
        // Signed: the first is the arithmetic shift itself, already
        // sign-extended for a caller that widens it.
        let both = i64::from_be_bytes(self.fixed());
        ((both >> 32) as i32, both as i32)
    }

    /// A `uint16`.
    #[inline]
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.fixed())
    }

    /// A `uint32`.
    #[inline]
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.fixed())
    }

    /// A `boolean`.
    #[inline]
    pub fn bool(&mut self) -> bool {
        self.fixed::<1>() != [0]
    }

    /// A `uuid`.
    #[inline]
    pub fn uuid(&mut self) -> Uuid {
        Uuid(self.fixed())
    }

    /// An unsigned varint of at most 32 bits.
    #[inline]
    pub fn uvarint32(&mut self) -> u32 {
        match self.rest.split_first() {
            Some((&b, rest)) if b < 0x80 => {
                self.rest = rest;
                u32::from(b)
            }
            _ => self.uvarint32_long(),
        }
    }

    #[cold]
    fn uvarint32_long(&mut self) -> u32 {
        let mut value = 0u32;
        for i in 0..5 {
            let Some((&b, rest)) = self.rest.split_first() else {
                break;
            };
            self.rest = rest;
            value |= u32::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                break;
            }
        }
        value
    }

    /// A length prefix in the version's encoding: compact (`n + 1`, 0 for
    /// null) when flexible, else a signed int of `classic_width` bytes (-1
    /// for null).
    #[inline]
    pub fn len_prefix(&mut self, flexible: bool, classic_width: usize) -> Option<usize> {
        if flexible {
            let n = self.uvarint32();
            return n.checked_sub(1).map(|n| n as usize);
        }
        let len = if classic_width == 2 {
            i32::from(self.i16())
        } else {
            self.i32()
        };
        usize::try_from(len).ok()
    }

    /// A nullable string (an empty one if it is not UTF-8, which a check
    /// would have refused).
    #[inline]
    pub fn nullable_str(&mut self, flexible: bool) -> Option<&'a str> {
        let len = self.len_prefix(flexible, 2)?;
        Some(std::str::from_utf8(self.take(len)).unwrap_or_default())
    }

    /// Nullable bytes.
    #[inline]
    pub fn nullable_bytes(&mut self, flexible: bool) -> Option<&'a [u8]> {
        let len = self.len_prefix(flexible, 4)?;
        Some(self.take(len))
    }

    /// Moves past a string or bytes value, null or not.
    #[inline]
    pub fn skip_data(&mut self, flexible: bool, classic_width: usize) {
        let len = self.len_prefix(flexible, classic_width).unwrap_or(0);
        self.advance(len);
    }

    /// Moves past a tagged-field section.
    #[inline]
    pub fn skip_tagged_fields(&mut self) {
        match self.rest.split_first() {
            Some((0, rest)) => self.rest = rest,
            // By value, so that the cursor of a hot loop stays in registers.
            _ => self.rest = after_tagged_fields(self.rest),
        }
    }

    /// Up to `count` structs of `body` bytes and an empty tag section in a
    /// row: moves past every one up to the first that is not, and returns
    /// how many. In a body known to be strided, all of them at once.
    #[inline]
    pub fn skip_fixed_structs(&mut self, count: usize, body: usize) -> usize {
        if self.strided {
            self.advance(count.saturating_mul(body + 1));
            return count;
        }
        let skipped = fixed_structs(self.rest, count, body);
        self.advance(skipped * (body + 1));
        skipped
    }
}

/// What follows the tagged-field section at the start of `bytes`.
#[cold]
fn after_tagged_fields(bytes: &[u8]) -> &[u8] {
    let mut c = Cursor::new(bytes);
    let count = c.uvarint32();
    for _ in 0..count {
        if c.rest.is_empty() {
            break;
        }
        c.uvarint32();
        let size = c.uvarint32() as usize;
        c.advance(size);
    }
    c.rest
}
