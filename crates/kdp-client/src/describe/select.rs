//! Turning a selection (topics, some partitions, the whole cluster) into
//! the partitions to describe, from metadata.
//!
//! A topic metadata does not know yet is looked up again (it may have just
//! been created) `unknown_topic_attempts` times; one without leaders yet
//! (LEADER_NOT_AVAILABLE) until the retry policy's rounds or the deadline
//! run out. Partitions named
//! explicitly that the topic does not have are answered here, without asking
//! a broker.

use std::collections::BTreeSet;

use kdp_wire::ErrorCode;

use kdp_domain::partition::{PartitionError, TopicPartition};

use crate::admin::lookup::{missing_partition, unknown_topic};
use crate::bound::TimeBound;
use crate::client::Client;
use crate::describe::options::{DescribeOptions, FramedEvent, FramedOutcome, TopicSelection};
use crate::describe::report::Report;
use crate::error::{Error, Result};
use crate::metadata::ClusterMetadata;

/// What the selection resolved to.
pub(crate) struct Selected {
    /// In the order found; each once.
    pub partitions: Vec<TopicPartition>,
    /// Those named by the caller (not picked as part of a topic or the cluster).
    pub explicit: BTreeSet<TopicPartition>,
    /// The metadata all of `partitions` were found in, if one lookup found them all.
    pub metadata: Option<ClusterMetadata>,
    pub rounds: u32,
}

struct Unresolved {
    sel: TopicSelection,
    last_error: PartitionError,
    misses: u32,
}

