//! What the benches share: the DescribeProducers responses they measure.

use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use kdp_wire::{ErrorCode, TaggedFields};

/// A response with `n` producers in partitions of up to 1,000 and topics
/// of up to 10 partitions; realistic values (large producer ids,
/// epoch-millisecond timestamps, half the producers in a transaction).
pub fn describe_producers(n: usize) -> DescribeProducersResponse {
    let per_partition = n.min(1_000);
    let partitions = n.div_ceil(per_partition);
    let per_topic = partitions.min(10);
    let topics = partitions.div_ceil(per_topic);
    let mut next = 0usize;
    let mut producer = || {
        let i = next as i64;
        next += 1;
        ProducerState {
            producer_id: 4_000_000 + i * 7,
            producer_epoch: (i % 17) as i32,
            last_sequence: (i * 31 % 100_000) as i32,
            last_timestamp: 1_764_400_000_000 + i * 13,
            coordinator_epoch: 5,
            current_txn_start_offset: if i % 2 == 0 { 150_000 + i } else { -1 },
            unknown_tagged_fields: TaggedFields::default(),
        }
    };
    DescribeProducersResponse {
        throttle_time_ms: 0,
        topics: (0..topics)
            .map(|t| TopicResponse {
                name: format!("orders-{t:03}"),
                partitions: (0..per_topic)
                    .map(|p| PartitionResponse {
                        partition_index: p as i32,
                        error_code: ErrorCode::NONE,
                        error_message: None,
                        active_producers: (0..per_partition).map(|_| producer()).collect(),
                        unknown_tagged_fields: TaggedFields::default(),
                    })
                    .collect(),
                unknown_tagged_fields: TaggedFields::default(),
            })
            .collect(),
        unknown_tagged_fields: TaggedFields::default(),
    }
}
