//! Request header v0-v2 and response header v0-v1.

use bytes::BufMut;
use serde::{Deserialize, Serialize};

use crate::codec::{nullable_string_len_v, tagged_fields_len, PutWire, Reader};
use crate::error::{Context, DecodeError};
use crate::tagged::TaggedFields;

/// The header in front of every request body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct RequestHeader {
    /// `RequestApiKey`: which API the body belongs to.
    pub request_api_key: i16,
    /// `RequestApiVersion`: the version the body is encoded in.
    pub request_api_version: i16,
    /// `CorrelationId`: echoed in the response so requests can be pipelined.
    pub correlation_id: i32,
    /// Header v1+. Always a classic nullable string, even in the flexible
    /// header v2 (Kafka keeps it readable by brokers of any age).
    #[serde(default)]
    pub client_id: Option<String>,
    /// Header v2+.
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

impl RequestHeader {
    /// Encoded size at `header_version` (0-2).
    pub fn encoded_len(&self, header_version: i16) -> usize {
        let mut n = 8;
        if header_version >= 1 {
            n += nullable_string_len_v(self.client_id.as_deref(), false);
        }
        if header_version >= 2 {
            n += tagged_fields_len(&self.unknown_tagged_fields);
        }
        n
    }

    /// Writes the header at `header_version` (0-2).
    pub fn encode<B: BufMut>(&self, buf: &mut B, header_version: i16) {
        buf.put_i16(self.request_api_key);
        buf.put_i16(self.request_api_version);
        buf.put_i32(self.correlation_id);
        if header_version >= 1 {
            buf.put_nullable_string_v(self.client_id.as_deref(), false);
        }
        if header_version >= 2 {
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    /// Reads a header at a known `header_version` (0-2).
    pub fn decode(r: &mut Reader<'_>, header_version: i16) -> Result<Self, DecodeError> {
        let request_api_key = r.i16().field("RequestApiKey")?;
        let request_api_version = r.i16().field("RequestApiVersion")?;
        Self::decode_rest(r, request_api_key, request_api_version, header_version)
    }

    /// Decodes a header whose version follows from its own api key and
    /// version, as a broker must.
    pub fn decode_auto(r: &mut Reader<'_>) -> Result<(Self, i16), DecodeError> {
        let request_api_key = r.i16().field("RequestApiKey")?;
        let request_api_version = r.i16().field("RequestApiVersion")?;
        let header_version =
            crate::api::request_header_version(request_api_key, request_api_version);
        let header = Self::decode_rest(r, request_api_key, request_api_version, header_version)?;
        Ok((header, header_version))
    }

    fn decode_rest(
        r: &mut Reader<'_>,
        request_api_key: i16,
        request_api_version: i16,
        header_version: i16,
    ) -> Result<Self, DecodeError> {
        let correlation_id = r.i32().field("CorrelationId")?;
        let client_id = if header_version >= 1 {
            r.nullable_string().field("ClientId")?
        } else {
            None
        };
        let unknown_tagged_fields = if header_version >= 2 {
            r.tagged_fields()?
        } else {
            TaggedFields::default()
        };
        Ok(RequestHeader {
            request_api_key,
            request_api_version,
            correlation_id,
            client_id,
            unknown_tagged_fields,
        })
    }
}

/// The header in front of every response body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ResponseHeader {
    /// `CorrelationId`: the request's, so the client can match them.
    pub correlation_id: i32,
    /// Header v1+.
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

impl ResponseHeader {
    /// Encoded size at `header_version` (0-1).
    pub fn encoded_len(&self, header_version: i16) -> usize {
        4 + if header_version >= 1 {
            tagged_fields_len(&self.unknown_tagged_fields)
        } else {
            0
        }
    }

    /// Writes the header at `header_version` (0-1).
    pub fn encode<B: BufMut>(&self, buf: &mut B, header_version: i16) {
        buf.put_i32(self.correlation_id);
        if header_version >= 1 {
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    /// Reads a header at `header_version` (0-1).
    pub fn decode(r: &mut Reader<'_>, header_version: i16) -> Result<Self, DecodeError> {
        let correlation_id = r.i32().field("CorrelationId")?;
        let unknown_tagged_fields = if header_version >= 1 {
            r.tagged_fields()?
        } else {
            TaggedFields::default()
        };
        Ok(ResponseHeader {
            correlation_id,
            unknown_tagged_fields,
        })
    }
}
