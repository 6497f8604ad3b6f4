//! The one-partition fast path against the general fast check and the
//! declared check: on any bytes, valid or corrupted, it accepts exactly
//! the bodies the general fast check accepts that hold one topic of one
//! partition with a null ErrorMessage and under 127 producers, so taking
//! it first changes no verdict, no error and no view.

use proptest::prelude::*;

use super::{any_shape, one_partition};
use crate::fuzz_checks::view_body;
use crate::messages::{DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse};
use crate::tagged::{TaggedField, TaggedFields};
use crate::testgen::Gen;
use crate::{decode_exact, encode_to_vec, ErrorCode};

/// Where a tagged field goes: nowhere, or on the response, the first
/// topic, its first partition or that partition's first producer.
const TAG_LEVELS: u8 = 5;

/// `shape[t][p]` producers in partition `p` of topic `t`; `tag_level` as
/// in [`TAG_LEVELS`].
fn response(
    shape: &[Vec<usize>],
    name: &str,
    message: Option<&str>,
    tag_level: u8,
) -> DescribeProducersResponse {
    let mut next = 0i64;
    let mut m = DescribeProducersResponse {
        throttle_time_ms: 11,
        topics: shape
            .iter()
            .map(|partitions| TopicResponse {
                name: name.into(),
                partitions: partitions
                    .iter()
                    .enumerate()
                    .map(|(p, &n)| PartitionResponse {
                        partition_index: p as i32,
                        error_code: ErrorCode(p as i16),
                        error_message: message.map(str::to_owned),
                        active_producers: (0..n)
                            .map(|_| {
                                next += 1;
                                ProducerState {
                                    producer_id: next.wrapping_mul(0x0e37_79b9_7f4a_7c15),
                                    producer_epoch: (next % 17) as i32,
                                    last_sequence: next as i32,
                                    last_timestamp: 1_764_400_000_000 + next,
                                    coordinator_epoch: -(next as i32),
                                    current_txn_start_offset: -next,
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
    let tags = TaggedFields::new(vec![TaggedField {
        tag: 2,
        data: vec![0],
    }]);
    let topic = m.topics.first_mut();
    let partition = topic.and_then(|t| t.partitions.first_mut());
    match tag_level {
        1 => m.unknown_tagged_fields = tags,
        2 => {
            if let Some(t) = m.topics.first_mut() {
                t.unknown_tagged_fields = tags;
            }
        }
        3 => {
            if let Some(p) = partition {
                p.unknown_tagged_fields = tags;
            }
        }
        4 => {
            if let Some(s) = partition.and_then(|p| p.active_producers.first_mut()) {
                s.unknown_tagged_fields = tags;
            }
        }
        _ => {}
    }
    m
}

/// Whether a decoded body is one topic of one partition with a null
/// ErrorMessage and under 127 producers.
fn one_partition_shape(m: &DescribeProducersResponse) -> bool {
    match m.topics.as_slice() {
        [topic] => match topic.partitions.as_slice() {
            [p] => p.error_message.is_none() && p.active_producers.len() < 127,
            _ => false,
        },
        _ => false,
    }
}

/// The property on one input: the one-partition path accepts exactly what
/// the general fast check accepts in that shape (the general one accepts
/// only what the declared check accepts, at a fixed stride, which
/// `view_body` asserts), and the view's verdict and error are the
/// decoder's.
fn agree(bytes: &[u8]) {
    let shaped = any_shape(bytes)
        && decode_exact::<DescribeProducersResponse>(bytes, 0)
            .is_ok_and(|m| one_partition_shape(&m));
    assert_eq!(one_partition(bytes), shaped, "{bytes:02x?}");
    view_body::<DescribeProducersResponse>(bytes, 0);
}

/// A body, each of its strict prefixes, and `mutations` corrupted copies
/// (a byte replaced, a bit flipped, a byte inserted or removed).
fn agree_with_corruptions(bytes: &[u8], mutations: usize, g: &mut Gen) {
    agree(bytes);
    for n in 0..bytes.len() {
        agree(bytes.get(..n).unwrap_or_default());
    }
    for _ in 0..mutations {
        let mut copy = bytes.to_vec();
        let at = g.below(copy.len() as u64) as usize;
        match g.below(4) {
            0 => copy[at] = g.next_u64() as u8,
            1 => copy[at] ^= 1 << g.below(8),
            2 => copy.insert(at, g.next_u64() as u8),
            _ => {
                copy.remove(at);
            }
        }
        agree(&copy);
    }
}

/// A body's shape, name, error message and tag level, and whether the
/// one-partition path takes it.
type Case<'a> = (&'a [Vec<usize>], &'a str, Option<&'a str>, u8, bool);

#[test]
fn the_one_partition_shape_is_taken_and_its_neighbours_are_not() {
    let mut g = Gen::new(90);
    let cases: [Case<'_>; 14] = [
        (&[vec![1]], "orders-000", None, 0, true),
        (&[vec![0]], "", None, 0, true),
        (&[vec![10]], "t", None, 0, true),
        (&[vec![126]], &"n".repeat(126), None, 0, true),
        // 127 producers: a two-byte count; a 127-byte name: a two-byte length.
        (&[vec![127]], "t", None, 0, false),
        (&[vec![1]], &"n".repeat(127), None, 0, false),
        (&[vec![1]], "ordres-é", None, 0, false),
        (&[vec![1]], "orders", Some(""), 0, false),
        (&[vec![1, 1]], "orders", None, 0, false),
        (&[vec![1], vec![1]], "orders", None, 0, false),
        (&[], "orders", None, 0, false),
        (&[vec![1]], "orders", None, 1, false),
        (&[vec![1]], "orders", None, 3, false),
        (&[vec![1]], "orders", None, 4, false),
    ];
    for (shape, name, message, tag_level, taken) in cases {
        let bytes = encode_to_vec(&response(shape, name, message, tag_level), 0);
        assert_eq!(one_partition(&bytes), taken, "{shape:?} {name:?}");
        agree_with_corruptions(&bytes, 256, &mut g);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random shapes, mostly of one partition, with names, messages,
    /// counts and tagged fields around the edges of the path, each body
    /// with every prefix and corrupted copies.
    #[test]
    fn random_bodies_and_their_corruptions_agree(
        shape in prop_oneof![
            3 => (prop_oneof![0usize..10, 124usize..129]).prop_map(|n| vec![vec![n]]),
            1 => proptest::collection::vec(
                proptest::collection::vec(0usize..6, 0..3),
                0..3,
            ),
        ],
        name_len in prop_oneof![0usize..3, 6usize..19, 124usize..129],
        ascii in any::<bool>(),
        message in proptest::option::of(0usize..3),
        tag_level in 0..TAG_LEVELS,
        seed in any::<u64>(),
    ) {
        let name: String = if ascii { "n".repeat(name_len) } else { "é".repeat(name_len / 2) };
        let message = message.map(|n| "m".repeat(n));
        let bytes = encode_to_vec(&response(&shape, &name, message.as_deref(), tag_level), 0);
        agree_with_corruptions(&bytes, 64, &mut Gen::new(seed));
    }
}
