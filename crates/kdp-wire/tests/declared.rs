//! Every declared message against the `kafka-protocol` crate, at every
//! version both support: random values valid for the version (from
//! `kdp_wire::testgen`), encoded by kdp, decoded and re-encoded by the peer
//! to the same bytes; decoded by kdp to the same value; every strict prefix
//! refused; and the JSON form read back to the same value.

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::{Decodable, Encodable};
use kdp_wire::messages::*;
use kdp_wire::testgen::{Gen, Random};
use kdp_wire::wire::{CustomCodec, Version, Wire};
use kdp_wire::{decode_exact, encode_to_vec, json, Message};
use proptest::prelude::*;

fn peer_round_trip<P: Encodable + Decodable>(bytes: &[u8], version: i16) -> Vec<u8> {
    let mut input = Bytes::copy_from_slice(bytes);
    let value = P::decode(&mut input, version).expect("peer decodes kdp's bytes");
    assert!(input.is_empty(), "peer left bytes unread");
    let mut out = BytesMut::new();
    value.encode(&mut out, version).expect("peer encodes");
    out.to_vec()
}

fn check<M, P>(seed: u64, versions: std::ops::RangeInclusive<i16>)
where
    M: Message
        + Random
        + PartialEq
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
    P: Encodable + Decodable,
{
    let mut g = Gen::new(seed);
    for v in versions {
        assert!((M::LOWEST_VERSION..=M::HIGHEST_VERSION).contains(&v));
        let m = M::random(&mut g, Version::of::<M>(v), false);
        let ours = encode_to_vec(&m, v);
        assert_eq!(ours.len(), m.encoded_len(v), "{} v{v} length", M::NAME);
        assert_eq!(
            peer_round_trip::<P>(&ours, v),
            ours,
            "{} v{v} bytes of {m:?}",
            M::NAME
        );
        let back: M = decode_exact(&ours, v).unwrap_or_else(|e| panic!("{} v{v}: {e}", M::NAME));
        assert_eq!(back, m, "{} v{v} value", M::NAME);
        for n in 0..ours.len() {
            assert!(
                decode_exact::<M>(&ours[..n], v).is_err(),
                "{} v{v} prefix {n}",
                M::NAME
            );
        }
        let text = serde_json::to_string(&m).expect("to JSON");
        let from_json: M =
            json::from_str(&text).unwrap_or_else(|e| panic!("{} JSON: {e}", M::NAME));
        assert_eq!(from_json, m, "{} JSON round trip", M::NAME);
    }
}

use kafka_protocol::messages as peer;
use kafka_protocol::protocol::Message as PeerMessage;

/// The versions both kdp and the peer implement.
fn overlap<M: Message, P: PeerMessage>() -> std::ops::RangeInclusive<i16> {
    M::LOWEST_VERSION.max(P::VERSIONS.min)..=M::HIGHEST_VERSION.min(P::VERSIONS.max)
}

/// From the registry: every declared API's request and response against
/// the peer's message of the same name, at every version both know.
/// Returns what was checked.
macro_rules! cross_check_registry {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        fn cross_check_every_api(seed: u64) -> Vec<(&'static str, std::ops::RangeInclusive<i16>)> {
            let mut checked = Vec::new();
            $( cross_check_one!(checked, seed, $name, $req, $resp); )*
            checked
        }
    };
}

/// One API against the peer; an API the peer does not know at all (listed
/// in `PEER_UNKNOWN`, checked against Kafka's own encoding instead) is
/// skipped with an empty range.
macro_rules! cross_check_one {
    ($checked:ident, $seed:ident, StreamsGroupDescribe, $req:ident, $resp:ident) => {
        $checked.push(("StreamsGroupDescribe", std::ops::RangeInclusive::new(1, 0)));
    };
    ($checked:ident, $seed:ident, $name:ident, $req:ident, $resp:ident) => {
        let versions = overlap::<$req, peer::$req>();
        assert_eq!(versions, overlap::<$resp, peer::$resp>(), stringify!($name));
        check::<$req, peer::$req>($seed, versions.clone());
        check::<$resp, peer::$resp>($seed, versions.clone());
        $checked.push((stringify!($name), versions));
    };
}

kdp_wire::for_each_api!(cross_check_registry);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_declared_api_matches_the_peer(seed in any::<u64>()) {
        cross_check_every_api(seed);
    }
}

/// Where the peer implements fewer versions of an API than kdp declares,
/// and so the cross-check cannot reach: each with the test that covers the
/// difference instead.
const PEER_GAPS: &[(&str, std::ops::RangeInclusive<i16>)] = &[
    // The peer knows only v1 of WriteTxnMarkers; v2 is checked by
    // write_txn_markers_v2_appends_transaction_version.
    ("WriteTxnMarkers", 1..=1),
    // The peer knows only v0 of DescribeShareGroupOffsets; v1 is checked by
    // describe_share_group_offsets_v1_adds_lag.
    ("DescribeShareGroupOffsets", 0..=0),
];

