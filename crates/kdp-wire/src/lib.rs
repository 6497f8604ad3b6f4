//! `kdp-wire`: a byte-exact, strict codec for the Apache Kafka APIs kdp
//! speaks: DescribeProducers (key 61), the transaction, group and metadata
//! APIs around it, Fetch and the record batches it carries, and the
//! transaction coordinator's `__transaction_state` records.
//!
//! Layout, after quinn-proto and rustls: [`codec`] reads and writes the
//! primitive wire types (each in exactly one place), [`header`] and [`frame`]
//! handle what surrounds a body, and [`messages`] holds one module per
//! API, each message declared once with `#[kafka]` (kdp-derive), which
//! gives its struct, sizes, encoder, strict decoder, JSON form and view.
//! [`registry`] lists the APIs, once: the mock's dispatch,
//! `kdp decode` and every test that covers all messages derive from it.
//! [`view`] validates a body once and then reads it in place, borrowing
//! names from it and allocating nothing. [`records`] reads and writes the
//! record batches a Fetch response carries (CRC-32C, every codec, bounded
//! decompression); [`coordinator`] the records of Kafka's internal topics.
//! Encoders are infallible and size-exact; decoders are total and
//! every error names its byte offset and field path. The crate needs no
//! async runtime; its `tokio` feature adds `frame::io`, the one async loop
//! reading frames from a tokio stream.
//!
//! # Decode a captured response
//!
//! `vectors/seed-example.bin` is the body of a DescribeProducers v0 response:
//! one partition with one producer whose transaction is still open.
//!
//! ```
//! use kdp_wire::messages::DescribeProducersResponse;
//!
//! let bytes = include_bytes!("../../../vectors/seed-example.bin");
//! let response: DescribeProducersResponse = kdp_wire::decode_exact(bytes, 0)?;
//!
//! let topic = &response.topics[0];
//! let partition = &topic.partitions[0];
//! assert_eq!((topic.name.as_str(), partition.partition_index), ("orders", 3));
//! assert_eq!(partition.active_producers[0].current_txn_start_offset, 150382);
//!
//! // What decodes re-encodes byte for byte, and reads the same from JSON.
//! assert_eq!(kdp_wire::encode_to_vec(&response, 0), bytes);
//! let json = include_str!("../../../vectors/seed-example.json");
//! assert_eq!(kdp_wire::json::from_str::<DescribeProducersResponse>(json).unwrap(), response);
//!
//! // Hostile or cut-short bytes are an error naming the byte and the field,
//! // found before anything is allocated for them.
//! let err = kdp_wire::decode_exact::<DescribeProducersResponse>(&bytes[..40], 0).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "at byte 20 (Topics[0].Partitions[0].ActiveProducers): \
//!      array count 1 needs at least 37 bytes but only 19 are left"
//! );
//! # Ok::<(), kdp_wire::DecodeError>(())
//! ```
//!
//! # Encode a request, frame it, read it back
//!
//! A frame is the size prefix, the request header and the body.
//! [`frame::FrameReader`] splits a byte stream into frames without trusting
//! the size prefix with an allocation.
//!
//! ```
//! use kdp_wire::frame::{self, FrameReader, DEFAULT_MAX_FRAME_SIZE};
//! use kdp_wire::messages::{DescribeProducersRequest, TopicRequest};
//! use kdp_wire::{Message, RequestHeader};
//!
//! let request = DescribeProducersRequest {
//!     topics: vec![TopicRequest {
//!         name: "orders".to_string(),
//!         partition_indexes: vec![0, 3],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//! let header = RequestHeader {
//!     request_api_key: DescribeProducersRequest::API_KEY,
//!     request_api_version: 0,
//!     correlation_id: 7,
//!     client_id: Some("kdp".to_string()),
//!     ..Default::default()
//! };
//! let bytes = frame::request_frame_to_vec(&header, &request);
//!
//! // The broker's side: bytes arrive in pieces; a whole frame comes out.
//! let mut reader = FrameReader::new(DEFAULT_MAX_FRAME_SIZE);
//! let (first, rest) = bytes.split_at(3);
//! assert_eq!(reader.feed(&mut &first[..])?, None);
//! let payload = reader.feed(&mut &rest[..])?.expect("the whole frame arrived");
//! assert_eq!(payload.len() + 4, bytes.len());
//!
//! let (decoded_header, decoded) = frame::decode_request_frame::<DescribeProducersRequest>(&bytes)?;
//! assert_eq!((decoded_header.correlation_id, decoded), (7, request));
//! # Ok::<(), kdp_wire::DecodeError>(())
//! ```

#![forbid(unsafe_code)]

pub mod api;
pub mod codec;
pub mod coordinator;
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
pub mod nullable_struct;
pub mod records;
pub mod registry;
pub mod tagged;
#[doc(hidden)]
pub mod testgen;
pub mod txn_state;
pub mod version;
pub mod view;
pub mod wire;

pub use codec::{PutWire, Reader, Uuid};
pub use error::{Context, DecodeError, DecodeErrorKind};
pub use error_code::ErrorCode;
pub use header::{RequestHeader, ResponseHeader};
pub use message::{decode_exact, encode_to_vec, Message, Request};
pub use tagged::{TaggedField, TaggedFields};
pub use txn_state::{TxnState, UnknownTxnState};
