//! ApiVersions (`KafkaApis.handleApiVersionsRequest`): the APIs and
//! versions the mock serves, which are the registry's
//! ([`SUPPORTED_APIS`]). A version the mock does not know
//! is answered before its body is read (see [`crate::broker`]).

use kdp_wire::messages::{ApiVersion, ApiVersionsRequest, ApiVersionsResponse};
use kdp_wire::ErrorCode;

use kdp_wire::registry::DECLARED;

use super::handler::{Call, Handler, Refusal};

/// The APIs and versions the mock serves (and advertises: nothing else):
/// `(key, lowest, highest)` of every API in kdp-wire's registry, in its
/// order.
pub const SUPPORTED_APIS: &[(i16, i16, i16)] = &SUPPORTED;

const SUPPORTED: [(i16, i16, i16); DECLARED.len()] = {
    let mut out = [(0, 0, 0); DECLARED.len()];
    let mut i = 0;
    while i < DECLARED.len() {
        out[i] = (
            DECLARED[i].key,
            DECLARED[i].lowest_version,
            DECLARED[i].highest_version,
        );
        i += 1;
    }
    out
};

impl Handler for ApiVersionsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ApiVersionsResponse, Refusal> {
        let mut resp = api_versions_response(self, call.version);
        let (level, withheld) = {
            let c = call.shared.read();
            (c.transaction_version, c.withheld_apis.clone())
        };
        // a broker that predates an API does not list it
        resp.api_keys.retain(|a| !withheld.contains(&a.api_key));
        if call.version >= 3 && level > 0 && resp.error_code == ErrorCode::NONE {
            with_transaction_version(&mut resp, level);
        }
        Ok(resp)
    }
}

/// Adds the finalized `transaction.version` at `level` (tagged fields 1,
/// FinalizedFeaturesEpoch, and 2, FinalizedFeatures, of v3+), as a KRaft
/// broker reports its features.
fn with_transaction_version(resp: &mut ApiVersionsResponse, level: i16) {
    use kdp_wire::messages::api_versions::{FinalizedFeatureKey, FINALIZED_FEATURES_TAG};
    use kdp_wire::wire::{Version, Wire};
    let v = Version {
        version: 3,
        flexible: true,
    };
    let features = vec![FinalizedFeatureKey {
        name: "transaction.version".into(),
        max_version_level: level,
        min_version_level: level,
        ..Default::default()
    }];
    let mut bytes = Vec::with_capacity(features.wire_len(v));
    features.put(&mut bytes, v);
    resp.unknown_tagged_fields
        .insert(1, 1i64.to_be_bytes().to_vec());
    resp.unknown_tagged_fields
        .insert(FINALIZED_FEATURES_TAG, bytes);
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
