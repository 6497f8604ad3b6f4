//! Kafka's primitive wire types, each read in exactly one place ([`Reader`])
//! and written in exactly one place ([`PutWire`], with its size functions).
//!
//! The reader is total: every method returns a value or a [`DecodeError`]
//! naming the byte offset; nothing panics, and nothing allocates more than
//! the remaining input can justify.
//!
//! - [`reader`]: [`Reader`], the total decoder of every primitive.
//! - [`writer`]: [`PutWire`], the infallible encoder of every primitive.
//! - [`len`]: the exact encoded size of each, which encoders size buffers with.
//! - [`uuid`]: [`Uuid`], the topic id.
//!
//! [`DecodeError`]: crate::DecodeError

pub mod len;
pub mod reader;
pub mod uuid;
pub mod writer;

pub use len::*;
pub use reader::Reader;
pub use uuid::Uuid;
pub use writer::{put_tagged_section, PutWire};
