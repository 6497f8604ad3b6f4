//! SaslAuthenticate (API key 36), versions 0-2; flexible from 2.
//!
//! The bytes are secrets (passwords, proofs, tokens): kdp never logs them.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// One SASL token from the client.
#[kafka(key = crate::api::SASL_AUTHENTICATE, versions = "0-2", response = SaslAuthenticateResponse)]
pub struct SaslAuthenticateRequest {
    /// The token.
    pub auth_bytes: Vec<u8>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One SASL token from the broker.
#[kafka(key = crate::api::SASL_AUTHENTICATE, versions = "0-2")]
pub struct SaslAuthenticateResponse {
    /// The error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    pub error_message: Option<String>,
    /// The token.
    pub auth_bytes: Vec<u8>,
    /// v1+: how long the session may last before re-authentication (0: no limit).
    #[kafka(versions = "1+")]
    pub session_lifetime_ms: i64,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
