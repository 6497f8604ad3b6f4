//! What a broker does with a request of a faulted API.

use std::time::Duration;

use kdp_wire::error_code::ErrorCode;

/// A fault, set per API key on one broker or on all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Read the request and never answer it (the connection stays open).
    Stall,
    /// Read the request, never answer it, and from then on answer nothing
    /// more on any connection to this broker (a broker that hangs whole).
    Freeze,
    /// Answer after this long.
    Delay(Duration),
    /// Close the connection instead of answering.
    Cut,
    /// Answer with this error code in every `ErrorCode` of the response
    /// (top level, per topic, per partition, per key: wherever the schema
    /// has one). The request changes nothing: it is answered from a copy
    /// of the cluster.
    Error(ErrorCode),
}

/// What goes on the wire instead of an answer
/// ([`crate::StallCluster::answer_raw`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// This frame payload (header and body), its size prefixed.
    Frame(Vec<u8>),
    /// These bytes as they are (no size prefixed); the connection stays
    /// open.
    Bytes(Vec<u8>),
    /// These bytes as they are, then the connection is closed.
    BytesThenClose(Vec<u8>),
}

/// Where a fault applies: one broker, or every broker (`None`), and the API key.
pub(crate) type FaultKey = (Option<i32>, i16);
