//! The exporter's real diagnosis: the lookups behind `kdp find-hanging`
//! (kdp-workflows' `join_described`) fed with the scan's own DescribeProducers
//! answers, so the cluster is described once per scan, and bounded by the
//! scan's deadline. The scan keeps only the producers the lookups need (with
//! an open transaction, and under transaction protocol v1 the transactional
//! ones, which may be fenced), not every producer.
//!
//! The verdicts are not the exporter's own: [`findings`] counts
//! kdp-domain's one judgement
//! ([`kdp_domain::diagnose::findings`](fn@kdp_domain::diagnose::findings),
//! the one `kdp find-hanging` lists), so the two never disagree on a
//! transaction (an unknown LastTimestamp is `unknown_timestamp` in both).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use kdp_client::Client;
use kdp_domain::diagnose::fence::LogView;
use kdp_domain::diagnose::findings::Holder;
use kdp_domain::diagnose::flags::{flags, Flag};
use kdp_domain::diagnose::hanging::Verdict;
use kdp_domain::joined::Joined;
use kdp_domain::protocol::TxnProtocol;
use kdp_wire::messages::ProducerState;
use tokio::time::Instant;

use super::diagnosis::{
    Diagnose, DiagnoseFuture, Diagnosis, Finding, HeldValue, PartitionRef, PartitionValue, Scanned,
    Undecided,
};

/// The real diagnosis, after each scan: hanging and stuck transactions by
/// Kafka's rule and kdp's, the candidates it cannot judge, fenced producers
/// under transaction protocol v1, records held back by open transactions.
/// With `compare_replicas`, every replica is asked as well (what
/// `kdp compare-replicas` does) and the producers whose state differs
/// between replicas are counted per partition; that multiplies the scan's
/// requests by the replication factor, so it is asked for explicitly.
pub struct ClusterDiagnosis {
    /// The partitions and bounds of each run (the timeout is replaced by
    /// what is left of the scan's deadline).
    pub describe: kdp_client::DescribeOptions,
    /// Also ask every replica, for `kdp_replica_divergences`.
    pub compare_replicas: bool,
    /// Read the consumer groups for the `kdp_group_*` series, a group at
    /// the LSO counting as blocked once the transaction's producer has
    /// written nothing for this long (ms); `None`: no group series.
    pub groups_blocked_after_ms: Option<i64>,
}

/// The diagnosis of one joined scan (pure: tested without a cluster). The
/// verdicts are kdp-domain's one judgement
/// ([`kdp_domain::diagnose::findings`](fn@kdp_domain::diagnose::findings)),
/// the same as `kdp find-hanging`'s, counted under the exporter's labels.
pub fn findings(joined: &Joined) -> Diagnosis {
    use kdp_domain::coordinator::Description;

    let max_timeout = joined.max_timeout_ms();
    let judged = kdp_domain::diagnose::findings(joined, max_timeout);
    let mut out = Diagnosis::default();
    for (j, verdict) in judged.candidates() {
        if let Some(reason) = verdict.problem() {
            out.transactions.push(Finding {
                topic: j.topic.clone(),
                partition: j.partition,
                reason,
            });
        } else if let Verdict::Unknown(why) = verdict {
            out.unknown_transactions.push(Undecided {
                topic: j.topic.clone(),
                partition: j.partition,
                reason: why.kind(),
            });
        }
    }
    let cx = joined.flags_context();
    let mut fenced: BTreeMap<(String, i32), u64> = BTreeMap::new();
    for (topic, partition, p) in joined.producers() {
        let coordinator = joined.coordinator(p);
        // the exporter does not read the transaction log: the epochs decide
        // (transaction protocol v1), nothing is claimed under v2
        let fence = joined.fence_verdict(p, LogView::NotRead);
        if flags(p, topic, partition, &coordinator, &cx, &fence).contains(&Flag::Fenced) {
            *fenced.entry((topic.to_string(), partition)).or_default() += 1;
        }
    }
    out.fenced_producers = fenced
        .into_iter()
        .map(|((topic, partition), value)| PartitionValue {
            topic,
            partition,
            value,
        })
        .collect();
    for ((topic, partition), o) in &joined.offsets {
        match o {
            Ok(o) => {
                let value = u64::try_from(o.blocked()).unwrap_or(0);
                out.blocked_records.push(PartitionValue {
                    topic: topic.clone(),
                    partition: *partition,
                    value,
                });
                let verdict = Holder::of(
                    judged
                        .lso_holder(topic, *partition)
                        .and_then(|h| h.verdict.as_ref()),
                );
                out.blocked_records_by_verdict.push(HeldValue {
                    topic: topic.clone(),
                    partition: *partition,
                    verdict,
                    value,
                });
            }
            Err(_) => {
                out.failed_requests += 1;
                out.blocked_records_unknown.push(PartitionRef {
                    topic: topic.clone(),
                    partition: *partition,
                });
            }
        }
    }
    let failed_descriptions = joined
        .view
        .descriptions
        .values()
        .filter(|d| matches!(d, Description::Failed(_)))
        .count();
    // a phase that ran out of time checked nothing: count it as failed
    out.failed_requests +=
        (joined.listing_errors.len() + failed_descriptions + joined.unfinished.len()) as u64;
    out
}

