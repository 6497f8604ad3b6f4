//! The declared codec: how each field type of a Kafka schema goes on the
//! wire, for every message that `#[kafka]` declares.
//!
//! A declared struct's codec is the sum of its fields' codecs (see
//! `kdp-derive`). The primitives themselves are read and written in
//! [`crate::codec`] only; this module maps schema types onto them.

use bytes::BufMut;

use crate::codec::{
    array_len_len_v, nullable_bytes_len_v, nullable_string_len_v, PutWire, Reader, Uuid,
};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::testgen::{Gen, Random};
pub use crate::version::Version;

/// A schema type: its smallest encoding, exact size, encoder and decoder.
pub trait Wire: Sized {
    /// What a decode error calls a value of this type.
    const WHAT: &'static str = "value";

    /// The smallest encoding, used to check an array count against the
    /// bytes left before anything is allocated.
    fn min_len(v: Version) -> usize;
    /// The exact size `put` writes.
    fn wire_len(&self, v: Version) -> usize;
    /// Writes the value; infallible.
    fn put<B: BufMut>(&self, buf: &mut B, v: Version);
    /// Reads a value; total.
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self, DecodeError>;
}

/// A message whose `Message` impl is hand-tuned instead of declared. The
/// declared codec stays reachable through [`Wire`], and property tests hold
/// the two to the same bytes.
pub trait CustomCodec: Sized {
    /// Size of the body in `version`.
    fn custom_len(&self, version: i16) -> usize;
    /// Writes the body.
    fn custom_put<B: BufMut>(&self, buf: &mut B, version: i16);
    /// Reads the body (the version has been checked).
    fn custom_read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError>;

    /// See [`Message::accepts_fast`](crate::Message::accepts_fast); the
    /// version has been checked.
    fn custom_accepts(_body: &[u8], _version: i16) -> bool {
        false
    }
}

