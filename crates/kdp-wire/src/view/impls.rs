//! The views of Kafka's primitive types, each checked through the same
//! [`Reader`] method the owned decoder reads it with, so that the two fail
//! alike.

use super::array::ArrayView;
use super::cursor::Cursor;
use super::viewable::{ViewCodec, Viewable};
use crate::codec::{Reader, Uuid};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::error_code::ErrorCode;
use crate::version::Version;
use crate::wire::{self, Nullable, Wire};

macro_rules! trivial {
    ($($ty:ty => $read:ident;)*) => {$(
        impl Viewable for $ty {
            type View<'a> = $ty;
            #[inline]
            fn check(r: &mut Reader<'_>, _v: Version) -> Result<bool, DecodeError> {
                r.$read().map(|_| true)
            }
            #[inline]
            fn view<'a>(c: &Cursor<'a>, _v: Version) -> $ty {
                let mut c = *c;
                c.$read()
            }
            #[inline]
            fn skip(c: &mut Cursor<'_>, _v: Version) {
                c.advance(std::mem::size_of::<$ty>());
            }
            #[inline]
            fn absent<'a>(default: &$ty, _v: Version) -> Self::View<'a> {
                *default
            }
            #[inline]
            fn owned(view: $ty, _v: Version) -> $ty {
                view
            }
            #[inline]
            fn trivial_len(_v: Version) -> Option<usize> {
                Some(std::mem::size_of::<$ty>())
            }
        }
    )*};
}

trivial! {
    i8 => i8;
    i16 => i16;
    i32 => i32;
    i64 => i64;
    u16 => u16;
    u32 => u32;
    Uuid => uuid;
}

impl Viewable for ErrorCode {
    type View<'a> = ErrorCode;
    #[inline]
    fn check(r: &mut Reader<'_>, _v: Version) -> Result<bool, DecodeError> {
        r.i16().map(|_| true)
    }
    #[inline]
    fn view<'a>(c: &Cursor<'a>, _v: Version) -> ErrorCode {
        let mut c = *c;
        ErrorCode(c.i16())
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>, _v: Version) {
        c.advance(2);
    }
    #[inline]
    fn absent<'a>(default: &ErrorCode, _v: Version) -> Self::View<'a> {
        *default
    }
    #[inline]
    fn owned(view: ErrorCode, _v: Version) -> ErrorCode {
        view
    }
    #[inline]
    fn trivial_len(_v: Version) -> Option<usize> {
        Some(2)
    }
}

/// Not trivial: only 0 and 1 are booleans.
impl Viewable for bool {
    type View<'a> = bool;
    fn check(r: &mut Reader<'_>, _v: Version) -> Result<bool, DecodeError> {
        r.bool().map(|_| true)
    }
    fn view<'a>(c: &Cursor<'a>, _v: Version) -> bool {
        let mut c = *c;
        c.bool()
    }
    fn skip(c: &mut Cursor<'_>, _v: Version) {
        c.advance(1);
    }
    fn absent<'a>(default: &bool, _v: Version) -> Self::View<'a> {
        *default
    }
    fn owned(view: bool, _v: Version) -> bool {
        view
    }
}

/// Strings and arrays, which may be null on the wire: the view of the value
/// or of null, as [`Nullable`] is for the owned form.
pub trait NullableView: Nullable {
    /// The view of a non-null value.
    type View<'a>: Copy + std::fmt::Debug;
    /// Checks the value or null; `Ok(false)` for null.
    fn check_nullable(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError>;
    /// The value at `c`, or `None` for null.
    fn view_nullable<'a>(c: &Cursor<'a>, v: Version) -> Option<Self::View<'a>>;
    /// Moves past the value or null.
    fn skip_nullable(c: &mut Cursor<'_>, v: Version);
    /// An empty value.
    fn empty<'a>(v: Version) -> Self::View<'a>;
    /// The owned value of a view.
    fn owned_nullable(view: Self::View<'_>, v: Version) -> Self;
}

impl NullableView for String {
    type View<'a> = &'a str;
    #[inline]
    fn check_nullable(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        r.check_nullable_str_v(v.flexible)
    }
    #[inline]
    fn view_nullable<'a>(c: &Cursor<'a>, v: Version) -> Option<&'a str> {
        let mut c = *c;
        c.nullable_str(v.flexible)
    }
    #[inline]
    fn skip_nullable(c: &mut Cursor<'_>, v: Version) {
        c.skip_data(v.flexible, 2);
    }
    fn empty<'a>(_v: Version) -> &'a str {
        ""
    }
    fn owned_nullable(view: &str, _v: Version) -> String {
        view.to_owned()
    }
}

impl<T: Wire + Viewable> NullableView for Vec<T> {
    type View<'a> = ArrayView<'a, T>;

    /// The count as the owned decoder reads it (checked against the bytes
    /// left before anything else), then every element. Elements whose
    /// every byte pattern is valid are skipped in one step; declared
    /// structs of such fields by one byte each (their empty tag section).
    /// Anything else, and any element that fails, goes element by element
    /// through the same checks as the owned decoder, naming the index.
    fn check_nullable(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        let Some(count) = r.nullable_array_len_v(v.flexible, T::min_len(v))? else {
            return Ok(false);
        };
        if let Some(size) = T::trivial_len(v) {
            // The count was checked against the input with this very size.
            if let Some(all) = count.checked_mul(size) {
                if r.take(all, "array").is_ok() {
                    return Ok(true);
                }
            }
        }
        let body = if v.flexible { T::trivial_body(v) } else { None };
        let mut i = 0;
        while i < count {
            if let Some(body) = body {
                i += r.skip_fixed_structs(count - i, body);
                if i == count {
                    break;
                }
            }
            if body.is_some() {
                // An element with tagged fields: no fixed stride here.
                r.note_irregular_fixed_struct();
            }
            T::check(r, v).map_err(|e| e.at_index(i))?;
            i += 1;
        }
        Ok(true)
    }

