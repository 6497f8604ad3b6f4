//! Counts are checked against the input before anything is allocated: a
//! hostile count costs no memory. Measured with a counting allocator (this
//! test binary's global allocator), per thread so that tests running in
//! parallel do not disturb each other.

// A global allocator is unsafe to implement; it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kdp_wire::{decode_exact, DecodeError};

struct Counting;

thread_local! {
    static BYTES: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = BYTES.try_with(|b| b.set(b.get() + layout.size()));
        let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes allocated, and the largest single allocation, while running `f`.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    BYTES.with(|b| b.set(0));
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, BYTES.with(Cell::get), LARGEST.with(Cell::get))
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

#[test]
fn huge_topics_count_allocates_nothing_but_the_error() {
    // Topics count 2^31 - 2, 3 bytes left.
    let mut bytes = vec![0, 0, 0, 0];
    bytes.extend(varint((1 << 31) - 1));
    bytes.extend([0, 0, 0]);
    let (result, total, largest) = measure(|| decode_exact::<DescribeProducersResponse>(&bytes, 0));
    let err: DecodeError = result.unwrap_err();
    assert_eq!(err.path(), "Topics");
    assert_eq!(err.offset(), 4);
    // The error itself (a box and a one-segment path) is all.
    assert!(largest <= 128, "largest allocation {largest} bytes");
    assert!(total <= 256, "allocated {total} bytes");
}

#[test]
fn nested_huge_counts_allocate_nothing_but_what_the_input_justifies() {
    // PartitionIndexes count 2^31 - 2 inside one topic.
    let mut bytes = vec![2, 2, b't'];
    bytes.extend(varint((1 << 31) - 1));
    bytes.extend([0; 5]);
    let (result, _, largest) = measure(|| decode_exact::<DescribeProducersRequest>(&bytes, 0));
    let err = result.unwrap_err();
    assert_eq!(err.path(), "Topics[0].PartitionIndexes");
    assert!(largest <= 128, "largest allocation {largest} bytes");
}

#[test]
fn allocation_is_bounded_by_the_input_size() {
    // Every count as large as the input allows: 1-byte elements that fail
    // late. The largest allocation stays within a small multiple of the
    // input (an element in memory is bigger than its smallest encoding).
    let mut bytes = vec![0, 0, 0, 0];
    bytes.extend(varint(1001)); // 1000 topics, each at least 3 bytes
    bytes.extend(vec![0u8; 3000]);
    let (result, _, largest) = measure(|| decode_exact::<DescribeProducersResponse>(&bytes, 0));
    assert!(result.is_err());
    let per_topic = std::mem::size_of::<kdp_wire::messages::TopicResponse>();
    assert!(largest <= 1000 * per_topic, "{largest}");
}