/// The producers whose state differs between replicas, per partition; a
/// partition whose replicas agree has a zero.
fn divergences(replicas: &kdp_domain::diagnose::replicas::Replicas) -> Vec<PartitionValue> {
    use kdp_domain::diagnose::replicas::compare;
    replicas
        .iter()
        .map(|((topic, partition), by_broker)| {
            let producers: BTreeSet<i64> =
                compare(by_broker).iter().map(|d| d.producer_id).collect();
            PartitionValue {
                topic: topic.clone(),
                partition: *partition,
                value: u64::try_from(producers.len()).unwrap_or(u64::MAX),
            }
        })
        .collect()
}

/// What asking every replica found, into `found`: the divergences, except
/// that a partition with a replica that failed is unknown rather than
/// agreeing (a divergence among the others still counts), and a broker
/// whose whole scan failed (its partitions unknown) leaves no divergence
/// series at all. Each failure is a failed request.
fn replicas_found(
    found: &mut Diagnosis,
    replicas: &kdp_domain::diagnose::replicas::Replicas,
    failures: &[kdp_domain::diagnose::replicas::ReplicaError<kdp_client::Error>],
) {
    use kdp_domain::diagnose::replicas::ReplicaError;
    found.failed_requests += u64::try_from(failures.len()).unwrap_or(u64::MAX);
    let mut unknown = BTreeSet::new();
    for f in failures {
        match f {
            ReplicaError::Partition { partition, .. } => {
                unknown.insert(partition.clone());
            }
            // which partitions it hosts is not known here
            ReplicaError::Broker { .. } | ReplicaError::Lost => return,
        }
    }
    // a divergence among the replicas that answered is real; their
    // agreeing proves nothing while one did not answer
    found.replica_divergences = Some(
        divergences(replicas)
            .into_iter()
            .filter(|v| v.value > 0 || !unknown.contains(&(v.topic.clone(), v.partition)))
            .collect(),
    );
    found.replica_divergences_unknown = unknown
        .into_iter()
        .map(|(topic, partition)| PartitionRef { topic, partition })
        .collect();
}

impl ClusterDiagnosis {
    /// The describe options with what is left until `deadline`.
    fn bounded(&self, deadline: Instant) -> kdp_client::DescribeOptions {
        kdp_client::DescribeOptions {
            timeout: deadline.saturating_duration_since(Instant::now()),
            ..self.describe.clone()
        }
    }
}

impl Diagnose for ClusterDiagnosis {
    fn keeps(&self, p: &ProducerState, protocol: TxnProtocol) -> bool {
        // the fenced flag exists only under v1, for transactional producers
        p.current_txn_start_offset >= 0 || (protocol == TxnProtocol::V1 && p.coordinator_epoch >= 0)
    }

    fn needs_protocol(&self) -> bool {
        true
    }

