//! DescribeProducers across a cluster, as one user of the [admin
//! driver](crate::admin::driver).
//!
//! The selection is resolved against metadata into partitions; the driver
//! routes them (each partition's leader, or one broker given by id: a
//! follower answers from its own producer state), sends one request per
//! broker (split into chunks of at most `max_partitions_per_request`), brokers
//! in parallel with bounded concurrency, and results go to a sink as each
//! response arrives, so a caller can stream them.
//!
//! Retries follow Kafka's Admin client (DescribeProducersHandler): after a
//! metadata refresh, NOT_LEADER_OR_FOLLOWER is retried (unless a broker id was
//! given: then it is the answer) and so is UNKNOWN_TOPIC_OR_PARTITION; every
//! other partition error, authorization errors included, is the answer. A
//! broker that cannot be reached or stops answering gets its partitions
//! re-routed after a metadata refresh (or, with a broker id, reported with a
//! client-side NETWORK_EXCEPTION / REQUEST_TIMED_OUT). Unlike the Admin
//! client, a topic or partition that metadata says does not exist is reported
//! as UNKNOWN_TOPIC_OR_PARTITION instead of being retried until the timeout.
//! Retries follow the caller's [`TimeBound`]: they back off exponentially
//! and are bounded in number and by its deadline, so nothing waits past it;
//! one request waits at most [`TimeBound::request_timeout`] (a third of the
//! budget at most), so a broker that stops answering has its partitions
//! re-routed in time.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kdp_domain::partition::{DescribeSummary, PartitionError, PartitionOutcome, TopicPartition};
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, ProducerState, TopicRequest,
};
use kdp_wire::ErrorCode;

use crate::admin::{drive, AdminHandler, Batch, DriverOptions, KeyOutcome, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::Client;
use crate::error::Result;

mod select;

/// Some partitions of one topic, or all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSelection {
    /// The topic name.
    pub name: String,
    /// `None`: every partition of the topic.
    pub partitions: Option<Vec<i32>>,
}

/// What to describe, where, and how to batch. Time is the caller's
/// [`TimeBound`], not an option.
#[derive(Debug, Clone)]
pub struct DescribeOptions {
    /// `None`: every partition of every topic, internal topics included.
    pub topics: Option<Vec<TopicSelection>>,
    /// Ask this broker instead of each partition's leader. Partitions picked
    /// implicitly (a whole topic, the whole cluster) are then only those with
    /// a replica on it; partitions named explicitly are all asked.
    pub broker_id: Option<i32>,
    /// Partitions in one DescribeProducers request at most; more are split.
    pub max_partitions_per_request: usize,
    /// Brokers asked at once at most.
    pub max_concurrent_brokers: usize,
    /// How many metadata lookups may say a topic does not exist before it is
    /// reported as unknown (a topic just created may not be known everywhere yet).
    pub unknown_topic_attempts: u32,
}

impl DescribeOptions {
    /// The admin driver's batching these options give (the requests after
    /// a describe batch the same way).
    pub fn driver_options(&self) -> DriverOptions {
        DriverOptions {
            max_keys_per_request: self.max_partitions_per_request,
            max_concurrent_brokers: self.max_concurrent_brokers,
        }
    }
}

impl Default for DescribeOptions {
    fn default() -> Self {
        DescribeOptions {
            topics: None,
            broker_id: None,
            max_partitions_per_request: 10_000,
            max_concurrent_brokers: 8,
            unknown_topic_attempts: 2,
        }
    }
}

/// What the sink receives, in order.
#[derive(Debug, Clone)]
pub enum DescribeEvent {
    /// This many more partitions will be reported (sent once after the first
    /// metadata lookup, again if a topic resolves later).
    Planned {
        /// Partitions added to the plan.
        partitions: usize,
    },
    /// Final answers for some partitions: one broker response, or errors
    /// settled without a broker (`broker_id: None`).
    Results {
        /// The broker that answered; `None` for errors settled without one.
        broker_id: Option<i32>,
        /// The response's `ThrottleTimeMs` (0 without a broker).
        throttle_time_ms: i32,
        /// One outcome per partition answered.
        outcomes: Vec<PartitionOutcome>,
    },
}

