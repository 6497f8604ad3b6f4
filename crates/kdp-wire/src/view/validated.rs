//! [`Validated`]: a body that passed its check, held as `bytes::Bytes` so
//! that a frame read from a socket can be handed on without a copy.

use std::fmt;
use std::marker::PhantomData;

use bytes::Bytes;

use super::cursor::Cursor;
use super::viewable::Viewable;
use crate::api;
use crate::codec::Reader;
use crate::error::{Context, DecodeError};
use crate::header::ResponseHeader;
use crate::message::Message;
use crate::version::Version;

/// A body of `M` at one version, validated once ([`super::validate_exact`]'s
/// checks), read any number of times through [`Validated::view`].
///
/// Cloning it (or [`Validated::body`]) clones the `Bytes` handle, not the
/// bytes; as with any `Bytes` made from a `Vec`, the first such clone
/// allocates the shared count, so a client that only views moves its
/// frame in and never clones.
pub struct Validated<M> {
    /// The bytes the body lies in (a whole response payload, or the body).
    bytes: Bytes,
    /// Where the body starts in `bytes`.
    start: usize,
    version: i16,
    /// What the check proved: every array of fixed-size structs lies at a
    /// fixed stride ([`Cursor::checked`]).
    strided: bool,
    message: PhantomData<fn() -> M>,
}

impl<M: Message + Viewable> Validated<M> {
    /// Validates `body`, a whole body of `M` at `version`. Errors are the
    /// ones [`decode_exact`](crate::decode_exact) gives.
    pub fn new(body: Bytes, version: i16) -> Result<Self, DecodeError> {
        let strided = check_whole::<M>(&mut Reader::new(&body), version)?;
        Ok(Validated {
            bytes: body,
            start: 0,
            version,
            strided,
            message: PhantomData,
        })
    }

    /// Validates a response payload (what follows the size prefix: the
    /// response header of `M`'s API at `version`, then the body), as a
    /// client receives it. Offsets in errors count from the payload's first
    /// byte; a header error's path starts with `Header`.
    pub fn from_response_payload(
        payload: Bytes,
        version: i16,
    ) -> Result<(ResponseHeader, Self), DecodeError> {
        let mut r = Reader::new(&payload);
        let header =
            ResponseHeader::decode(&mut r, api::response_header_version(M::API_KEY, version))
                .field("Header")?;
        let start = r.offset();
        let strided = check_whole::<M>(&mut r, version)?;
        let validated = Validated {
            strided,
            bytes: payload,
            start,
            version,
            message: PhantomData,
        };
        Ok((header, validated))
    }

    /// The body's view.
    #[inline]
    pub fn view(&self) -> M::View<'_> {
        M::view(
            &Cursor::checked(self.body_bytes(), self.strided),
            Version::of::<M>(self.version),
        )
    }

    /// The version the body was validated at.
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The body's bytes (a handle on the same memory).
    pub fn body(&self) -> Bytes {
        self.bytes.slice(self.start.min(self.bytes.len())..)
    }

    /// The owned message, built from the view.
    pub fn to_message(&self) -> M {
        M::owned(self.view(), Version::of::<M>(self.version))
    }

    fn body_bytes(&self) -> &[u8] {
        self.bytes.get(self.start..).unwrap_or_default()
    }
}

impl<M> Clone for Validated<M> {
    fn clone(&self) -> Self {
        Validated {
            bytes: self.bytes.clone(),
            start: self.start,
            version: self.version,
            strided: self.strided,
            message: PhantomData,
        }
    }
}

impl<M: Message + Viewable> fmt::Debug for Validated<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validated")
            .field("version", &self.version)
            .field("body", &self.view())
            .finish()
    }
}

/// The rest of `r`, checked as one whole body as [`Message::decode`] and
/// then [`Reader::finish`] read it (the same errors), answering whether
/// every array of fixed-size structs in it lies at a fixed stride
/// ([`Cursor::checked`]). A message's fast check of its usual shape
/// ([`Message::accepts_fast`]) goes first; whatever it does not accept
/// goes through the declared check.
///
/// Inline, and the declared path out of line: at one producer the call
/// and the frame of the declared check cost as much as the fast check.
#[inline]
pub(crate) fn check_whole<M: Message + Viewable>(
    r: &mut Reader<'_>,
    version: i16,
) -> Result<bool, DecodeError> {
    if accepts_fast::<M>(r.unread(), version) {
        r.read_to_end();
        return Ok(true);
    }
    check_versioned::<M>(r, version)
}

/// Whether `M`'s fast check ([`Message::accepts_fast`]) accepts `body`
/// at a `version` in the schema's range.
#[inline]
pub(crate) fn accepts_fast<M: Message>(body: &[u8], version: i16) -> bool {
    (M::LOWEST_VERSION..=M::HIGHEST_VERSION).contains(&version) && M::accepts_fast(body, version)
}

/// [`check_whole`] of a whole buffer past its fast check, out of line.
#[inline(never)]
pub(crate) fn check_slow<M: Message + Viewable>(
    bytes: &[u8],
    version: i16,
) -> Result<bool, DecodeError> {
    check_versioned::<M>(&mut Reader::new(bytes), version)
}

/// [`check_whole`] past its fast check: the version (named in the error
/// if out of range), then the declared check.
#[inline(never)]
fn check_versioned<M: Message + Viewable>(
    r: &mut Reader<'_>,
    version: i16,
) -> Result<bool, DecodeError> {
    M::check_version(r, version)?;
    check_declared::<M>(r, version)
}

/// [`check_whole`] without the fast check, the version already checked.
pub(crate) fn check_declared<M: Message + Viewable>(
    r: &mut Reader<'_>,
    version: i16,
) -> Result<bool, DecodeError> {
    M::check(r, Version::of::<M>(version))?;
    r.finish()?;
    Ok(r.fixed_structs_strided())
}