/// APIs the peer does not know at all, each with the test that holds it
/// to Kafka's own encoding instead (bytes written by Kafka's generated
/// classes, `vectors/streams-group-describe/`).
const PEER_UNKNOWN: &[&str] = &["StreamsGroupDescribe"];

/// What the cross-check covers: every API of the registry, in its order,
/// at every version it declares (but the peer's gaps above). A new API
/// joins it by its registry line; one the peer does not know, or knows at
/// fewer versions, fails here until its gap is listed with a test of its own.
#[test]
fn the_registry_is_cross_checked_at_every_shared_version() {
    let checked = cross_check_every_api(7);
    let declared = kdp_wire::registry::DECLARED;
    assert_eq!(checked.len(), declared.len());
    for (api, (name, versions)) in declared.iter().zip(&checked) {
        assert_eq!(api.name, *name);
        if PEER_UNKNOWN.contains(name) {
            assert!(versions.is_empty(), "{name}");
            continue;
        }
        let expected = PEER_GAPS
            .iter()
            .find(|(gap, _)| gap == name)
            .map_or(api.versions(), |(_, shared)| shared.clone());
        assert_eq!(*versions, expected, "{name}");
        assert!(!versions.is_empty(), "{name}: no version in common");
    }
    for (gap, _) in PEER_GAPS {
        assert!(
            declared.iter().any(|a| a.name == *gap),
            "{gap} is not declared"
        );
    }
}

/// The registry's fuzz check (`fuzz/fuzz_targets/every_api.rs`) reaches
/// every declared message at every declared version, and accepts what kdp
/// encodes there.
#[test]
fn the_every_api_fuzz_check_reaches_every_declared_message() {
    macro_rules! encoded {
        ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
            |api: &str, version: i16, response: bool, g: &mut Gen| -> Vec<u8> {
                $(
                    if api == stringify!($name) {
                        return if response {
                            encode_to_vec(&$resp::random(g, Version::of::<$resp>(version), false), version)
                        } else {
                            encode_to_vec(&$req::random(g, Version::of::<$req>(version), false), version)
                        };
                    }
                )*
                unreachable!("{api}")
            }
        };
    }
    let encode = kdp_wire::for_each_api!(encoded);
    let mut g = Gen::new(11);
    let mut reached = 0;
    for (i, api) in kdp_wire::registry::DECLARED.iter().enumerate() {
        for version in api.versions() {
            for response in [false, true] {
                let offset = u8::try_from(version - api.lowest_version).unwrap();
                let mut data = vec![u8::try_from(i).unwrap(), (offset << 1) | u8::from(response)];
                data.extend(encode(api.name, version, response, &mut g));
                assert!(
                    kdp_wire::fuzz_checks::every_api(&data),
                    "{} v{version} response={response}",
                    api.name
                );
                reached += 1;
            }
        }
    }
    let versions: usize = kdp_wire::registry::DECLARED
        .iter()
        .map(|a| a.versions().count())
        .sum();
    assert_eq!(reached, 2 * versions);
}

/// WriteTxnMarkers v2 appends TransactionVersion (int8) to each marker,
/// which the peer does not know: v2 is v1 plus one byte before each marker's
/// tag section.
#[test]
fn write_txn_markers_v2_appends_transaction_version() {
    let marker = WritableTxnMarker {
        producer_id: 7,
        producer_epoch: 3,
        transaction_result: false,
        topics: vec![WritableTxnMarkerTopic {
            name: "t".into(),
            partition_indexes: vec![0, 2],
            ..Default::default()
        }],
        coordinator_epoch: 5,
        transaction_version: 2,
        ..Default::default()
    };
    let m = WriteTxnMarkersRequest {
        markers: vec![marker],
        ..Default::default()
    };
    let v1 = encode_to_vec(&m, 1);
    let v2 = encode_to_vec(&m, 2);
    // v1: count, then the marker ends with its empty tag section and the
    // request's; v2 puts TransactionVersion = 2 before the marker's.
    let mut expected = v1[..v1.len() - 2].to_vec();
    expected.extend_from_slice(&[2, 0, 0]);
    assert_eq!(v2, expected);
    assert_eq!(decode_exact::<WriteTxnMarkersRequest>(&v2, 2).unwrap(), m);
    let back: WriteTxnMarkersRequest = decode_exact(&v1, 1).unwrap();
    assert_eq!(
        back.markers[0].transaction_version, 0,
        "absent in v1: the default"
    );
}