/// How a declared field is coded; chosen by the macro from the field's type.
pub trait Codec<T> {
    /// See [`Wire::WHAT`].
    const WHAT: &'static str;
    /// See [`Wire::min_len`].
    fn min_len(v: Version) -> usize;
    /// See [`Wire::wire_len`].
    fn wire_len(value: &T, v: Version) -> usize;
    /// See [`Wire::put`].
    fn put<B: BufMut>(value: &T, buf: &mut B, v: Version);
    /// See [`Wire::read`].
    fn read(r: &mut Reader<'_>, v: Version) -> Result<T, DecodeError>;
    /// A random value valid in `v` (null only if `nullable`).
    fn random(g: &mut Gen, v: Version, nullable: bool) -> T;
}

/// Fields whose type implements [`Wire`].
pub struct Plain;

impl<T: Wire + Random> Codec<T> for Plain {
    const WHAT: &'static str = T::WHAT;
    #[inline]
    fn min_len(v: Version) -> usize {
        T::min_len(v)
    }
    #[inline]
    fn wire_len(value: &T, v: Version) -> usize {
        value.wire_len(v)
    }
    #[inline]
    fn put<B: BufMut>(value: &T, buf: &mut B, v: Version) {
        value.put(buf, v)
    }
    #[inline]
    fn read(r: &mut Reader<'_>, v: Version) -> Result<T, DecodeError> {
        T::read(r, v)
    }
    fn random(g: &mut Gen, v: Version, nullable: bool) -> T {
        T::random(g, v, nullable)
    }
}

/// Kafka `bytes`: `Vec<u8>`, or `Option<Vec<u8>>` where nullable.
pub struct Bytes;

impl Codec<Vec<u8>> for Bytes {
    const WHAT: &'static str = "bytes";
    fn min_len(v: Version) -> usize {
        if v.flexible {
            1
        } else {
            4
        }
    }
    fn wire_len(value: &Vec<u8>, v: Version) -> usize {
        nullable_bytes_len_v(Some(value), v.flexible)
    }
    fn put<B: BufMut>(value: &Vec<u8>, buf: &mut B, v: Version) {
        buf.put_nullable_bytes_v(Some(value), v.flexible);
    }
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Vec<u8>, DecodeError> {
        r.bytes_v(v.flexible)
    }
    fn random(g: &mut Gen, _v: Version, _nullable: bool) -> Vec<u8> {
        g.bytes()
    }
}

impl Codec<Option<Vec<u8>>> for Bytes {
    const WHAT: &'static str = "bytes";
    fn min_len(v: Version) -> usize {
        <Bytes as Codec<Vec<u8>>>::min_len(v)
    }
    fn wire_len(value: &Option<Vec<u8>>, v: Version) -> usize {
        nullable_bytes_len_v(value.as_deref(), v.flexible)
    }
    fn put<B: BufMut>(value: &Option<Vec<u8>>, buf: &mut B, v: Version) {
        buf.put_nullable_bytes_v(value.as_deref(), v.flexible);
    }
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Option<Vec<u8>>, DecodeError> {
        r.nullable_bytes_v(v.flexible)
    }
    fn random(g: &mut Gen, _v: Version, nullable: bool) -> Option<Vec<u8>> {
        if nullable && g.one_in(4) {
            None
        } else {
            Some(g.bytes())
        }
    }
}

macro_rules! fixed_width {
    ($($ty:ty => $what:literal, $read:ident, $put:ident;)*) => {$(
        impl Wire for $ty {
            const WHAT: &'static str = $what;
            #[inline]
            fn min_len(_v: Version) -> usize {
                std::mem::size_of::<$ty>()
            }
            #[inline]
            fn wire_len(&self, _v: Version) -> usize {
                std::mem::size_of::<$ty>()
            }
            #[inline]
            fn put<B: BufMut>(&self, buf: &mut B, _v: Version) {
                buf.$put(*self);
            }
            #[inline]
            fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self, DecodeError> {
                r.$read()
            }
        }
    )*};
}

fixed_width! {
    i8 => "int8", i8, put_i8;
    i16 => "int16", i16, put_i16;
    i32 => "int32", i32, put_i32;
    i64 => "int64", i64, put_i64;
    u16 => "uint16", u16, put_u16;
    u32 => "uint32", u32, put_u32;
}

impl Wire for bool {
    const WHAT: &'static str = "boolean";
    fn min_len(_v: Version) -> usize {
        1
    }
    fn wire_len(&self, _v: Version) -> usize {
        1
    }
    fn put<B: BufMut>(&self, buf: &mut B, _v: Version) {
        buf.put_bool(*self);
    }
    fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self, DecodeError> {
        r.bool()
    }
}

/// An `ErrorCode` field is an `int16` on the wire.
impl Wire for crate::error_code::ErrorCode {
    const WHAT: &'static str = "int16";
    #[inline]
    fn min_len(_v: Version) -> usize {
        2
    }
    #[inline]
    fn wire_len(&self, _v: Version) -> usize {
        2
    }
    #[inline]
    fn put<B: BufMut>(&self, buf: &mut B, _v: Version) {
        buf.put_i16(self.0);
    }
    #[inline]
    fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self, DecodeError> {
        r.i16().map(crate::error_code::ErrorCode)
    }
}

impl Wire for Uuid {
    const WHAT: &'static str = "uuid";
    fn min_len(_v: Version) -> usize {
        16
    }
    fn wire_len(&self, _v: Version) -> usize {
        16
    }
    fn put<B: BufMut>(&self, buf: &mut B, _v: Version) {
        buf.put_uuid(self);
    }
    fn read(r: &mut Reader<'_>, _v: Version) -> Result<Self, DecodeError> {
        r.uuid()
    }
}

/// Types that may be null on the wire (strings and arrays), coded with the
/// same length prefix as their non-null form.
pub trait Nullable: Sized {
    /// What a decode error calls a value of this type.
    const WHAT: &'static str;
    /// The smallest encoding (the null one has the same size).
    fn min_len(v: Version) -> usize;
    /// Size of the value or of null.
    fn nullable_len(value: Option<&Self>, v: Version) -> usize;
    /// Writes the value or null.
    fn put_nullable<B: BufMut>(value: Option<&Self>, buf: &mut B, v: Version);
    /// Reads the value or null.
    fn read_nullable(r: &mut Reader<'_>, v: Version) -> Result<Option<Self>, DecodeError>;
}

impl Nullable for String {
    const WHAT: &'static str = "string";
    fn min_len(v: Version) -> usize {
        if v.flexible {
            1
        } else {
            2
        }
    }
    #[inline]
    fn nullable_len(value: Option<&Self>, v: Version) -> usize {
        nullable_string_len_v(value.map(String::as_str), v.flexible)
    }
    #[inline]
    fn put_nullable<B: BufMut>(value: Option<&Self>, buf: &mut B, v: Version) {
        buf.put_nullable_string_v(value.map(String::as_str), v.flexible);
    }
    #[inline]
    fn read_nullable(r: &mut Reader<'_>, v: Version) -> Result<Option<Self>, DecodeError> {
        r.nullable_string_v(v.flexible)
    }
}

impl<T: Wire> Nullable for Vec<T> {
    const WHAT: &'static str = "array";
    fn min_len(v: Version) -> usize {
        if v.flexible {
            1
        } else {
            4
        }
    }
    fn nullable_len(value: Option<&Self>, v: Version) -> usize {
        array_len_len_v(value.map(Vec::len), v.flexible)
            + value.map_or(0, |items| items.iter().map(|x| x.wire_len(v)).sum())
    }
    fn put_nullable<B: BufMut>(value: Option<&Self>, buf: &mut B, v: Version) {
        buf.put_array_len_v(value.map(Vec::len), v.flexible);
        for x in value.into_iter().flatten() {
            x.put(buf, v);
        }
    }
    fn read_nullable(r: &mut Reader<'_>, v: Version) -> Result<Option<Self>, DecodeError> {
        r.nullable_array_v(v.flexible, T::min_len(v), |r| T::read(r, v))
    }
}

/// A non-null string or array: null on the wire is an error.
impl<T: Nullable> Wire for T {
    const WHAT: &'static str = <T as Nullable>::WHAT;
    #[inline]
    fn min_len(v: Version) -> usize {
        <T as Nullable>::min_len(v)
    }
    #[inline]
    fn wire_len(&self, v: Version) -> usize {
        T::nullable_len(Some(self), v)
    }
    #[inline]
    fn put<B: BufMut>(&self, buf: &mut B, v: Version) {
        T::put_nullable(Some(self), buf, v)
    }
    #[inline]
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self, DecodeError> {
        let start = r.offset();
        T::read_nullable(r, v)?.ok_or_else(|| {
            DecodeError::new(
                start,
                DecodeErrorKind::UnexpectedNull {
                    what: <T as Nullable>::WHAT,
                },
            )
        })
    }
}

impl<T: Nullable> Wire for Option<T> {
    const WHAT: &'static str = <T as Nullable>::WHAT;
    fn min_len(v: Version) -> usize {
        <T as Nullable>::min_len(v)
    }
    #[inline]
    fn wire_len(&self, v: Version) -> usize {
        T::nullable_len(self.as_ref(), v)
    }
    #[inline]
    fn put<B: BufMut>(&self, buf: &mut B, v: Version) {
        T::put_nullable(self.as_ref(), buf, v)
    }
    #[inline]
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self, DecodeError> {
        T::read_nullable(r, v)
    }
}

/// In JSON a UUID is the text Kafka prints: URL-safe base64 without padding.
impl serde::Serialize for Uuid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Uuid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for Uuid {
    type Err = &'static str;

    /// Parses Kafka's form: 22 characters of URL-safe base64, no padding.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const ERR: &str = "a UUID is 22 characters of URL-safe base64";
        let digit = |c: u8| -> Result<u32, &'static str> {
            Ok(match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'-' => 62,
                b'_' => 63,
                _ => return Err(ERR),
            }
            .into())
        };
        let text = s.as_bytes();
        if text.len() != 22 {
            return Err(ERR);
        }
        // 21 digits carry 126 bits; the 22nd gives the last 2 and 4 bits of
        // zero padding.
        let (last, head) = text.split_last().ok_or(ERR)?;
        let mut bits: u128 = 0;
        for &c in head {
            bits = (bits << 6) | u128::from(digit(c)?);
        }
        let last = digit(*last)?;
        if last & 0xf != 0 {
            return Err(ERR);
        }
        bits = (bits << 2) | u128::from(last >> 4);
        Ok(Uuid(bits.to_be_bytes()))
    }
}
