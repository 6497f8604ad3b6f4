//! `kdp-wire`: a byte-exact, strict codec for Apache Kafka's DescribeProducers
//! API (key 61) and the few messages around it.
//!
//! Layout, after quinn-proto and rustls: [`codec`] reads and writes the
//! primitive wire types (each in exactly one place), [`header`] and [`frame`]
//! handle what surrounds a body, and [`messages`] holds one module per
//! message. Encoders are infallible and size-exact; decoders are total and
//! every error names its byte offset and field path.

#![forbid(unsafe_code)]

pub mod api;
pub mod codec;
pub mod error;
pub mod error_code;
pub mod frame;
#[doc(hidden)]
pub mod fuzz_checks;
pub mod header;
pub mod hex;
pub mod json;
pub mod message;
pub mod messages;
pub mod tagged;
#[doc(hidden)]
pub mod testgen;
pub mod wire;

pub use codec::{PutWire, Reader, Uuid};
pub use error::{Context, DecodeError, DecodeErrorKind};
pub use header::{RequestHeader, ResponseHeader};
pub use message::{decode_exact, encode_to_vec, Message, Request};
pub use tagged::{TaggedField, TaggedFields};
