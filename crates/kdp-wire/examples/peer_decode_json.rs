//! The baseline `kdp decode` is timed against: decode a DescribeProducers
//! response body with the `kafka-protocol` crate and write the same pretty
//! JSON (the seed's shape) through a buffered writer.
//!
//! `cargo run --release -p kdp-wire --example peer_decode_json < big.bin > out.json`

use std::io::{BufWriter, Read, Write};

use bytes::Bytes;
use kafka_protocol::messages::DescribeProducersResponse;
use kafka_protocol::protocol::Decodable;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Response<'a> {
    throttle_time_ms: i32,
    topics: Vec<Topic<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Topic<'a> {
    name: &'a str,
    partitions: Vec<Partition<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Partition<'a> {
    partition_index: i32,
    error_code: i16,
    error_message: Option<&'a str>,
    active_producers: Vec<Producer>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Producer {
    producer_id: i64,
    producer_epoch: i32,
    last_sequence: i32,
    last_timestamp: i64,
    coordinator_epoch: i32,
    current_txn_start_offset: i64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut input = Vec::new();
    std::io::stdin().lock().read_to_end(&mut input)?;
    let mut buf = Bytes::from(input);
    let m = DescribeProducersResponse::decode(&mut buf, 0)?;
    let doc = Response {
        throttle_time_ms: m.throttle_time_ms,
        topics: m
            .topics
            .iter()
            .map(|t| Topic {
                name: t.name.as_str(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| Partition {
                        partition_index: p.partition_index,
                        error_code: p.error_code,
                        error_message: p.error_message.as_ref().map(|s| s.as_str()),
                        active_producers: p
                            .active_producers
                            .iter()
                            .map(|s| Producer {
                                producer_id: s.producer_id.0,
                                producer_epoch: s.producer_epoch,
                                last_sequence: s.last_sequence,
                                last_timestamp: s.last_timestamp,
                                coordinator_epoch: s.coordinator_epoch,
                                current_txn_start_offset: s.current_txn_start_offset,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &doc)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
