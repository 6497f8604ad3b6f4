//! Runs the fuzz targets' checks (`kdp_wire::fuzz_checks`, the same code
//! the cargo-fuzz targets in `fuzz/` call) over every file of every corpus
//! directory, so that what fuzzing found stays checked in ordinary tests.
//!
//! `KDP_WRITE_CORPUS=1 cargo test -p kdp-wire --test fuzz_corpus seeds_are_accepted`
//! regenerates the hand-made seeds, `seed-*` files, from which fuzzing started.

use std::fs;
use std::path::{Path, PathBuf};

use kdp_wire::api;
use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::fuzz_checks;
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
use kdp_wire::ErrorCode;
use kdp_wire::{encode_to_vec, RequestHeader, TaggedFields};

type Check = fn(&[u8]) -> bool;

const TARGETS: &[(&str, Check)] = &[
    (
        "describe_producers_request",
        fuzz_checks::describe_producers_request,
    ),
    (
        "describe_producers_response",
        fuzz_checks::describe_producers_response,
    ),
    ("request_frame", fuzz_checks::request_frame),
    ("api_versions_metadata", fuzz_checks::api_versions_metadata),
    ("every_api", fuzz_checks::every_api),
    ("every_view", fuzz_checks::every_view),
    ("txn_log", fuzz_checks::txn_log),
    ("fetch", fuzz_checks::fetch),
    ("record_batches", fuzz_checks::record_batches),
];

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn every_corpus_file_passes_its_check() {
    for &(target, check) in TARGETS {
        let dir = corpus_dir(target);
        let mut files = 0;
        let mut accepted = 0;
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            // Dot files are a writer's temporaries (see write_seed_corpus).
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if !path.is_file() || hidden {
                continue;
            }
            let data = fs::read(&path).unwrap();
            let ok = std::panic::catch_unwind(|| check(&data))
                .unwrap_or_else(|_| panic!("{target}: check failed on {}", path.display()));
            files += 1;
            accepted += usize::from(ok);
            let name = path.file_name().unwrap().to_string_lossy();
            if name.starts_with("seed-") {
                assert!(ok, "{target}: seed {name} is not accepted");
            }
        }
        assert!(files > 0, "{target}: empty corpus");
        assert!(accepted > 0, "{target}: no file accepted");
        println!("{target}: {files} files, {accepted} accepted");
    }
}

#[test]
fn the_vectors_pass_their_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bin") {
            let data = fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            let check = if name.contains("request") {
                fuzz_checks::describe_producers_request
            } else {
                fuzz_checks::describe_producers_response
            };
            assert!(check(&data), "{}", path.display());
        }
    }
}

// ---------------------------------------------------------------------------
// Seeds

fn tags(pairs: &[(u32, &[u8])]) -> TaggedFields {
    let mut t = TaggedFields::default();
    for &(tag, data) in pairs {
        t.insert(tag, data.to_vec());
    }
    t
}

fn producer(id: i64, open_txn: bool) -> ProducerState {
    ProducerState {
        producer_id: id,
        producer_epoch: 3,
        last_sequence: 1_204,
        last_timestamp: 1_764_400_000_000,
        coordinator_epoch: 11,
        current_txn_start_offset: if open_txn { 150_382 } else { -1 },
        unknown_tagged_fields: TaggedFields::default(),
    }
}

