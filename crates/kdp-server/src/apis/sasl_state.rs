//! SaslHandshake and SaslAuthenticate outside an exchange: reached only
//! when no SASL exchange is running (SASL is off, or the client already
//! authenticated); [`crate::sasl::SaslGate`] answers them while a client
//! authenticates. KafkaApis answers ILLEGAL_SASL_STATE.

use kdp_wire::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kdp_wire::ErrorCode;

use super::handler::{Call, Handler, Refusal};

impl Handler for SaslHandshakeRequest {
    fn handle(&self, _: &Call<'_>) -> Result<SaslHandshakeResponse, Refusal> {
        Ok(SaslHandshakeResponse {
            error_code: ErrorCode::ILLEGAL_SASL_STATE,
            ..Default::default()
        })
    }
}

impl Handler for SaslAuthenticateRequest {
    fn handle(&self, _: &Call<'_>) -> Result<SaslAuthenticateResponse, Refusal> {
        Ok(SaslAuthenticateResponse {
            error_code: ErrorCode::ILLEGAL_SASL_STATE,
            error_message: Some(
                "SaslAuthenticate request received after successful authentication".into(),
            ),
            ..Default::default()
        })
    }
}
