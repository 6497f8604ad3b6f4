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
use kdp_wire::messages::DescribeProducersResponse;
use kdp_wire::{decode_exact, encode_to_vec};

mod common;
use common::describe_producers as response;

type PeerResponse = kafka_protocol::messages::DescribeProducersResponse;

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
