//! The fast check of a DescribeProducers response's usual shape
//! (`Message::accepts_fast`, which `view_exact` and `Validated` try
//! first) against the declared check and the owned decoder: it accepts
//! only bodies they accept, with every producer at its stride, and it does
//! accept the usual shape (else the view's fast path would go untested).
//! Bodies at the edges of that shape: names and error messages of 125 to
//! 127 bytes (a one- then two-byte length), non-ASCII names, counts at the
//! one-, two- and three-byte varint boundaries, tagged fields at each
//! level, non-minimal counts; each cut at every length and mutated.
//! `fuzz_checks::view_body` asserts the agreement on every body.

use proptest::prelude::*;

use kdp_wire::fuzz_checks::view_body;
use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use kdp_wire::testgen::Gen;
use kdp_wire::{encode_to_vec, ErrorCode, Message, TaggedField, TaggedFields};

fn fast(bytes: &[u8]) -> bool {
    DescribeProducersResponse::accepts_fast(bytes, 0)
}

fn producer(i: u64) -> ProducerState {
    let i = i as i64;
    ProducerState {
        producer_id: i.wrapping_mul(0x0e37_79b9_7f4a_7c15),
        producer_epoch: (i % 17) as i32,
        last_sequence: i as i32,
        last_timestamp: 1_764_400_000_000 + i,
        coordinator_epoch: -(i as i32),
        current_txn_start_offset: if i % 2 == 0 { i } else { -1 },
        ..Default::default()
    }
}

