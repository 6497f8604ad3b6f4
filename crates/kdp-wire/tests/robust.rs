//! Hostile input never panics the decoder, and whatever it accepts is the
//! canonical encoding of what it returns (the fuzz targets' properties, from
//! `kdp_wire::fuzz_checks`, driven here by proptest).

use proptest::collection::vec;
use proptest::prelude::*;

use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::fuzz_checks;
use kdp_wire::messages::DescribeProducersRequest;
use kdp_wire::{encode_to_vec, RequestHeader};

mod common;
use common::{request, response, tagged, text};

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), 0u8..8).prop_map(|(i, bit)| Mutation::Flip(i, 1 << bit)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1usize..8).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    let at = |i: usize| if len == 0 { 0 } else { i % len };
    match *m {
        Mutation::Set(i, b) if len > 0 => bytes[at(i)] = b,
        Mutation::Flip(i, mask) if len > 0 => bytes[at(i)] ^= mask,
        Mutation::Insert(i, b) => bytes.insert(i % (len + 1), b),
        Mutation::Remove(i) if len > 0 => {
            bytes.remove(at(i));
        }
        Mutation::Truncate(i) => bytes.truncate(i % (len + 1)),
        Mutation::Duplicate(i, n) if len > 0 => {
            let start = at(i);
            let end = (start + n).min(len);
            let chunk = bytes[start..end].to_vec();
            bytes.splice(start..start, chunk);
        }
        _ => {}
    }
}

fn header() -> impl Strategy<Value = RequestHeader> {
    (any::<i32>(), proptest::option::of(text()), tagged()).prop_map(
        |(correlation_id, client_id, unknown_tagged_fields)| RequestHeader {
            request_api_key: kdp_wire::api::DESCRIBE_PRODUCERS,
            request_api_version: 0,
            correlation_id,
            client_id: client_id.map(|s| s.chars().take(100).collect()),
            unknown_tagged_fields,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn random_bytes_never_panic(data in vec(any::<u8>(), 0..512)) {
        fuzz_checks::describe_producers_request(&data);
        fuzz_checks::describe_producers_response(&data);
        fuzz_checks::request_frame(&data);
    }

    /// Small inputs whose every byte is "interesting": counts, lengths,
    /// varint continuation bits, nulls.
    #[test]
    fn small_structured_bytes_never_panic(
        data in vec(prop_oneof![Just(0u8), Just(1), Just(2), Just(0x7f), Just(0x80), Just(0xff), any::<u8>()], 0..48)
    ) {
        fuzz_checks::describe_producers_request(&data);
        fuzz_checks::describe_producers_response(&data);
    }

    #[test]
    fn mutated_responses(m in response(), edits in vec(mutation(), 1..4)) {
        let mut bytes = encode_to_vec(&m, 0);
        prop_assert!(fuzz_checks::describe_producers_response(&bytes));
        for e in &edits {
            apply(&mut bytes, e);
        }
        fuzz_checks::describe_producers_response(&bytes);
    }

    #[test]
    fn mutated_requests(m in request(), edits in vec(mutation(), 1..4)) {
        let mut bytes = encode_to_vec(&m, 0);
        prop_assert!(fuzz_checks::describe_producers_request(&bytes));
        for e in &edits {
            apply(&mut bytes, e);
        }
        fuzz_checks::describe_producers_request(&bytes);
    }

    #[test]
    fn mutated_request_frames(
        h in header(),
        m in request(),
        edits in vec(mutation(), 1..4),
    ) {
        let mut bytes = request_frame_to_vec::<DescribeProducersRequest>(&h, &m);
        prop_assert!(fuzz_checks::request_frame(&bytes));
        for e in &edits {
            apply(&mut bytes, e);
        }
        fuzz_checks::request_frame(&bytes);
    }
}
