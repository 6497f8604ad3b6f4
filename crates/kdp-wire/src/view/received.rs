//! [`Received`]: the two forms a client takes a response in, owned or
//! validated-then-viewed, behind one call, so that a client's send path
//! (and its admin driver) serves both.

use bytes::Bytes;

use super::validated::Validated;
use super::viewable::Viewable;
use crate::api;
use crate::codec::Reader;
use crate::error::{Context, DecodeError};
use crate::header::ResponseHeader;
use crate::message::Message;

/// A response as a client takes it from a frame's payload (what follows
/// the size prefix): the owned message `M` itself, decoded, or
/// [`Validated<M>`], checked once and then read through its view. Both
/// give the same errors (field path, byte offset from the payload's first
/// byte).
pub trait Received: Sized {
    /// The message the payload carries.
    type Message: Message;

    /// The header and the body of `payload`, a response of
    /// [`Self::Message`] at `version`.
    fn from_payload(payload: Bytes, version: i16) -> Result<(ResponseHeader, Self), DecodeError>;

    /// The body's ThrottleTimeMs (0 when its schema has none).
    fn throttle_time_ms(&self) -> i32;
}

impl<M: Message> Received for M {
    type Message = M;

    fn from_payload(payload: Bytes, version: i16) -> Result<(ResponseHeader, M), DecodeError> {
        let mut r = Reader::new(&payload);
        let header =
            ResponseHeader::decode(&mut r, api::response_header_version(M::API_KEY, version))
                .field("Header")?;
        let body = M::decode(&mut r, version)?;
        r.finish()?;
        Ok((header, body))
    }

    fn throttle_time_ms(&self) -> i32 {
        Message::throttle_time_ms(self)
    }
}

impl<M: Message + Viewable> Received for Validated<M> {
    type Message = M;

    fn from_payload(payload: Bytes, version: i16) -> Result<(ResponseHeader, Self), DecodeError> {
        Validated::from_response_payload(payload, version)
    }

    fn throttle_time_ms(&self) -> i32 {
        M::view_throttle_time_ms(self.view())
    }
}
