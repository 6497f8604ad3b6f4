//! DescribeProducers (API key 61), version 0 only, flexible.
//!
//! Field names follow the schema; serde names are the schema's, so the JSON
//! form is exactly the one kdp promises (`ThrottleTimeMs`, `Topics[].Name`, ...).
//! Note that ProducerEpoch is an int32 on this wire, unlike everywhere else.

use bytes::BufMut;
use serde::{Deserialize, Serialize};

use crate::api;
use crate::codec::{
    array_len_len_v, i32_array_len_v, nullable_string_len_v, string_len_v, tagged_fields_len,
    PutWire, Reader,
};
use crate::error::{Context, DecodeError};
use crate::message::{Message, Request};
use crate::tagged::TaggedFields;

/// Every struct here is flexible: compact encodings throughout.
const FLEX: bool = true;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct DescribeProducersRequest {
    pub topics: Vec<TopicRequest>,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TopicRequest {
    pub name: String,
    pub partition_indexes: Vec<i32>,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct DescribeProducersResponse {
    pub throttle_time_ms: i32,
    pub topics: Vec<TopicResponse>,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TopicResponse {
    pub name: String,
    pub partitions: Vec<PartitionResponse>,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct PartitionResponse {
    pub partition_index: i32,
    pub error_code: i16,
    /// Schema default: null. Brokers fill it only for topic-level errors.
    #[serde(default)]
    pub error_message: Option<String>,
    pub active_producers: Vec<ProducerState>,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ProducerState {
    pub producer_id: i64,
    /// int32 on this wire (int16 elsewhere in Kafka).
    pub producer_epoch: i32,
    #[serde(default = "minus_one_i32")]
    pub last_sequence: i32,
    #[serde(default = "minus_one_i64")]
    pub last_timestamp: i64,
    pub coordinator_epoch: i32,
    /// First offset of the open transaction, or -1.
    #[serde(default = "minus_one_i64")]
    pub current_txn_start_offset: i64,
    #[serde(default, skip_serializing_if = "TaggedFields::is_empty")]
    pub unknown_tagged_fields: TaggedFields,
}

fn minus_one_i32() -> i32 {
    -1
}

fn minus_one_i64() -> i64 {
    -1
}

impl Default for ProducerState {
    /// The schema defaults.
    fn default() -> Self {
        ProducerState {
            producer_id: 0,
            producer_epoch: 0,
            last_sequence: -1,
            last_timestamp: -1,
            coordinator_epoch: 0,
            current_txn_start_offset: -1,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

/// Smallest encodings, used to bound counts before allocating.
const MIN_TOPIC_REQUEST: usize = 3; // empty name, empty array, empty tags
const MIN_TOPIC_RESPONSE: usize = 3;
const MIN_PARTITION_RESPONSE: usize = 4 + 2 + 1 + 1 + 1;
const PRODUCER_STATE_FIXED: usize = 8 + 4 + 4 + 8 + 4 + 8;
const MIN_PRODUCER_STATE: usize = PRODUCER_STATE_FIXED + 1;

impl TopicRequest {
    fn encoded_len(&self) -> usize {
        string_len_v(&self.name, FLEX)
            + i32_array_len_v(&self.partition_indexes, FLEX)
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        buf.put_string_v(&self.name, FLEX);
        buf.put_i32_array_v(&self.partition_indexes, FLEX);
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(TopicRequest {
            name: r.compact_string().field("Name")?,
            partition_indexes: r.i32_array_v(FLEX).field("PartitionIndexes")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Message for DescribeProducersRequest {
    const NAME: &'static str = "DescribeProducersRequest";
    const API_KEY: i16 = api::DESCRIBE_PRODUCERS;
    const LOWEST_VERSION: i16 = 0;
    const HIGHEST_VERSION: i16 = 0;

    fn encoded_len(&self, _version: i16) -> usize {
        array_len_len_v(Some(self.topics.len()), FLEX)
            + self
                .topics
                .iter()
                .map(TopicRequest::encoded_len)
                .sum::<usize>()
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, _version: i16) {
        buf.put_array_len_v(Some(self.topics.len()), FLEX);
        for t in &self.topics {
            t.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        Ok(DescribeProducersRequest {
            topics: r
                .compact_array(MIN_TOPIC_REQUEST, TopicRequest::decode)
                .field("Topics")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Request for DescribeProducersRequest {
    type Response = DescribeProducersResponse;
}

impl ProducerState {
    #[inline]
    fn encoded_len(&self) -> usize {
        PRODUCER_STATE_FIXED + tagged_fields_len(&self.unknown_tagged_fields)
    }

    #[inline]
    fn encode<B: BufMut>(&self, buf: &mut B) {
        buf.put_i64(self.producer_id);
        buf.put_i32(self.producer_epoch);
        buf.put_i32(self.last_sequence);
        buf.put_i64(self.last_timestamp);
        buf.put_i32(self.coordinator_epoch);
        buf.put_i64(self.current_txn_start_offset);
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ProducerState {
            producer_id: r.i64().field("ProducerId")?,
            producer_epoch: r.i32().field("ProducerEpoch")?,
            last_sequence: r.i32().field("LastSequence")?,
            last_timestamp: r.i64().field("LastTimestamp")?,
            coordinator_epoch: r.i32().field("CoordinatorEpoch")?,
            current_txn_start_offset: r.i64().field("CurrentTxnStartOffset")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl PartitionResponse {
    fn encoded_len(&self) -> usize {
        4 + 2
            + nullable_string_len_v(self.error_message.as_deref(), FLEX)
            + array_len_len_v(Some(self.active_producers.len()), FLEX)
            + self
                .active_producers
                .iter()
                .map(ProducerState::encoded_len)
                .sum::<usize>()
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        buf.put_nullable_string_v(self.error_message.as_deref(), FLEX);
        buf.put_array_len_v(Some(self.active_producers.len()), FLEX);
        for p in &self.active_producers {
            p.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(PartitionResponse {
            partition_index: r.i32().field("PartitionIndex")?,
            error_code: r.i16().field("ErrorCode")?,
            error_message: r.compact_nullable_string().field("ErrorMessage")?,
            active_producers: r
                .compact_array(MIN_PRODUCER_STATE, ProducerState::decode)
                .field("ActiveProducers")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl TopicResponse {
    fn encoded_len(&self) -> usize {
        string_len_v(&self.name, FLEX)
            + array_len_len_v(Some(self.partitions.len()), FLEX)
            + self
                .partitions
                .iter()
                .map(PartitionResponse::encoded_len)
                .sum::<usize>()
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        buf.put_string_v(&self.name, FLEX);
        buf.put_array_len_v(Some(self.partitions.len()), FLEX);
        for p in &self.partitions {
            p.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(TopicResponse {
            name: r.compact_string().field("Name")?,
            partitions: r
                .compact_array(MIN_PARTITION_RESPONSE, PartitionResponse::decode)
                .field("Partitions")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Message for DescribeProducersResponse {
    const NAME: &'static str = "DescribeProducersResponse";
    const API_KEY: i16 = api::DESCRIBE_PRODUCERS;
    const LOWEST_VERSION: i16 = 0;
    const HIGHEST_VERSION: i16 = 0;

    fn encoded_len(&self, _version: i16) -> usize {
        4 + array_len_len_v(Some(self.topics.len()), FLEX)
            + self
                .topics
                .iter()
                .map(TopicResponse::encoded_len)
                .sum::<usize>()
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, _version: i16) {
        buf.put_i32(self.throttle_time_ms);
        buf.put_array_len_v(Some(self.topics.len()), FLEX);
        for t in &self.topics {
            t.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        Ok(DescribeProducersResponse {
            throttle_time_ms: r.i32().field("ThrottleTimeMs")?,
            topics: r
                .compact_array(MIN_TOPIC_RESPONSE, TopicResponse::decode)
                .field("Topics")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