/// `shape[t][p]` producers in partition `p` of topic `t`.
fn response(shape: &[Vec<usize>], name: &str, message: Option<&str>) -> DescribeProducersResponse {
    let mut next = 0;
    DescribeProducersResponse {
        throttle_time_ms: 7,
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
                                producer(next)
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The body whole (checked through `view_body`, which holds the fast check
/// to the declared one), with the fast check's expected verdict; then
/// every strict prefix, refused by both; then `mutations` mutated copies.
fn check(bytes: &[u8], expect_fast: bool, mutations: usize, g: &mut Gen) {
    assert!(view_body::<DescribeProducersResponse>(bytes, 0));
    assert_eq!(fast(bytes), expect_fast, "{bytes:02x?}");
    for n in 0..bytes.len() {
        assert!(!fast(&bytes[..n]), "prefix {n}");
        assert!(!view_body::<DescribeProducersResponse>(&bytes[..n], 0));
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
        view_body::<DescribeProducersResponse>(&copy, 0);
    }
}

/// A body's shape, its names, its error messages, and the fast verdict.
type Case = (Vec<Vec<usize>>, String, Option<String>, bool);

#[test]
fn the_usual_shape_is_accepted_fast_and_its_edges_fall_back() {
    let mut g = Gen::new(32);
    let long = |n: usize| "p".repeat(n);
    let cases: Vec<Case> = vec![
        (vec![], "t".into(), None, true),
        (vec![vec![]], "t".into(), None, true),
        (vec![vec![0]], String::new(), None, true),
        (vec![vec![1]], "orders-000".into(), None, true),
        (
            vec![vec![1, 0, 2], vec![3]],
            "orders".into(),
            Some(String::new()),
            true,
        ),
        (vec![vec![2]], long(125), Some(long(126)), true),
        // 126 bytes: length prefix 0x7f; 127: two bytes, left to the declared check.
        (vec![vec![1]], long(126), None, true),
        (vec![vec![1]], long(127), None, false),
        (vec![vec![1]], "orders".into(), Some(long(127)), false),
        (vec![vec![1]], "ordres-é".into(), None, false),
        (
            vec![vec![1]],
            "orders".into(),
            Some("pas de leader ✗".into()),
            false,
        ),
        // Producer counts around the varint boundaries (n + 1 = 127, 128, 129).
        (vec![vec![126]], "t".into(), None, true),
        (vec![vec![127]], "t".into(), None, true),
        (vec![vec![128, 5]], "t".into(), None, true),
        // 127 partitions: the partition count takes two bytes.
        (vec![vec![0; 127]], "t".into(), None, true),
    ];
    for (shape, name, message, expect_fast) in cases {
        let m = response(&shape, &name, message.as_deref());
        let bytes = encode_to_vec(&m, 0);
        check(&bytes, expect_fast, 64, &mut g);
    }
}

#[test]
fn a_three_byte_count_is_accepted_fast_and_cut_anywhere_refused() {
    // n + 1 = 2^14: the first count of three varint bytes.
    let m = response(&[vec![16_383]], "t", None);
    let bytes = encode_to_vec(&m, 0);
    assert!(view_body::<DescribeProducersResponse>(&bytes, 0));
    assert!(fast(&bytes));
    // Cut inside the count, each producer's first and last bytes, the end.
    let count_at = 4 + 1 + 2 + 1 + 6 + 1;
    let mut cuts: Vec<usize> = (0..count_at + 4).collect();
    cuts.extend((0..16_383).flat_map(|i| {
        let start = count_at + 3 + i * 37;
        [start + 1, start + 36]
    }));
    cuts.extend(bytes.len() - 3..bytes.len());
    for n in cuts {
        assert!(!fast(&bytes[..n]), "prefix {n}");
        assert!(!view_body::<DescribeProducersResponse>(&bytes[..n], 0));
    }
}

#[test]
fn tagged_fields_at_any_level_leave_the_body_to_the_declared_check() {
    let tags = TaggedFields::new(vec![TaggedField {
        tag: 1,
        data: vec![9, 9],
    }]);
    let mut g = Gen::new(61);
    for level in 0..4 {
        let mut m = response(&[vec![2, 3], vec![1]], "orders", None);
        match level {
            0 => m.unknown_tagged_fields = tags.clone(),
            1 => m.topics[1].unknown_tagged_fields = tags.clone(),
            2 => m.topics[0].partitions[1].unknown_tagged_fields = tags.clone(),
            _ => m.topics[0].partitions[1].active_producers[2].unknown_tagged_fields = tags.clone(),
        }
        let bytes = encode_to_vec(&m, 0);
        check(&bytes, false, 64, &mut g);
    }
}

#[test]
fn non_minimal_and_null_counts_are_refused_by_both() {
    // Throttle, then no topics but counted `81 00` or `81 80 00` (not
    // minimal), `00` (null), a count of four bytes (beyond the fast check),
    // and a trailing byte; then a partition count and a producer count of
    // `81 00`.
    for body in [
        &[0, 0, 0, 0, 0x81, 0x00, 0][..],
        &[0, 0, 0, 0, 0x81, 0x80, 0x00, 0],
        &[0, 0, 0, 0, 0x00, 0],
        &[0, 0, 0, 0, 0x81, 0x80, 0x80, 0x00, 0],
        &[0, 0, 0, 0, 0x81, 0x80, 0x80, 0x01, 0],
        &[0, 0, 0, 0, 1, 0, 0],
        &[0, 0, 0, 0, 2, 1, 0x81, 0x00, 0, 0],
        &[
            0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1, 0, 0, 0, 0x81, 0x00, 0, 0, 0,
        ],
    ] {
        assert!(!fast(body), "{body:02x?}");
        assert!(!view_body::<DescribeProducersResponse>(body, 0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random shapes with names and messages around the short-length edge,
    /// ASCII or not: the fast verdict is exactly "no tags, short ASCII,
    /// small counts", and never disagrees with the declared check.
    #[test]
    fn random_shapes_agree(
        shape in proptest::collection::vec(
            proptest::collection::vec(
                prop_oneof![0usize..4, 125usize..130],
                0..4,
            ),
            0..3,
        ),
        name_len in prop_oneof![0usize..3, 124usize..129],
        ascii in any::<bool>(),
        message in proptest::option::of(0usize..3),
        seed in any::<u64>(),
    ) {
        let name: String = if ascii { "n".repeat(name_len) } else { "é".repeat(name_len / 2) };
        let message = message.map(|n| "m".repeat(n));
        let m = response(&shape, &name, message.as_deref());
        let bytes = encode_to_vec(&m, 0);
        // A name is in the body only with a topic.
        let expect = shape.is_empty() || (name.is_ascii() && name.len() < 127);
        prop_assert!(view_body::<DescribeProducersResponse>(&bytes, 0));
        prop_assert_eq!(fast(&bytes), expect);
        let mut g = Gen::new(seed);
        for _ in 0..32 {
            let mut copy = bytes.clone();
            let at = g.below(copy.len() as u64) as usize;
            copy[at] = g.next_u64() as u8;
            view_body::<DescribeProducersResponse>(&copy, 0);
        }
    }
}

/// The fast check finds producers' tag bytes four at a time and then one
/// at a time: a tagged field on any one producer of nine (each slot of
/// the two fours and the one after them) sends the body to the declared
/// check, and a non-zero tag byte that is not a valid section is refused
/// by both with the decoder's error (`view_body` compares them).
#[test]
fn a_tag_on_any_producer_of_a_four_or_the_tail_is_seen() {
    let tags = TaggedFields::new(vec![TaggedField {
        tag: 3,
        data: vec![1],
    }]);
    let mut g = Gen::new(77);
    for at in 0..9 {
        let mut m = response(&[vec![9]], "orders-000", None);
        m.topics[0].partitions[0].active_producers[at].unknown_tagged_fields = tags.clone();
        check(&encode_to_vec(&m, 0), false, 16, &mut g);
        // The same producer's empty tag section made a count of one
        // field, read from the bytes after it: left to the declared
        // check, whose verdict and error the view's must match.
        let mut bytes = encode_to_vec(&response(&[vec![9]], "orders-000", None), 0);
        let header = bytes.len() - 9 * 37 - 3;
        bytes[header + at * 37 + 36] = 1;
        assert!(!fast(&bytes), "producer {at}");
        view_body::<DescribeProducersResponse>(&bytes, 0);
    }
}

/// Topic names of 1 to 20 bytes (under, within and over the 8-to-16-byte
/// case the fast check covers with two words), ASCII, and with one
/// non-ASCII byte at each position: the first accepted fast, the others
/// left to the declared check, which refuses a lone `c3` (not UTF-8) and
/// accepts `c3 a9` (é).
#[test]
fn names_of_every_short_length_with_a_high_byte_anywhere() {
    let mut g = Gen::new(78);
    for len in 1..=20 {
        let name = "n".repeat(len);
        let bytes = encode_to_vec(&response(&[vec![1]], &name, None), 0);
        check(&bytes, true, 4, &mut g);
        for at in 0..len {
            let mut copy = bytes.clone();
            // Throttle (4) and the topic count (1), then the name's length.
            copy[4 + 1 + 1 + at] = 0xc3;
            assert!(!fast(&copy), "len {len}, byte {at}");
            assert!(!view_body::<DescribeProducersResponse>(&copy, 0));
            let mut two = bytes.clone();
            if at + 1 < len {
                // A valid two-byte character in place of two letters.
                two[4 + 1 + 1 + at] = 0xc3;
                two[4 + 1 + 1 + at + 1] = 0xa9;
                assert!(!fast(&two), "len {len}, byte {at}");
                assert!(view_body::<DescribeProducersResponse>(&two, 0));
            }
        }
    }
}
