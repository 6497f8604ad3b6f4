//! Record batch decoding (and decompression), kdp against the peer
//! `kafka-protocol` 0.18, on the same bytes in the same run.
//!
//! The blob: 100 batches of 100 records (keys, 100-byte compressible
//! values, one header), written by kdp's encoder with each codec (the peer
//! reads them byte for byte; tests/records.rs checks that). Three tasks:
//!
//! - `headers`: every batch's header (what `kdp batches` lists): kdp's
//!   `Batches` with the CRC checked, against the peer's `decode_batch_info`;
//! - `records/<codec>`: every record of every batch, decompressed: kdp's
//!   `Batch::records_data` and `RecordsData::iter` (borrowing keys and
//!   values) with the CRC checked, against the peer's `decode_all`.
//!
//! ```text
//! cargo bench -p kdp-wire --bench records -- --warm-up-time 1 --measurement-time 3
//! ```

use std::borrow::Cow;
use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_protocol::records::RecordBatchDecoder;
use kdp_wire::records::{
    Attributes, Batches, Compression, Record, RecordBatch, RecordHeader, TimestampType,
    DEFAULT_MAX_DECOMPRESSED,
};

fn blob(codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    for b in 0..100i64 {
        let records: Vec<Record<'static>> = (0..100)
            .map(|i| Record {
                timestamp_delta: i64::from(i),
                offset_delta: i,
                key: Some(Cow::Owned(format!("key-{b}-{i}").into_bytes())),
                value: Some(Cow::Owned(
                    format!("{:0>100}", format!("value {b} {i} payments ledger entry"))
                        .into_bytes(),
                )),
                headers: vec![RecordHeader {
                    key: Cow::Borrowed(b"trace-id"),
                    value: Some(Cow::Owned(format!("{b:08}{i:08}").into_bytes())),
                }],
                ..Record::default()
            })
            .collect();
        RecordBatch {
            base_offset: b * 100,
            attributes: Attributes::new(codec, TimestampType::CreateTime, false, false, false),
            last_offset_delta: 99,
            base_timestamp: 1_764_400_000_000 + b * 1000,
            max_timestamp: 1_764_400_000_099 + b * 1000,
            producer_id: 4000,
            producer_epoch: 0,
            base_sequence: (b * 100) as i32,
            records,
            ..RecordBatch::default()
        }
        .encode_into(&mut out)
        .expect("encode");
    }
    out
}

fn kdp_headers(data: &[u8]) -> usize {
    let mut n = 0;
    for b in Batches::new(data) {
        let b = b.expect("batch");
        n += usize::from(b.crc_valid()) + b.header().record_count as usize;
    }
    n
}

fn kdp_records(data: &[u8]) -> usize {
    let mut n = 0;
    for b in Batches::new(data) {
        let b = b.expect("batch");
        assert!(b.crc_valid());
        let records = b.records_data(DEFAULT_MAX_DECOMPRESSED).expect("records");
        for r in records.iter() {
            let r = r.expect("record");
            n += r.value.map_or(0, |v| v.len());
        }
    }
    n
}

fn peer_headers(data: &Bytes) -> usize {
    let mut buf = data.clone();
    RecordBatchDecoder::decode_batch_info(&mut buf)
        .expect("peer")
        .iter()
        .map(|b| b.record_count as usize)
        .sum()
}

fn peer_records(data: &Bytes) -> usize {
    let mut buf = data.clone();
    RecordBatchDecoder::decode_all(&mut buf)
        .expect("peer")
        .iter()
        .flat_map(|s| &s.records)
        .map(|r| r.value.as_ref().map_or(0, |v| v.len()))
        .sum()
}

fn bench(c: &mut Criterion) {
    let plain = blob(Compression::None);
    let peer_plain = Bytes::from(plain.clone());
    assert_eq!(kdp_headers(&plain) - 100, peer_headers(&peer_plain));
    let mut g = c.benchmark_group("headers");
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("kdp", |b| b.iter(|| kdp_headers(black_box(&plain))));
    g.bench_function("kafka-protocol", |b| {
        b.iter(|| peer_headers(black_box(&peer_plain)))
    });
    g.finish();

    let mut g = c.benchmark_group("records");
    for codec in Compression::ALL {
        let data = blob(codec);
        let peer = Bytes::from(data.clone());
        assert_eq!(kdp_records(&data), peer_records(&peer), "{codec}");
        // Throughput in decompressed bytes, the same for every codec.
        g.throughput(Throughput::Bytes(plain.len() as u64));
        g.bench_with_input(BenchmarkId::new("kdp", codec.name()), &data, |b, d| {
            b.iter(|| kdp_records(black_box(d)))
        });
        g.bench_with_input(
            BenchmarkId::new("kafka-protocol", codec.name()),
            &peer,
            |b, d| b.iter(|| peer_records(black_box(d))),
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
