//! One Fetch of one partition from one offset, through the admin driver:
//! the leader (or a chosen replica) looked up in metadata, the version
//! negotiated, the topic named by id where the version wants it, errors
//! retried (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...) under the
//! run's deadline.

use std::collections::HashMap;

use bytes::Bytes;
use kdp_wire::messages::{
    FetchPartition, FetchRequest, FetchResponse, FetchTopic, READ_UNCOMMITTED,
};
use kdp_wire::{ErrorCode, Uuid};

use crate::admin::{drive, AdminHandler, DriverOptions, KeyOutcome, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::metadata::ClusterMetadata;
use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;

/// What a broker answered for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedChunk {
    /// The broker that answered.
    pub broker: i32,
    /// The offset asked for.
    pub fetch_offset: i64,
    /// The high watermark (the answering replica's).
    pub high_watermark: i64,
    /// The last stable offset, or -1.
    pub last_stable_offset: i64,
    /// The log start offset, or -1.
    pub log_start_offset: i64,
    /// For read_committed: the aborted transactions (producer id, first
    /// offset) in the records returned.
    pub aborted_transactions: Option<Vec<(i64, i64)>>,
    /// The record batches, the last possibly cut short.
    pub records: Bytes,
}

/// How one Fetch asks.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// `IsolationLevel`: read_uncommitted (0, every record, aborted ones
    /// and control batches included) or read_committed (1).
    pub isolation_level: i8,
    /// `PartitionMaxBytes` (and, doubled, `MaxBytes`). A broker returns a
    /// first batch larger than this whole anyway (KIP-74).
    pub partition_max_bytes: i32,
    /// `MaxWaitMs`: 0, answer with what is there.
    pub max_wait_ms: i32,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            isolation_level: READ_UNCOMMITTED,
            partition_max_bytes: 8 << 20,
            max_wait_ms: 0,
        }
    }
}

struct Handler<'a> {
    offsets: HashMap<TopicPartition, i64>,
    /// The leader epoch metadata gave, sent as CurrentLeaderEpoch so that
    /// a replica that is no longer the leader says so (a follower answers
    /// a v11+ consumer fetch otherwise).
    epochs: HashMap<TopicPartition, i32>,
    ids: HashMap<String, Uuid>,
    names: HashMap<Uuid, String>,
    settings: &'a FetchSettings,
}

