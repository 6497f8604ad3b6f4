//! ApiVersions (API key 18), versions 0-4; flexible from 3.
//!
//! Its response always travels with response header v0 (see `api`), and a
//! broker that does not know the requested version answers in v0 with
//! UNSUPPORTED_VERSION and its own ranges, so clients can retry lower.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Asks which versions of which APIs a broker supports.
#[kafka(key = crate::api::API_VERSIONS, versions = "0-4", response = ApiVersionsResponse)]
pub struct ApiVersionsRequest {
    /// v3+.
    #[kafka(versions = "3+")]
    pub client_software_name: String,
    /// v3+.
    #[kafka(versions = "3+")]
    pub client_software_version: String,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One API's supported range.
#[kafka]
pub struct ApiVersion {
    /// The API key.
    pub api_key: i16,
    /// The lowest supported version.
    pub min_version: i16,
    /// The highest supported version.
    pub max_version: i16,
    /// v3+.
    pub unknown_tagged_fields: TaggedFields,
}

impl ApiVersion {
    /// The range `min_version..=max_version` of `api_key`.
    pub fn new(api_key: i16, min_version: i16, max_version: i16) -> Self {
        ApiVersion {
            api_key,
            min_version,
            max_version,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

/// The broker's supported ranges.
#[kafka(key = crate::api::API_VERSIONS, versions = "0-4")]
pub struct ApiVersionsResponse {
    /// The top-level error code.
    pub error_code: ErrorCode,
    /// The supported APIs.
    pub api_keys: Vec<ApiVersion>,
    /// v1+.
    #[kafka(versions = "1+")]
    pub throttle_time_ms: i32,
    /// v3+. Kafka's SupportedFeatures (0), FinalizedFeaturesEpoch (1),
    /// FinalizedFeatures (2) and ZkMigrationReady (3) are kept here raw:
    /// kdp does not need them, and a re-encode keeps them.
    pub unknown_tagged_fields: TaggedFields,
}

/// One finalized feature (tagged field 2 of the response, v3+), e.g.
/// `transaction.version` at level 2 on a cluster running transaction
/// protocol v2.
#[kafka]
pub struct FinalizedFeatureKey {
    /// The feature's name.
    pub name: String,
    /// The cluster-wide finalized maximum level.
    pub max_version_level: i16,
    /// The cluster-wide finalized minimum level.
    pub min_version_level: i16,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The tag of FinalizedFeatures in the response's tagged fields.
pub const FINALIZED_FEATURES_TAG: u32 = 2;

impl ApiVersionsResponse {
    /// The finalized features (v3+), decoded from their tagged field;
    /// `None` when the broker sent none.
    pub fn finalized_features(
        &self,
    ) -> Option<Result<Vec<FinalizedFeatureKey>, crate::error::DecodeError>> {
        let bytes = self.unknown_tagged_fields.get(FINALIZED_FEATURES_TAG)?;
        let v = crate::wire::Version {
            version: 3,
            flexible: true,
        };
        let mut r = crate::codec::Reader::new(bytes);
        let features =
            <Vec<FinalizedFeatureKey> as crate::wire::Wire>::read(&mut r, v).and_then(|f| {
                r.finish()?;
                Ok(f)
            });
        Some(features.map_err(|e| e.in_field("FinalizedFeatures")))
    }

    /// The finalized level of feature `name`, if the broker sent it.
    pub fn finalized_level(&self, name: &str) -> Option<i16> {
        self.finalized_features()?
            .ok()?
            .into_iter()
            .find(|f| f.name == name)
            .map(|f| f.max_version_level)
    }

    /// The range the broker supports for `api_key`, if it supports it.
    pub fn range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.api_keys
            .iter()
            .find(|a| a.api_key == api_key)
            .map(|a| (a.min_version, a.max_version))
    }
}