fn seed_responses() -> Vec<(&'static str, DescribeProducersResponse)> {
    let ok = |index, producers| PartitionResponse {
        partition_index: index,
        error_code: ErrorCode::NONE,
        error_message: None,
        active_producers: producers,
        unknown_tagged_fields: TaggedFields::default(),
    };
    vec![
        ("empty", DescribeProducersResponse::default()),
        (
            "three-producers",
            DescribeProducersResponse {
                throttle_time_ms: 0,
                topics: vec![TopicResponse {
                    name: "payments".into(),
                    partitions: vec![ok(
                        0,
                        vec![
                            producer(1_000, true),
                            producer(1_001, false),
                            ProducerState::default(),
                        ],
                    )],
                    unknown_tagged_fields: TaggedFields::default(),
                }],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ),
        (
            "errors",
            DescribeProducersResponse {
                throttle_time_ms: 250,
                topics: vec![
                    TopicResponse {
                        name: "secret".into(),
                        partitions: vec![PartitionResponse {
                            partition_index: 0,
                            error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                            error_message: Some("Topic authorization failed.".into()),
                            active_producers: vec![],
                            unknown_tagged_fields: TaggedFields::default(),
                        }],
                        unknown_tagged_fields: TaggedFields::default(),
                    },
                    TopicResponse {
                        name: "ørders-🦀".into(),
                        partitions: vec![
                            PartitionResponse {
                                partition_index: 7,
                                error_code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                                error_message: Some(String::new()),
                                active_producers: vec![],
                                unknown_tagged_fields: TaggedFields::default(),
                            },
                            ok(8, vec![producer(i64::MAX, true)]),
                        ],
                        unknown_tagged_fields: TaggedFields::default(),
                    },
                ],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ),
        (
            "tagged",
            DescribeProducersResponse {
                throttle_time_ms: -1,
                topics: vec![TopicResponse {
                    name: "t".into(),
                    partitions: vec![PartitionResponse {
                        unknown_tagged_fields: tags(&[(0, b"p")]),
                        ..ok(
                            1,
                            vec![ProducerState {
                                unknown_tagged_fields: tags(&[(1, b""), (200, b"xyz")]),
                                ..producer(5, false)
                            }],
                        )
                    }],
                    unknown_tagged_fields: tags(&[(2, &[0xff; 130])]),
                }],
                unknown_tagged_fields: tags(&[(0, b""), (u32::MAX, b"!")]),
            },
        ),
    ]
}

fn seed_requests() -> Vec<(&'static str, DescribeProducersRequest)> {
    vec![
        ("empty", DescribeProducersRequest::default()),
        (
            "one-partition",
            DescribeProducersRequest {
                topics: vec![TopicRequest {
                    name: "orders".into(),
                    partition_indexes: vec![3],
                    unknown_tagged_fields: TaggedFields::default(),
                }],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ),
        (
            "many",
            DescribeProducersRequest {
                topics: vec![
                    TopicRequest {
                        name: "a".repeat(130),
                        partition_indexes: (0..40).collect(),
                        unknown_tagged_fields: tags(&[(4, b"abc")]),
                    },
                    TopicRequest {
                        name: "ünïcode".into(),
                        partition_indexes: vec![i32::MIN, -1, i32::MAX],
                        unknown_tagged_fields: TaggedFields::default(),
                    },
                ],
                unknown_tagged_fields: tags(&[(0, b"\0")]),
            },
        ),
    ]
}

fn header(client_id: Option<&str>, tagged: TaggedFields) -> RequestHeader {
    RequestHeader {
        request_api_key: api::DESCRIBE_PRODUCERS,
        request_api_version: 0,
        correlation_id: 42,
        client_id: client_id.map(str::to_owned),
        unknown_tagged_fields: tagged,
    }
}

/// A frame of another API, its body opaque: header of version `hv`.
fn other_frame(key: i16, version: i16, hv: i16, body: &[u8]) -> Vec<u8> {
    let h = RequestHeader {
        request_api_key: key,
        request_api_version: version,
        correlation_id: 1,
        client_id: Some("kdp".into()),
        unknown_tagged_fields: TaggedFields::default(),
    };
    let mut out = Vec::new();
    out.extend_from_slice(&((h.encoded_len(hv) + body.len()) as i32).to_be_bytes());
    h.encode(&mut out, hv);
    out.extend_from_slice(body);
    out
}

fn seed_frames() -> Vec<(&'static str, Vec<u8>)> {
    let reqs = seed_requests();
    let mut out = vec![
        (
            "dp-null-client",
            request_frame_to_vec(&header(None, TaggedFields::default()), &reqs[0].1),
        ),
        (
            "dp-client",
            request_frame_to_vec(
                &header(Some("kdp-cli"), TaggedFields::default()),
                &reqs[1].1,
            ),
        ),
        (
            "dp-tagged-header",
            request_frame_to_vec(&header(Some(""), tags(&[(0, b"rack")])), &reqs[2].1),
        ),
    ];
    // ApiVersions v3 (flexible: header v2) with ClientSoftwareName/Version.
    out.push((
        "api-versions-v3",
        other_frame(api::API_VERSIONS, 3, 2, b"\x04kdp\x060.1.0\x00"),
    ));
    // Metadata v8 (not flexible: header v1), all topics.
    out.push((
        "metadata-v8",
        other_frame(api::METADATA, 8, 1, b"\xff\xff\xff\xff\x01\x00\x00"),
    ));
    out
}

/// Seeds for `api_versions_metadata`: a request and a response of every
/// version, each behind the selector byte the check reads.
fn seed_api_versions_metadata() -> Vec<(String, Vec<u8>)> {
    use kdp_wire::messages::*;
    use kdp_wire::Uuid;
    let mut out = Vec::new();
    let mut push = |name: String, selector: u8, body: Vec<u8>| {
        let mut data = vec![selector];
        data.extend(body);
        out.push((name, data));
    };
    for v in 0..=4i16 {
        let req = ApiVersionsRequest {
            client_software_name: "kdp".into(),
            client_software_version: "0.1.0".into(),
            ..Default::default()
        };
        push(
            format!("api-versions-request-v{v}"),
            v as u8,
            encode_to_vec(&req, v),
        );
        let resp = ApiVersionsResponse {
            api_keys: vec![
                ApiVersion::new(kdp_wire::api::METADATA, 4, 12),
                ApiVersion::new(kdp_wire::api::DESCRIBE_PRODUCERS, 0, 0),
            ],
            throttle_time_ms: if v >= 1 { 5 } else { 0 },
            ..Default::default()
        };
        push(
            format!("api-versions-response-v{v}"),
            14 + v as u8,
            encode_to_vec(&resp, v),
        );
    }
    for v in 4..=12i16 {
        let index = 5 + (v - 4) as u8;
        let req = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some("orders".into()),
                ..Default::default()
            }]),
            ..Default::default()
        };
        push(
            format!("metadata-request-v{v}"),
            index,
            encode_to_vec(&req, v),
        );
        let resp = MetadataResponse {
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "127.0.0.1".into(),
                port: 9092,
                rack: Some("a".into()),
                ..Default::default()
            }],
            cluster_id: Some("kdp".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("orders".into()),
                topic_id: if v >= 10 { Uuid([9; 16]) } else { Uuid::ZERO },
                topic_authorized_operations: if v >= 8 { 0 } else { i32::MIN },
                partitions: vec![MetadataResponsePartition {
                    partition_index: 3,
                    leader_id: 1,
                    leader_epoch: if v >= 7 { 2 } else { -1 },
                    replica_nodes: vec![1, 2],
                    isr_nodes: vec![1],
                    offline_replicas: if v >= 5 { vec![2] } else { vec![] },
                    ..Default::default()
                }],
                ..Default::default()
            }],
            cluster_authorized_operations: if (8..=10).contains(&v) { 0 } else { i32::MIN },
            ..Default::default()
        };
        push(
            format!("metadata-response-v{v}"),
            14 + index,
            encode_to_vec(&resp, v),
        );
    }
    out
}

