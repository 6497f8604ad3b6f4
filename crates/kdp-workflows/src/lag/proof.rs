//! The facts [`kdp_domain::lag::proof`] proves a partition needs no read
//! from, gathered in the order the proof needs them: the bounds first (the
//! caller's ListOffsets), then the topics' `cleanup.policy` and
//! `message.timestamp.type` and, where a topic qualifies, the brokers'
//! `producer.id.expiration.ms` (DescribeConfigs), then each leader's
//! producers (DescribeProducers),
//! and last, on kdp's clock read once those are in, ListOffsets for the
//! first record appended in the window. Each kind of request through its
//! one driver and within the caller's [`TimeBound`]; a failed request
//! leaves its partitions unproven (read as before), never proven.

use std::collections::{BTreeMap, BTreeSet};

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::txn::configs::{
    broker_configs, topic_configs, TopicConfig, CLEANUP_POLICY, MESSAGE_TIMESTAMP_TYPE,
    PRODUCER_ID_EXPIRATION_MS,
};
use kdp_client::txn::offsets::list_offsets;
use kdp_client::{DescribeOptions, TopicSelection};
use kdp_domain::key_error::KeyError;
use kdp_domain::lag::proof::{
    compacted, prove, window_since, ProducersSeen, ProofFacts, TimestampType,
};
use kdp_domain::lag::{Bounds, Proof};
use kdp_domain::partition::{ProducerFields, TopicPartition};
use kdp_wire::messages::READ_UNCOMMITTED;

use crate::clock::now_ms;
use crate::leaders::describe_viewed;

/// The topic settings the proof rests on.
pub const SETTINGS: [&str; 2] = [CLEANUP_POLICY, MESSAGE_TIMESTAMP_TYPE];

/// A partition the caller would read: where its count starts (the
/// smallest offset of its groups, at least the log start) and its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The count's first offset.
    pub start: i64,
    /// The bounds read before anything else.
    pub bounds: Bounds,
}

/// The topics' `cleanup.policy` and `message.timestamp.type`, as
/// DescribeConfigs answered them.
pub type TopicSettings = BTreeMap<String, Result<TopicConfig, KeyError>>;

/// The proof's verdict for each candidate. Only partitions whose LSO is
/// their high watermark are asked about; the others are
/// [`kdp_domain::lag::Unproven::Unstable`] without a request. `read`: the
/// topics' settings the caller already read ([`SETTINGS`] of every
/// candidate's topic), asked again only if `None`.
pub async fn prove_unread(
    client: &SharedClient,
    candidates: &BTreeMap<TopicPartition, Candidate>,
    read: Option<&TopicSettings>,
    driver: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<TopicPartition, Proof> {
    let mut facts: BTreeMap<TopicPartition, ProofFacts> = candidates
        .keys()
        .map(|tp| (tp.clone(), ProofFacts::default()))
        .collect();
    let verdicts = |facts: &BTreeMap<TopicPartition, ProofFacts>| {
        facts
            .iter()
            .filter_map(|(tp, f)| {
                let c = candidates.get(tp)?;
                Some((tp.clone(), prove(c.start, &c.bounds, f)))
            })
            .collect()
    };
    let stable: Vec<TopicPartition> = candidates
        .iter()
        .filter(|(_, c)| c.bounds.last_stable_offset == c.bounds.high_watermark)
        .map(|(tp, _)| tp.clone())
        .collect();
    if stable.is_empty() {
        return verdicts(&facts);
    }

    // the topics' settings, then, only if a topic qualifies, every
    // broker's (a partition's leader may move; the smallest expiration
    // holds on any of them)
    let asked_now;
    let topic_answers = match read {
        Some(read) => read,
        None => {
            let topics: BTreeSet<String> = stable.iter().map(|tp| tp.0.clone()).collect();
            asked_now = topic_configs(
                client,
                topics.into_iter().collect(),
                &SETTINGS,
                driver,
                bound,
            )
            .await
            .unwrap_or_default();
            &asked_now
        }
    };
    for (tp, f) in facts.iter_mut() {
        let config = topic_answers.get(&tp.0).and_then(|c| c.as_ref().ok());
        let value = |key: &str| config.and_then(|c| c.get(key).cloned().flatten());
        f.compacted = value(CLEANUP_POLICY).map(|p| compacted(&p));
        f.timestamp_type = value(MESSAGE_TIMESTAMP_TYPE).and_then(|t| TimestampType::parse(&t));
    }
    let qualifies = |f: &ProofFacts| {
        f.compacted == Some(false) && f.timestamp_type == Some(TimestampType::LogAppendTime)
    };
    if !stable.iter().any(|tp| facts.get(tp).is_some_and(qualifies)) {
        return verdicts(&facts);
    }
    let expiration_ms = broker_configs(client, &[PRODUCER_ID_EXPIRATION_MS], driver, bound)
        .await
        .ok()
        .and_then(|brokers| {
            let each: Option<Vec<i64>> = brokers
                .values()
                .map(|b| {
                    let b = b.as_ref().ok()?;
                    b.get(PRODUCER_ID_EXPIRATION_MS)?.as_deref()?.parse().ok()
                })
                .collect();
            each?.into_iter().min()
        });
    for f in facts.values_mut() {
        f.expiration_ms = expiration_ms;
    }

    // the producers, described after the bounds were read
    let asked: Vec<TopicPartition> = stable
        .into_iter()
        .filter(|tp| {
            facts
                .get(tp)
                .is_some_and(|f| qualifies(f) && f.expiration_ms.is_some())
        })
        .collect();
    if asked.is_empty() {
        return verdicts(&facts);
    }
    let describe = DescribeOptions {
        topics: Some(TopicSelection::of_partitions(
            asked.iter().map(|tp| (tp.0.clone(), tp.1)),
        )),
        max_partitions_per_request: driver.max_keys_per_request,
        max_concurrent_brokers: driver.max_concurrent_brokers,
        ..DescribeOptions::default()
    };
    let mut described: BTreeMap<TopicPartition, ProducersSeen> = BTreeMap::new();
    // counted where they lie in each response; no producer is built
    let _ = describe_viewed(client.clone(), &describe, bound, |a| {
        if let Ok(producers) = a.result {
            let seen = ProducersSeen::of(
                producers
                    .iter()
                    .map(|p| (p.coordinator_epoch(), p.current_txn_start_offset())),
            );
            described.insert((a.topic.to_owned(), a.partition), seen);
        }
    })
    .await;
    for (tp, seen) in &described {
        if let Some(f) = facts.get_mut(tp) {
            f.producers = Some(*seen);
        }
    }

    // the window, on kdp's clock once the producers are in
    let Some(since) = expiration_ms.and_then(|e| window_since(now_ms(), e)) else {
        return verdicts(&facts);
    };
    let windowed: Vec<TopicPartition> = described
        .iter()
        .filter(|(_, s)| s.open == 0 && s.with_markers == 0)
        .map(|(tp, _)| tp.clone())
        .collect();
    if !windowed.is_empty() {
        let found = list_offsets(client, windowed, since, READ_UNCOMMITTED, driver, bound).await;
        for (tp, o) in found {
            if let (Some(f), Ok(o)) = (facts.get_mut(&tp), o) {
                f.window_offset = Some(o);
            }
        }
    }
    verdicts(&facts)
}