impl AdminHandler for Handler<'_> {
    type Key = TopicPartition;
    type Value = FetchedChunk;
    type Request = FetchRequest;
    type Response = FetchResponse;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> FetchRequest {
        let mut topics: Vec<FetchTopic> = Vec::new();
        for (topic, partition) in keys {
            let part = FetchPartition {
                partition: *partition,
                current_leader_epoch: self
                    .epochs
                    .get(&(topic.clone(), *partition))
                    .copied()
                    .unwrap_or(-1),
                fetch_offset: self
                    .offsets
                    .get(&(topic.clone(), *partition))
                    .copied()
                    .unwrap_or(0),
                partition_max_bytes: self.settings.partition_max_bytes,
                ..Default::default()
            };
            match topics.iter_mut().find(|t| &t.topic == topic) {
                Some(t) => t.partitions.push(part),
                None => topics.push(FetchTopic {
                    topic: topic.clone(),
                    // Versions 13+ name the topic by id, from metadata.
                    topic_id: self.ids.get(topic).copied().unwrap_or_default(),
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        FetchRequest {
            max_wait_ms: self.settings.max_wait_ms,
            min_bytes: 0,
            max_bytes: self.settings.partition_max_bytes.saturating_mul(2),
            isolation_level: self.settings.isolation_level,
            topics,
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        broker: i32,
        _keys: &[TopicPartition],
        resp: FetchResponse,
    ) -> Vec<(TopicPartition, KeyOutcome<FetchedChunk>)> {
        let mut out = Vec::new();
        if resp.error_code != ErrorCode::NONE {
            // A session-level error concerns every partition asked.
            for key in self.offsets.keys() {
                let reason = KeyError::broker(resp.error_code, None);
                let outcome = if resp.error_code.is_retriable() {
                    KeyOutcome::Retry {
                        reason,
                        refresh: true,
                    }
                } else {
                    KeyOutcome::Failed(reason)
                };
                out.push((key.clone(), outcome));
            }
            return out;
        }
        for t in resp.responses {
            // Names up to v12, ids from v13.
            let name = if t.topic.is_empty() {
                match self.names.get(&t.topic_id) {
                    Some(n) => n.clone(),
                    None => continue,
                }
            } else {
                t.topic
            };
            for p in t.partitions {
                let key = (name.clone(), p.partition_index);
                let Some(&fetch_offset) = self.offsets.get(&key) else {
                    continue;
                };
                if matches!(
                    p.error_code,
                    ErrorCode::FENCED_LEADER_EPOCH | ErrorCode::UNKNOWN_LEADER_EPOCH
                ) {
                    // The epoch sent is the handler's: asked again with
                    // new metadata by `fetch_once`, not by the driver.
                    out.push((
                        key,
                        KeyOutcome::Failed(KeyError::broker(p.error_code, None)),
                    ));
                    continue;
                }
                let outcome = KeyOutcome::from_code(p.error_code, None, || FetchedChunk {
                    broker,
                    fetch_offset,
                    high_watermark: p.high_watermark,
                    last_stable_offset: p.last_stable_offset,
                    log_start_offset: p.log_start_offset,
                    aborted_transactions: p.aborted_transactions.map(|a| {
                        a.into_iter()
                            .map(|t| (t.producer_id, t.first_offset))
                            .collect()
                    }),
                    records: Bytes::from(p.records.unwrap_or_default()),
                });
                out.push((key, outcome));
            }
        }
        out
    }
}

/// Fetches `tp` from `offset` once, from its leader or from `broker_id`.
/// `metadata` (topic ids, leaders, leader epochs) saves a lookup and is
/// brought up to date when the driver or a fenced epoch made it look
/// again.
pub async fn fetch_once(
    client: &SharedClient,
    tp: &TopicPartition,
    offset: i64,
    broker_id: Option<i32>,
    metadata: &mut ClusterMetadata,
    settings: &FetchSettings,
    bound: &TimeBound,
) -> Result<FetchedChunk, KeyError> {
    let mut fenced = 0;
    loop {
        if metadata.topic(&tp.0).is_none() || fenced > 0 {
            // Topic ids (Fetch v13+ names topics by id), leaders, epochs.
            let topics = [tp.0.clone()];
            let lookup = client.metadata_within(Some(&topics), bound.request_timeout());
            match tokio::time::timeout_at(bound.deadline().at(), lookup).await {
                Ok(Ok(md)) => *metadata = md,
                Ok(Err(e)) => return Err(e.key_error()),
                Err(_) => {
                    return Err(KeyError::client(
                        ErrorCode::REQUEST_TIMED_OUT,
                        "no metadata within the timeout",
                    ))
                }
            }
        }
        let result = fetch_with(client, tp, offset, broker_id, metadata, settings, bound).await;
        match result {
            Err(e)
                if matches!(
                    e.code,
                    ErrorCode::FENCED_LEADER_EPOCH | ErrorCode::UNKNOWN_LEADER_EPOCH
                ) && fenced < bound.retry().max_attempts
                    && !bound.remaining().is_zero() =>
            {
                fenced += 1;
                tokio::time::sleep(bound.retry().backoff.min(bound.remaining())).await;
            }
            other => return other,
        }
    }
}

async fn fetch_with(
    client: &SharedClient,
    tp: &TopicPartition,
    offset: i64,
    broker_id: Option<i32>,
    metadata: &mut ClusterMetadata,
    settings: &FetchSettings,
    bound: &TimeBound,
) -> Result<FetchedChunk, KeyError> {
    let ids: HashMap<String, Uuid> = metadata
        .topics
        .values()
        .filter(|t| t.topic_id != Uuid::default())
        .map(|t| (t.name.clone(), t.topic_id))
        .collect();
    let names = ids.iter().map(|(n, id)| (*id, n.clone())).collect();
    let epoch = metadata
        .partition(&tp.0, tp.1)
        .map_or(-1, |p| p.leader_epoch);
    let handler = Handler {
        offsets: HashMap::from([(tp.clone(), offset)]),
        epochs: HashMap::from([(tp.clone(), epoch)]),
        ids,
        names,
        settings,
    };
    let strategy = match broker_id {
        Some(id) => PartitionLeader::chosen_broker(id),
        None => PartitionLeader::new(),
    };
    let mut strategy = strategy.with_metadata(metadata.clone());
    let mut result = None;
    drive(
        client,
        &handler,
        &mut strategy,
        vec![tp.clone()],
        // one key, one broker: nothing to batch
        &DriverOptions::default(),
        bound,
        |batch| {
            for r in batch.results {
                result = Some(r.result);
            }
        },
    )
    .await;
    if strategy.metadata().topic(&tp.0).is_some() {
        *metadata = strategy.metadata().clone();
    }
    result.unwrap_or_else(|| {
        Err(KeyError::client(
            ErrorCode::UNKNOWN_SERVER_ERROR,
            "the fetch ended without an answer",
        ))
    })
}