    #[inline]
    fn view_nullable<'a>(c: &Cursor<'a>, v: Version) -> Option<ArrayView<'a, T>> {
        let mut c = *c;
        let len = c.len_prefix(v.flexible, 4)?;
        Some(ArrayView::new(c, len, v))
    }

    #[inline]
    fn skip_nullable(c: &mut Cursor<'_>, v: Version) {
        let count = c.len_prefix(v.flexible, 4).unwrap_or(0);
        if let Some(size) = T::trivial_len(v) {
            c.advance(count.saturating_mul(size));
            return;
        }
        let body = if v.flexible { T::trivial_body(v) } else { None };
        let mut i = 0;
        while i < count {
            if let Some(body) = body {
                i += c.skip_fixed_structs(count - i, body);
                if i == count {
                    break;
                }
            }
            if c.rest().is_empty() {
                // Only bytes a check refused could end early.
                break;
            }
            T::skip(c, v);
            i += 1;
        }
    }

    fn empty<'a>(v: Version) -> ArrayView<'a, T> {
        ArrayView::empty(v)
    }

    fn owned_nullable(view: ArrayView<'_, T>, v: Version) -> Vec<T> {
        view.iter().map(|item| T::owned(item, v)).collect()
    }
}

/// A non-null string or array: null is an error at its length prefix.
impl<T: NullableView> Viewable for T {
    type View<'a> = <T as NullableView>::View<'a>;

    #[inline]
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        let start = r.offset();
        if T::check_nullable(r, v)? {
            Ok(true)
        } else {
            Err(DecodeError::new(
                start,
                DecodeErrorKind::UnexpectedNull {
                    what: <T as Nullable>::WHAT,
                },
            ))
        }
    }
    #[inline]
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Self::View<'a> {
        T::view_nullable(c, v).unwrap_or_else(|| T::empty(v))
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>, v: Version) {
        T::skip_nullable(c, v)
    }
    fn absent<'a>(_default: &T, v: Version) -> Self::View<'a> {
        T::empty(v)
    }
    fn owned(view: Self::View<'_>, v: Version) -> T {
        T::owned_nullable(view, v)
    }
}

/// A nullable string or array.
impl<T: NullableView> Viewable for Option<T> {
    type View<'a> = Option<<T as NullableView>::View<'a>>;

    #[inline]
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        T::check_nullable(r, v)
    }
    #[inline]
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Self::View<'a> {
        T::view_nullable(c, v)
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>, v: Version) {
        T::skip_nullable(c, v)
    }
    fn absent<'a>(default: &Option<T>, v: Version) -> Self::View<'a> {
        default.as_ref().map(|_| T::empty(v))
    }
    fn owned(view: Self::View<'_>, v: Version) -> Option<T> {
        view.map(|view| T::owned_nullable(view, v))
    }
}

impl<T: Viewable> ViewCodec<T> for wire::Plain {
    type View<'a> = T::View<'a>;
    #[inline]
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        T::check(r, v)
    }
    #[inline]
    fn view<'a>(c: &Cursor<'a>, v: Version) -> T::View<'a> {
        T::view(c, v)
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>, v: Version) {
        T::skip(c, v)
    }
    #[inline]
    fn absent<'a>(default: &T, v: Version) -> T::View<'a> {
        T::absent(default, v)
    }
    #[inline]
    fn owned(view: T::View<'_>, v: Version) -> T {
        T::owned(view, v)
    }
    #[inline]
    fn trivial_len(v: Version) -> Option<usize> {
        T::trivial_len(v)
    }
}

impl ViewCodec<Vec<u8>> for wire::Bytes {
    type View<'a> = &'a [u8];
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        r.byte_slice_v(v.flexible).map(|_| true)
    }
    fn view<'a>(c: &Cursor<'a>, v: Version) -> &'a [u8] {
        let mut c = *c;
        c.nullable_bytes(v.flexible).unwrap_or_default()
    }
    fn skip(c: &mut Cursor<'_>, v: Version) {
        c.skip_data(v.flexible, 4);
    }
    fn absent<'a>(_default: &Vec<u8>, _v: Version) -> &'a [u8] {
        &[]
    }
    fn owned(view: &[u8], _v: Version) -> Vec<u8> {
        view.to_vec()
    }
    fn trivial_len(_v: Version) -> Option<usize> {
        None
    }
}

impl ViewCodec<Option<Vec<u8>>> for wire::Bytes {
    type View<'a> = Option<&'a [u8]>;
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        r.nullable_byte_slice_v(v.flexible).map(|b| b.is_some())
    }
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Option<&'a [u8]> {
        let mut c = *c;
        c.nullable_bytes(v.flexible)
    }
    fn skip(c: &mut Cursor<'_>, v: Version) {
        c.skip_data(v.flexible, 4);
    }
    fn absent<'a>(default: &Option<Vec<u8>>, _v: Version) -> Option<&'a [u8]> {
        default.as_ref().map(|_| &[][..])
    }
    fn owned(view: Option<&[u8]>, _v: Version) -> Option<Vec<u8>> {
        view.map(<[u8]>::to_vec)
    }
    fn trivial_len(_v: Version) -> Option<usize> {
        None
    }
}
