//! The view (`kdp_wire::view`) against the owned decoder.
//!
//! For every message of the registry, at every version, from values the
//! declaration generates: what encodes is accepted by both and the view
//! reads the decoder's value through its accessors; every strict prefix and
//! mutated copies are refused by both with the same error (kind, byte
//! offset, field path). For the hot responses (DescribeProducers,
//! ListTransactions, DescribeTransactions), arbitrary bytes and values
//! with unknown tagged fields at every level too. The property itself is
//! `kdp_wire::fuzz_checks::view_body`, which the `every_view` fuzz target
//! runs.

use bytes::Bytes;
use proptest::collection::vec;
use proptest::prelude::*;

use kdp_wire::frame::response_frame_to_vec;
use kdp_wire::fuzz_checks::{self, view_body};
use kdp_wire::messages::*;
use kdp_wire::testgen::{Gen, Random};
use kdp_wire::view::{view_exact, Validated};
use kdp_wire::wire::Version;
use kdp_wire::{decode_exact, encode_to_vec, ErrorCode, Message, TaggedField, TaggedFields};

mod common;

/// One random value of `M` at every version, its every strict prefix, and
/// `mutations` mutated copies; returns how many inputs were checked.
fn check_message<M>(g: &mut Gen, mutations: usize) -> usize
where
    M: Message + Random + kdp_wire::view::Viewable + PartialEq + std::fmt::Debug,
{
    let mut checked = 0;
    for version in M::LOWEST_VERSION..=M::HIGHEST_VERSION {
        let m = M::random(g, Version::of::<M>(version), false);
        let bytes = encode_to_vec(&m, version);
        assert!(view_body::<M>(&bytes, version), "{} v{version}", M::NAME);
        for n in 0..bytes.len() {
            assert!(
                !view_body::<M>(&bytes[..n], version),
                "{} v{version} prefix {n}",
                M::NAME
            );
        }
        for _ in 0..mutations {
            let mut copy = bytes.clone();
            mutate(g, &mut copy);
            view_body::<M>(&copy, version);
        }
        checked += 2 + bytes.len() + mutations;
    }
    checked
}

/// One edit: a byte set, a bit flipped, a byte inserted or removed, or a
/// run of bytes set to 0xff (lengths and counts that overflow).
fn mutate(g: &mut Gen, bytes: &mut Vec<u8>) {
    let len = bytes.len();
    let at = g.below(len as u64 + 1) as usize;
    match g.below(5) {
        0 if at < len => bytes[at] = g.next_u64() as u8,
        1 if at < len => bytes[at] ^= 1 << g.below(8),
        2 => bytes.insert(at, g.next_u64() as u8),
        3 if at < len => {
            bytes.remove(at);
        }
        _ => {
            let end = (at + 1 + g.below(5) as usize).min(len);
            bytes[at.min(end)..end].fill(0xff);
        }
    }
}

/// From the registry: every request and response it declares.
macro_rules! every_api {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        fn check_every_api(seed: u64, mutations: usize) -> Vec<&'static str> {
            let mut g = Gen::new(seed);
            let mut checked = Vec::new();
            $(
                assert!(check_message::<$req>(&mut g, mutations) > 0);
                assert!(check_message::<$resp>(&mut g, mutations) > 0);
                checked.push(stringify!($name));
            )*
            checked
        }
    };
}

kdp_wire::for_each_api!(every_api);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn every_declared_message_reads_the_same_through_its_view(seed in any::<u64>()) {
        check_every_api(seed, 24);
    }
}

#[test]
fn the_view_check_covers_the_whole_registry() {
    let checked = check_every_api(3, 4);
    let declared: Vec<&str> = kdp_wire::registry::DECLARED
        .iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(checked, declared);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Any bytes: accepted by both, every accessor giving the decoder's
    /// value, or refused by both with the same error.
    #[test]
    fn arbitrary_bytes_agree(data in vec(any::<u8>(), 0..256), version in 0i16..3) {
        view_body::<DescribeProducersResponse>(&data, 0);
        view_body::<DescribeTransactionsResponse>(&data, 0);
        view_body::<ListTransactionsResponse>(&data, version);
        fuzz_checks::every_view(&data);
    }

    /// DescribeProducers responses with unknown tagged fields at every
    /// level, long names and errors: whole, cut at every length, and
    /// mutated.
    #[test]
    fn describe_producers_responses_agree(m in common::response(), seed in any::<u64>()) {
        let bytes = encode_to_vec(&m, 0);
        prop_assert!(view_body::<DescribeProducersResponse>(&bytes, 0));
        for n in 0..bytes.len() {
            prop_assert!(!view_body::<DescribeProducersResponse>(&bytes[..n], 0));
        }
        let mut g = Gen::new(seed);
        for _ in 0..16 {
            let mut copy = bytes.clone();
            mutate(&mut g, &mut copy);
            view_body::<DescribeProducersResponse>(&copy, 0);
        }
    }
}

