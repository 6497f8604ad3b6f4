//! Shared by the integration tests: proptest strategies for valid
//! DescribeProducers messages.

#![allow(dead_code)]

use proptest::collection::vec;
use proptest::prelude::*;

use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
use kdp_wire::{TaggedField, TaggedFields};

pub fn i16_any() -> impl Strategy<Value = i16> {
    prop_oneof![
        Just(i16::MIN),
        Just(i16::MAX),
        Just(-1i16),
        Just(0i16),
        any::<i16>()
    ]
}

pub fn i32_any() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(i32::MIN),
        Just(i32::MAX),
        Just(-1),
        Just(0),
        any::<i32>()
    ]
}

pub fn i64_any() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(-1),
        Just(0),
        any::<i64>()
    ]
}

/// Topic names and messages: ASCII, any Unicode (4-byte scalars, controls,
/// combining marks), empty, and one long enough for a 2-byte length.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9._-]{0,20}",
        3 => any::<String>(),
        1 => "\\PC{0,8}",
        1 => Just(String::new()),
        1 => Just("é".repeat(130)),
        1 => Just("𝔨𝔡𝔭 🦀 ørders\u{0}\u{feff}".to_owned()),
    ]
}

/// Unknown tagged fields: usually none; otherwise a few, with tags up to the
/// largest the peer can key (`i32::MAX`: it stores tags as `i32`, so larger
/// tags would sort before tag 0 there) and data of any length, including a
/// 128-byte one (2-byte size).
pub fn tagged() -> impl Strategy<Value = TaggedFields> {
    let tag = prop_oneof![
        0u32..4,
        0u32..200,
        Just(i32::MAX as u32),
        0u32..=i32::MAX as u32
    ];
    let data = prop_oneof![
        4 => vec(any::<u8>(), 0..6),
        1 => vec(any::<u8>(), 128..130),
    ];
    let field = (tag, data).prop_map(|(tag, data)| TaggedField { tag, data });
    prop_oneof![
        3 => Just(TaggedFields::default()),
        1 => vec(field, 1..4).prop_map(TaggedFields::new),
    ]
}

pub fn request() -> impl Strategy<Value = DescribeProducersRequest> {
    let topic = (text(), vec(i32_any(), 0..5), tagged()).prop_map(
        |(name, partition_indexes, unknown_tagged_fields)| TopicRequest {
            name,
            partition_indexes,
            unknown_tagged_fields,
        },
    );
    (vec(topic, 0..4), tagged()).prop_map(|(topics, unknown_tagged_fields)| {
        DescribeProducersRequest {
            topics,
            unknown_tagged_fields,
        }
    })
}

pub fn producer() -> impl Strategy<Value = ProducerState> {
    (
        (i64_any(), i32_any(), i32_any()),
        (i64_any(), i32_any(), i64_any()),
        tagged(),
    )
        .prop_map(
            |(
                (producer_id, producer_epoch, last_sequence),
                (last_timestamp, coordinator_epoch, current_txn_start_offset),
                unknown_tagged_fields,
            )| ProducerState {
                producer_id,
                producer_epoch,
                last_sequence,
                last_timestamp,
                coordinator_epoch,
                current_txn_start_offset,
                unknown_tagged_fields,
            },
        )
}

pub fn response() -> impl Strategy<Value = DescribeProducersResponse> {
    let partition = (
        i32_any(),
        i16_any(),
        proptest::option::of(text()),
        vec(producer(), 0..4),
        tagged(),
    )
        .prop_map(
            |(
                partition_index,
                error_code,
                error_message,
                active_producers,
                unknown_tagged_fields,
            )| {
                PartitionResponse {
                    partition_index,
                    error_code: kdp_wire::ErrorCode(error_code),
                    error_message,
                    active_producers,
                    unknown_tagged_fields,
                }
            },
        );
    let topic = (text(), vec(partition, 0..4), tagged()).prop_map(
        |(name, partitions, unknown_tagged_fields)| TopicResponse {
            name,
            partitions,
            unknown_tagged_fields,
        },
    );
    (i32_any(), vec(topic, 0..4), tagged()).prop_map(
        |(throttle_time_ms, topics, unknown_tagged_fields)| DescribeProducersResponse {
            throttle_time_ms,
            topics,
            unknown_tagged_fields,
        },
    )
}
