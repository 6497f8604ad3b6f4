//! The view path allocates nothing: validating a body and reading every
//! field of it through the view, counted with a counting allocator (this
//! test binary's global allocator), per thread so that tests running in
//! parallel do not disturb each other. The owned decoder, counted the same
//! way, shows that the counter sees allocations.

// A global allocator is unsafe to implement; it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use bytes::Bytes;
use kdp_wire::messages::{
    DescribeProducersResponse, DescribeTransactionsResponse, ListTransactionsResponse,
    ListedTransaction, PartitionResponse, ProducerState, TopicData, TopicResponse,
    TransactionState,
};
use kdp_wire::view::{view_exact, Validated};
use kdp_wire::{decode_exact, encode_to_vec, ErrorCode, TaggedFields};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many allocations (and reallocations) `f` made on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}

/// `n` producers over partitions of up to 1,000, some with an error
/// message (so that nullable strings are read too).
fn describe_producers(n: usize) -> DescribeProducersResponse {
    let per_partition = n.clamp(1, 1_000);
    let partitions = n.div_ceil(per_partition);
    let mut next = 0i64;
    DescribeProducersResponse {
        throttle_time_ms: 3,
        topics: (0..partitions.div_ceil(10))
            .map(|t| TopicResponse {
                name: format!("orders-{t}"),
                partitions: (0..partitions.min(10))
                    .map(|p| PartitionResponse {
                        partition_index: p as i32,
                        error_code: ErrorCode::NONE,
                        error_message: (p % 2 == 1).then(|| "moved".to_owned()),
                        active_producers: (0..per_partition)
                            .map(|_| {
                                next += 1;
                                ProducerState {
                                    producer_id: next,
                                    producer_epoch: 1,
                                    last_sequence: 9,
                                    last_timestamp: 1_764_400_000_000 + next,
                                    coordinator_epoch: 2,
                                    current_txn_start_offset: next * 10,
                                    unknown_tagged_fields: TaggedFields::default(),
                                }
                            })
                            .collect(),
                        unknown_tagged_fields: TaggedFields::default(),
                    })
                    .collect(),
                unknown_tagged_fields: TaggedFields::default(),
            })
            .collect(),
        unknown_tagged_fields: TaggedFields::default(),
    }
}

/// Validates and reads every field; returns the producers seen and a
/// checksum of everything read.
fn walk_describe_producers(body: &[u8]) -> (usize, u64) {
    let view = view_exact::<DescribeProducersResponse>(body, 0).expect("valid");
    let mut seen = 0;
    let mut sum = view.throttle_time_ms() as u64 + view.tagged_fields().len() as u64;
    for topic in view.topics() {
        sum += topic.name().len() as u64;
        for p in topic.partitions() {
            sum += p.partition_index() as u64 + p.error_code().0 as u64;
            sum += p.error_message().map_or(0, str::len) as u64;
            for s in p.active_producers() {
                seen += 1;
                sum = sum
                    .wrapping_add(s.producer_id() as u64)
                    .wrapping_add(s.producer_epoch() as u64)
                    .wrapping_add(s.last_sequence() as u64)
                    .wrapping_add(s.last_timestamp() as u64)
                    .wrapping_add(s.coordinator_epoch() as u64)
                    .wrapping_add(s.current_txn_start_offset() as u64)
                    .wrapping_add(s.tagged_fields().len() as u64);
            }
        }
    }
    (seen, sum)
}

#[test]
fn describe_producers_through_the_view_allocates_nothing() {
    for n in [1, 100, 10_000] {
        let m = describe_producers(n);
        let body = encode_to_vec(&m, 0);
        let ((seen, sum), count) = allocations(|| walk_describe_producers(black_box(&body)));
        assert_eq!(seen, n);
        assert_ne!(sum, 0);
        assert_eq!(
            count, 0,
            "{n} producers: {count} allocations on the view path"
        );

        // The same through a Validated holding the Bytes a client makes of
        // the frame it read (moved in: the first clone of a `Bytes` made
        // from a `Vec` allocates its shared count).
        let shared = Bytes::from(body.clone());
        let (read, count) = allocations(move || {
            let validated = Validated::<DescribeProducersResponse>::new(shared, 0).expect("valid");
            let view = validated.view();
            view.topics()
                .iter()
                .flat_map(|t| t.partitions())
                .map(|p| p.active_producers().len())
                .sum::<usize>()
        });
        assert_eq!((read, count), (n, 0));

        // The counter sees the owned decoder's allocations.
        let (_, owned) = allocations(|| decode_exact::<DescribeProducersResponse>(&body, 0));
        assert!(
            owned >= 4,
            "{n}: the owned decoder made {owned} allocations"
        );
    }
}

#[test]
fn the_transaction_responses_through_the_view_allocate_nothing() {
    let listed = ListTransactionsResponse {
        transaction_states: (0..1_000)
            .map(|i| ListedTransaction {
                transactional_id: format!("txn-{i}"),
                producer_id: i,
                transaction_state: "Ongoing".into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let described = DescribeTransactionsResponse {
        transaction_states: (0..1_000)
            .map(|i| TransactionState {
                transactional_id: format!("txn-{i}"),
                transaction_state: "Ongoing".into(),
                producer_id: i,
                topics: vec![TopicData {
                    topic: "orders".into(),
                    partitions: vec![0, 1, 2],
                    ..Default::default()
                }],
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    for version in 0..=2 {
        let body = encode_to_vec(&listed, version);
        let (sum, count) = allocations(|| {
            let view = view_exact::<ListTransactionsResponse>(&body, version).expect("valid");
            view.transaction_states()
                .iter()
                .map(|t| {
                    t.transactional_id().len() as i64
                        + t.producer_id()
                        + t.transaction_state().len() as i64
                })
                .sum::<i64>()
        });
        assert!(sum > 0);
        assert_eq!(count, 0, "ListTransactions v{version}");
    }
    let body = encode_to_vec(&described, 0);
    let (sum, count) = allocations(|| {
        let view = view_exact::<DescribeTransactionsResponse>(&body, 0).expect("valid");
        let mut sum = 0i64;
        for s in view.transaction_states() {
            sum += s.transactional_id().len() as i64 + s.transaction_state().len() as i64;
            sum += s.producer_id() + i64::from(s.producer_epoch()) + s.transaction_start_time_ms();
            sum += i64::from(s.transaction_timeout_ms()) + i64::from(s.error_code().0);
            for t in s.topics() {
                sum += t.topic().len() as i64 + t.partitions().iter().map(i64::from).sum::<i64>();
            }
        }
        sum
    });
    assert!(sum > 0);
    assert_eq!(count, 0, "DescribeTransactions");
}

/// A refused body costs the error alone (its box and path).
#[test]
fn a_refused_body_allocates_only_its_error() {
    let body = encode_to_vec(&describe_producers(100), 0);
    let (result, count) = allocations(|| {
        view_exact::<DescribeProducersResponse>(&body[..body.len() - 1], 0).map(drop)
    });
    assert!(result.is_err());
    assert!(count <= 8, "{count} allocations for one error");
}
