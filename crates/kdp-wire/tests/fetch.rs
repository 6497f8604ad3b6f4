//! Fetch at the bytes where its versions differ: v4 (the oldest Kafka 4
//! serves), v12 (flexible) and v13 (topic ids), and a response whose
//! records are read as batches, partial tail included.

use kdp_wire::messages::*;
use kdp_wire::records::{Attributes, Batches, Compression, Record, RecordBatch, TimestampType};
use kdp_wire::{decode_exact, encode_to_vec, ErrorCode, Uuid};

fn request(topic: &str, id: Uuid) -> FetchRequest {
    FetchRequest {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 52_428_800,
        isolation_level: READ_UNCOMMITTED,
        topics: vec![FetchTopic {
            topic: topic.into(),
            topic_id: id,
            partitions: vec![FetchPartition {
                partition: 2,
                fetch_offset: 100,
                partition_max_bytes: 1_048_576,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn v4_request_byte_by_byte() {
    let bytes = encode_to_vec(&request("t", Uuid::default()), 4);
    let mut expected = Vec::new();
    expected.extend((-1i32).to_be_bytes()); // ReplicaId
    expected.extend(500i32.to_be_bytes()); // MaxWaitMs
    expected.extend(1i32.to_be_bytes()); // MinBytes
    expected.extend(52_428_800i32.to_be_bytes()); // MaxBytes
    expected.push(0); // IsolationLevel
    expected.extend(1i32.to_be_bytes()); // one topic
    expected.extend([0, 1, b't']);
    expected.extend(1i32.to_be_bytes()); // one partition
    expected.extend(2i32.to_be_bytes());
    expected.extend(100i64.to_be_bytes());
    expected.extend(1_048_576i32.to_be_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(
        decode_exact::<FetchRequest>(&bytes, 4).unwrap(),
        request("t", Uuid::default())
    );
}

#[test]
fn v13_names_topics_by_id_and_v15_drops_replica_id() {
    let id = Uuid([9; 16]);
    let v12 = encode_to_vec(&request("t", id), 12);
    let v13 = encode_to_vec(&request("t", id), 13);
    // v12: flexible, the name; v13: the id in its place.
    assert!(v12.windows(2).any(|w| w == [2, b't']));
    assert!(!v12.windows(16).any(|w| w == [9; 16]));
    assert!(v13.windows(16).any(|w| w == [9; 16]));
    let back: FetchRequest = decode_exact(&v13, 13).unwrap();
    assert_eq!(back.topics[0].topic_id, id);
    assert_eq!(back.topics[0].topic, "", "no name on the wire from v13");
    // ReplicaId is gone from v15 (ReplicaState is a tagged field there).
    let v15 = encode_to_vec(&request("t", id), 15);
    assert_eq!(v15.len() + 4, v13.len());
    assert_eq!(&v15[..4], &500i32.to_be_bytes());
}

#[test]
fn a_response_carries_batches_and_a_partial_tail() {
    let batch = |base: i64| {
        RecordBatch {
            base_offset: base,
            attributes: Attributes::new(
                Compression::Snappy,
                TimestampType::CreateTime,
                false,
                false,
                false,
            ),
            producer_id: 5,
            base_sequence: base as i32,
            records: vec![Record::default()],
            ..RecordBatch::default()
        }
        .encode()
        .unwrap()
    };
    let mut records = batch(100);
    let next = batch(101);
    records.extend_from_slice(&next[..30]);
    let response = FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic_id: Uuid([9; 16]),
            partitions: vec![FetchPartitionData {
                partition_index: 2,
                error_code: ErrorCode::NONE,
                high_watermark: 102,
                last_stable_offset: 102,
                log_start_offset: 0,
                records: Some(records.clone()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    for version in [12, 13, 16, 17, 18] {
        let bytes = encode_to_vec(&response, version);
        let back: FetchResponse = decode_exact(&bytes, version).unwrap();
        let mut expected = response.clone();
        if version <= 12 {
            expected.responses[0].topic_id = Uuid::default();
        }
        assert_eq!(back, expected, "v{version}");
        let data = back.responses[0].partitions[0].records.as_deref().unwrap();
        let mut batches = Batches::new(data);
        let offsets: Vec<i64> = (&mut batches)
            .map(|b| b.unwrap().header().base_offset)
            .collect();
        assert_eq!(offsets, [100]);
        let partial = batches.partial().unwrap();
        assert_eq!((partial.available, partial.base_offset), (30, Some(101)));
    }
    // v4: no session fields; aborted transactions null by default; v11
    // adds PreferredReadReplica.
    let v4 = encode_to_vec(&FetchResponse::default(), 4);
    assert_eq!(v4, [0, 0, 0, 0, 0, 0, 0, 0]);
    let one = FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: "t".into(),
            partitions: vec![FetchPartitionData::default()],
            ..Default::default()
        }],
        ..Default::default()
    };
    let v10 = encode_to_vec(&one, 10);
    let v11 = encode_to_vec(&one, 11);
    assert_eq!(v11.len(), v10.len() + 4);
    // Null records and null aborted transactions, v4: -1 and -1.
    let v4 = encode_to_vec(&one, 4);
    assert_eq!(&v4[v4.len() - 8..], &[0xff; 8]);
}
