//! An in-memory fake cluster for tests on tokio's paused clock: brokers are
//! tasks behind `tokio::io::duplex` streams handed out by a [`Connector`], so
//! no socket and no wall-clock time is involved and every timeout is exact.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use kdp_client::{BoxStream, BrokerAddress, ConnectFuture, Connector, Error};
use kdp_wire::frame::response_frame_to_vec;
use kdp_wire::messages::{
    ApiVersion, ApiVersionsResponse, DescribeProducersRequest, DescribeProducersResponse,
    MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    PartitionResponse, ProducerState, TopicResponse, WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult, WritableTxnMarkerTopicResult, WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
};
use kdp_wire::{decode_exact, ErrorCode, Reader, RequestHeader};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// What a broker does with a DescribeProducers request.
pub enum Answer {
    Respond(DescribeProducersResponse),
    /// Answer after a pause (on the paused clock: exact ordering).
    After(std::time::Duration, DescribeProducersResponse),
    /// Never answer (a frozen broker).
    Never,
}

pub type DpFn = dyn Fn(i32, &DescribeProducersRequest) -> Answer + Send + Sync;

/// (topic, partition) -> leader
pub type Leaders = BTreeMap<(String, i32), i32>;

/// Moves leadership before the n-th Metadata answer (1-based).
pub type OnMetadata = Box<dyn FnMut(&mut Leaders, usize) + Send>;

pub struct State {
    /// Brokers that accept connections; the others refuse.
    pub listening: HashSet<i32>,
    pub brokers: Vec<i32>,
    pub leaders: Leaders,
    /// Metadata requests answered so far.
    pub metadata_calls: usize,
    /// DescribeProducers requests received: broker and request.
    pub dp_calls: Vec<(i32, DescribeProducersRequest)>,
    /// Brokers that freeze (answer nothing more, on any connection) once
    /// asked DescribeProducers.
    pub freeze_on_dp: HashSet<i32>,
    pub frozen: HashSet<i32>,
    /// Called before each Metadata answer, to move leadership.
    pub on_metadata: Option<OnMetadata>,
    /// Leadership that moves right after the next Metadata answer: the
    /// client routes by a leader that is already stale.
    pub move_after_metadata: Leaders,
    /// WriteTxnMarkers requests received: broker and request. Only the
    /// current leader writes a partition's marker; others answer
    /// NOT_LEADER_OR_FOLLOWER.
    pub wtm_calls: Vec<(i32, WriteTxnMarkersRequest)>,
}

#[derive(Clone)]
pub struct MemCluster {
    pub state: Arc<Mutex<State>>,
    dp: Arc<DpFn>,
}

impl MemCluster {
    /// Brokers `1..=brokers`, all listening; `leaders` places partitions.
    pub fn new(brokers: i32, leaders: &[(&str, i32, i32)], dp: Arc<DpFn>) -> Self {
        MemCluster {
            state: Arc::new(Mutex::new(State {
                listening: (1..=brokers).collect(),
                brokers: (1..=brokers).collect(),
                leaders: leaders
                    .iter()
                    .map(|(t, p, l)| ((t.to_string(), *p), *l))
                    .collect(),
                metadata_calls: 0,
                dp_calls: Vec::new(),
                freeze_on_dp: HashSet::new(),
                frozen: HashSet::new(),
                on_metadata: None,
                move_after_metadata: Leaders::new(),
                wtm_calls: Vec::new(),
            })),
            dp,
        }
    }

