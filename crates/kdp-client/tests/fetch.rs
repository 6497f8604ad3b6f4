//! `kdp_client::fetch` against kdp-test-support's in-memory cluster (the
//! mock's own Fetch and ListOffsets): reading from an offset, the last N
//! batches walked back in chunks, byte limits that cut batches, a leader
//! that moves between lookup and Fetch, a follower read, and refusals
//! typed with the ACL they need.

use kdp_client::fetch::{read_batches, FetchSettings, ReadError, ReadFrom, ReadRequest};
use kdp_client::TimeBound;
use kdp_test_support::{elect, StallCluster};
use kdp_wire::records::DEFAULT_MAX_DECOMPRESSED;
use kdp_wire::{api, ErrorCode};

/// The default bound: 30 s from now, Kafka's request timeout and retries.
fn bound() -> TimeBound {
    TimeBound::after(std::time::Duration::from_secs(30))
}

/// Ten batches of 20 records of producer 4000 (every codec in turn), a
/// transaction and its commit marker: offsets 0-199, then 200-204, 205.
const CLUSTER: &str = r#"{
    "brokers": [{"id": 1}, {"id": 2}],
    "topics": [{"name": "events", "partitions": [
        {"partition": 0, "leader": 1, "replicas": [1, 2], "leader_epoch": 3, "batches": [
            {"producer_id": 4000, "base_sequence": 0, "records": 20},
            {"producer_id": 4000, "base_sequence": 20, "records": 20, "compression": "gzip"},
            {"producer_id": 4000, "base_sequence": 40, "records": 20, "compression": "snappy"},
            {"producer_id": 4000, "base_sequence": 60, "records": 20, "compression": "lz4"},
            {"producer_id": 4000, "base_sequence": 80, "records": 20, "compression": "zstd"},
            {"producer_id": 4000, "base_sequence": 100, "records": 20},
            {"producer_id": 4000, "base_sequence": 120, "records": 20},
            {"producer_id": 4000, "base_sequence": 140, "records": 20},
            {"producer_id": 4000, "base_sequence": 160, "records": 20},
            {"producer_id": 4000, "base_sequence": 180, "records": 20},
            {"producer_id": 5000, "producer_epoch": 2, "base_sequence": 0, "records": 5, "transactional": true},
            {"producer_id": 5000, "producer_epoch": 2, "control": "commit", "coordinator_epoch": 7}
        ]}
    ]}],
    "acls": {"principals": {}}
}"#;

fn request(from: ReadFrom) -> ReadRequest {
    ReadRequest {
        partition: ("events".into(), 0),
        from,
        max_batches: None,
        broker_id: None,
        settings: FetchSettings::default(),
    }
}

fn bases(read: &kdp_client::fetch::PartitionRead) -> Vec<i64> {
    read.batches
        .iter()
        .map(|b| b.header().base_offset)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn reads_every_batch_from_an_offset() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    let mut seen = Vec::new();
    let read = read_batches(&client, &request(ReadFrom::Offset(0)), &bound(), |p| {
        seen.push(p)
    })
    .await
    .unwrap();
    assert_eq!(
        bases(&read),
        [0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 205]
    );
    assert_eq!((read.log_start_offset, read.high_watermark), (0, 206));
    assert!(read.reaches_log_start && read.unreadable.is_empty());
    assert_eq!(read.broker, Some(1));
    for b in &read.batches {
        let batch = b.batch().unwrap();
        assert!(batch.crc_valid());
        assert_eq!(
            batch.records(DEFAULT_MAX_DECOMPRESSED).unwrap().len() as i32,
            b.header().record_count
        );
    }
    let marker = read.batches.last().unwrap().batch().unwrap();
    let control = marker.control(DEFAULT_MAX_DECOMPRESSED).unwrap().unwrap();
    assert_eq!(control.marker.unwrap().coordinator_epoch, 7);
    assert!(!seen.is_empty());

    // From the middle of a batch: that whole batch first.
    let read = read_batches(&client, &request(ReadFrom::Offset(45)), &bound(), |_| {})
        .await
        .unwrap();
    assert_eq!(bases(&read)[..2], [40, 60]);
    assert!(!read.reaches_log_start);
}

