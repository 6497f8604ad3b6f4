//! Validate once, then read in place: a borrowed view of any declared
//! message, for responses too large or too frequent to copy into owned
//! types.
//!
//! [`view_exact`] (or [`Validated`], which holds a `bytes::Bytes` frame
//! body) checks the whole body first, with the owned decoder's strictness
//! and its errors exactly (same kind, byte offset and field path: a test
//! holds the two to that for every declared message). Only a body that
//! passes gets a view, so the view never fails: its accessors, one per
//! schema field and named after it, return values, `&str` and `&[u8]`
//! borrowed from the body, and [`ArrayView`]s whose iterators walk the
//! elements where they lie. Nothing on the view path allocates.
//!
//! `#[kafka]` declares each view beside its owned struct (`TopicResponse`
//! gets `TopicResponseView<'a>`), from the same field list, so the view of
//! a message cannot drift from its declaration; `into_owned` turns a view
//! into the owned value, field by field through the accessors.
//!
//! ```
//! use kdp_wire::messages::DescribeProducersResponse;
//! use kdp_wire::view::Validated;
//!
//! let body = bytes::Bytes::from_static(include_bytes!("../../../../vectors/seed-example.bin"));
//! let response = Validated::<DescribeProducersResponse>::new(body, 0)?;
//! let view = response.view();
//! for topic in view.topics() {
//!     for partition in topic.partitions() {
//!         for producer in partition.active_producers() {
//!             assert_eq!((topic.name(), partition.partition_index()), ("orders", 3));
//!             assert_eq!(producer.current_txn_start_offset(), 150382);
//!         }
//!     }
//! }
//! // The owned form, when wanted, is the decoder's value.
//! assert_eq!(view.into_owned(), kdp_wire::decode_exact(response.body().as_ref(), 0)?);
//! # Ok::<(), kdp_wire::DecodeError>(())
//! ```
//!
//! - [`cursor`]: [`Cursor`], the reader of bytes already validated.
//! - [`array`](mod@array): [`ArrayView`] and its iterator.
//! - [`tagged`]: [`TaggedView`], a raw tagged-field section.
//! - [`validated`]: [`Validated`], a validated body that owns its `Bytes`.
//! - [`received`]: [`Received`], a response taken owned or validated, as a
//!   client's send path asks.
//! - [`impls`]: the views of Kafka's primitive types.

pub mod array;
pub mod cursor;
pub mod impls;
pub mod received;
pub mod tagged;
pub mod validated;

use std::fmt::Debug;

use crate::codec::Reader;
use crate::error::DecodeError;
use crate::message::Message;
use crate::version::Version;

pub use array::{ArrayIter, ArrayView};
pub use cursor::Cursor;
pub use received::Received;
pub use tagged::{TaggedIter, TaggedView};
pub use validated::Validated;

/// A schema type that can be validated without allocating and then read
/// in place. `#[kafka]` implements it for every declared struct; the
/// primitives' impls are in [`impls`].
///
/// The methods are the plumbing of generated code; users call
/// [`view_exact`], [`Validated`] and the views' accessors.
pub trait Viewable: Sized {
    /// The borrowed form: a value for numbers, `&str` for strings,
    /// [`ArrayView`] for arrays, a `...View` struct for a declared struct.
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

    /// The ThrottleTimeMs of a message's view (0 when its schema has none,
    /// as [`Message::throttle_time_ms`]).
    fn view_throttle_time_ms(_view: Self::View<'_>) -> i32 {
        0
    }

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

/// The view of message `M`'s body (e.g. `DescribeProducersResponseView<'a>`).
pub type ViewOf<'a, M> = <M as Viewable>::View<'a>;

/// Checks a whole buffer as one body of `M` at `version`, with exactly the
/// errors [`decode_exact`](crate::decode_exact) gives, allocating nothing
/// unless it fails.
pub fn validate_exact<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<(), DecodeError> {
    let mut r = Reader::new(bytes);
    validate_body::<M>(&mut r, version)?;
    r.finish()
}

/// Validates a whole buffer as one body of `M` at `version` (see
/// [`validate_exact`]) and returns its view.
pub fn view_exact<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<M::View<'_>, DecodeError> {
    validate_exact::<M>(bytes, version)?;
    Ok(M::view(&Cursor::new(bytes), Version::of::<M>(version)))
}

/// Validates a whole buffer as one value of any declared struct at wire
/// version `v` (a coordinator record's key or value after its version
/// prefix, say) and returns its view.
pub fn view_value<T: Viewable>(bytes: &[u8], v: Version) -> Result<T::View<'_>, DecodeError> {
    let mut r = Reader::new(bytes);
    T::check(&mut r, v)?;
    r.finish()?;
    Ok(T::view(&Cursor::new(bytes), v))
}

/// The body at `r`, checked as [`Message::decode`] reads it.
pub(crate) fn validate_body<M: Message + Viewable>(
    r: &mut Reader<'_>,
    version: i16,
) -> Result<(), DecodeError> {
    M::check_version(r, version)?;
    M::check(r, Version::of::<M>(version)).map(drop)
}
