//! Reading a partition's record batches over the wire (Fetch), for tools
//! that inspect a log without a broker's disk: `kdp batches`, the
//! transaction log's history.
//!
//! - [`request`]: Fetch through the admin driver (leader lookup, version
//!   negotiation, topic ids, retries, deadline): one partition
//!   ([`fetch_once`]) or many, batched per leader ([`fetch_many`]);
//! - [`range`]: [`read_batches`], from an offset or the last N batches
//!   (the log's bounds from ListOffsets, read backwards in chunks), with
//!   typed failures that name the ACL a refusal needs.
//!
//! Reads are read_uncommitted by default: aborted records and the control
//! batches (commit and abort markers) are what an inspection needs.

pub mod range;
pub mod request;

pub use range::{
    read_batches, FetchedBatch, PartitionRead, Progress, ReadError, ReadFrom, ReadRequest,
};
pub use request::{fetch_many, fetch_once, FetchAsk, FetchSettings, FetchedChunk};
