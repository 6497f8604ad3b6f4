//! [`Viewable`] and [`ViewCodec`]: what a type implements to be validated
//! without allocating and then read in place.

use std::fmt::Debug;

use super::cursor::Cursor;
use crate::codec::Reader;
use crate::error::DecodeError;
use crate::version::Version;

/// A schema type that can be validated without allocating and then read
/// in place. `#[kafka]` implements it for every declared struct; the
/// primitives' impls are in [`impls`](super::impls).
///
/// The methods are the plumbing of generated code; users call
/// [`view_exact`](super::view_exact), [`Validated`](super::Validated) and
/// the views' accessors.
pub trait Viewable: Sized {
    /// The borrowed form: a value for numbers, `&str` for strings,
    /// [`ArrayView`](super::ArrayView) for arrays, a `...View` struct for a declared struct.
    type View<'a>: Copy + Debug;

    /// Checks one value at `r` exactly as the owned decoder reads it (the
    /// same bytes consumed, the same error), without keeping it. `Ok(false)`
    /// when the value read was null (only `Option` types read null).
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError>;

    /// The value at `c`, which [`Viewable::check`] accepted.
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Self::View<'a>;

    /// Moves `c` past the value at it.
    fn skip(c: &mut Cursor<'_>, v: Version);

    /// The view of a field absent from version `v`: its schema `default`.
    /// Strings, bytes and arrays have empty defaults in Kafka's schemas,
    /// and read as empty here.
    fn absent<'a>(default: &Self, v: Version) -> Self::View<'a>;

    /// The owned value of a view.
    fn owned(view: Self::View<'_>, v: Version) -> Self;

    /// The size of every value of this type in `v` when any bytes of that
    /// size are a valid value (integers, UUIDs, structs of those outside
    /// flexible versions), so that an array of them is checked and skipped
    /// in one step.
    fn trivial_len(_v: Version) -> Option<usize> {
        None
    }

    /// For a declared struct in a flexible version: the size of its fields
    /// when they are all [trivial](Viewable::trivial_len). An element
    /// followed by an empty tagged-field section is then checked by one
    /// byte (see [`Reader::skip_fixed_structs`]).
    fn trivial_body(_v: Version) -> Option<usize> {
        None
    }
}

/// How a declared field is viewed; chosen by `#[kafka]` from the field's
/// type, as [`crate::wire::Codec`] is for the owned form (Kafka `bytes`
/// are `Vec<u8>`, which is not an array of `u8` on the wire).
pub trait ViewCodec<T> {
    /// See [`Viewable::View`].
    type View<'a>: Copy + Debug;
    /// See [`Viewable::check`].
    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError>;
    /// See [`Viewable::view`].
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Self::View<'a>;
    /// See [`Viewable::skip`].
    fn skip(c: &mut Cursor<'_>, v: Version);
    /// See [`Viewable::absent`].
    fn absent<'a>(default: &T, v: Version) -> Self::View<'a>;
    /// See [`Viewable::owned`].
    fn owned(view: Self::View<'_>, v: Version) -> T;
    /// See [`Viewable::trivial_len`].
    fn trivial_len(v: Version) -> Option<usize>;
}