    pub fn bootstrap(&self) -> Vec<BrokerAddress> {
        vec![addr_of(1)]
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    async fn serve(self, id: i32, mut s: DuplexStream) {
        loop {
            let mut size = [0u8; 4];
            if s.read_exact(&mut size).await.is_err() {
                return;
            }
            let mut buf = vec![0u8; i32::from_be_bytes(size) as usize];
            if s.read_exact(&mut buf).await.is_err() {
                return;
            }
            let mut r = Reader::new(&buf);
            let (h, _) = RequestHeader::decode_auto(&mut r).unwrap();
            let body = &buf[r.offset()..];
            let (cid, v) = (h.correlation_id, h.request_api_version);
            if self.state().frozen.contains(&id) {
                continue;
            }
            let frame = match h.request_api_key {
                18 => response_frame_to_vec(cid, &api_versions(), v),
                3 => response_frame_to_vec(cid, &self.metadata(), v),
                61 => {
                    let req: DescribeProducersRequest = decode_exact(body, 0).unwrap();
                    {
                        let mut st = self.state();
                        st.dp_calls.push((id, req.clone()));
                        if st.freeze_on_dp.contains(&id) {
                            st.frozen.insert(id);
                            continue;
                        }
                    }
                    match (self.dp)(id, &req) {
                        Answer::Respond(resp) => response_frame_to_vec(cid, &resp, 0),
                        Answer::After(pause, resp) => {
                            tokio::time::sleep(pause).await;
                            response_frame_to_vec(cid, &resp, 0)
                        }
                        Answer::Never => continue,
                    }
                }
                27 => {
                    let req: WriteTxnMarkersRequest = decode_exact(body, v).unwrap();
                    let resp = self.write_txn_markers(id, &req);
                    self.state().wtm_calls.push((id, req));
                    response_frame_to_vec(cid, &resp, v)
                }
                k => panic!("unexpected api key {k}"),
            };
            if s.write_all(&frame).await.is_err() {
                return;
            }
        }
    }

    fn write_txn_markers(&self, id: i32, req: &WriteTxnMarkersRequest) -> WriteTxnMarkersResponse {
        let st = self.state();
        WriteTxnMarkersResponse {
            markers: req
                .markers
                .iter()
                .map(|m| WritableTxnMarkerResult {
                    producer_id: m.producer_id,
                    topics: m
                        .topics
                        .iter()
                        .map(|t| WritableTxnMarkerTopicResult {
                            name: t.name.clone(),
                            partitions: t
                                .partition_indexes
                                .iter()
                                .map(|p| WritableTxnMarkerPartitionResult {
                                    partition_index: *p,
                                    error_code: if st.leaders.get(&(t.name.clone(), *p))
                                        == Some(&id)
                                    {
                                        ErrorCode::NONE
                                    } else {
                                        ErrorCode::NOT_LEADER_OR_FOLLOWER
                                    },
                                    ..Default::default()
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

    fn metadata(&self) -> MetadataResponse {
        let mut st = self.state();
        st.metadata_calls += 1;
        let n = st.metadata_calls;
        if let Some(mut f) = st.on_metadata.take() {
            f(&mut st.leaders, n);
            st.on_metadata = Some(f);
        }
        let mut topics: BTreeMap<String, Vec<MetadataResponsePartition>> = BTreeMap::new();
        for ((t, p), leader) in &st.leaders {
            topics
                .entry(t.clone())
                .or_default()
                .push(MetadataResponsePartition {
                    partition_index: *p,
                    leader_id: *leader,
                    replica_nodes: st.brokers.clone(),
                    isr_nodes: st.brokers.clone(),
                    ..Default::default()
                });
        }
        let moved = std::mem::take(&mut st.move_after_metadata);
        let resp = MetadataResponse {
            brokers: st
                .brokers
                .iter()
                .map(|id| MetadataResponseBroker {
                    node_id: *id,
                    host: format!("b{id}"),
                    port: 9092,
                    ..Default::default()
                })
                .collect(),
            controller_id: 1,
            topics: topics
                .into_iter()
                .map(|(name, partitions)| MetadataResponseTopic {
                    name: Some(name),
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        st.leaders.extend(moved);
        resp
    }
}

impl Connector for MemCluster {
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(async move {
            let id: i32 = addr.host.trim_start_matches('b').parse().unwrap();
            if !self.state().listening.contains(&id) {
                return Err(Error::Connect {
                    addr: addr.to_string(),
                    source: Arc::new(std::io::ErrorKind::ConnectionRefused.into()),
                });
            }
            let (client, server) = tokio::io::duplex(64 * 1024);
            tokio::spawn(self.clone().serve(id, server));
            Ok(Box::new(client) as BoxStream)
        })
    }
}

pub fn addr_of(id: i32) -> BrokerAddress {
    BrokerAddress::new(format!("b{id}"), 9092)
}

pub fn api_versions() -> ApiVersionsResponse {
    ApiVersionsResponse {
        api_keys: vec![
            ApiVersion::new(3, 0, 12),
            ApiVersion::new(18, 0, 4),
            ApiVersion::new(27, 1, 2),
            ApiVersion::new(61, 0, 0),
        ],
        ..Default::default()
    }
}

/// Answers every partition asked with one producer whose id is
/// `broker * 100 + partition`, so the answering broker shows in results.
pub fn answer_from(broker: i32, req: &DescribeProducersRequest) -> DescribeProducersResponse {
    DescribeProducersResponse {
        topics: req
            .topics
            .iter()
            .map(|t| TopicResponse {
                name: t.name.clone(),
                partitions: t
                    .partition_indexes
                    .iter()
                    .map(|p| partition_answer(broker, *p))
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn partition_answer(broker: i32, p: i32) -> PartitionResponse {
    PartitionResponse {
        partition_index: p,
        active_producers: vec![ProducerState {
            producer_id: i64::from(broker * 100 + p),
            ..Default::default()
        }],
        ..Default::default()
    }
}