/// A default request and response of every API of the registry, at every
/// version, behind `every_api`'s two selector bytes.
macro_rules! seed_every_api {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        fn seed_every_api() -> Vec<(String, Vec<u8>)> {
            use kdp_wire::Message;
            let mut out = Vec::new();
            let mut index = 0u8;
            $({
                type Req = kdp_wire::messages::$req;
                type Resp = kdp_wire::messages::$resp;
                for version in Req::LOWEST_VERSION..=Req::HIGHEST_VERSION {
                    let offset = u8::try_from(version - Req::LOWEST_VERSION).unwrap();
                    for (kind, body) in [
                        ("request", encode_to_vec(&Req::default(), version)),
                        ("response", encode_to_vec(&Resp::default(), version)),
                    ] {
                        let mut data = vec![index, (offset << 1) | u8::from(kind == "response")];
                        data.extend(body);
                        out.push((format!("{}-v{version}-{kind}", stringify!($name)), data));
                    }
                }
                index += 1;
            })*
            let _ = index;
            out
        }
    };
}

kdp_wire::for_each_api!(seed_every_api);

/// Seeds for `every_view` (the same input as `every_api`): the default
/// messages of every API, and the DescribeProducers responses (golden
/// vectors and hand-made seeds, with errors and tagged fields) behind
/// DescribeProducers' response selector.
fn seed_every_view() -> Vec<(String, Vec<u8>)> {
    let mut out = seed_every_api();
    let index = kdp_wire::registry::DECLARED
        .iter()
        .position(|a| a.key == api::DESCRIBE_PRODUCERS)
        .and_then(|i| u8::try_from(i).ok())
        .unwrap();
    let mut push = |name: String, body: &[u8]| {
        let mut data = vec![index, 1];
        data.extend_from_slice(body);
        out.push((name, data));
    };
    for (name, m) in seed_responses() {
        push(format!("DescribeProducers-{name}"), &encode_to_vec(&m, 0));
    }
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    for entry in fs::read_dir(vectors).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "bin") && !stem.contains("request") {
            push(format!("vector-{stem}"), &fs::read(&path).unwrap());
        }
    }
    out
}

