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
mod viewable;

use crate::codec::Reader;
use crate::error::DecodeError;
use crate::message::Message;
use crate::version::Version;

pub use array::{ArrayIter, ArrayView};
pub use cursor::Cursor;
pub use received::Received;
pub use tagged::{TaggedIter, TaggedView};
pub use validated::Validated;
pub use viewable::{ViewCodec, Viewable};

/// The view of message `M`'s body (e.g. `DescribeProducersResponseView<'a>`).
pub type ViewOf<'a, M> = <M as Viewable>::View<'a>;

/// Checks a whole buffer as one body of `M` at `version`, with exactly the
/// errors [`decode_exact`](crate::decode_exact) gives, allocating nothing
/// unless it fails.
#[inline]
pub fn validate_exact<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<(), DecodeError> {
    check_exact::<M>(bytes, version).map(drop)
}

/// [`validate_exact`], answering whether every array of fixed-size
/// structs lies at a fixed stride ([`Cursor::checked`]). The fast check
/// reads the slice itself: no reader is made unless it declines.
#[inline]
fn check_exact<M: Message + Viewable>(bytes: &[u8], version: i16) -> Result<bool, DecodeError> {
    if validated::accepts_fast::<M>(bytes, version) {
        return Ok(true);
    }
    validated::check_slow::<M>(bytes, version)
}

/// [`validate_exact`] through the declared check alone (no message's fast
/// check), for the properties that hold the two to the same verdict.
pub(crate) fn check_exact_declared<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<bool, DecodeError> {
    let mut r = Reader::new(bytes);
    M::check_version(&r, version)?;
    validated::check_declared::<M>(&mut r, version)
}

/// Validates a whole buffer as one body of `M` at `version` (see
/// [`validate_exact`]) and returns its view.
#[inline]
pub fn view_exact<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<M::View<'_>, DecodeError> {
    let strided = check_exact::<M>(bytes, version)?;
    Ok(M::view(
        &Cursor::checked(bytes, strided),
        Version::of::<M>(version),
    ))
}

/// Validates a whole buffer as one value of any declared struct at wire
/// version `v` (a coordinator record's key or value after its version
/// prefix, say) and returns its view.
pub fn view_value<T: Viewable>(bytes: &[u8], v: Version) -> Result<T::View<'_>, DecodeError> {
    let mut r = Reader::new(bytes);
    T::check(&mut r, v)?;
    r.finish()?;
    Ok(T::view(
        &Cursor::checked(bytes, r.fixed_structs_strided()),
        v,
    ))
}
