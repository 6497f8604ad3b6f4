//! DescribeProducers response decode and encode, kdp against the peer
//! `kafka-protocol` 0.18, on the same bytes in the same run.
//!
//! Sizes: 1, 1,000 and 100,000 producers (1 topic of 1 partition; 1 topic of
//! 1 partition; 10 topics of 10 partitions of 1,000). Throughput is in bytes
//! of encoded body.
//!
//! ```text
//! cargo bench -p kdp-wire --bench codec -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_protocol::protocol::{Decodable, Encodable};
use kdp_wire::ErrorCode;

use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use kdp_wire::{decode_exact, encode_to_vec, TaggedFields};

type PeerResponse = kafka_protocol::messages::DescribeProducersResponse;

/// A response with `n` producers, realistic values (large producer ids,
/// epoch-millisecond timestamps, half the producers in a transaction).
fn response(n: usize) -> DescribeProducersResponse {
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

fn peer_encode(m: &PeerResponse) -> BytesMut {
    let size = m.compute_size(0).expect("peer size");
    let mut buf = BytesMut::with_capacity(size);
    m.encode(&mut buf, 0).expect("peer encode");
    buf
}

fn bench(c: &mut Criterion) {
    for n in [1usize, 1_000, 100_000] {
        let ours = response(n);
        let bytes = encode_to_vec(&ours, 0);
        let shared = Bytes::from(bytes.clone());
        let theirs = PeerResponse::decode(&mut shared.clone(), 0).expect("peer decode");
        // Same bytes both ways, before anything is measured.
        assert_eq!(&peer_encode(&theirs)[..], &bytes[..]);
        assert_eq!(
            decode_exact::<DescribeProducersResponse>(&bytes, 0).unwrap(),
            ours
        );
        assert_eq!(
            ours.topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.active_producers.len())
                .sum::<usize>(),
            n
        );

        let mut g = c.benchmark_group("decode");
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("kdp", n), &bytes, |b, bytes| {
            b.iter(|| decode_exact::<DescribeProducersResponse>(black_box(bytes), 0).unwrap())
        });
        g.bench_with_input(
            BenchmarkId::new("kafka-protocol", n),
            &shared,
            |b, shared| b.iter(|| PeerResponse::decode(&mut black_box(shared.clone()), 0).unwrap()),
        );
        g.finish();

        let mut g = c.benchmark_group("encode");
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("kdp", n), &ours, |b, m| {
            b.iter(|| encode_to_vec(black_box(m), 0))
        });
        g.bench_with_input(BenchmarkId::new("kafka-protocol", n), &theirs, |b, m| {
            b.iter(|| peer_encode(black_box(m)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