/// Batches of every codec, a control batch, an empty one, and blobs with
/// several batches and a partial tail.
fn seed_record_batches() -> Vec<(String, Vec<u8>)> {
    use kdp_wire::records::{
        Attributes, Compression, ControlRecord, Record, RecordBatch, RecordHeader, TimestampType,
    };
    use std::borrow::Cow;
    let batch = |codec: Compression, base: i64, control: bool| {
        let records = if control {
            vec![ControlRecord::marker_record(true, 4)]
        } else {
            (0..3)
                .map(|i| Record {
                    timestamp_delta: i64::from(i) * 7,
                    offset_delta: i,
                    key: (i != 1).then(|| Cow::Owned(format!("key-{i}").into_bytes())),
                    value: Some(Cow::Owned(vec![b'v'; 40])),
                    headers: if i == 2 {
                        vec![RecordHeader {
                            key: Cow::Borrowed(b"h"),
                            value: None,
                        }]
                    } else {
                        Vec::new()
                    },
                    ..Record::default()
                })
                .collect()
        };
        RecordBatch {
            base_offset: base,
            partition_leader_epoch: 3,
            attributes: Attributes::new(codec, TimestampType::CreateTime, control, control, false),
            last_offset_delta: records.len() as i32 - 1,
            base_timestamp: 1_764_400_000_000,
            max_timestamp: 1_764_400_000_014,
            producer_id: 1000,
            producer_epoch: 2,
            base_sequence: if control { -1 } else { 10 },
            records,
        }
        .encode()
        .unwrap()
    };
    let mut out = Vec::new();
    let mut blob = Vec::new();
    for (i, codec) in Compression::ALL.into_iter().enumerate() {
        let one = batch(codec, 3 * i as i64, false);
        blob.extend_from_slice(&one);
        out.push((format!("batch-{codec}"), one));
    }
    out.push(("control-commit".into(), batch(Compression::None, 20, true)));
    let empty = RecordBatch {
        last_offset_delta: 4,
        producer_id: 7,
        ..RecordBatch::default()
    };
    out.push(("empty".into(), empty.encode().unwrap()));
    let cut = batch(Compression::None, 30, false);
    let mut partial = blob.clone();
    partial.extend_from_slice(&cut[..cut.len() / 2]);
    out.push(("every-codec".into(), blob));
    out.push(("partial-tail".into(), partial));
    out
}

