//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the parts both
//! ends of an exchange compute: the keys derived from a password
//! ([`keys`]), the client proof and server signature over the
//! AuthMessage, and the `k=v,...` attribute syntax of the messages
//! ([`message`]).
//!
//! kdp's client (`kdp_client::security::scram`) and the mock broker
//! (`kdp_server::sasl::scram`) each run their side of the exchange on top
//! of these, so the two cannot disagree on the arithmetic.

#![forbid(unsafe_code)]

pub mod keys;
pub mod mechanism;
pub mod message;

pub use keys::{ct_eq, xor, ScramKeys};
pub use mechanism::{Mechanism, MAX_ITERATIONS, MIN_ITERATIONS};
