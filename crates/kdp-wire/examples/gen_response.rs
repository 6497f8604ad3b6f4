//! Writes a large DescribeProducers response body to stdout, for timing
//! `kdp decode` (see docs/PERFORMANCE.md).
//!
//! `cargo run --release -p kdp-wire --example gen_response -- TOPICS PARTITIONS PRODUCERS > big.bin`

use std::io::Write;

use kdp_wire::encode_to_vec;
use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() -> std::io::Result<()> {
    let (topics, partitions, producers) = (arg(1, 1000), arg(2, 50), arg(3, 10));
    let mut pid: i64 = 1000;
    let response = DescribeProducersResponse {
        throttle_time_ms: 0,
        topics: (0..topics)
            .map(|t| TopicResponse {
                name: format!("topic-{t:04}"),
                partitions: (0..partitions as i32)
                    .map(|p| PartitionResponse {
                        partition_index: p,
                        active_producers: (0..producers)
                            .map(|i| {
                                pid += 1;
                                ProducerState {
                                    producer_id: pid,
                                    producer_epoch: (i % 7) as i32,
                                    last_sequence: (pid % 5000) as i32,
                                    last_timestamp: 1_795_000_000_000 + pid,
                                    coordinator_epoch: if i % 3 == 0 { -1 } else { 4 },
                                    current_txn_start_offset: if i % 4 == 0 {
                                        pid * 10
                                    } else {
                                        -1
                                    },
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    std::io::stdout()
        .lock()
        .write_all(&encode_to_vec(&response, 0))
}