/// The golden vector, field by field through the view, from a whole
/// response frame held in `Bytes` as a client receives it.
#[test]
fn the_seed_example_reads_through_a_validated_frame() {
    let body = include_bytes!("../../../vectors/seed-example.bin");
    let owned: DescribeProducersResponse = decode_exact(body, 0).unwrap();
    let frame = Bytes::from(response_frame_to_vec(77, &owned, 0));
    let payload = frame.slice(4..);
    let (header, validated) =
        Validated::<DescribeProducersResponse>::from_response_payload(payload, 0).unwrap();
    assert_eq!(header.correlation_id, 77);
    assert_eq!(validated.body(), Bytes::from_static(body));
    let view = validated.view();
    assert_eq!(view.throttle_time_ms(), owned.throttle_time_ms);
    assert_eq!(view.topics().len(), 1);
    let topic = view.topics().iter().next().unwrap();
    assert_eq!(topic.name(), "orders");
    let partition = topic.partitions().iter().next().unwrap();
    assert_eq!(
        (
            partition.partition_index(),
            partition.error_code(),
            partition.error_message()
        ),
        (3, ErrorCode::NONE, None)
    );
    let producers: Vec<_> = partition.active_producers().iter().collect();
    assert_eq!(producers.len(), 1);
    let p = &owned.topics[0].partitions[0].active_producers[0];
    let v = producers[0];
    assert_eq!(
        (
            v.producer_id(),
            v.producer_epoch(),
            v.last_sequence(),
            v.last_timestamp(),
            v.coordinator_epoch(),
            v.current_txn_start_offset()
        ),
        (
            p.producer_id,
            p.producer_epoch,
            p.last_sequence,
            p.last_timestamp,
            p.coordinator_epoch,
            p.current_txn_start_offset
        )
    );
    assert!(v.tagged_fields().is_empty());
    assert_eq!(validated.to_message(), owned);
    // A clone shares the bytes.
    assert_eq!(validated.clone().body().as_ptr(), validated.body().as_ptr());
}

/// Errors in the header name it; errors in the body count from the
/// payload's first byte, as the client's decoder counts them.
#[test]
fn a_payload_error_names_its_byte_in_the_payload() {
    let owned: DescribeProducersResponse =
        decode_exact(include_bytes!("../../../vectors/seed-example.bin"), 0).unwrap();
    let frame = response_frame_to_vec(5, &owned, 0);
    let payload = &frame[4..];
    let err = Validated::<DescribeProducersResponse>::from_response_payload(
        Bytes::copy_from_slice(&payload[..3]),
        0,
    )
    .unwrap_err();
    assert_eq!(err.path(), "Header.CorrelationId");
    // Header v1: correlation id and an empty tag section (5 bytes).
    let cut = Bytes::copy_from_slice(&payload[..45]);
    let err = Validated::<DescribeProducersResponse>::from_response_payload(cut, 0).unwrap_err();
    let body_err = decode_exact::<DescribeProducersResponse>(&payload[5..45], 0).unwrap_err();
    assert_eq!(err.offset(), body_err.offset() + 5);
    assert_eq!(err.path(), body_err.path());
    assert_eq!(err.kind(), body_err.kind());
}

