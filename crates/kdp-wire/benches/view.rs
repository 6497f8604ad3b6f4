//! The validate-then-view decoder (`kdp_wire::view`) of the hot responses,
//! in one run against memcpy of the same bytes and against the
//! `kafka-protocol` crate's decode (and kdp's owned decode, for scale).
//!
//! `view` validates the whole body and then reads every field of it
//! through the view (names as `&str`, every number), folding them into a
//! checksum that is compared with the owned value's before anything is
//! measured; `validate` is the check alone. `memcpy` copies the body into
//! a buffer allocated beforehand; `fold-owned` is the same fold over the
//! owned value already decoded (what reading every field costs a caller,
//! whatever the decoder); `owned` is kdp's `decode_exact`. At one
//! producer, two floors: `parse-unchecked` follows the body's lengths to
//! its fields with no check at all, `read-fields` reads them where they
//! are known to lie. At every size, two more: `fast-check`, the fast
//! check of the usual shape alone (`Message::accepts_fast`), and
//! `read-strided`, every producer's six fields read where they are known
//! to lie, 37 bytes apart, with no parse and no check.
//!
//! ```text
//! cargo bench -p kdp-wire --bench view -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_protocol::protocol::Decodable;
use kdp_wire::messages::{
    DescribeProducersResponse, DescribeTransactionsResponse, ListTransactionsResponse,
    ListedTransaction, TopicData, TransactionState,
};
use kdp_wire::view::{validate_exact, view_exact, Viewable};
use kdp_wire::{decode_exact, encode_to_vec, Message};

mod common;
use common::describe_producers;

