//! Fetch through the admin driver: one partition from one offset
//! ([`fetch_once`]), or many partitions each from its own offset in
//! requests batched per leader ([`fetch_many`]). The leader (or a chosen
//! replica) looked up in metadata, the version negotiated, the topic named
//! by id where the version wants it, errors retried
//! (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...) under the run's
//! deadline.
//!
//! A broker fills a Fetch of many partitions in the order asked until its
//! `MaxBytes` is spent; the partitions after that come back empty or cut
//! inside a batch, and only the first partition with records may return a
//! batch larger than asked (KIP-74). [`FetchedChunk::bytes_before`] says
//! whether an answer may have been cut that way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Bytes of records the same response carried for the partitions
    /// before this one. Not 0: `MaxBytes` may have run out before this
    /// partition, so an empty or partial answer says nothing of its log
    /// (ask again); 0: the broker had the whole `MaxBytes` for it.
    pub bytes_before: u64,
}

/// One partition of a [`fetch_many`]: where to read from, how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchAsk {
    /// The partition.
    pub partition: TopicPartition,
    /// `FetchOffset`.
    pub offset: i64,
    /// `PartitionMaxBytes`.
    pub partition_max_bytes: i32,
}

/// How one Fetch asks.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// `IsolationLevel`: read_uncommitted (0, every record, aborted ones
    /// and control batches included) or read_committed (1).
    pub isolation_level: i8,
    /// `PartitionMaxBytes` (and, doubled, `MaxBytes` unless
    /// [`FetchSettings::max_bytes`] says). A broker returns a first batch
    /// larger than this whole anyway (KIP-74).
    pub partition_max_bytes: i32,
    /// `MaxBytes`, the whole response's limit; `None`: twice
    /// `partition_max_bytes`. Never below a partition's own limit.
    pub max_bytes: Option<i32>,
    /// `MaxWaitMs`: 0, answer with what is there.
    pub max_wait_ms: i32,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            isolation_level: READ_UNCOMMITTED,
            partition_max_bytes: 8 << 20,
            max_bytes: None,
            max_wait_ms: 0,
        }
    }
}

struct Handler<'a> {
    /// Each partition asked: its `FetchOffset` and `PartitionMaxBytes`.
    asks: HashMap<TopicPartition, (i64, i32)>,
    /// The leader epoch metadata gave, sent as CurrentLeaderEpoch so that
    /// a replica that is no longer the leader says so (a follower answers
    /// a v11+ consumer fetch otherwise).
    epochs: HashMap<TopicPartition, i32>,
    ids: HashMap<String, Uuid>,
    names: HashMap<Uuid, String>,
    settings: &'a FetchSettings,
    /// Requests built: each is sent.
    built: AtomicU64,
}

impl<'a> Handler<'a> {
    fn new(
        asks: HashMap<TopicPartition, (i64, i32)>,
        metadata: &ClusterMetadata,
        settings: &'a FetchSettings,
    ) -> Self {
        let epochs = asks
            .keys()
            .map(|tp| {
                let epoch = metadata
                    .partition(&tp.0, tp.1)
                    .map_or(-1, |p| p.leader_epoch);
                (tp.clone(), epoch)
            })
            .collect();
        let ids: HashMap<String, Uuid> = asks
            .keys()
            .filter_map(|tp| metadata.topic(&tp.0))
            .filter(|t| t.topic_id != Uuid::default())
            .map(|t| (t.name.clone(), t.topic_id))
            .collect();
        let names = ids.iter().map(|(n, id)| (*id, n.clone())).collect();
        Handler {
            asks,
            epochs,
            ids,
            names,
            settings,
            built: AtomicU64::new(0),
        }
    }
}