/// Resolves the selection, announcing to `report` the partitions to be
/// reported and reporting those answered from metadata. Fails only when the
/// first metadata lookup fails.
pub(crate) async fn resolve<F: FnMut(FramedEvent)>(
    client: &Client,
    opts: &DescribeOptions,
    bound: &TimeBound,
    report: &mut Report<F>,
) -> Result<Selected> {
    let deadline = bound.deadline();
    let retry = bound.retry();
    let mut out = Selected {
        partitions: Vec::new(),
        explicit: BTreeSet::new(),
        metadata: None,
        rounds: 0,
    };
    let Some(topics) = &opts.topics else {
        let md = first_lookup(client, opts, bound, None).await?;
        out.rounds = 1;
        let mut done = Vec::new();
        for t in md.topics.values() {
            if t.error_code != ErrorCode::NONE {
                done.push(outcome(
                    &t.name,
                    -1,
                    PartitionError::client(t.error_code, "metadata lookup failed for this topic"),
                ));
                continue;
            }
            for p in t.partitions.values() {
                if opts.broker_id.is_none_or(|b| p.replicas.contains(&b)) {
                    out.partitions.push((t.name.clone(), p.partition));
                }
            }
        }
        announce(report, out.partitions.len(), done);
        out.metadata = Some(md);
        return Ok(out);
    };

    let mut unresolved: Vec<Unresolved> = topics
        .iter()
        .map(|sel| Unresolved {
            sel: sel.clone(),
            last_error: unknown_topic(&sel.name),
            misses: 0,
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut backoff = retry.backoff;
    for attempt in 0..retry.attempts() {
        if unresolved.is_empty() {
            break;
        }
        if attempt > 0 {
            if deadline.remaining() <= backoff {
                break;
            }
            tokio::time::sleep(backoff).await;
            backoff = retry.next_backoff(backoff);
        }
        out.rounds = attempt + 1;
        let mut names: Vec<String> = unresolved.iter().map(|u| u.sel.name.clone()).collect();
        names.sort();
        names.dedup();
        let md = if attempt == 0 {
            first_lookup(client, opts, bound, Some(&names)).await?
        } else {
            let lookup = client.metadata_within(Some(&names), bound.request_timeout());
            match tokio::time::timeout_at(deadline.at(), lookup).await {
                Ok(Ok(md)) => md,
                Ok(Err(e)) if !e.is_retriable() => {
                    for u in &mut unresolved {
                        u.last_error = e.key_error();
                    }
                    break;
                }
                Ok(Err(e)) => {
                    for u in &mut unresolved {
                        u.last_error = e.key_error();
                    }
                    continue;
                }
                Err(_) => break,
            }
        };
        let before = out.partitions.len();
        let mut done = Vec::new();
        for mut u in std::mem::take(&mut unresolved) {
            let topic = md.topic(&u.sel.name);
            let code = topic.map_or(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, |t| t.error_code);
            match (topic, code) {
                (Some(t), ErrorCode::NONE) => {
                    let explicit = u.sel.partitions.is_some();
                    let wanted: Vec<i32> = match &u.sel.partitions {
                        Some(ps) => ps.clone(),
                        None => t
                            .partitions
                            .values()
                            .filter(|p| opts.broker_id.is_none_or(|b| p.replicas.contains(&b)))
                            .map(|p| p.partition)
                            .collect(),
                    };
                    for p in wanted {
                        if explicit && !t.partitions.contains_key(&p) {
                            let err = missing_partition(&t.name, p, t.partitions.len());
                            done.push(outcome(&t.name, p, err));
                            continue;
                        }
                        let tp = (t.name.clone(), p);
                        if seen.insert(tp.clone()) {
                            if explicit {
                                out.explicit.insert(tp.clone());
                            }
                            out.partitions.push(tp);
                        }
                    }
                }
                (_, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION) => {
                    u.misses += 1;
                    u.last_error = unknown_topic(&u.sel.name);
                    if u.misses >= opts.unknown_topic_attempts.max(1) {
                        done.extend(settle_all(&u.sel, &u.last_error));
                    } else {
                        unresolved.push(u);
                    }
                }
                (_, ErrorCode::LEADER_NOT_AVAILABLE) => {
                    // a topic being created: ask again
                    u.last_error =
                        PartitionError::client(code, "metadata: the topic has no leaders yet");
                    unresolved.push(u);
                }
                (_, code) => {
                    let err = PartitionError::client(
                        code,
                        format!("metadata lookup failed for topic {:?}", u.sel.name),
                    );
                    done.extend(settle_all(&u.sel, &err));
                }
            }
        }
        announce(report, out.partitions.len() - before, done);
        // one lookup found everything: the driver may route from it as is
        out.metadata = (attempt == 0).then_some(md);
    }
    if !unresolved.is_empty() {
        out.metadata = None;
        let mut done = Vec::new();
        for u in unresolved {
            done.extend(settle_all(&u.sel, &u.last_error));
        }
        // topics that never resolved were not planned yet
        announce(report, 0, done);
    }
    Ok(out)
}

/// The first Metadata request: each broker asked waits at most a third of
/// the budget (a broker that stalls leaves time to ask another), all of
/// them together no longer than the deadline.
async fn first_lookup(
    client: &Client,
    opts: &DescribeOptions,
    bound: &TimeBound,
    topics: Option<&[String]>,
) -> Result<ClusterMetadata> {
    let md = bound
        .run(
            "Metadata (the first metadata request)",
            client.metadata_within(topics, bound.request_timeout()),
        )
        .await?;
    // a chosen broker the cluster lacks: nothing about it can be answered
    match opts.broker_id {
        Some(id) if !md.brokers.contains_key(&id) => Err(Error::NoSuchBroker {
            id,
            known: md.brokers.keys().copied().collect(),
        }),
        _ => Ok(md),
    }
}

fn announce<F: FnMut(FramedEvent)>(
    report: &mut Report<F>,
    pending: usize,
    done: Vec<FramedOutcome>,
) {
    if pending + done.len() > 0 {
        report.planned(pending + done.len());
    }
    report.results(None, 0, done);
}

fn outcome(topic: &str, partition: i32, err: PartitionError) -> FramedOutcome {
    FramedOutcome {
        broker_id: None,
        partition: (topic.to_string(), partition),
        result: Err(err),
    }
}

/// Every partition named, or `-1` for the whole topic.
fn settle_all(sel: &TopicSelection, err: &PartitionError) -> Vec<FramedOutcome> {
    let parts = sel.partitions.clone().unwrap_or_else(|| vec![-1]);
    parts
        .into_iter()
        .map(|p| outcome(&sel.name, p, err.clone()))
        .collect()
}