/// Describes the producers of the selected partitions within `bound`.
/// Results go to `sink` as they arrive; every selected partition is
/// reported exactly once. Fails only when the first metadata lookup fails
/// (the cluster is unreachable).
pub async fn describe_producers<F>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    sink: F,
) -> Result<DescribeSummary>
where
    F: FnMut(DescribeEvent),
{
    let mut report = Report {
        sink,
        summary: DescribeSummary::default(),
    };
    let selected = select::resolve(&client, opts, bound, &mut report).await?;
    let mut strategy = match opts.broker_id {
        Some(b) => PartitionLeader::chosen_broker(b),
        None => PartitionLeader::new(),
    };
    if let Some(md) = selected.metadata {
        strategy = strategy.with_metadata(md);
    }
    let handler = Handler {
        chosen_broker: opts.broker_id,
        explicit: selected.explicit,
    };
    let stats = drive_partitions(
        &client,
        opts,
        bound,
        &handler,
        &mut strategy,
        selected.partitions,
        &mut report,
    )
    .await;
    let mut summary = report.summary;
    summary.rounds = selected.rounds.max(stats.rounds);
    summary.vanished = stats.dropped;
    Ok(summary)
}

/// The admin driver over resolved partitions, results to `report`.
async fn drive_partitions<F: FnMut(DescribeEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    handler: &Handler,
    strategy: &mut PartitionLeader,
    partitions: Vec<TopicPartition>,
    report: &mut Report<F>,
) -> crate::admin::driver::DriverStats {
    drive(
        client,
        handler,
        strategy,
        partitions,
        &opts.driver_options(),
        bound,
        |batch: Batch<TopicPartition, Vec<ProducerState>>| {
            let outcomes = batch
                .results
                .into_iter()
                .map(|r| PartitionOutcome {
                    broker_id: r.broker.or(handler.chosen_for(&r.result)),
                    topic: r.key.0,
                    partition: r.key.1,
                    result: r.result,
                })
                .collect();
            report.results(batch.broker, batch.throttle_time_ms, outcomes);
        },
    )
    .await
}

/// The selection of `opts` resolved as [`describe_producers`] resolves it
/// (its `broker_id` ignored).
#[derive(Debug)]
pub struct Resolved {
    /// The partitions, in the order found; each once.
    pub partitions: Vec<TopicPartition>,
    /// The metadata one lookup found them all in (`None`: it took several).
    pub metadata: Option<crate::metadata::ClusterMetadata>,
    /// What was settled without a broker (a topic that does not exist, a
    /// partition it does not have).
    pub settled: Vec<PartitionOutcome>,
}

/// Resolves the selection once, for callers that then ask several brokers
/// ([`describe_on`]) without a metadata lookup each.
pub async fn resolve(
    client: &Client,
    opts: &DescribeOptions,
    bound: &TimeBound,
) -> Result<Resolved> {
    let opts = DescribeOptions {
        broker_id: None,
        ..opts.clone()
    };
    let mut settled = Vec::new();
    let mut report = Report {
        sink: |ev| {
            if let DescribeEvent::Results { outcomes, .. } = ev {
                settled.extend(outcomes);
            }
        },
        summary: DescribeSummary::default(),
    };
    let selected = select::resolve(client, &opts, bound, &mut report).await?;
    Ok(Resolved {
        partitions: selected.partitions,
        metadata: selected.metadata,
        settled,
    })
}

/// DescribeProducers of `partitions` on `broker` (a follower answers from
/// its own state), routed from `metadata` without a lookup of its own;
/// results to `sink` as they arrive. Draws on `bound`.
pub async fn describe_on<F: FnMut(DescribeEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    broker: i32,
    partitions: Vec<TopicPartition>,
    metadata: crate::metadata::ClusterMetadata,
    sink: F,
) -> DescribeSummary {
    let mut report = Report {
        sink,
        summary: DescribeSummary::default(),
    };
    if !partitions.is_empty() {
        report.planned(partitions.len());
    }
    let mut strategy = PartitionLeader::chosen_broker(broker).with_metadata(metadata);
    let handler = Handler {
        chosen_broker: Some(broker),
        explicit: BTreeSet::new(),
    };
    let stats = drive_partitions(
        client,
        opts,
        bound,
        &handler,
        &mut strategy,
        partitions,
        &mut report,
    )
    .await;
    let mut summary = report.summary;
    summary.rounds = stats.rounds;
    summary.vanished = stats.dropped;
    summary
}

