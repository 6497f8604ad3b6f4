//! [`PutWire`]: every primitive written in one place, infallibly, into a
//! buffer the [`len`](super::len) functions sized.

use bytes::BufMut;

use super::len::{compact_len_value, string_data};
use super::uuid::Uuid;
use crate::tagged::TaggedFields;

/// Writes Kafka's primitive types. Infallible: callers size the buffer with
/// the matching `*_len` functions first.
pub trait PutWire: BufMut {
    /// An unsigned varint of at most 32 bits, in its shortest form.
    #[inline]
    fn put_uvarint32(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.put_u8((v as u8) | 0x80);
            v >>= 7;
        }
        self.put_u8(v as u8);
    }

    /// An unsigned varint of at most 64 bits, in its shortest form.
    #[inline]
    fn put_uvarint64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.put_u8((v as u8) | 0x80);
            v >>= 7;
        }
        self.put_u8(v as u8);
    }

    /// A signed `varint` (zig-zag).
    fn put_varint32(&mut self, v: i32) {
        self.put_uvarint32(((v << 1) ^ (v >> 31)) as u32);
    }

    /// A signed `varlong` (zig-zag).
    fn put_varint64(&mut self, v: i64) {
        self.put_uvarint64(((v << 1) ^ (v >> 63)) as u64);
    }

    /// A `boolean`: 0 or 1.
    fn put_bool(&mut self, v: bool) {
        self.put_u8(u8::from(v));
    }

    /// A `uuid`: its 16 bytes.
    fn put_uuid(&mut self, v: &Uuid) {
        self.put_slice(&v.0);
    }

    /// A compact length: `n + 1`, or 0 for null.
    #[inline]
    fn put_compact_len(&mut self, len: Option<usize>) {
        match len {
            None => self.put_u8(0),
            Some(n) => self.put_uvarint32(compact_len_value(n)),
        }
    }

    /// A nullable string in the version's encoding. Classic strings longer
    /// than `i16::MAX` cannot be expressed; callers validate such input.
    #[inline]
    fn put_nullable_string_v(&mut self, s: Option<&str>, flexible: bool) {
        let data = s.map(|s| string_data(s, flexible));
        if flexible {
            self.put_compact_len(data.map(<[u8]>::len));
        } else {
            // string_data keeps a classic string within i16::MAX bytes.
            self.put_i16(data.map_or(-1, |d| d.len() as i16));
        }
        if let Some(data) = data {
            self.put_slice(data);
        }
    }

    /// A non-null string in the version's encoding.
    #[inline]
    fn put_string_v(&mut self, s: &str, flexible: bool) {
        self.put_nullable_string_v(Some(s), flexible);
    }

    /// Nullable `bytes` in the version's encoding.
    fn put_nullable_bytes_v(&mut self, b: Option<&[u8]>, flexible: bool) {
        if flexible {
            self.put_compact_len(b.map(<[u8]>::len));
        } else {
            self.put_i32(b.map_or(-1, |b| b.len() as i32));
        }
        if let Some(b) = b {
            self.put_slice(b);
        }
    }

    /// An array length in the version's encoding (`None` for null).
    #[inline]
    fn put_array_len_v(&mut self, len: Option<usize>, flexible: bool) {
        if flexible {
            self.put_compact_len(len);
        } else {
            match len {
                None => self.put_i32(-1),
                Some(n) => self.put_i32(n.min(i32::MAX as usize) as i32),
            }
        }
    }

    /// An array of `int32` in the version's encoding.
    fn put_i32_array_v(&mut self, values: &[i32], flexible: bool) {
        self.put_array_len_v(Some(values.len()), flexible);
        for v in values {
            self.put_i32(*v);
        }
    }

    /// A tagged-field section, ascending by tag.
    #[inline]
    fn put_tagged_fields(&mut self, fields: &TaggedFields) {
        // An empty section is one zero byte: the common case.
        if fields.is_empty() {
            self.put_u8(0);
        } else {
            put_tagged_fields_slow(self, fields);
        }
    }
}

#[cold]
fn put_tagged_fields_slow<B: BufMut + ?Sized>(buf: &mut B, fields: &TaggedFields) {
    buf.put_uvarint32(fields.len() as u32);
    for field in fields.iter() {
        buf.put_uvarint32(field.tag);
        buf.put_uvarint32(field.data.len() as u32);
        buf.put_slice(&field.data);
    }
}

impl<B: BufMut + ?Sized> PutWire for B {}

/// Writes a tagged-field section of declared and unknown fields, merged in
/// ascending tag order (see [`tagged_section_len`](super::tagged_section_len)
/// for `known`); `put_known` writes the value of a declared tag.
pub fn put_tagged_section<B: BufMut>(
    buf: &mut B,
    unknown: &TaggedFields,
    known: &[(u32, Option<usize>)],
    mut put_known: impl FnMut(&mut B, u32),
) {
    let shown = |f: &&crate::tagged::TaggedField| !super::len::written(known, f.tag);
    let count = known.iter().filter(|(_, size)| size.is_some()).count()
        + unknown.iter().filter(shown).count();
    buf.put_uvarint32(count as u32);
    let mut rest = unknown.iter().filter(shown).peekable();
    for (tag, size) in known {
        let Some(size) = size else { continue };
        while let Some(f) = rest.next_if(|f| f.tag < *tag) {
            put_unknown(buf, f);
        }
        buf.put_uvarint32(*tag);
        buf.put_uvarint32(*size as u32);
        put_known(buf, *tag);
    }
    for f in rest {
        put_unknown(buf, f);
    }
}

fn put_unknown<B: BufMut + ?Sized>(buf: &mut B, f: &crate::tagged::TaggedField) {
    buf.put_uvarint32(f.tag);
    buf.put_uvarint32(f.data.len() as u32);
    buf.put_slice(&f.data);
}