/// A default request and response of every Fetch version, and responses
/// carrying the record batch seeds.
fn seed_fetch() -> Vec<(String, Vec<u8>)> {
    use kdp_wire::messages::{
        AbortedTransaction, FetchPartition, FetchPartitionData, FetchRequest, FetchResponse,
        FetchTopic, FetchableTopicResponse,
    };
    use kdp_wire::Message;
    let mut out = Vec::new();
    let records: Vec<u8> = seed_record_batches()
        .into_iter()
        .find(|(name, _)| name == "partial-tail")
        .map(|(_, b)| b)
        .unwrap();
    for version in FetchRequest::LOWEST_VERSION..=FetchRequest::HIGHEST_VERSION {
        let offset = u8::try_from(version - FetchRequest::LOWEST_VERSION).unwrap();
        let request = FetchRequest {
            max_wait_ms: 500,
            min_bytes: 1,
            topics: vec![FetchTopic {
                topic: if version <= 12 {
                    "orders".into()
                } else {
                    String::new()
                },
                topic_id: kdp_wire::Uuid([7; 16]),
                partitions: vec![FetchPartition {
                    partition: 3,
                    fetch_offset: 100,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let response = FetchResponse {
            responses: vec![FetchableTopicResponse {
                topic: if version <= 12 {
                    "orders".into()
                } else {
                    String::new()
                },
                topic_id: kdp_wire::Uuid([7; 16]),
                partitions: vec![FetchPartitionData {
                    partition_index: 3,
                    high_watermark: 200,
                    last_stable_offset: 150,
                    log_start_offset: 0,
                    aborted_transactions: Some(vec![AbortedTransaction {
                        producer_id: 1000,
                        first_offset: 12,
                        ..Default::default()
                    }]),
                    records: Some(records.clone()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        for (kind, body, flag) in [
            ("request", encode_to_vec(&request, version), 0),
            ("response", encode_to_vec(&response, version), 1),
            (
                "empty-response",
                encode_to_vec(&FetchResponse::default(), version),
                1,
            ),
        ] {
            let mut data = vec![(offset << 1) | flag];
            data.extend(body);
            out.push((format!("v{version}-{kind}"), data));
        }
    }
    out
}

/// With `KDP_WRITE_CORPUS=1`, `seeds_are_accepted` also writes the seed
/// files into fuzz/corpus (before `cargo fuzz`; cmin may drop some later).
fn write_seed_corpus() {
    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = corpus_dir(target);
        fs::create_dir_all(&dir).unwrap();
        // Through a rename: the corpus test may be reading the directory.
        let tmp = dir.join(format!(".seed-{name}.tmp"));
        fs::write(&tmp, data).unwrap();
        fs::rename(&tmp, dir.join(format!("seed-{name}"))).unwrap();
    };
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    for entry in fs::read_dir(vectors).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bin") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let target = if stem.contains("request") {
                "describe_producers_request"
            } else {
                "describe_producers_response"
            };
            write(target, &format!("vector-{stem}"), &fs::read(&path).unwrap());
        }
    }
    for (name, m) in seed_responses() {
        write("describe_producers_response", name, &encode_to_vec(&m, 0));
    }
    for (name, m) in seed_requests() {
        write("describe_producers_request", name, &encode_to_vec(&m, 0));
    }
    for (name, f) in seed_frames() {
        write("request_frame", name, &f);
    }
    for (name, data) in seed_api_versions_metadata() {
        write("api_versions_metadata", &name, &data);
    }
    for (name, data) in seed_every_api() {
        write("every_api", &name, &data);
    }
    for (name, data) in seed_every_view() {
        write("every_view", &name, &data);
    }
    for (name, data) in seed_txn_log() {
        write("txn_log", &name, &data);
    }
    for (name, data) in seed_fetch() {
        write("fetch", &name, &data);
    }
    for (name, data) in seed_record_batches() {
        write("record_batches", &name, &data);
    }
}

/// Seeds for `txn_log`: the keys and values Kafka 4.4.0's own classes made
/// (vectors/txn-log), behind the selector byte (0 key, 1 value).
fn seed_txn_log() -> Vec<(String, Vec<u8>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/txn-log/kafka-4.4.0.json");
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for (selector, list, name_field) in [(1u8, "values", "name"), (0, "keys", "id")] {
        for (i, item) in doc[list].as_array().unwrap().iter().enumerate() {
            let mut data = vec![selector];
            data.extend(kdp_wire::hex::decode(item["hex"].as_str().unwrap()).unwrap());
            let label = item[name_field].as_str().unwrap_or_default();
            let label: String = label
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(24)
                .collect();
            out.push((format!("{list}-{i}-{label}"), data));
        }
    }
    out
}

#[test]
fn seeds_are_accepted() {
    if std::env::var_os("KDP_WRITE_CORPUS").is_some() {
        write_seed_corpus();
    }
    for (name, data) in seed_txn_log() {
        assert!(fuzz_checks::txn_log(&data), "txn_log {name}");
    }
    for (name, m) in seed_responses() {
        assert!(
            fuzz_checks::describe_producers_response(&encode_to_vec(&m, 0)),
            "{name}"
        );
    }
    for (name, m) in seed_requests() {
        assert!(
            fuzz_checks::describe_producers_request(&encode_to_vec(&m, 0)),
            "{name}"
        );
    }
    for (name, data) in seed_api_versions_metadata() {
        assert!(fuzz_checks::api_versions_metadata(&data), "{name}");
    }
    for (name, f) in seed_frames() {
        assert!(fuzz_checks::request_frame(&f), "{name}");
    }
    for (name, data) in seed_every_api() {
        assert!(fuzz_checks::every_api(&data), "{name}");
    }
    for (name, data) in seed_every_view() {
        assert!(fuzz_checks::every_view(&data), "{name}");
    }
    for (name, data) in seed_fetch() {
        assert!(fuzz_checks::fetch(&data), "{name}");
    }
    for (name, data) in seed_record_batches() {
        assert!(fuzz_checks::record_batches(&data), "{name}");
    }
}
