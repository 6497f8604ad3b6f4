//! Exact encoded sizes of the primitives, so that encoders allocate once
//! and write exactly that many bytes.

use crate::tagged::TaggedFields;

/// The bytes a string puts on the wire. A classic string cannot carry more
/// than `i16::MAX` bytes; rather than corrupt the frame, the encoder cuts it
/// there (callers that take such strings from users reject them first).
#[inline]
pub fn string_data(s: &str, flexible: bool) -> &[u8] {
    let b = s.as_bytes();
    if flexible {
        b
    } else {
        b.get(..b.len().min(i16::MAX as usize)).unwrap_or(b)
    }
}

#[inline]
pub(crate) fn compact_len_value(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX - 1).saturating_add(1)
}

/// Encoded size of an unsigned varint.
#[inline]
pub const fn uvarint32_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// Encoded size of an unsigned 64-bit varint.
pub const fn uvarint64_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Encoded size of a signed (zig-zag) `varint`.
pub const fn varint32_len(v: i32) -> usize {
    uvarint32_len(((v << 1) ^ (v >> 31)) as u32)
}

/// Encoded size of a signed (zig-zag) `varlong`.
pub const fn varint64_len(v: i64) -> usize {
    uvarint64_len(((v << 1) ^ (v >> 63)) as u64)
}

/// Encoded size of a length prefix in the version's encoding.
#[inline]
pub fn len_prefix_len(len: Option<usize>, flexible: bool, classic_width: usize) -> usize {
    if flexible {
        match len {
            None => 1,
            Some(n) => uvarint32_len(compact_len_value(n)),
        }
    } else {
        classic_width
    }
}

/// Encoded size of a nullable string in the version's encoding.
#[inline]
pub fn nullable_string_len_v(s: Option<&str>, flexible: bool) -> usize {
    let data = s.map(|s| string_data(s, flexible).len());
    len_prefix_len(data, flexible, 2) + data.unwrap_or(0)
}

/// Encoded size of a non-null string in the version's encoding.
#[inline]
pub fn string_len_v(s: &str, flexible: bool) -> usize {
    nullable_string_len_v(Some(s), flexible)
}

/// Encoded size of nullable `bytes` in the version's encoding.
pub fn nullable_bytes_len_v(b: Option<&[u8]>, flexible: bool) -> usize {
    len_prefix_len(b.map(<[u8]>::len), flexible, 4) + b.map_or(0, <[u8]>::len)
}

/// Encoded size of an array's length prefix (`None` for null).
#[inline]
pub fn array_len_len_v(len: Option<usize>, flexible: bool) -> usize {
    len_prefix_len(len, flexible, 4)
}

/// Encoded size of an `int32` array, prefix included.
pub fn i32_array_len_v(values: &[i32], flexible: bool) -> usize {
    array_len_len_v(Some(values.len()), flexible) + 4 * values.len()
}

/// Encoded size of a tagged-field section (one byte when empty).
#[inline]
pub fn tagged_fields_len(fields: &TaggedFields) -> usize {
    if fields.is_empty() {
        return 1;
    }
    uvarint32_len(fields.len() as u32)
        + fields
            .iter()
            .map(|f| uvarint32_len(f.tag) + uvarint32_len(f.data.len() as u32) + f.data.len())
            .sum::<usize>()
}

/// Encoded size of a tagged-field section holding declared fields as well
/// as unknown ones. `known` lists each declared tag, ascending, with its
/// encoded size when it is written (it differs from its default); a
/// declared tag that is written replaces an unknown field of the same tag.
pub fn tagged_section_len(unknown: &TaggedFields, known: &[(u32, Option<usize>)]) -> usize {
    let mut count = 0usize;
    let mut len = 0usize;
    for (tag, size) in known {
        if let Some(size) = size {
            count += 1;
            len += uvarint32_len(*tag) + uvarint32_len(*size as u32) + size;
        }
    }
    for f in unknown.iter() {
        if !written(known, f.tag) {
            count += 1;
            len += uvarint32_len(f.tag) + uvarint32_len(f.data.len() as u32) + f.data.len();
        }
    }
    uvarint32_len(count as u32) + len
}

/// Whether declared tag `tag` is written (and so hides an unknown one).
pub(crate) fn written(known: &[(u32, Option<usize>)], tag: u32) -> bool {
    known.iter().any(|(t, size)| *t == tag && size.is_some())
}