/// Passes events on and counts them.
pub(crate) struct Report<F> {
    sink: F,
    summary: DescribeSummary,
}

impl<F: FnMut(DescribeEvent)> Report<F> {
    pub(crate) fn planned(&mut self, partitions: usize) {
        (self.sink)(DescribeEvent::Planned { partitions });
    }

    pub(crate) fn results(
        &mut self,
        broker_id: Option<i32>,
        throttle_time_ms: i32,
        mut outcomes: Vec<PartitionOutcome>,
    ) {
        if outcomes.is_empty() {
            return;
        }
        outcomes.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        let s = &mut self.summary;
        s.partitions += outcomes.len();
        s.failed += outcomes.iter().filter(|o| o.result.is_err()).count();
        s.max_throttle_time_ms = s.max_throttle_time_ms.max(throttle_time_ms);
        (self.sink)(DescribeEvent::Results {
            broker_id,
            throttle_time_ms,
            outcomes,
        });
    }
}

/// DescribeProducers' rules, after Kafka's DescribeProducersHandler.
struct Handler {
    chosen_broker: Option<i32>,
    explicit: BTreeSet<TopicPartition>,
}

impl Handler {
    /// The chosen broker is named in its own absence from metadata.
    fn chosen_for(&self, result: &Result<Vec<ProducerState>, PartitionError>) -> Option<i32> {
        match result {
            Err(e) if e.client_side && e.code == ErrorCode::BROKER_NOT_AVAILABLE => {
                self.chosen_broker
            }
            _ => None,
        }
    }
}

impl AdminHandler for Handler {
    type Key = TopicPartition;
    type Value = Vec<ProducerState>;
    type Request = DescribeProducersRequest;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> DescribeProducersRequest {
        build_request(keys)
    }

    fn handle_response(
        &self,
        _broker: i32,
        _keys: &[TopicPartition],
        resp: DescribeProducersResponse,
    ) -> Vec<(TopicPartition, KeyOutcome<Vec<ProducerState>>)> {
        let mut out = Vec::new();
        for t in resp.topics {
            for p in t.partitions {
                let code = p.error_code;
                let retry = (code == ErrorCode::NOT_LEADER_OR_FOLLOWER
                    && self.chosen_broker.is_none())
                    || code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                let outcome = if retry {
                    KeyOutcome::Retry {
                        reason: PartitionError::broker(code, p.error_message),
                        refresh: true,
                    }
                } else if code == ErrorCode::NONE {
                    KeyOutcome::Done(p.active_producers)
                } else {
                    KeyOutcome::Failed(PartitionError::broker(code, p.error_message))
                };
                out.push(((t.name.clone(), p.partition_index), outcome));
            }
        }
        out
    }

    /// Picked as part of a topic or the cluster and deleted since: nothing
    /// to report. Named explicitly: the metadata's error is the answer.
    fn missing(
        &self,
        key: &TopicPartition,
        error: PartitionError,
    ) -> KeyOutcome<Vec<ProducerState>> {
        if error.code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION && !self.explicit.contains(key) {
            tracing::debug!(topic = %key.0, partition = key.1, "partition deleted during the scan");
            return KeyOutcome::Dropped;
        }
        KeyOutcome::Failed(error)
    }
}

fn build_request(partitions: &[TopicPartition]) -> DescribeProducersRequest {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        by_topic.entry(t.as_str()).or_default().push(*p);
    }
    DescribeProducersRequest {
        topics: by_topic
            .into_iter()
            .map(|(name, partition_indexes)| TopicRequest {
                name: name.to_string(),
                partition_indexes,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::lookup::missing_partition;

    #[test]
    fn requests_group_partitions_by_topic() {
        let req = build_request(&[("b".into(), 1), ("a".into(), 2), ("b".into(), 0)]);
        let names: Vec<_> = req
            .topics
            .iter()
            .map(|t| (t.name.as_str(), t.partition_indexes.clone()))
            .collect();
        assert_eq!(names, vec![("a", vec![2]), ("b", vec![1, 0])]);
    }

    #[test]
    fn missing_partition_message() {
        let e = missing_partition("t", 7, 3);
        assert_eq!(e.code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
        assert_eq!(e.name(), "UNKNOWN_TOPIC_OR_PARTITION");
        assert!(e.message.unwrap().contains("has 3 partitions (0-2)"));
    }
}
