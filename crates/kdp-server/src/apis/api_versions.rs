//! ApiVersions (`KafkaApis.handleApiVersionsRequest`): the APIs and
//! versions the mock serves, which are the registry's
//! ([`crate::broker::SUPPORTED_APIS`]). A version the mock does not know
//! is answered before its body is read (see [`crate::broker`]).

use kdp_wire::messages::{ApiVersion, ApiVersionsRequest, ApiVersionsResponse};
use kdp_wire::ErrorCode;

use super::{Call, Handler, Refusal};
use crate::broker::SUPPORTED_APIS;

impl Handler for ApiVersionsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ApiVersionsResponse, Refusal> {
        Ok(api_versions_response(self, call.version))
    }
}

pub(crate) fn api_range(key: i16) -> ApiVersion {
    let (k, min, max) = SUPPORTED_APIS
        .iter()
        .copied()
        .find(|&(k, _, _)| k == key)
        .unwrap_or((key, 0, 0));
    ApiVersion::new(k, min, max)
}

/// `ApiVersionsRequest.isValid`: from v3 the client software name and version
/// must match `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
pub(crate) fn valid_software_token(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: &u8| c.is_ascii_alphanumeric();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'.';
    match b {
        [] => false,
        [only] => edge(only),
        [first, mid @ .., last] => edge(first) && edge(last) && mid.iter().all(inner),
    }
}

/// KafkaApis.handleApiVersionsRequest for a supported version.
pub fn api_versions_response(req: &ApiVersionsRequest, version: i16) -> ApiVersionsResponse {
    if version >= 3
        && !(valid_software_token(&req.client_software_name)
            && valid_software_token(&req.client_software_version))
    {
        // getErrorResponse(INVALID_REQUEST): no ranges for this error.
        return ApiVersionsResponse {
            error_code: ErrorCode::INVALID_REQUEST,
            ..Default::default()
        };
    }
    ApiVersionsResponse {
        error_code: ErrorCode::NONE,
        api_keys: SUPPORTED_APIS
            .iter()
            .map(|&(k, min, max)| ApiVersion::new(k, min, max))
            .collect(),
        ..Default::default()
    }
}
