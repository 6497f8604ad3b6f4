//! DescribeProducers (API key 61), version 0 only, flexible.
//!
//! Field names follow the schema; serde names are the schema's, so the JSON
//! form is exactly the one kdp promises (`ThrottleTimeMs`, `Topics[].Name`, ...).
//! Note that ProducerEpoch is an int32 on this wire, unlike everywhere else.

use bytes::BufMut;
use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::codec::{
    array_len_len_v, nullable_string_len_v, string_len_v, tagged_fields_len, PutWire, Reader,
};
use crate::error::{Context, DecodeError};
use crate::tagged::TaggedFields;
use crate::wire::CustomCodec;

/// Every struct here is flexible: compact encodings throughout.
const FLEX: bool = true;

/// Which partitions to describe.
#[kafka(key = crate::api::DESCRIBE_PRODUCERS, versions = "0", response = DescribeProducersResponse)]
pub struct DescribeProducersRequest {
    /// The topics, each with the partitions to describe.
    pub topics: Vec<TopicRequest>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic of a request.
#[kafka]
pub struct TopicRequest {
    /// The topic name.
    pub name: String,
    /// The partitions of the topic to describe.
    pub partition_indexes: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The producers of each partition asked for. Its `Message` impl is the
/// hand-tuned codec below; the declared one stays as `Wire`, and property
/// tests hold the two to the same bytes.
#[kafka(key = crate::api::DESCRIBE_PRODUCERS, versions = "0", custom_codec)]
pub struct DescribeProducersResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// The topics, in the order the broker answered.
    pub topics: Vec<TopicResponse>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic of a response.
#[kafka]
pub struct TopicResponse {
    /// The topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<PartitionResponse>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition of a response.
#[kafka]
pub struct PartitionResponse {
    /// The partition index.
    pub partition_index: i32,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// Schema default: null. Brokers fill it only for topic-level errors.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// The producers with state on this replica.
    pub active_producers: Vec<ProducerState>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One producer's state on a partition replica.
#[kafka]
pub struct ProducerState {
    /// The producer id.
    pub producer_id: i64,
    /// int32 on this wire (int16 elsewhere in Kafka).
    pub producer_epoch: i32,
    /// The last sequence number written, or -1.
    #[kafka(default = "-1")]
    pub last_sequence: i32,
    /// The time of the last write (ms since the epoch), or -1.
    #[kafka(default = "-1")]
    pub last_timestamp: i64,
    /// The coordinator epoch of the last transaction marker written.
    pub coordinator_epoch: i32,
    /// First offset of the open transaction, or -1.
    #[kafka(default = "-1")]
    pub current_txn_start_offset: i64,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// Smallest encodings, used to bound counts before allocating.
const MIN_TOPIC_RESPONSE: usize = 3;
const MIN_PARTITION_RESPONSE: usize = 4 + 2 + 1 + 1 + 1;
const PRODUCER_STATE_FIXED: usize = 8 + 4 + 4 + 8 + 4 + 8;
const MIN_PRODUCER_STATE: usize = PRODUCER_STATE_FIXED + 1;

impl ProducerState {
    #[inline]
    fn encoded_len(&self) -> usize {
        PRODUCER_STATE_FIXED + tagged_fields_len(&self.unknown_tagged_fields)
    }

    /// The encoded size of the elements of an ActiveProducers array. A
    /// branch-free pass first: in practice no producer has tagged fields, and
    /// then every one takes 37 bytes.
    #[inline]
    fn array_body_len(producers: &[Self]) -> usize {
        let tagged: usize = producers
            .iter()
            .map(|p| p.unknown_tagged_fields.len())
            .sum();
        if tagged == 0 {
            producers.len() * MIN_PRODUCER_STATE
        } else {
            producers.iter().map(Self::encoded_len).sum()
        }
    }

    #[inline]
    fn encode<B: BufMut>(&self, buf: &mut B) {
        if self.unknown_tagged_fields.is_empty() {
            // One write of all 37 bytes instead of seven: the fields and the
            // empty tag section are laid out in a stack array whose size the
            // compiler knows, so those writes are unchecked.
            let mut fixed = [0u8; MIN_PRODUCER_STATE];
            let mut w: &mut [u8] = &mut fixed;
            self.encode_fields(&mut w);
            w.put_tagged_fields(&self.unknown_tagged_fields);
            buf.put_slice(&fixed);
        } else {
            self.encode_fields(buf);
            buf.put_tagged_fields(&self.unknown_tagged_fields);
        }
    }

    #[inline(always)]
    fn encode_fields<B: BufMut>(&self, buf: &mut B) {
        buf.put_i64(self.producer_id);
        buf.put_i32(self.producer_epoch);
        buf.put_i32(self.last_sequence);
        buf.put_i64(self.last_timestamp);
        buf.put_i32(self.coordinator_epoch);
        buf.put_i64(self.current_txn_start_offset);
    }