fn list_transactions(n: usize) -> ListTransactionsResponse {
    ListTransactionsResponse {
        transaction_states: (0..n as i64)
            .map(|i| ListedTransaction {
                transactional_id: format!("payments-service-{i:06}"),
                producer_id: 4_000_000 + i,
                transaction_state: if i % 3 == 0 {
                    "Ongoing"
                } else {
                    "CompleteCommit"
                }
                .into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn describe_transactions(n: usize) -> DescribeTransactionsResponse {
    DescribeTransactionsResponse {
        transaction_states: (0..n as i64)
            .map(|i| TransactionState {
                transactional_id: format!("payments-service-{i:06}"),
                transaction_state: "Ongoing".into(),
                transaction_timeout_ms: 60_000,
                transaction_start_time_ms: 1_764_400_000_000 + i,
                producer_id: 4_000_000 + i,
                producer_epoch: (i % 5) as i16,
                topics: (0..2)
                    .map(|t| TopicData {
                        topic: format!("orders-{t}"),
                        partitions: (0..4).collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// A producer's six fields folded as a tree, so that the checksum's chain
/// of dependent additions is one per producer: the fold, which any reader
/// pays, stays small beside the decoding it is there to keep honest.
#[inline(always)]
fn fold6(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
    (a ^ b.rotate_left(8)) ^ (c.rotate_left(16) ^ d.rotate_left(24)) ^ (e.rotate_left(32) ^ f)
}

/// Every field of a DescribeProducers response, through the view.
fn walk_describe_producers(bytes: &[u8]) -> u64 {
    let view = view_exact::<DescribeProducersResponse>(bytes, 0).expect("valid");
    let mut sum = view.throttle_time_ms() as u64;
    for topic in view.topics() {
        sum = sum.wrapping_add(topic.name().len() as u64);
        for p in topic.partitions() {
            sum = sum.wrapping_add(p.partition_index() as u64);
            sum = sum.wrapping_add(p.error_code().0 as u64);
            sum = sum.wrapping_add(p.error_message().map_or(0, str::len) as u64);
            for s in p.active_producers() {
                sum = sum.wrapping_add(fold6(
                    s.producer_id() as u64,
                    s.producer_epoch() as u64,
                    s.last_sequence() as u64,
                    s.last_timestamp() as u64,
                    s.coordinator_epoch() as u64,
                    s.current_txn_start_offset() as u64,
                ));
            }
        }
    }
    sum
}

/// The `N` bytes at `at` (zeros past the end), for the floors.
#[inline(always)]
fn chunk<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..)
        .and_then(<[u8]>::first_chunk::<N>)
        .copied()
        .unwrap_or([0; N])
}

/// The big-endian integers of `p` at `i` (8 and 4 bytes), sign-extended
/// as the fields are read.
#[inline(always)]
fn i64_at<const N: usize>(p: &[u8; N], i: usize) -> u64 {
    i64::from_be_bytes(p[i..i + 8].try_into().unwrap_or_default()) as u64
}

#[inline(always)]
fn i32_at<const N: usize>(p: &[u8; N], i: usize) -> u64 {
    i32::from_be_bytes(p[i..i + 4].try_into().unwrap_or_default()) as u64
}

/// The six fields of the producer at `at`, folded with the topic name's
/// length, given: no parsing and no check, the cost of merely reading what
/// a one-producer body holds, the floor of any decoder at that size.
#[inline(always)]
fn read_fields_at(b: &[u8], at: usize, name_len: usize) -> u64 {
    let p = chunk::<36>(b, at);
    (name_len as u64).wrapping_add(fold6(
        i64_at(&p, 0),
        i32_at(&p, 8),
        i32_at(&p, 12),
        i64_at(&p, 16),
        i32_at(&p, 24),
        i64_at(&p, 28),
    ))
}

/// A one-topic, one-partition, one-producer body followed by its lengths
/// (the topic name's, the error message's) to its producer, every field
/// read, and no check at all: what any decoder must do before it may
/// read a field, for this shape only.
fn parse_one_unchecked(b: &[u8]) -> u64 {
    let byte = |i: usize| usize::from(b.get(i).copied().unwrap_or(0));
    let mut sum = i32_at(&chunk::<4>(b, 0), 0);
    let name_len = byte(5).saturating_sub(1);
    let p = 6 + name_len + 1;
    let partition = chunk::<7>(b, p);
    let error_code = i16::from_be_bytes([partition[4], partition[5]]) as u64;
    sum = sum
        .wrapping_add(i32_at(&partition, 0))
        .wrapping_add(error_code);
    let message_len = usize::from(partition[6]).saturating_sub(1);
    sum = sum.wrapping_add(message_len as u64);
    let at = p + 7 + message_len + 1;
    sum.wrapping_add(read_fields_at(b, at, name_len))
}

/// Where each partition's producers lie in the encoding of `m` (shortest
/// varints, no tagged fields): (offset, count), computed from the value, so
/// that `read_strided` reads the fields with no parse at all.
fn producer_arrays(m: &DescribeProducersResponse) -> Vec<(usize, usize)> {
    // A compact length or count `n`: the varint of `n + 1`.
    let varint = |n: usize| match n + 1 {
        0..0x80 => 1,
        0x80..0x4000 => 2,
        0x4000..0x20_0000 => 3,
        _ => 4,
    };
    let mut at = 4 + varint(m.topics.len());
    let mut arrays = Vec::new();
    for t in &m.topics {
        at += varint(t.name.len()) + t.name.len() + varint(t.partitions.len());
        for p in &t.partitions {
            let message = p
                .error_message
                .as_deref()
                .map_or(1, |s| varint(s.len()) + s.len());
            at += 4 + 2 + message + varint(p.active_producers.len());
            arrays.push((at, p.active_producers.len()));
            at += 37 * p.active_producers.len() + 1;
        }
        at += 1;
    }
    arrays
}

/// One producer's six fields from its 37 bytes, in five loads: the two
/// int32s at 8..16 are the halves of one int64, loaded and byte-swapped
/// once (sign-extended as the view reads them).
#[inline(always)]
fn fold_producer(p: &[u8; 37]) -> u64 {
    let pair = i64_at(p, 8);
    fold6(
        i64_at(p, 0),
        (pair as i64 >> 32) as u64,
        pair as i32 as u64,
        i64_at(p, 16),
        i32_at(p, 24),
        i64_at(p, 28),
    )
}

/// The six fields of every producer, read where `arrays` says they lie,
/// 37 bytes apart, with no parse and no check: the floor of any reader of
/// every producer's fields, at every size. Five loads a producer; fixed-size
/// arrays (no bounds checks), four producers a step, from four producers
/// up, and below that one a step through `chunks_exact` (3-10 ns cheaper
/// at one producer): the cheapest of the ways measured (six loads, one a
/// step, was 10-25% slower from 1,000 producers up).
fn read_strided(b: &[u8], arrays: &[(usize, usize)]) -> u64 {
    let mut sum = 0u64;
    for &(at, n) in arrays {
        let producers = b.get(at..at + 37 * n).unwrap_or_default();
        if n < 4 {
            for p in producers.chunks_exact(37) {
                sum = sum.wrapping_add(fold_producer(&chunk::<37>(p, 0)));
            }
            continue;
        }
        let (fours, rest) = producers.as_chunks::<{ 4 * 37 }>();
        for four in fours {
            for p in four.as_chunks::<37>().0 {
                sum = sum.wrapping_add(fold_producer(p));
            }
        }
        for p in rest.as_chunks::<37>().0 {
            sum = sum.wrapping_add(fold_producer(p));
        }
    }
    sum
}

/// The fold of every producer of the owned value (what `read_strided` reads).
fn sum_producers(m: &DescribeProducersResponse) -> u64 {
    let mut sum = 0u64;
    for s in m
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .flat_map(|p| &p.active_producers)
    {
        sum = sum.wrapping_add(fold6(
            s.producer_id as u64,
            s.producer_epoch as u64,
            s.last_sequence as u64,
            s.last_timestamp as u64,
            s.coordinator_epoch as u64,
            s.current_txn_start_offset as u64,
        ));
    }
    sum
}

/// The same fold over the owned value.
fn sum_describe_producers(m: &DescribeProducersResponse) -> u64 {
    let mut sum = m.throttle_time_ms as u64;
    for topic in &m.topics {
        sum = sum.wrapping_add(topic.name.len() as u64);
        for p in &topic.partitions {
            sum = sum.wrapping_add(p.partition_index as u64);
            sum = sum.wrapping_add(p.error_code.0 as u64);
            sum = sum.wrapping_add(p.error_message.as_deref().map_or(0, str::len) as u64);
            for s in &p.active_producers {
                sum = sum.wrapping_add(fold6(
                    s.producer_id as u64,
                    s.producer_epoch as u64,
                    s.last_sequence as u64,
                    s.last_timestamp as u64,
                    s.coordinator_epoch as u64,
                    s.current_txn_start_offset as u64,
                ));
            }
        }
    }
    sum
}

fn walk_list_transactions(bytes: &[u8], version: i16) -> u64 {
    let view = view_exact::<ListTransactionsResponse>(bytes, version).expect("valid");
    let mut sum = (view.throttle_time_ms() as u64).wrapping_add(view.error_code().0 as u64);
    for s in view.unknown_state_filters() {
        sum = sum.wrapping_add(s.len() as u64);
    }
    for t in view.transaction_states() {
        sum = sum
            .wrapping_add(t.transactional_id().len() as u64)
            .wrapping_add(t.producer_id() as u64)
            .wrapping_add(t.transaction_state().len() as u64);
    }
    sum
}

fn sum_list_transactions(m: &ListTransactionsResponse) -> u64 {
    let mut sum = (m.throttle_time_ms as u64).wrapping_add(m.error_code.0 as u64);
    for s in &m.unknown_state_filters {
        sum = sum.wrapping_add(s.len() as u64);
    }
    for t in &m.transaction_states {
        sum = sum
            .wrapping_add(t.transactional_id.len() as u64)
            .wrapping_add(t.producer_id as u64)
            .wrapping_add(t.transaction_state.len() as u64);
    }
    sum
}

fn walk_describe_transactions(bytes: &[u8]) -> u64 {
    let view = view_exact::<DescribeTransactionsResponse>(bytes, 0).expect("valid");
    let mut sum = view.throttle_time_ms() as u64;
    for s in view.transaction_states() {
        sum = sum
            .wrapping_add(s.error_code().0 as u64)
            .wrapping_add(s.transactional_id().len() as u64)
            .wrapping_add(s.transaction_state().len() as u64)
            .wrapping_add(s.transaction_timeout_ms() as u64)
            .wrapping_add(s.transaction_start_time_ms() as u64)
            .wrapping_add(s.producer_id() as u64)
            .wrapping_add(s.producer_epoch() as u64);
        for t in s.topics() {
            sum = sum.wrapping_add(t.topic().len() as u64);
            for p in t.partitions() {
                sum = sum.wrapping_add(p as u64);
            }
        }
    }
    sum
}

fn sum_describe_transactions(m: &DescribeTransactionsResponse) -> u64 {
    let mut sum = m.throttle_time_ms as u64;
    for s in &m.transaction_states {
        sum = sum
            .wrapping_add(s.error_code.0 as u64)
            .wrapping_add(s.transactional_id.len() as u64)
            .wrapping_add(s.transaction_state.len() as u64)
            .wrapping_add(s.transaction_timeout_ms as u64)
            .wrapping_add(s.transaction_start_time_ms as u64)
            .wrapping_add(s.producer_id as u64)
            .wrapping_add(s.producer_epoch as u64);
        for t in &s.topics {
            sum = sum.wrapping_add(t.topic.len() as u64);
            for p in &t.partitions {
                sum = sum.wrapping_add(*p as u64);
            }
        }
    }
    sum
}

/// One group per message and size: the view, memcpy (DescribeProducers),
/// the peer's decode and kdp's owned decode of the same bytes.
fn group<M, P>(
    c: &mut Criterion,
    name: &str,
    n: usize,
    bytes: &[u8],
    version: i16,
    walk: fn(&[u8], i16) -> u64,
    memcpy: bool,
) where
    M: Message + Viewable,
    P: Decodable,
{
    let shared = Bytes::copy_from_slice(bytes);
    // The peer reads the same bytes before anything is measured.
    P::decode(&mut shared.clone(), version).expect("peer decodes");
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    if memcpy {
        let mut dst = vec![0u8; bytes.len()];
        g.bench_with_input(BenchmarkId::new("memcpy", n), bytes, |b, bytes| {
            b.iter(|| {
                dst.copy_from_slice(black_box(bytes));
                black_box(&dst);
            })
        });
    }
    g.bench_with_input(BenchmarkId::new("view", n), bytes, |b, bytes| {
        b.iter(|| walk(black_box(bytes), version))
    });
    g.bench_with_input(BenchmarkId::new("validate", n), bytes, |b, bytes| {
        b.iter(|| validate_exact::<M>(black_box(bytes), version).unwrap())
    });
    g.bench_with_input(
        BenchmarkId::new("kafka-protocol", n),
        &shared,
        |b, shared| b.iter(|| P::decode(&mut black_box(shared.clone()), version).unwrap()),
    );
    g.bench_with_input(BenchmarkId::new("owned", n), bytes, |b, bytes| {
        b.iter(|| decode_exact::<M>(black_box(bytes), version).unwrap())
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    for n in [1usize, 10, 100, 1_000, 10_000, 100_000] {
        let m = describe_producers(n);
        let bytes = encode_to_vec(&m, 0);
        assert_eq!(walk_describe_producers(&bytes), sum_describe_producers(&m));
        group::<DescribeProducersResponse, kafka_protocol::messages::DescribeProducersResponse>(
            c,
            "describe_producers",
            n,
            &bytes,
            0,
            |b, _| walk_describe_producers(b),
            true,
        );
        // The fold alone, over the owned value already in memory: what
        // reading every field costs a caller whatever the decoder.
        let mut g = c.benchmark_group("describe_producers");
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("fold-owned", n), &m, |b, m| {
            b.iter(|| sum_describe_producers(black_box(m)))
        });
        // The floors at every size: the fast check of the usual shape alone
        // (a minimal safe validator: no view, no `Result`), and every
        // producer's fields read where they are known to lie, unchecked.
        assert!(DescribeProducersResponse::accepts_fast(&bytes, 0));
        g.bench_with_input(BenchmarkId::new("fast-check", n), &bytes, |b, bytes| {
            b.iter(|| DescribeProducersResponse::accepts_fast(black_box(bytes), 0))
        });
        let arrays = producer_arrays(&m);
        assert_eq!(read_strided(&bytes, &arrays), sum_producers(&m));
        g.bench_with_input(BenchmarkId::new("read-strided", n), &bytes, |b, bytes| {
            b.iter(|| read_strided(black_box(bytes), black_box(&arrays)))
        });
        if n == 1 {
            // The floors at one producer: the body parsed with no check,
            // and its fields read where they are known to lie.
            assert_eq!(parse_one_unchecked(&bytes), sum_describe_producers(&m));
            let name_len = m.topics[0].name.len();
            let at = bytes.len() - 40;
            assert_eq!(
                read_fields_at(&bytes, at, name_len),
                sum_describe_producers(&m)
            );
            g.bench_with_input(
                BenchmarkId::new("parse-unchecked", n),
                &bytes,
                |b, bytes| b.iter(|| parse_one_unchecked(black_box(bytes))),
            );
            g.bench_with_input(BenchmarkId::new("read-fields", n), &bytes, |b, bytes| {
                b.iter(|| read_fields_at(black_box(bytes), black_box(at), black_box(name_len)))
            });
        }
        g.finish();
    }
    for n in [1usize, 100, 10_000] {
        let m = list_transactions(n);
        let bytes = encode_to_vec(&m, 1);
        assert_eq!(walk_list_transactions(&bytes, 1), sum_list_transactions(&m));
        group::<ListTransactionsResponse, kafka_protocol::messages::ListTransactionsResponse>(
            c,
            "list_transactions",
            n,
            &bytes,
            1,
            walk_list_transactions,
            false,
        );
    }
    for n in [1usize, 100, 1_000] {
        let m = describe_transactions(n);
        let bytes = encode_to_vec(&m, 0);
        assert_eq!(
            walk_describe_transactions(&bytes),
            sum_describe_transactions(&m)
        );
        group::<DescribeTransactionsResponse, kafka_protocol::messages::DescribeTransactionsResponse>(
            c,
            "describe_transactions",
            n,
            &bytes,
            0,
            |b, _| walk_describe_transactions(b),
            false,
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