#[tokio::test(start_paused = true)]
async fn the_last_batches_are_found_by_walking_back() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    let last = |n| {
        let client = client.clone();
        async move { read_batches(&client, &request(ReadFrom::Last(n)), &bound(), |_| {}).await }
    };
    // Three batches span 26 offsets: the first window (3 offsets) holds
    // two; the next, widened from what was seen, the third.
    let read = last(3).await.unwrap();
    assert_eq!(bases(&read), [180, 200, 205]);
    assert!(!read.reaches_log_start);
    let read = last(7).await.unwrap();
    assert_eq!(bases(&read), [100, 120, 140, 160, 180, 200, 205]);
    let read = last(100).await.unwrap();
    assert_eq!(bases(&read).len(), 12);
    assert!(read.reaches_log_start);
    assert!(last(0).await.unwrap().batches.is_empty());
}

#[tokio::test(start_paused = true)]
async fn small_byte_limits_cut_batches_and_the_read_goes_on() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    let mut req = request(ReadFrom::Offset(0));
    // Smaller than any batch: the first batch of each answer comes whole
    // (KIP-74), the rest is cut.
    req.settings.partition_max_bytes = 100;
    let read = read_batches(&client, &req, &bound(), |_| {}).await.unwrap();
    assert_eq!(bases(&read).len(), 12);
    assert_eq!(read.fetches, 12);
    req.max_batches = Some(4);
    let read = read_batches(&client, &req, &bound(), |_| {}).await.unwrap();
    assert_eq!(bases(&read), [0, 20, 40, 60]);
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_moves_is_followed() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    // After broker 1's first answer, broker 2 takes over (epoch 3 -> 4):
    // broker 1, now a follower, refuses the old epoch (a follower would
    // otherwise serve a v11+ consumer), and the read goes to broker 2.
    cluster.after_answer(api::FETCH, |c, _| {
        elect(c, "events", 0, 2);
    });
    let mut req = request(ReadFrom::Offset(0));
    req.settings.partition_max_bytes = 2000;
    let read = read_batches(&client, &req, &bound(), |_| {}).await.unwrap();
    assert_eq!(bases(&read).len(), 12);
    let asked = cluster.asked_by(api::FETCH);
    assert_eq!(asked[..2], [1, 1], "the second fetch is fenced");
    assert!(asked[2..].iter().all(|&b| b == 2), "{asked:?}");
    assert_eq!(read.broker, Some(2));
}

#[tokio::test(start_paused = true)]
async fn a_follower_can_be_read() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    let mut req = request(ReadFrom::Last(2));
    req.broker_id = Some(2);
    let read = read_batches(&client, &req, &bound(), |_| {}).await.unwrap();
    assert_eq!((bases(&read), read.broker), (vec![200, 205], Some(2)));
    assert_eq!(
        cluster.asked_by(api::FETCH),
        vec![2; cluster.asked(api::FETCH)]
    );
}

#[tokio::test(start_paused = true)]
async fn refusals_are_typed_and_name_the_acl() {
    let denied = CLUSTER.replace(
        r#""acls": {"principals": {}}"#,
        r#""acls": {"topic_read_deny": ["events"]}"#,
    );
    let cluster = StallCluster::from_json(&denied).unwrap();
    let client = cluster.client().await;
    let err = read_batches(&client, &request(ReadFrom::Offset(0)), &bound(), |_| {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::TOPIC_AUTHORIZATION_FAILED);
    assert!(matches!(err, ReadError::Fetch { offset: 0, .. }), "{err}");
    let advice = err.advice().unwrap();
    assert!(
        advice.contains("READ on topic events") && advice.contains("--operation Read"),
        "{advice}"
    );

    let denied = CLUSTER.replace(
        r#""acls": {"principals": {}}"#,
        r#""acls": {"topic_describe_deny": ["events"]}"#,
    );
    let cluster = StallCluster::from_json(&denied).unwrap();
    let client = cluster.client().await;
    let err = read_batches(&client, &request(ReadFrom::Last(1)), &bound(), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ReadError::Offsets { .. }), "{err}");
    assert!(err.advice().unwrap().contains("DESCRIBE on topic events"));

    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = cluster.client().await;
    let err = read_batches(&client, &request(ReadFrom::Offset(500)), &bound(), |_| {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::OFFSET_OUT_OF_RANGE);
    assert!(err.to_string().contains("high watermark 206"), "{err}");
}