impl AdminHandler for Handler<'_> {
    type Key = TopicPartition;
    type Value = FetchedChunk;
    type Request = FetchRequest;
    type Response = FetchResponse;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> FetchRequest {
        self.built.fetch_add(1, Ordering::Relaxed);
        let mut topics: Vec<FetchTopic> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut largest = 0;
        for tp in keys {
            let (fetch_offset, partition_max_bytes) = self
                .asks
                .get(tp)
                .copied()
                .unwrap_or((0, self.settings.partition_max_bytes));
            largest = partition_max_bytes.max(largest);
            let part = FetchPartition {
                partition: tp.1,
                current_leader_epoch: self.epochs.get(tp).copied().unwrap_or(-1),
                fetch_offset,
                partition_max_bytes,
                ..Default::default()
            };
            if let Some(t) = at.get(tp.0.as_str()).and_then(|&i| topics.get_mut(i)) {
                t.partitions.push(part);
                continue;
            }
            at.insert(&tp.0, topics.len());
            topics.push(FetchTopic {
                topic: tp.0.clone(),
                // Versions 13+ name the topic by id, from metadata.
                topic_id: self.ids.get(&tp.0).copied().unwrap_or_default(),
                partitions: vec![part],
                ..Default::default()
            });
        }
        let max_bytes = self
            .settings
            .max_bytes
            .unwrap_or(self.settings.partition_max_bytes.saturating_mul(2))
            .max(largest);
        FetchRequest {
            max_wait_ms: self.settings.max_wait_ms,
            min_bytes: 0,
            max_bytes,
            isolation_level: self.settings.isolation_level,
            topics,
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        broker: i32,
        keys: &[TopicPartition],
        resp: FetchResponse,
    ) -> Vec<(TopicPartition, KeyOutcome<FetchedChunk>)> {
        let mut out = Vec::new();
        if resp.error_code != ErrorCode::NONE {
            // A session-level error concerns every partition asked.
            for key in keys {
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
        // records of the partitions answered so far, in the broker's order
        let mut before = 0u64;
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
                let records = p.records.unwrap_or_default();
                let bytes_before = before;
                before = before.saturating_add(records.len() as u64);
                let Some(&(fetch_offset, _)) = self.asks.get(&key) else {
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
                    records: Bytes::from(records),
                    bytes_before,
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
    let ask = (offset, settings.partition_max_bytes);
    let handler = Handler::new(HashMap::from([(tp.clone(), ask)]), metadata, settings);
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

/// Whether `e` says the leader epoch sent is not the leader's: asked again
/// with new metadata, not by the driver (the epoch is the handler's).
fn is_fenced(e: &KeyError) -> bool {
    matches!(
        e.code,
        ErrorCode::FENCED_LEADER_EPOCH | ErrorCode::UNKNOWN_LEADER_EPOCH
    )
}

/// Fetches each partition of `asks` from its own offset, in requests
/// batched per leader as `driver` says (partitions per request, brokers at
/// once), `MaxBytes` per request from `settings`. `sink` hears each
/// partition's answer, or why there is none, as its response arrives
/// (one partition's error leaves the others of its request answered).
/// `metadata` (topic ids, leaders, leader epochs of the partitions asked)
/// saves a lookup and is brought up to date with what the run looked up
/// again. Returns the Fetch requests sent.
pub async fn fetch_many(
    client: &SharedClient,
    asks: Vec<FetchAsk>,
    metadata: &mut ClusterMetadata,
    settings: &FetchSettings,
    driver: &DriverOptions,
    bound: &TimeBound,
    mut sink: impl FnMut(TopicPartition, Result<FetchedChunk, KeyError>),
) -> u64 {
    let mut asks: HashMap<TopicPartition, (i64, i32)> = asks
        .into_iter()
        .map(|a| (a.partition, (a.offset, a.partition_max_bytes)))
        .collect();
    let mut sent = 0;
    let mut fenced_rounds = 0;
    loop {
        let mut keys: Vec<TopicPartition> = asks.keys().cloned().collect();
        // topic by topic, partitions in order, whatever the map's order
        keys.sort_unstable();
        let handler = Handler::new(std::mem::take(&mut asks), metadata, settings);
        let mut strategy = PartitionLeader::new().with_metadata(metadata.clone());
        let mut fenced: Vec<(TopicPartition, KeyError)> = Vec::new();
        drive(
            client,
            &handler,
            &mut strategy,
            keys,
            driver,
            bound,
            |batch| {
                for r in batch.results {
                    match r.result {
                        Err(e) if is_fenced(&e) => fenced.push((r.key, e)),
                        other => sink(r.key, other),
                    }
                }
            },
        )
        .await;
        sent += handler.built.load(Ordering::Relaxed);
        merge(metadata, strategy.into_metadata());
        if fenced.is_empty() {
            return sent;
        }
        if fenced_rounds >= bound.retry().max_attempts || bound.remaining().is_zero() {
            for (key, e) in fenced {
                sink(key, Err(e));
            }
            return sent;
        }
        fenced_rounds += 1;
        tokio::time::sleep(bound.retry().backoff.min(bound.remaining())).await;
        let mut topics: Vec<String> = fenced.iter().map(|(tp, _)| tp.0.clone()).collect();
        topics.sort_unstable();
        topics.dedup();
        let lookup = client.metadata_within(Some(&topics), bound.request_timeout());
        let error = match tokio::time::timeout_at(bound.deadline().at(), lookup).await {
            Ok(Ok(md)) => {
                merge(metadata, md);
                None
            }
            Ok(Err(e)) => Some(e.key_error()),
            Err(_) => Some(KeyError::client(
                ErrorCode::REQUEST_TIMED_OUT,
                "no metadata within the timeout",
            )),
        };
        if let Some(e) = error {
            for (key, _) in fenced {
                sink(key, Err(e.clone()));
            }
            return sent;
        }
        let mut all = handler.asks;
        asks = fenced
            .into_iter()
            .filter_map(|(tp, _)| {
                let ask = all.remove(&tp)?;
                Some((tp, ask))
            })
            .collect();
    }
}

/// `fresh`'s brokers and topics over `into`'s (a lookup of some topics
/// leaves the others as they were).
fn merge(into: &mut ClusterMetadata, fresh: ClusterMetadata) {
    if !fresh.brokers.is_empty() {
        into.brokers = fresh.brokers;
        into.controller_id = fresh.controller_id;
    }
    into.topics.extend(fresh.topics);
}