    /// Sets the fixed fields from their 36 bytes (always `Some`: the
    /// lengths are known, so the checks compile away).
    #[inline(always)]
    fn fill_fixed(&mut self, b: &[u8; PRODUCER_STATE_FIXED]) -> Option<()> {
        let (producer_id, b) = b.split_first_chunk::<8>()?;
        let (producer_epoch, b) = b.split_first_chunk::<4>()?;
        let (last_sequence, b) = b.split_first_chunk::<4>()?;
        let (last_timestamp, b) = b.split_first_chunk::<8>()?;
        let (coordinator_epoch, b) = b.split_first_chunk::<4>()?;
        let current_txn_start_offset = b.first_chunk::<8>()?;
        self.producer_id = i64::from_be_bytes(*producer_id);
        self.producer_epoch = i32::from_be_bytes(*producer_epoch);
        self.last_sequence = i32::from_be_bytes(*last_sequence);
        self.last_timestamp = i64::from_be_bytes(*last_timestamp);
        self.coordinator_epoch = i32::from_be_bytes(*coordinator_epoch);
        self.current_txn_start_offset = i64::from_be_bytes(*current_txn_start_offset);
        Some(())
    }

    /// The ActiveProducers array: the hot loop of a large response. The
    /// vector is filled with defaults first (a tight loop; 64 bytes in
    /// memory for at least 37 of input, so bounded by the input), then
    /// each producer is decoded in place: a value pushed one by one would be
    /// spilled to the stack around the push's growth check and copied back,
    /// a store-forwarding stall per producer. A producer without tagged
    /// fields (all of them, in practice) is read from one bounds-checked
    /// 37-byte window; anything else goes field by field, out of line.
    fn decode_array(r: &mut Reader<'_>) -> Result<Vec<Self>, DecodeError> {
        let count = r.array_len_v(FLEX, MIN_PRODUCER_STATE)?;
        let mut out: Vec<Self> = Vec::with_capacity(count);
        out.resize_with(count, Self::default);
        for (i, p) in out.iter_mut().enumerate() {
            if r.fixed_struct(|b| p.fill_fixed(b)).is_none() {
                Self::decode_slow(r, p, i)?;
            }
        }
        Ok(out)
    }

    #[cold]
    #[inline(never)]
    fn decode_slow(r: &mut Reader<'_>, p: &mut Self, i: usize) -> Result<(), DecodeError> {
        *p = Self::decode(r).map_err(|e| e.at_index(i))?;
        Ok(())
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
            + ProducerState::array_body_len(&self.active_producers)
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        match self.error_message.as_deref() {
            // The usual partition: index, code and a null message (one zero
            // byte) in one write.
            None => {
                let mut head = [0u8; 4 + 2 + 1];
                let mut w: &mut [u8] = &mut head;
                w.put_i32(self.partition_index);
                w.put_i16(self.error_code.0);
                w.put_nullable_string_v(None, FLEX);
                buf.put_slice(&head);
            }
            Some(message) => {
                buf.put_i32(self.partition_index);
                buf.put_i16(self.error_code.0);
                buf.put_string_v(message, FLEX);
            }
        }
        buf.put_array_len_v(Some(self.active_producers.len()), FLEX);
        for p in &self.active_producers {
            p.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    /// Decodes into a default value that already sits in its vector.
    #[inline]
    fn decode_into(r: &mut Reader<'_>, p: &mut Self) -> Result<(), DecodeError> {
        p.partition_index = r.i32().field("PartitionIndex")?;
        p.error_code = ErrorCode(r.i16().field("ErrorCode")?);
        p.error_message = r.compact_nullable_string().field("ErrorMessage")?;
        p.active_producers = ProducerState::decode_array(r).field("ActiveProducers")?;
        p.unknown_tagged_fields = r.tagged_fields()?;
        Ok(())
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

    /// Decodes into a default value that already sits in its vector.
    #[inline]
    fn decode_into(r: &mut Reader<'_>, t: &mut Self) -> Result<(), DecodeError> {
        t.name = r.compact_string().field("Name")?;
        t.partitions = r
            .compact_array_in_place(MIN_PARTITION_RESPONSE, PartitionResponse::decode_into)
            .field("Partitions")?;
        t.unknown_tagged_fields = r.tagged_fields()?;
        Ok(())
    }
}

impl CustomCodec for DescribeProducersResponse {
    fn custom_len(&self, _version: i16) -> usize {
        4 + array_len_len_v(Some(self.topics.len()), FLEX)
            + self
                .topics
                .iter()
                .map(TopicResponse::encoded_len)
                .sum::<usize>()
            + tagged_fields_len(&self.unknown_tagged_fields)
    }

    fn custom_put<B: BufMut>(&self, buf: &mut B, _version: i16) {
        buf.put_i32(self.throttle_time_ms);
        buf.put_array_len_v(Some(self.topics.len()), FLEX);
        for t in &self.topics {
            t.encode(buf);
        }
        buf.put_tagged_fields(&self.unknown_tagged_fields);
    }

    /// The view's check of the usual body in one pass: short ASCII names,
    /// small counts, empty tag sections; the declared check does the rest.
    #[inline]
    fn custom_accepts(body: &[u8], _version: i16) -> bool {
        super::describe_producers_fast::accepts(body)
    }

    fn custom_read(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        Ok(DescribeProducersResponse {
            throttle_time_ms: r.i32().field("ThrottleTimeMs")?,
            topics: r
                .compact_array_in_place(MIN_TOPIC_RESPONSE, TopicResponse::decode_into)
                .field("Topics")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
