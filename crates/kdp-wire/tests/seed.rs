//! The seed document's example, as bytes and as JSON.

use kdp_wire::messages::DescribeProducersResponse;
use kdp_wire::{decode_exact, encode_to_vec, json};

const BIN: &[u8] = include_bytes!("../../../vectors/seed-example.bin");
const JSON: &str = include_str!("../../../vectors/seed-example.json");

#[test]
fn seed_bytes_decode_to_seed_json() {
    let from_bytes: DescribeProducersResponse = decode_exact(BIN, 0).unwrap();
    let from_json: DescribeProducersResponse = json::from_str(JSON).unwrap();
    assert_eq!(from_bytes, from_json);
    let p = &from_bytes.topics[0].partitions[0].active_producers[0];
    assert_eq!(p.producer_epoch, 12);
    assert_eq!(p.current_txn_start_offset, 150382);
}

#[test]
fn seed_json_encodes_to_seed_bytes() {
    let msg: DescribeProducersResponse = json::from_str(JSON).unwrap();
    assert_eq!(encode_to_vec(&msg, 0), BIN);
}

#[test]
fn seed_json_round_trips_through_serde() {
    let msg: DescribeProducersResponse = json::from_str(JSON).unwrap();
    let text = serde_json::to_string_pretty(&msg).unwrap();
    let a: serde_json::Value = serde_json::from_str(&text).unwrap();
    let b: serde_json::Value = serde_json::from_str(JSON).unwrap();
    assert_eq!(a, b);
}

#[test]
fn every_strict_prefix_is_rejected() {
    for n in 0..BIN.len() {
        let err = decode_exact::<DescribeProducersResponse>(&BIN[..n], 0).unwrap_err();
        assert!(err.offset() <= n, "prefix {n}: {err}");
    }
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut b = BIN.to_vec();
    b.push(0);
    let err = decode_exact::<DescribeProducersResponse>(&b, 0).unwrap_err();
    assert_eq!(err.offset(), BIN.len());
    assert!(err.to_string().contains("trailing"), "{err}");
}

#[test]
fn fast_json_writer_matches_serde_json() {
    let mut msg: DescribeProducersResponse = json::from_str(JSON).unwrap();
    let check = |m: &DescribeProducersResponse| {
        let mut fast = Vec::new();
        json::write_response_pretty(&mut fast, m).unwrap();
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            serde_json::to_string_pretty(m).unwrap()
        );
    };
    check(&msg);
    check(&DescribeProducersResponse::default());
    msg.topics[0].name = "quote\" back\\slash \u{1} é/".into();
    msg.topics[0].partitions[0].error_message = Some("line\nbreak".into());
    msg.topics[0].partitions[0]
        .active_producers
        .push(Default::default());
    msg.topics[0].partitions.push(Default::default());
    msg.topics.push(Default::default());
    check(&msg);
    msg.topics[0].unknown_tagged_fields.insert(5, vec![1, 2]);
    check(&msg);
}
