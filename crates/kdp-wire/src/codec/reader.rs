//! [`Reader`]: a cursor over untrusted bytes that reads each primitive in
//! one place, totally: a value or an error naming the byte offset.

use super::uuid::Uuid;
use crate::error::{Context, DecodeError, DecodeErrorKind};
use crate::tagged::{TaggedField, TaggedFields};

/// A cursor over untrusted bytes.
///
/// `base` is the absolute offset of `buf[0]` in the original input, so that
/// errors raised inside bounded sub-readers still name the right byte.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    /// Set by a view's check when an element of an array of fixed-size
    /// structs carried a non-empty tag section (see
    /// [`Reader::fixed_structs_strided`]).
    irregular: bool,
}

impl<'a> Reader<'a> {
    /// A reader over a whole input, offsets counted from its first byte.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader::with_base(buf, 0)
    }

    /// A reader whose first byte sits at absolute offset `base`.
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            irregular: false,
        }
    }

    /// True unless a check through this reader met an element of an array
    /// of fixed-size structs whose tag section was not empty: then every
    /// such array it accepted lies at a fixed stride, and a view skips one
    /// by its count alone.
    #[inline]
    pub(crate) fn fixed_structs_strided(&self) -> bool {
        !self.irregular
    }

    /// Records that an array of fixed-size structs held an element with
    /// tagged fields (so its elements do not lie at a fixed stride).
    #[inline]
    pub(crate) fn note_irregular_fixed_struct(&mut self) {
        self.irregular = true;
    }

    /// The bytes not yet read.
    #[inline]
    pub(crate) fn unread(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Marks every byte as read (after a check of them all).
    #[inline]
    pub(crate) fn read_to_end(&mut self) {
        self.pos = self.buf.len();
    }

    /// The absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// How many bytes are left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// An error at the current offset.
    #[cold]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.offset(), kind)
    }

    /// Fails unless every byte was consumed.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(self.error(DecodeErrorKind::TrailingBytes { count })),
        }
    }

    /// The next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n);
        match end.and_then(|end| self.buf.get(self.pos..end)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                what,
                needed: n,
                left: self.remaining(),
            })),
        }
    }

    #[inline]
    fn fixed<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        match self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
        {
            Some(bytes) => {
                self.pos += N;
                Ok(*bytes)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                what,
                needed: N,
                left: self.remaining(),
            })),
        }
    }

    /// A bounded reader over the next `n` bytes, which this reader skips.
    pub fn sub_reader(&mut self, n: usize, what: &'static str) -> Result<Reader<'a>, DecodeError> {
        let base = self.offset();
        let bytes = self.take(n, what)?;
        Ok(Reader::with_base(bytes, base))
    }

    /// An `int8`.
    #[inline]
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        self.fixed::<1>("int8").map(i8::from_be_bytes)
    }

    /// An `int16`, big-endian like every fixed-width Kafka integer.
    #[inline]
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        self.fixed::<2>("int16").map(i16::from_be_bytes)
    }

    /// An `int32`.
    #[inline]
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.fixed::<4>("int32").map(i32::from_be_bytes)
    }

    /// An `int64`.
    #[inline]
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.fixed::<8>("int64").map(i64::from_be_bytes)
    }

    /// A `uint16`.
    #[inline]
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.fixed::<2>("uint16").map(u16::from_be_bytes)
    }

    /// A `uint32`.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.fixed::<4>("uint32").map(u32::from_be_bytes)
    }

    /// A `float64` (IEEE 754, big-endian).
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        self.fixed::<8>("float64").map(f64::from_be_bytes)
    }

    /// A boolean: strictly 0 or 1.
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        let start = self.pos;
        match self.fixed::<1>("boolean")? {
            [0] => Ok(false),
            [1] => Ok(true),
            [value] => {
                self.pos = start;
                Err(self.error(DecodeErrorKind::InvalidBool { value }))
            }
        }
    }

    /// The presence byte of a nullable struct: -1 null, 1 present,
    /// strictly (Kafka's encoders write only these two).
    pub fn struct_marker(&mut self) -> Result<bool, DecodeError> {
        let start = self.pos;
        match self.i8()? {
            -1 => Ok(false),
            1 => Ok(true),
            value => {
                self.pos = start;
                Err(self.error(DecodeErrorKind::InvalidStructMarker { value }))
            }
        }
    }

    /// A `uuid`: 16 raw bytes.
    pub fn uuid(&mut self) -> Result<Uuid, DecodeError> {
        self.fixed::<16>("uuid").map(Uuid)
    }

    /// An unsigned varint of at most 32 bits: at most 5 bytes, the 5th at
    /// most 0x0f, in its shortest form (no trailing zero group).
    #[inline]
    pub fn uvarint32(&mut self) -> Result<u32, DecodeError> {
        // One-byte values (lengths, counts, empty tag sections) dominate.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u32::from(b));
            }
        }
        self.uvarint_slow(5, "unsigned varint32").map(|v| v as u32)
    }

    /// An unsigned varint of at most 64 bits: at most 10 bytes, the 10th at
    /// most 0x01, in its shortest form.
    pub fn uvarint64(&mut self) -> Result<u64, DecodeError> {
        self.uvarint_slow(10, "unsigned varint64")
    }

    #[cold]
    fn uvarint_slow(&mut self, max_bytes: usize, what: &'static str) -> Result<u64, DecodeError> {
        let start = self.pos;
        // Bits the last allowed byte may carry: 32 - 28 = 4, 64 - 63 = 1.
        let last_bits = if max_bytes == 5 { 4 } else { 1 };
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            let Some(&b) = self.buf.get(self.pos) else {
                // Only the end of input stops a varint early.
                let left = self.pos - start;
                self.pos = start;
                return Err(self.error(DecodeErrorKind::Truncated {
                    what,
                    needed: left + 1,
                    left,
                }));
            };
            self.pos += 1;
            let payload = u64::from(b & 0x7f);
            if i == max_bytes - 1 {
                if b == 0 {
                    self.pos = start;
                    return Err(self.error(DecodeErrorKind::VarintNotMinimal { what, len: i + 1 }));
                }
                if b >= (1 << last_bits) {
                    self.pos = start;
                    return Err(self.error(DecodeErrorKind::VarintTooLong {
                        what,
                        max: max_bytes,
                    }));
                }
                return Ok(value | (payload << (7 * i)));
            }
            value |= payload << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    self.pos = start;
                    return Err(self.error(DecodeErrorKind::VarintNotMinimal { what, len: i + 1 }));
                }
                return Ok(value);
            }
        }
        // Unreachable: the loop returns at i == max_bytes - 1.
        self.pos = start;
        Err(self.error(DecodeErrorKind::VarintTooLong {
            what,
            max: max_bytes,
        }))
    }

    /// A zig-zag signed varint of 32 bits.
    pub fn varint32(&mut self) -> Result<i32, DecodeError> {
        let v = self.uvarint32()?;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// A zig-zag signed varint of 64 bits.
    pub fn varint64(&mut self) -> Result<i64, DecodeError> {
        let v = self.uvarint64()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A compact length (`n + 1`, 0 for null). Lengths past `i32::MAX` are
    /// malformed (Java's int would be negative); the length itself, not the
    /// prefix, is what is checked and reported, so `2^31` reads as `i32::MAX`.
    fn compact_len(&mut self, what: &'static str) -> Result<Option<usize>, DecodeError> {
        let start = self.pos;
        let Some(len) = self.uvarint32()?.checked_sub(1) else {
            return Ok(None);
        };
        if len > i32::MAX as u32 {
            self.pos = start;
            return Err(self.error(DecodeErrorKind::NegativeLength {
                what,
                len: i64::from(len as i32),
            }));
        }
        Ok(Some(len as usize))
    }

    /// Checks that `len` bytes remain, with the error pointing at `start`.
    fn check_len(
        &mut self,
        start: usize,
        len: usize,
        what: &'static str,
    ) -> Result<(), DecodeError> {
        if len > self.remaining() {
            let left = self.remaining();
            self.pos = start;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what,
                len: len as u64,
                left,
            }));
        }
        Ok(())
    }

    fn utf8(&mut self, len: usize) -> Result<&'a str, DecodeError> {
        let data_start = self.offset();
        let bytes = self.take(len, "string")?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(e) => Err(DecodeError::new(
                data_start + e.valid_up_to(),
                DecodeErrorKind::InvalidUtf8 {
                    valid_up_to: e.valid_up_to(),
                },
            )),
        }
    }

    /// A length prefix in the version's encoding, not yet checked against
    /// the input: classic, a signed int of `classic_width` bytes (2 or 4)
    /// with -1 for null; compact, an unsigned varint `n + 1` with 0 for null.
    /// Other negative lengths are errors at the prefix.
    fn nullable_prefix(
        &mut self,
        flexible: bool,
        classic_width: usize,
        what: &'static str,
    ) -> Result<Option<usize>, DecodeError> {
        if flexible {
            return self.compact_len(what);
        }
        let start = self.pos;
        let len = if classic_width == 2 {
            i64::from(self.i16()?)
        } else {
            i64::from(self.i32()?)
        };
        match len {
            -1 => Ok(None),
            len if len < 0 => {
                self.pos = start;
                Err(self.error(DecodeErrorKind::NegativeLength { what, len }))
            }
            len => Ok(Some(len as usize)),
        }
    }

    /// The length of a nullable string or bytes value, checked against the
    /// bytes left (the error points at the prefix).
    fn nullable_data_len(
        &mut self,
        flexible: bool,
        classic_width: usize,
        what: &'static str,
    ) -> Result<Option<usize>, DecodeError> {
        let start = self.pos;
        let len = self.nullable_prefix(flexible, classic_width, what)?;
        if let Some(len) = len {
            self.check_len(start, len, what)?;
        }
        Ok(len)
    }

    /// A classic nullable string: int16 length, -1 for null.
    pub fn nullable_string(&mut self) -> Result<Option<String>, DecodeError> {
        self.nullable_str().map(|s| s.map(str::to_owned))
    }

    /// A classic nullable string, borrowed from the input.
    pub fn nullable_str(&mut self) -> Result<Option<&'a str>, DecodeError> {
        match self.nullable_data_len(false, 2, "string")? {
            None => Ok(None),
            Some(len) => self.utf8(len).map(Some),
        }
    }

    /// A classic non-null string.
    pub fn string(&mut self) -> Result<String, DecodeError> {
        self.str().map(str::to_owned)
    }

    /// A classic non-null string, borrowed from the input.
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        let start = self.pos;
        self.nullable_str()?.ok_or_else(|| {
            self.pos = start;
            self.error(DecodeErrorKind::UnexpectedNull { what: "string" })
        })
    }

    /// A compact nullable string: unsigned varint `length + 1`, 0 for null.
    #[inline]
    pub fn compact_nullable_string(&mut self) -> Result<Option<String>, DecodeError> {
        self.compact_nullable_str().map(|s| s.map(str::to_owned))
    }

    /// A compact nullable string, borrowed from the input.
    #[inline]
    pub fn compact_nullable_str(&mut self) -> Result<Option<&'a str>, DecodeError> {
        // Fast paths: null, or a one-byte length (strings under 127 bytes)
        // with the whole string present and valid. Anything else, errors
        // included, takes the general path.
        match self.buf.get(self.pos..).and_then(<[u8]>::split_first) {
            Some((0, _)) => {
                self.pos += 1;
                return Ok(None);
            }
            Some((&n @ 1..=0x7f, rest)) => {
                let len = usize::from(n - 1);
                if let Some(Ok(s)) = rest.get(..len).map(std::str::from_utf8) {
                    self.pos += 1 + len;
                    return Ok(Some(s));
                }
            }
            _ => {}
        }
        self.compact_nullable_str_general()
    }

    fn compact_nullable_str_general(&mut self) -> Result<Option<&'a str>, DecodeError> {
        match self.nullable_data_len(true, 2, "string")? {
            None => Ok(None),
            Some(len) => self.utf8(len).map(Some),
        }
    }

    /// A compact non-null string.
    #[inline]
    pub fn compact_string(&mut self) -> Result<String, DecodeError> {
        self.compact_str().map(str::to_owned)
    }

    /// A compact non-null string, borrowed from the input.
    #[inline]
    pub fn compact_str(&mut self) -> Result<&'a str, DecodeError> {
        let start = self.pos;
        self.compact_nullable_str()?.ok_or_else(|| {
            self.pos = start;
            self.error(DecodeErrorKind::UnexpectedNull { what: "string" })
        })
    }

    /// A string in the encoding of the message version: compact when flexible.
    pub fn string_v(&mut self, flexible: bool) -> Result<String, DecodeError> {
        self.str_v(flexible).map(str::to_owned)
    }

    /// A string in the version's encoding, borrowed from the input.
    pub fn str_v(&mut self, flexible: bool) -> Result<&'a str, DecodeError> {
        if flexible {
            self.compact_str()
        } else {
            self.str()
        }
    }

    /// A nullable string in the encoding of the message version.
    pub fn nullable_string_v(&mut self, flexible: bool) -> Result<Option<String>, DecodeError> {
        self.nullable_str_v(flexible).map(|s| s.map(str::to_owned))
    }

    /// A nullable string in the version's encoding, borrowed from the input.
    #[inline]
    pub fn nullable_str_v(&mut self, flexible: bool) -> Result<Option<&'a str>, DecodeError> {
        if flexible {
            self.compact_nullable_str()
        } else {
            self.nullable_str()
        }
    }

    /// Checks a nullable string in the version's encoding as
    /// [`Reader::nullable_str_v`] reads it (the same bytes, the same
    /// errors) and answers whether it was present. A short ASCII string,
    /// the usual name, is checked without `str::from_utf8`.
    #[inline]
    pub fn check_nullable_str_v(&mut self, flexible: bool) -> Result<bool, DecodeError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let short = if flexible {
            match rest.split_first() {
                Some((&n @ 1..=0x7f, data)) => Some((1, usize::from(n - 1), data)),
                _ => None,
            }
        } else {
            match rest.split_first_chunk::<2>() {
                Some((len, data)) if i16::from_be_bytes(*len) >= 0 => {
                    Some((2, i16::from_be_bytes(*len) as usize, data))
                }
                _ => None,
            }
        };
        if let Some((prefix, len, data)) = short {
            if data.get(..len).is_some_and(<[u8]>::is_ascii) {
                self.pos += prefix + len;
                return Ok(true);
            }
        }
        self.nullable_str_v(flexible).map(|s| s.is_some())
    }

    /// Classic nullable bytes: int32 length, -1 for null.
    pub fn nullable_bytes(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        self.nullable_bytes_v(false)
    }

    /// Compact nullable bytes.
    pub fn compact_nullable_bytes(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        self.nullable_bytes_v(true)
    }

    /// Nullable bytes in the encoding of the message version.
    pub fn nullable_bytes_v(&mut self, flexible: bool) -> Result<Option<Vec<u8>>, DecodeError> {
        self.nullable_byte_slice_v(flexible)
            .map(|b| b.map(<[u8]>::to_vec))
    }

    /// Nullable bytes in the version's encoding, borrowed from the input.
    pub fn nullable_byte_slice_v(
        &mut self,
        flexible: bool,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.nullable_data_len(flexible, 4, "bytes")? {
            None => Ok(None),
            Some(len) => self.take(len, "bytes").map(Some),
        }
    }

    /// Non-null bytes in the encoding of the message version.
    pub fn bytes_v(&mut self, flexible: bool) -> Result<Vec<u8>, DecodeError> {
        self.byte_slice_v(flexible).map(<[u8]>::to_vec)
    }

    /// Non-null bytes in the version's encoding, borrowed from the input.
    pub fn byte_slice_v(&mut self, flexible: bool) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        self.nullable_byte_slice_v(flexible)?.ok_or_else(|| {
            self.pos = start;
            self.error(DecodeErrorKind::UnexpectedNull { what: "bytes" })
        })
    }

    /// Checks an element count against the bytes left, given the smallest
    /// size one element can have, before anything is allocated from it.
    fn check_count(
        &mut self,
        start: usize,
        count: usize,
        min_elem_size: usize,
    ) -> Result<(), DecodeError> {
        let needed = (count as u64).saturating_mul(min_elem_size.max(1) as u64);
        if needed > self.remaining() as u64 {
            let left = self.remaining();
            self.pos = start;
            return Err(self.error(DecodeErrorKind::CountExceedsInput {
                what: "array",
                count: count as u64,
                needed,
                left,
            }));
        }
        Ok(())
    }

    /// The element count of a nullable array in the version's encoding
    /// (classic: int32, -1 for null; compact: varint `n + 1`, 0 for null),
    /// checked against the input.
    #[inline]
    pub fn nullable_array_len_v(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
    ) -> Result<Option<usize>, DecodeError> {
        // Fast path: a compact count under 127 that the input can hold.
        if flexible {
            if let Some(&n @ 1..=0x7f) = self.buf.get(self.pos) {
                let count = usize::from(n - 1);
                if count.saturating_mul(min_elem_size.max(1)) < self.remaining() {
                    self.pos += 1;
                    return Ok(Some(count));
                }
            }
        }
        self.nullable_array_len_v_general(flexible, min_elem_size)
    }

    fn nullable_array_len_v_general(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let start = self.pos;
        let count = self.nullable_prefix(flexible, 4, "array")?;
        if let Some(count) = count {
            self.check_count(start, count, min_elem_size)?;
        }
        Ok(count)
    }

    /// The element count of a non-null array in the version's encoding.
    #[inline]
    pub fn array_len_v(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
    ) -> Result<usize, DecodeError> {
        // Fast path: a compact count under 127 that the input can hold.
        if flexible {
            if let Some(&n @ 1..=0x7f) = self.buf.get(self.pos) {
                let count = usize::from(n - 1);
                if count.saturating_mul(min_elem_size.max(1)) < self.remaining() {
                    self.pos += 1;
                    return Ok(count);
                }
            }
        }
        self.array_len_v_general(flexible, min_elem_size)
    }

    fn array_len_v_general(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
    ) -> Result<usize, DecodeError> {
        let start = self.pos;
        self.nullable_array_len_v_general(flexible, min_elem_size)?
            .ok_or_else(|| {
                self.pos = start;
                self.error(DecodeErrorKind::UnexpectedNull { what: "array" })
            })
    }

    /// Decodes `count` elements with `f`, adding the index to error paths.
    #[inline]
    pub fn elements<T>(
        &mut self,
        count: usize,
        mut f: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            out.push(f(self).map_err(|e| e.at_index(i))?);
        }
        Ok(out)
    }

    /// Decodes `count` elements in place: each is pushed as `T::default()`
    /// and then filled by `f` where it sits, so that a large struct is not
    /// built on the stack and moved into the vector. Only what has been
    /// decoded is written: a hostile count costs the reservation (bounded
    /// by the input, as `count` must have been checked against it, which
    /// the `array_len` functions do), not memory filled with defaults.
    /// Errors get the index added to their path.
    #[inline]
    pub fn elements_in_place<T: Default>(
        &mut self,
        count: usize,
        mut f: impl FnMut(&mut Self, &mut T) -> Result<(), DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let mut out: Vec<T> = Vec::with_capacity(count);
        for i in 0..count {
            out.push(T::default());
            if let Some(slot) = out.last_mut() {
                f(self, slot).map_err(|e| e.at_index(i))?;
            }
        }
        Ok(out)
    }

    /// A non-null compact array decoded in place (see [`Reader::elements_in_place`]).
    #[inline]
    pub fn compact_array_in_place<T: Default>(
        &mut self,
        min_elem_size: usize,
        f: impl FnMut(&mut Self, &mut T) -> Result<(), DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let count = self.array_len_v(true, min_elem_size)?;
        self.elements_in_place(count, f)
    }

    /// A non-null array in the version's encoding.
    #[inline]
    pub fn array_v<T>(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
        f: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let count = self.array_len_v(flexible, min_elem_size)?;
        self.elements(count, f)
    }

    /// A nullable array in the version's encoding.
    pub fn nullable_array_v<T>(
        &mut self,
        flexible: bool,
        min_elem_size: usize,
        f: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        match self.nullable_array_len_v(flexible, min_elem_size)? {
            None => Ok(None),
            Some(count) => self.elements(count, f).map(Some),
        }
    }

    /// A non-null compact array (flexible versions only).
    #[inline]
    pub fn compact_array<T>(
        &mut self,
        min_elem_size: usize,
        f: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        self.array_v(true, min_elem_size, f)
    }

    /// An array of int32 in the version's encoding.
    pub fn i32_array_v(&mut self, flexible: bool) -> Result<Vec<i32>, DecodeError> {
        self.array_v(flexible, 4, Reader::i32)
    }

    /// The fast path for a flexible struct whose fields all have a fixed
    /// size: when the next `N` bytes are followed by an empty tagged-field
    /// section (one zero byte) and `f` makes a value of them, consumes all
    /// `N + 1` bytes and returns the value. Otherwise consumes nothing and
    /// returns `None`; the caller then decodes field by field, which names
    /// the failing field.
    #[inline]
    pub fn fixed_struct<const N: usize, T>(
        &mut self,
        f: impl FnOnce(&[u8; N]) -> Option<T>,
    ) -> Option<T> {
        let (fields, rest) = self.buf.get(self.pos..)?.split_first_chunk::<N>()?;
        if rest.first() != Some(&0) {
            return None;
        }
        let value = f(fields)?;
        self.pos += N + 1;
        Some(value)
    }

    /// The check-only twin of [`Reader::fixed_struct`], for arrays: up to
    /// `count` structs in a row of `body` bytes (whatever they hold) and an
    /// empty tag section each; skips every one up to the first that is not,
    /// and returns how many it skipped.
    #[inline]
    pub fn skip_fixed_structs(&mut self, count: usize, body: usize) -> usize {
        let skipped = fixed_structs(self.buf.get(self.pos..).unwrap_or_default(), count, body);
        self.pos += skipped * (body + 1);
        skipped
    }

    /// A tagged-field section. Unknown tags are kept, in the (strictly
    /// ascending) order the wire must carry them.
    #[inline]
    pub fn tagged_fields(&mut self) -> Result<TaggedFields, DecodeError> {
        // An empty section is one zero byte: the common case.
        if let Some(0) = self.buf.get(self.pos) {
            self.pos += 1;
            return Ok(TaggedFields::default());
        }
        self.tagged_fields_slow().field("TaggedFields")
    }

    #[cold]
    fn tagged_fields_slow(&mut self) -> Result<TaggedFields, DecodeError> {
        let mut fields = Vec::new();
        self.tagged_section(&mut |_, _| Ok(false), &mut |tag, data| {
            fields.push(TaggedField {
                tag,
                data: data.to_vec(),
            })
        })?;
        Ok(TaggedFields::from_sorted(fields))
    }

    /// Checks a tagged-field section as [`Reader::tagged_fields`] reads
    /// it (the same errors), keeping nothing.
    #[inline]
    pub fn check_tagged_fields(&mut self) -> Result<(), DecodeError> {
        if let Some(0) = self.buf.get(self.pos) {
            self.pos += 1;
            return Ok(());
        }
        self.check_tagged_fields_known(|_, _| Ok(false))
    }

    /// A tagged-field section some of whose tags a schema declares:
    /// `known(tag, value)` reads a declared field's value from a reader
    /// bounded to it and answers whether it took the field (it must then
    /// read every byte of it); fields it does not take are kept raw, in
    /// order, like unknown ones.
    pub fn tagged_fields_known(
        &mut self,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<TaggedFields, DecodeError> {
        if let Some(0) = self.buf.get(self.pos) {
            self.pos += 1;
            return Ok(TaggedFields::default());
        }
        let mut fields = Vec::new();
        self.tagged_section(&mut known, &mut |tag, data| {
            fields.push(TaggedField {
                tag,
                data: data.to_vec(),
            })
        })
        .field("TaggedFields")?;
        Ok(TaggedFields::from_sorted(fields))
    }

    /// Checks a tagged-field section as [`Reader::tagged_fields_known`]
    /// reads it (the same errors), keeping nothing.
    pub fn check_tagged_fields_known(
        &mut self,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        if let Some(0) = self.buf.get(self.pos) {
            self.pos += 1;
            return Ok(());
        }
        self.tagged_section(&mut known, &mut |_, _| {})
            .field("TaggedFields")
    }

    /// The one reader of a tagged-field section: its count, then each
    /// field in ascending tag order; a field `known` takes must be read to
    /// its end, any other goes to `keep` as raw bytes.
    fn tagged_section(
        &mut self,
        known: &mut impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
        keep: &mut impl FnMut(u32, &'a [u8]),
    ) -> Result<(), DecodeError> {
        let start = self.pos;
        let count = self.uvarint32()? as usize;
        // A field takes at least two bytes: its tag and its size.
        self.check_count(start, count, 2)?;
        let mut previous: Option<u32> = None;
        for i in 0..count {
            let (tag, data) = self.tagged_field_raw(previous).map_err(|e| e.at_index(i))?;
            previous = Some(tag);
            let mut value = data.clone();
            if known(tag, &mut value).map_err(|e| e.at_index(i))? {
                if !value.is_empty() {
                    return Err(value
                        .error(DecodeErrorKind::TaggedFieldNotConsumed {
                            tag,
                            left: value.remaining(),
                        })
                        .at_index(i));
                }
            } else {
                keep(tag, data.buf);
            }
        }
        Ok(())
    }

    /// One tagged field's tag and a reader bounded to its value.
    fn tagged_field_raw(
        &mut self,
        previous: Option<u32>,
    ) -> Result<(u32, Reader<'a>), DecodeError> {
        let tag_start = self.pos;
        let tag = self.uvarint32().field("Tag")?;
        if let Some(previous) = previous {
            if tag <= previous {
                self.pos = tag_start;
                return Err(self.error(DecodeErrorKind::TagOrder { tag, previous }));
            }
        }
        let size_start = self.pos;
        let size = self.uvarint32().field("Size")? as usize;
        self.check_len(size_start, size, "tagged field")
            .field("Size")?;
        let data = self.sub_reader(size, "tagged field")?;
        Ok((tag, data))
    }
}

/// How many of the first `count` records of `body + 1` bytes in `bytes`
/// end with a zero byte (an empty tag section), counted from the first.
/// Four records a step while their tag bytes are all zero: one branch per
/// four records of a large array.
#[inline]
pub(crate) fn fixed_structs(bytes: &[u8], count: usize, body: usize) -> usize {
    let stride = body + 1;
    let mut rest = bytes;
    let mut skipped = 0;
    while count - skipped >= 4 {
        let Some((four, after)) = rest.split_at_checked(4 * stride) else {
            break;
        };
        let tag = |i: usize| four.get(i * stride + body).copied().unwrap_or(1);
        if tag(0) | tag(1) | tag(2) | tag(3) != 0 {
            break;
        }
        rest = after;
        skipped += 4;
    }
    while skipped < count {
        match rest.split_at_checked(stride) {
            Some((record, after)) if record.last() == Some(&0) => {
                rest = after;
                skipped += 1;
            }
            _ => break,
        }
    }
    skipped
}