    fn diagnose(
        &self,
        client: Arc<Client>,
        scanned: Scanned,
        deadline: Instant,
    ) -> DiagnoseFuture<'_> {
        Box::pin(async move {
            let opts = kdp_workflows::join::JoinOptions {
                describe: self.bounded(deadline),
                open_only: false,
                lookups: Default::default(),
            };
            // the lookups end a little before the deadline, so that what
            // failed comes back as errors rather than as a cut-off scan
            let left = deadline.saturating_duration_since(Instant::now());
            let soft = deadline - (left / 10).min(Duration::from_secs(1));
            let join = kdp_workflows::join::join_described(
                &client,
                &opts,
                scanned.now_ms,
                scanned.partitions,
                scanned.summary,
                kdp_client::Deadline::new(soft, left),
            );
            // the groups are read beside the lookups, by the same deadline
            let groups = async {
                let blocked_after = self.groups_blocked_after_ms?;
                let dopts = kdp_client::DescribeOptions {
                    deadline: Some(kdp_client::Deadline::new(soft, left)),
                    ..self.bounded(deadline)
                }
                .driver_options();
                let read = kdp_workflows::groups::ReadOptions {
                    members: true,
                    ..Default::default()
                };
                let r = kdp_workflows::groups::read_groups(&client, &read, &dopts);
                Some((tokio::time::timeout_at(deadline, r).await, blocked_after))
            };
            let (joined, groups) = tokio::join!(tokio::time::timeout_at(deadline, join), groups);
            let joined = match joined {
                Ok(Ok(joined)) => joined,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "diagnosis failed; its metrics keep no series this scan");
                    return None;
                }
                Err(_) => {
                    tracing::warn!("diagnosis did not finish within the scan timeout; its metrics keep no series this scan");
                    return None;
                }
            };
            let mut found = findings(&joined);
            match groups {
                None => {}
                Some((Ok(Ok(read)), blocked_after)) => {
                    let g = super::groups::groups_found(&joined, &read, blocked_after);
                    if g.failed_requests > 0 {
                        tracing::warn!(
                            failed = g.failed_requests,
                            "some consumer groups could not be read; they have no group series"
                        );
                    }
                    found.failed_requests += g.failed_requests;
                    found.groups = Some(g);
                }
                Some((Ok(Err(e)), _)) => {
                    tracing::warn!(error = %e, "consumer groups not read; no group series this scan");
                    found.failed_requests += 1;
                }
                Some((Err(_), _)) => {
                    tracing::warn!("consumer groups not read within the scan timeout; no group series this scan");
                    found.failed_requests += 1;
                }
            }
            if self.compare_replicas {
                use kdp_workflows::replicas::describe_every_replica;
                let bounded = self.bounded(deadline);
                let every = describe_every_replica(&client, &bounded);
                match tokio::time::timeout_at(deadline, every).await {
                    Ok(Ok((replicas, failures))) => {
                        if !failures.is_empty() {
                            tracing::warn!(
                                failures = failures.len(),
                                "some replicas could not be asked; their divergences are not counted"
                            );
                        }
                        replicas_found(&mut found, &replicas, &failures);
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "cannot ask every replica this scan");
                        found.failed_requests += 1;
                    }
                    Err(_) => {
                        tracing::warn!("the replicas did not answer within the scan timeout");
                        found.failed_requests += 1;
                    }
                }
            }
            Some(found)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_domain::coordinator::CoordinatorView;
    use kdp_domain::diagnose::hanging::{Problem, UnknownKind};
    use kdp_domain::{DescribeSummary, PartitionOutcome};

    const NOW: i64 = 10_000_000_000;

    fn open(pid: i64, last_timestamp: i64, start: i64) -> ProducerState {
        ProducerState {
            producer_id: pid,
            producer_epoch: 1,
            last_sequence: 0,
            last_timestamp,
            coordinator_epoch: 1,
            current_txn_start_offset: start,
            ..Default::default()
        }
    }

    fn joined(producers: Vec<ProducerState>, view: CoordinatorView) -> Joined {
        Joined {
            now_ms: NOW,
            partitions: vec![PartitionOutcome {
                topic: "t".into(),
                partition: 0,
                broker_id: Some(1),
                result: Ok(producers),
            }],
            summary: DescribeSummary::default(),
            protocol: TxnProtocol::V1,
            cluster_max_timeout_ms: Some(900_000),
            producer_id_expiration_ms: None,
            view,
            offsets: BTreeMap::new(),
            listing_errors: Vec::new(),
            unfinished: Vec::new(),
            candidates_only: None,
        }
    }

    #[test]
    fn a_failed_listing_gives_unknowns_and_a_failed_request_never_a_clean_zero() {
        // an hour idle: a candidate; a broker did not answer ListTransactions
        let mut j = joined(
            vec![open(7, NOW - 3_600_000, 5)],
            CoordinatorView {
                listing_complete: false,
                may_describe_any: true,
                ..Default::default()
            },
        );
        j.listing_errors.push((
            2,
            kdp_domain::KeyError::broker(kdp_wire::ErrorCode::COORDINATOR_NOT_AVAILABLE, None),
        ));
        let d = findings(&j);
        assert!(d.transactions.is_empty(), "{d:?}");
        assert_eq!(
            d.unknown_transactions,
            vec![Undecided {
                topic: "t".into(),
                partition: 0,
                reason: UnknownKind::ListingIncomplete
            }]
        );
        assert_eq!(d.failed_requests, 1);
        assert!(!d.is_complete());
    }

    #[test]
    fn an_unknown_timestamp_is_no_age_never_a_hanging_transaction() {
        // every broker answered, nothing is listed for either producer, the
        // caller may describe any id: with a time, hanging; without, unknown
        let view = CoordinatorView {
            listing_complete: true,
            may_describe_any: true,
            ..Default::default()
        };
        let d = findings(&joined(
            vec![open(1, 0, 5), open(2, -1, 6), open(3, NOW - 3_600_000, 7)],
            view,
        ));
        assert_eq!(
            d.transactions,
            vec![Finding {
                topic: "t".into(),
                partition: 0,
                reason: Problem::NoTransaction
            }]
        );
        let unknown: Vec<_> = d.unknown_transactions.iter().map(|u| u.reason).collect();
        assert_eq!(unknown, [UnknownKind::UnknownTimestamp; 2]);
        assert!(d.is_complete());
    }

    #[test]
    fn blocked_records_are_held_by_the_first_open_transaction() {
        let view = CoordinatorView {
            listing_complete: true,
            may_describe_any: false,
            ..Default::default()
        };
        // 3 started first and is hidden (unknown); 4 is recent (open)
        let mut j = joined(
            vec![open(4, NOW - 1_000, 90), open(3, NOW - 3_600_000, 12)],
            view,
        );
        j.offsets.insert(
            ("t".into(), 0),
            Ok(kdp_domain::Offsets {
                high_watermark: 100,
                last_stable_offset: 12,
            }),
        );
        let d = findings(&j);
        assert_eq!(d.blocked_records[0].value, 88);
        assert_eq!(
            d.blocked_records_by_verdict,
            vec![HeldValue {
                topic: "t".into(),
                partition: 0,
                verdict: Holder::Unknown,
                value: 88
            }]
        );
    }
}