/// ListTransactions and DescribeTransactions, the other hot responses:
/// names borrowed from the body, arrays iterated in place.
#[test]
fn transactions_read_through_their_views() {
    let listed = ListTransactionsResponse {
        unknown_state_filters: vec!["Bogus".into()],
        transaction_states: (0..3)
            .map(|i| ListedTransaction {
                transactional_id: format!("txn-{i}"),
                producer_id: 1000 + i,
                transaction_state: "Ongoing".into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    for version in 0..=2 {
        let bytes = encode_to_vec(&listed, version);
        let view = view_exact::<ListTransactionsResponse>(&bytes, version).unwrap();
        let ids: Vec<(&str, i64, &str)> = view
            .transaction_states()
            .iter()
            .map(|t| (t.transactional_id(), t.producer_id(), t.transaction_state()))
            .collect();
        assert_eq!(
            ids,
            [
                ("txn-0", 1000, "Ongoing"),
                ("txn-1", 1001, "Ongoing"),
                ("txn-2", 1002, "Ongoing")
            ]
        );
        assert_eq!(
            view.unknown_state_filters().iter().collect::<Vec<_>>(),
            ["Bogus"]
        );
        // The names point into the body.
        let name = view
            .transaction_states()
            .iter()
            .next()
            .unwrap()
            .transactional_id();
        assert!(bytes.as_ptr_range().contains(&name.as_ptr()));
    }
    let described = DescribeTransactionsResponse {
        transaction_states: vec![TransactionState {
            transactional_id: "payments".into(),
            transaction_state: "Ongoing".into(),
            transaction_timeout_ms: 60_000,
            transaction_start_time_ms: 1_764_400_000_000,
            producer_id: 7,
            producer_epoch: 3,
            topics: vec![TopicData {
                topic: "orders".into(),
                partitions: vec![0, 3, 5],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let bytes = encode_to_vec(&described, 0);
    let view = view_exact::<DescribeTransactionsResponse>(&bytes, 0).unwrap();
    let state = view.transaction_states().iter().next().unwrap();
    assert_eq!(state.transaction_start_time_ms(), 1_764_400_000_000);
    let topic = state.topics().iter().next().unwrap();
    assert_eq!(topic.topic(), "orders");
    assert_eq!(topic.partitions().iter().collect::<Vec<i32>>(), [0, 3, 5]);
    assert_eq!(view.into_owned(), described);
}

/// A declared field absent from a version reads as its schema default, as
/// the owned decoder gives it.
#[test]
fn fields_absent_from_a_version_read_as_their_default() {
    let m = ListTransactionsRequest {
        duration_filter: 5_000,
        transactional_id_pattern: Some("pay.*".into()),
        ..Default::default()
    };
    let v0 = encode_to_vec(&m, 0);
    let view = view_exact::<ListTransactionsRequest>(&v0, 0).unwrap();
    assert_eq!(
        (view.duration_filter(), view.transactional_id_pattern()),
        (-1, None)
    );
    let v2 = encode_to_vec(&m, 2);
    let view = view_exact::<ListTransactionsRequest>(&v2, 2).unwrap();
    assert_eq!(
        (view.duration_filter(), view.transactional_id_pattern()),
        (5_000, Some("pay.*"))
    );
}

/// Coordinator records through their views: the `__transaction_state`
/// keys and values Kafka 4.4.0 wrote (declared tagged fields among them),
/// whole, cut at every length and mutated, against `decode_record`.
#[test]
fn transaction_log_records_read_the_same_through_their_views() {
    use kdp_wire::coordinator::txn_log::{TransactionLogKey, TransactionLogValue};
    use kdp_wire::coordinator::{decode_record, CoordinatorRecord};
    use kdp_wire::view::{view_value, Viewable};

    fn check<R>(bytes: &[u8]) -> bool
    where
        R: CoordinatorRecord + Viewable + PartialEq + std::fmt::Debug,
    {
        let owned = decode_record::<R>(bytes);
        let Some((version, body)) = bytes.split_first_chunk::<2>() else {
            return false;
        };
        let version = i16::from_be_bytes(*version);
        if !(R::LOWEST_VERSION..=R::HIGHEST_VERSION).contains(&version) {
            return false;
        }
        let v = R::wire_version(version);
        match (owned, view_value::<R>(body, v)) {
            (Ok(owned), Ok(view)) => {
                assert_eq!(R::owned(view, v), owned.record, "{}", R::NAME);
                true
            }
            (Err(owned), Err(viewed)) => {
                assert_eq!(
                    (viewed.offset() + 2, viewed.path(), viewed.kind()),
                    (owned.offset(), owned.path(), owned.kind()),
                    "{}",
                    R::NAME
                );
                false
            }
            (owned, viewed) => panic!("{}: {owned:?} but {viewed:?}", R::NAME),
        }
    }

    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../../../vectors/txn-log/kafka-4.4.0.json")).unwrap();
    let mut g = Gen::new(5);
    let mut accepted = 0;
    for (list, value) in [("values", true), ("keys", false)] {
        for item in doc[list].as_array().unwrap() {
            let bytes = kdp_wire::hex::decode(item["hex"].as_str().unwrap()).unwrap();
            let check = if value {
                check::<TransactionLogValue>
            } else {
                check::<TransactionLogKey>
            };
            assert!(check(&bytes), "{list}: {}", item["hex"]);
            accepted += 1;
            for n in 2..bytes.len() {
                assert!(!check(&bytes[..n]), "{list} prefix {n}");
            }
            for _ in 0..64 {
                let mut copy = bytes.clone();
                mutate(&mut g, &mut copy);
                check(&copy);
            }
        }
    }
    assert!(accepted > 10, "{accepted} records");
}

/// Every field of a DescribeProducers body through the view's iterators,
/// as (topic, partition, error, producers) in order.
type Walked<'a> = Vec<(&'a str, i32, ErrorCode, Option<&'a str>, Vec<[i64; 6]>)>;

fn walk_producers(view: DescribeProducersResponseView<'_>) -> Walked<'_> {
    let mut out = Vec::new();
    for topic in view.topics() {
        for p in topic.partitions() {
            let producers = p
                .active_producers()
                .iter()
                .map(|s| {
                    [
                        s.producer_id(),
                        s.producer_epoch().into(),
                        s.last_sequence().into(),
                        s.last_timestamp(),
                        s.coordinator_epoch().into(),
                        s.current_txn_start_offset(),
                    ]
                })
                .collect();
            out.push((
                topic.name(),
                p.partition_index(),
                p.error_code(),
                p.error_message(),
                producers,
            ));
        }
    }
    out
}

fn walk_owned(m: &DescribeProducersResponse) -> Walked<'_> {
    let mut out = Vec::new();
    for topic in &m.topics {
        for p in &topic.partitions {
            let producers = p
                .active_producers
                .iter()
                .map(|s| {
                    [
                        s.producer_id,
                        s.producer_epoch.into(),
                        s.last_sequence.into(),
                        s.last_timestamp,
                        s.coordinator_epoch.into(),
                        s.current_txn_start_offset,
                    ]
                })
                .collect();
            out.push((
                topic.name.as_str(),
                p.partition_index,
                p.error_code,
                p.error_message.as_deref(),
                producers,
            ));
        }
    }
    out
}

/// A check that finds every producer with an empty tag section lets the
/// view skip a partition's producers by their count (a fixed stride); one
/// producer with tagged fields anywhere, in a partition the iterators must
/// skip past, must turn that off. Every field reads the decoder's value
/// either way, through `view_exact` and through `Validated`.
#[test]
fn a_producer_with_tagged_fields_turns_the_stride_off() {
    let producer = |i: i64| ProducerState {
        producer_id: 4_000_000 + i,
        producer_epoch: (i % 7) as i32,
        last_sequence: i as i32,
        last_timestamp: 1_764_400_000_000 + i,
        coordinator_epoch: 5,
        current_txn_start_offset: if i % 2 == 0 { i } else { -1 },
        ..Default::default()
    };
    let base = DescribeProducersResponse {
        topics: (0..3)
            .map(|t| TopicResponse {
                name: format!("orders-{t}"),
                partitions: (0..4)
                    .map(|p| PartitionResponse {
                        partition_index: p,
                        error_message: (p == 2).then(|| "not the leader".into()),
                        active_producers: (0..10)
                            .map(|i| producer(t * 100 + i64::from(p) * 10 + i))
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let tagged: TaggedFields = TaggedFields::new(vec![TaggedField {
        tag: 3,
        data: vec![1, 2, 3],
    }]);
    // None: every producer strided; then one tagged producer first, in the
    // middle and last of a partition, and in the last partition.
    for at in [
        None,
        Some((0, 0, 0)),
        Some((0, 1, 5)),
        Some((1, 2, 9)),
        Some((2, 3, 4)),
    ] {
        let mut m = base.clone();
        if let Some((t, p, i)) = at {
            m.topics[t].partitions[p].active_producers[i].unknown_tagged_fields = tagged.clone();
        }
        let bytes = encode_to_vec(&m, 0);
        let view = view_exact::<DescribeProducersResponse>(&bytes, 0).unwrap();
        assert_eq!(
            walk_producers(view),
            walk_owned(&m),
            "tagged producer at {at:?}"
        );
        assert_eq!(view.into_owned(), m, "tagged producer at {at:?}");
        let validated = Validated::<DescribeProducersResponse>::new(Bytes::from(bytes), 0).unwrap();
        assert_eq!(
            walk_producers(validated.view()),
            walk_owned(&m),
            "tagged producer at {at:?}"
        );
        if let Some((t, p, i)) = at {
            let tagged_view = validated
                .view()
                .topics()
                .iter()
                .nth(t)
                .unwrap()
                .partitions()
                .iter()
                .nth(p)
                .unwrap()
                .active_producers()
                .iter()
                .nth(i)
                .unwrap();
            assert_eq!(tagged_view.tagged_fields().get(3), Some(&[1u8, 2, 3][..]));
        }
    }
}

/// A struct's two adjacent int32 fields (ProducerEpoch and LastSequence)
/// are read through one big-endian int64: each half must keep its own
/// sign and value, at the extremes, in a strided body and in one where a
/// tagged producer sends every element the slow way; and the iterators
/// count what is left as they go (a strided array keeps no count).
#[test]
fn paired_int32_fields_read_each_half_with_its_sign() {
    let halves = [
        (i32::MIN, i32::MAX),
        (i32::MAX, i32::MIN),
        (-1, 0),
        (0, -1),
        (1, -2),
        (-2, 1),
        (0x0102_0304, -0x0506_0708),
        (0, 0),
    ];
    let producers: Vec<ProducerState> = halves
        .iter()
        .enumerate()
        .map(|(i, &(epoch, sequence))| ProducerState {
            producer_id: -1 - i as i64,
            producer_epoch: epoch,
            last_sequence: sequence,
            last_timestamp: i64::MIN + i as i64,
            coordinator_epoch: epoch.wrapping_add(1).wrapping_neg(),
            current_txn_start_offset: i64::MAX - i as i64,
            ..Default::default()
        })
        .collect();
    for tagged_at in [None, Some(0), Some(3), Some(7)] {
        let mut m = DescribeProducersResponse {
            topics: vec![TopicResponse {
                name: "orders".into(),
                partitions: vec![PartitionResponse {
                    active_producers: producers.clone(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        if let Some(i) = tagged_at {
            m.topics[0].partitions[0].active_producers[i].unknown_tagged_fields =
                TaggedFields::new(vec![TaggedField {
                    tag: 7,
                    data: vec![9],
                }]);
        }
        let bytes = encode_to_vec(&m, 0);
        let view = view_exact::<DescribeProducersResponse>(&bytes, 0).unwrap();
        assert_eq!(
            walk_producers(view),
            walk_owned(&m),
            "tagged at {tagged_at:?}"
        );
        let partition = view
            .topics()
            .iter()
            .next()
            .unwrap()
            .partitions()
            .iter()
            .next()
            .unwrap();
        let mut it = partition.active_producers().iter();
        for (i, &(epoch, sequence)) in halves.iter().enumerate() {
            assert_eq!(it.len(), halves.len() - i, "tagged at {tagged_at:?}");
            let s = it.next().unwrap();
            assert_eq!(
                (s.producer_epoch(), s.last_sequence()),
                (epoch, sequence),
                "producer {i}, tagged at {tagged_at:?}"
            );
            assert_eq!(s.coordinator_epoch(), epoch.wrapping_add(1).wrapping_neg());
        }
        assert_eq!(it.len(), 0);
        assert!(it.next().is_none());
    }
}

/// A topic name that is not ASCII leaves the fast check for the declared
/// one and still reads, through the view, as the decoder reads it.
#[test]
fn a_non_ascii_topic_name_reads_as_the_decoder_reads_it() {
    let m = DescribeProducersResponse {
        topics: vec![TopicResponse {
            name: "commandes-été-☃".into(),
            partitions: vec![PartitionResponse {
                active_producers: vec![ProducerState {
                    producer_id: 7,
                    producer_epoch: -3,
                    last_sequence: 9,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let bytes = encode_to_vec(&m, 0);
    assert!(!DescribeProducersResponse::accepts_fast(&bytes, 0));
    let view = view_exact::<DescribeProducersResponse>(&bytes, 0).unwrap();
    assert_eq!(walk_producers(view), walk_owned(&m));
    assert_eq!(
        view.into_owned(),
        decode_exact::<DescribeProducersResponse>(&bytes, 0).unwrap()
    );
}