/// DescribeShareGroupOffsets v1 (KIP-1226) adds Lag (int64, default -1)
/// after each partition's LeaderEpoch; the request is unchanged. Bytes
/// written by hand from Kafka's schema.
#[test]
fn describe_share_group_offsets_v1_adds_lag() {
    let m = DescribeShareGroupOffsetsResponse {
        groups: vec![DescribeShareGroupOffsetsResponseGroup {
            group_id: "g".into(),
            topics: vec![DescribeShareGroupOffsetsResponseTopic {
                topic_name: "t".into(),
                topic_id: kdp_wire::Uuid([1; 16]),
                partitions: vec![DescribeShareGroupOffsetsResponsePartition {
                    partition_index: 2,
                    start_offset: 5,
                    leader_epoch: 3,
                    lag: 7,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut golden = vec![0, 0, 0, 0, 2, 2, b'g', 2, 2, b't'];
    golden.extend([1; 16]);
    golden.extend([2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 3]);
    let lag_at = golden.len();
    golden.extend([0, 0, 0, 0, 0, 0, 0, 7]);
    // ErrorCode, null ErrorMessage, tags; the topic's tags; the group's
    // ErrorCode, ErrorMessage and tags; the response's tags.
    golden.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(encode_to_vec(&m, 1), golden);
    assert_eq!(
        decode_exact::<DescribeShareGroupOffsetsResponse>(&golden, 1).unwrap(),
        m
    );
    let mut v0 = golden.clone();
    v0.drain(lag_at..lag_at + 8);
    assert_eq!(encode_to_vec(&m, 0), v0);
    assert_eq!(
        peer_round_trip::<peer::DescribeShareGroupOffsetsResponse>(&v0, 0),
        v0
    );
    let back: DescribeShareGroupOffsetsResponse = decode_exact(&v0, 0).unwrap();
    assert_eq!(
        back.groups[0].topics[0].partitions[0].lag, -1,
        "absent in v0: the default"
    );
    // Cut inside Lag: one partition no longer fits the bytes left, which
    // the array's count is checked against before anything is read.
    let err =
        decode_exact::<DescribeShareGroupOffsetsResponse>(&golden[..lag_at + 3], 1).unwrap_err();
    assert_eq!(err.path(), "Groups[0].Topics[0].Partitions");
    assert_eq!(err.offset(), 26, "the partitions' count");
    let req = DescribeShareGroupOffsetsRequest {
        groups: vec![DescribeShareGroupOffsetsRequestGroup {
            group_id: "g".into(),
            topics: None,
            ..Default::default()
        }],
        ..Default::default()
    };
    // Null topics (every partition) is a compact length of 0.
    assert_eq!(encode_to_vec(&req, 1), [2, 2, b'g', 0, 0, 0]);
    assert_eq!(encode_to_vec(&req, 0), encode_to_vec(&req, 1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// DescribeProducersResponse's hand-tuned codec and its declared one
    /// agree byte for byte and value for value.
    #[test]
    fn describe_producers_fast_path_matches_declaration(seed in any::<u64>()) {
        let mut g = Gen::new(seed);
        let v = Version { version: 0, flexible: true };
        let m = DescribeProducersResponse::random(&mut g, v, false);
        let mut fast = Vec::new();
        m.custom_put(&mut fast, 0);
        let mut declared = Vec::new();
        Wire::put(&m, &mut declared, v);
        prop_assert_eq!(&fast, &declared);
        prop_assert_eq!(m.custom_len(0), Wire::wire_len(&m, v));
        let mut r = kdp_wire::Reader::new(&fast);
        let a = DescribeProducersResponse::custom_read(&mut r, 0).unwrap();
        let mut r = kdp_wire::Reader::new(&fast);
        let b = <DescribeProducersResponse as Wire>::read(&mut r, v).unwrap();
        prop_assert_eq!(&a, &m);
        prop_assert_eq!(&b, &m);
        for n in 0..fast.len() {
            let mut r = kdp_wire::Reader::new(&fast[..n]);
            let a = DescribeProducersResponse::custom_read(&mut r, 0).map_err(|e| (e.offset(), e.path()));
            let mut r = kdp_wire::Reader::new(&fast[..n]);
            let b = <DescribeProducersResponse as Wire>::read(&mut r, v).map_err(|e| (e.offset(), e.path()));
            prop_assert!(a.is_err() && b.is_err());
        }
    }
}

/// A field that is null only from some version: null before it is refused
/// at the length prefix, with the field named.
#[test]
fn null_outside_nullable_versions_is_refused() {
    let m = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: None,
            ..Default::default()
        }]),
        ..Default::default()
    };
    // v9 (flexible, before names became nullable in v10): the encoder writes
    // null as it was told; the decoder refuses it.
    let bytes = encode_to_vec(&m, 9);
    let err = decode_exact::<MetadataRequest>(&bytes, 9).unwrap_err();
    assert_eq!(err.path(), "Topics[0].Name");
    assert_eq!(err.offset(), 1);
    assert!(err.to_string().contains("null"), "{err}");
    // v10 allows it.
    let bytes = encode_to_vec(&m, 10);
    assert_eq!(decode_exact::<MetadataRequest>(&bytes, 10).unwrap(), m);
}
