//! SaslHandshake (API key 17), versions 0-1; never flexible.
//!
//! v1 means the SASL tokens that follow travel in SaslAuthenticate
//! requests instead of raw on the socket.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Picks a SASL mechanism.
#[kafka(key = crate::api::SASL_HANDSHAKE, versions = "0-1", response = SaslHandshakeResponse)]
pub struct SaslHandshakeRequest {
    /// The mechanism, e.g. `SCRAM-SHA-512`.
    pub mechanism: String,
    /// Never on this wire (no flexible version); kept for symmetry.
    pub unknown_tagged_fields: TaggedFields,
}

/// Whether the mechanism is enabled, and which are.
#[kafka(key = crate::api::SASL_HANDSHAKE, versions = "0-1")]
pub struct SaslHandshakeResponse {
    /// The error code, 0 for none.
    pub error_code: ErrorCode,
    /// The mechanisms the broker enables.
    pub mechanisms: Vec<String>,
    /// Never on this wire (no flexible version); kept for symmetry.
    pub unknown_tagged_fields: TaggedFields,
}
