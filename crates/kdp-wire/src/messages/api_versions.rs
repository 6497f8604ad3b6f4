//! ApiVersions (API key 18), versions 0-4; flexible from 3.
//!
//! Its response always travels with response header v0 (see `api`), and a
//! broker that does not know the requested version answers in v0 with
//! UNSUPPORTED_VERSION and its own ranges, so clients can retry lower.

use bytes::BufMut;

use crate::api;
use crate::codec::{array_len_len_v, string_len_v, tagged_fields_len, PutWire, Reader};
use crate::error::{Context, DecodeError};
use crate::message::{Message, Request};
use crate::tagged::TaggedFields;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiVersionsRequest {
    /// v3+.
    pub client_software_name: String,
    /// v3+.
    pub client_software_version: String,
    pub unknown_tagged_fields: TaggedFields,
}

/// One API's supported range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiVersion {
    pub api_key: i16,
    pub min_version: i16,
    pub max_version: i16,
    /// v3+.
    pub unknown_tagged_fields: TaggedFields,
}

impl ApiVersion {
    pub fn new(api_key: i16, min_version: i16, max_version: i16) -> Self {
        ApiVersion {
            api_key,
            min_version,
            max_version,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiVersionsResponse {
    pub error_code: i16,
    pub api_keys: Vec<ApiVersion>,
    /// v1+.
    pub throttle_time_ms: i32,
    /// v3+. Kafka's SupportedFeatures (0), FinalizedFeaturesEpoch (1),
    /// FinalizedFeatures (2) and ZkMigrationReady (3) are kept here raw:
    /// kdp does not need them, and a re-encode keeps them.
    pub unknown_tagged_fields: TaggedFields,
}

impl ApiVersionsResponse {
    /// The range the broker supports for `api_key`, if it supports it.
    pub fn range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.api_keys
            .iter()
            .find(|a| a.api_key == api_key)
            .map(|a| (a.min_version, a.max_version))
    }
}

impl Message for ApiVersionsRequest {
    const NAME: &'static str = "ApiVersionsRequest";
    const API_KEY: i16 = api::API_VERSIONS;
    const LOWEST_VERSION: i16 = 0;
    const HIGHEST_VERSION: i16 = 4;

    fn encoded_len(&self, version: i16) -> usize {
        if version < 3 {
            return 0;
        }
        string_len_v(&self.client_software_name, true)
            + string_len_v(&self.client_software_version, true)
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) {
        if version >= 3 {
            buf.put_string_v(&self.client_software_name, true);
            buf.put_string_v(&self.client_software_version, true);
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        if version < 3 {
            return Ok(Self::default());
        }
        Ok(ApiVersionsRequest {
            client_software_name: r.compact_string().field("ClientSoftwareName")?,
            client_software_version: r.compact_string().field("ClientSoftwareVersion")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Request for ApiVersionsRequest {
    type Response = ApiVersionsResponse;
}

impl ApiVersion {
    fn min_len(flexible: bool) -> usize {
        6 + usize::from(flexible)
    }

    fn encoded_len(&self, flexible: bool) -> usize {
        6 + if flexible {
            tagged_fields_len(&self.unknown_tagged_fields)
        } else {
            0
        }
    }

    fn encode<B: BufMut>(&self, buf: &mut B, flexible: bool) {
        buf.put_i16(self.api_key);
        buf.put_i16(self.min_version);
        buf.put_i16(self.max_version);
        if flexible {
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    fn decode(r: &mut Reader<'_>, flexible: bool) -> Result<Self, DecodeError> {
        Ok(ApiVersion {
            api_key: r.i16().field("ApiKey")?,
            min_version: r.i16().field("MinVersion")?,
            max_version: r.i16().field("MaxVersion")?,
            unknown_tagged_fields: if flexible {
                r.tagged_fields()?
            } else {
                TaggedFields::default()
            },
        })
    }
}

impl Message for ApiVersionsResponse {
    const NAME: &'static str = "ApiVersionsResponse";
    const API_KEY: i16 = api::API_VERSIONS;
    const LOWEST_VERSION: i16 = 0;
    const HIGHEST_VERSION: i16 = 4;

    fn encoded_len(&self, version: i16) -> usize {
        let flexible = Self::is_flexible(version);
        2 + array_len_len_v(Some(self.api_keys.len()), flexible)
            + self
                .api_keys
                .iter()
                .map(|a| a.encoded_len(flexible))
                .sum::<usize>()
            + if version >= 1 { 4 } else { 0 }
            + if flexible {
                tagged_fields_len(&self.unknown_tagged_fields)
            } else {
                0
            }
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) {
        let flexible = Self::is_flexible(version);
        buf.put_i16(self.error_code);
        buf.put_array_len_v(Some(self.api_keys.len()), flexible);
        for a in &self.api_keys {
            a.encode(buf, flexible);
        }
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        }
        if flexible {
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        let flexible = Self::is_flexible(version);
        let error_code = r.i16().field("ErrorCode")?;
        let api_keys = r
            .array_v(flexible, ApiVersion::min_len(flexible), |r| {
                ApiVersion::decode(r, flexible)
            })
            .field("ApiKeys")?;
        let throttle_time_ms = if version >= 1 {
            r.i32().field("ThrottleTimeMs")?
        } else {
            0
        };
        let unknown_tagged_fields = if flexible {
            r.tagged_fields()?
        } else {
            TaggedFields::default()
        };
        Ok(ApiVersionsResponse {
            error_code,
            api_keys,
            throttle_time_ms,
            unknown_tagged_fields,
        })
    }
}
