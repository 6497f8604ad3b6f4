//! One scan's diagnosis summed up per partition and per group: what a
//! monitor publishes (the exporter's `kdp_*` series) and can be given as a
//! file. Every number comes from the one judgement `kdp find-hanging`,
//! `kdp blocked` and `kdp compare-replicas` make, so the monitor and the
//! commands never disagree; no zero stands for a check not made (what
//! could not be checked is listed as unknown, and counted as a failed
//! request).
//!
//! How the verdicts relate: every open transaction holds records back from
//! read_committed consumers until it ends, so [`Diagnosis::blocked_records`]
//! counts the records of every open transaction, live or not. Only
//! candidates (open, their producer idle longer than the maximum
//! transaction timeout, Kafka's rule) are judged: hanging, stuck or
//! unknown. [`Diagnosis::blocked_records_by_verdict`] splits each
//! partition's blocked records by the verdict on the transaction holding
//! its last stable offset ([`Holder`]).

use std::collections::{BTreeMap, BTreeSet};

use kdp_wire::ErrorCode;
use serde::Deserialize;

use crate::coordinator::Description;
use crate::diagnose::blocked::{blocked, pinned_or_unread, BlockedOptions, Gap, GroupVerdict};
use crate::diagnose::fence::LogView;
use crate::diagnose::findings::{findings, Holder};
use crate::diagnose::flags::{flags, Flag};
use crate::diagnose::hanging::{Problem, UnknownKind, Verdict};
use crate::diagnose::replicas::{Compared, ReplicaError};
use crate::groups::offsets::Committed;
use crate::groups::read::{GroupsRead, Visibility};
use crate::joined::Joined;
use crate::partition::ProducerFields;
use crate::protocol::TxnProtocol;

/// Whether the diagnosis needs producer `p` of a scan on a cluster running
/// `protocol`: one with an open transaction (judged), and under
/// transaction protocol v1 a transactional one (its epochs may prove it
/// fenced). A scan keeps only these of each response.
pub fn needs<P: ProducerFields + ?Sized>(p: &P, protocol: TxnProtocol) -> bool {
    // the fenced flag exists only under v1, for transactional producers
    p.current_txn_start_offset() >= 0 || (protocol == TxnProtocol::V1 && p.coordinator_epoch() >= 0)
}

/// One open transaction the diagnosis reports as hanging or stuck.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Why.
    pub reason: Problem,
}

/// One candidate the diagnosis could not judge.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undecided {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Why.
    pub reason: UnknownKind,
}

/// A number about one partition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionValue {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The number.
    pub value: u64,
}

/// A partition's blocked records, with the verdict on the transaction that
/// holds its last stable offset.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldValue {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The verdict on the transaction holding the LSO.
    pub verdict: Holder,
    /// The number.
    pub value: u64,
}

/// A partition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionRef {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
}

/// What the diagnosis found after one scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnosis {
    /// Hanging and stuck transactions, one entry each.
    #[serde(default)]
    pub transactions: Vec<Finding>,
    /// Candidates that could not be judged, one entry each. A topic (or
    /// partition) with any gets no zero hanging or stuck series: a zero
    /// there would claim a check that was not made.
    #[serde(default)]
    pub unknown_transactions: Vec<Undecided>,
    /// Producers still listed on a partition whose instance the coordinator
    /// has fenced, counted per partition.
    #[serde(default)]
    pub fenced_producers: Vec<PartitionValue>,
    /// Producers whose state differs between replicas, per partition;
    /// `None` when the replicas were not asked (no series then, rather than
    /// zeros that would claim they agree).
    #[serde(default)]
    pub replica_divergences: Option<Vec<PartitionValue>>,
    /// Partitions with a replica that could not be asked: their topic (or
    /// partition) gets no divergence series (the replicas that answered
    /// agreeing proves nothing about the one that did not).
    #[serde(default)]
    pub replica_divergences_unknown: Vec<PartitionRef>,
    /// Records between the last stable offset and the high watermark.
    #[serde(default)]
    pub blocked_records: Vec<PartitionValue>,
    /// The same records, by the verdict on the transaction holding the LSO.
    #[serde(default)]
    pub blocked_records_by_verdict: Vec<HeldValue>,
    /// Partitions with an open transaction whose offsets could not be read:
    /// their topic (or partition) gets no blocked-records series.
    #[serde(default)]
    pub blocked_records_unknown: Vec<PartitionRef>,
    /// The consumer groups held back, per group; `None` when the groups
    /// were not read (no group series then).
    #[serde(default)]
    pub groups: Option<GroupsFound>,
    /// Each group's lag in records (`kdp lag`); `None` when not read (no
    /// lag series then).
    #[serde(default)]
    pub lag: Option<crate::lag::found::LagFound>,
    /// Requests of the diagnosis that failed (a broker's ListTransactions,
    /// a transactional id's DescribeTransactions, a partition's offsets, a
    /// replica's DescribeProducers).
    /// Not 0: `kdp_diagnosis_available` is 0 and the scan counts as partial.
    #[serde(default)]
    pub failed_requests: u64,
}

impl Diagnosis {
    /// Every request answered.
    pub fn is_complete(&self) -> bool {
        self.failed_requests == 0
    }
}

/// One group's numbers after a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupValue {
    /// The group id.
    pub group: String,
    /// Partitions where it is blocked; `None`: not known (no series).
    #[serde(default)]
    pub blocked_partitions: Option<u64>,
    /// Records held back on them; `None` with `blocked_partitions`.
    #[serde(default)]
    pub blocked_records: Option<u64>,
    /// Members now; `None`: not described (no series).
    #[serde(default)]
    pub members: Option<u64>,
}

/// What the groups' part of a scan's diagnosis found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupsFound {
    /// Every group kdp learned of, by group id.
    #[serde(default)]
    pub groups: Vec<GroupValue>,
    /// Requests that failed (a broker's listing, a group's offsets or
    /// description, the visibility probe): the scan is partial.
    #[serde(default)]
    pub failed_requests: u64,
}

impl Diagnosis {
    /// The diagnosis of one joined scan: the verdicts are the one judgement
    /// ([`findings`](fn@crate::diagnose::findings::findings)), the same as
    /// `kdp find-hanging`'s, counted per partition under their labels.
    pub fn of(joined: &Joined) -> Diagnosis {
        let max_timeout = joined.max_timeout_ms();
        let judged = findings(joined, max_timeout);
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
}

/// The producers whose state differs between replicas, per partition; a
/// partition whose replicas agree has a zero.
fn divergences(compared: &Compared) -> Vec<PartitionValue> {
    compared
        .iter()
        .map(|((topic, partition), differences)| {
            let producers: BTreeSet<i64> = differences.iter().map(|d| d.producer_id).collect();
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
pub fn add_replicas<E>(found: &mut Diagnosis, compared: &Compared, failures: &[ReplicaError<E>]) {
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
        divergences(compared)
            .into_iter()
            .filter(|v| v.value > 0 || !unknown.contains(&(v.topic.clone(), v.partition)))
            .collect(),
    );
    found.replica_divergences_unknown = unknown
        .into_iter()
        .map(|(topic, partition)| PartitionRef { topic, partition })
        .collect();
}

/// The partitions of `joined` whose producers could not be described.
fn undescribed(joined: &Joined) -> impl Iterator<Item = (&str, i32)> {
    joined
        .partitions
        .iter()
        .filter(|o| o.result.is_err())
        .map(|o| (o.topic.as_str(), o.partition))
}

impl GroupsFound {
    /// The topics whose committed offsets [`GroupsFound::of`] reads: those
    /// of the partitions pinned or maybe pinned ([`pinned_or_unread`]) and
    /// of those whose producers could not be described. A read of the
    /// groups for the group series alone may keep only these topics'
    /// offsets (and whether a group committed at all).
    pub fn topics_read(joined: &Joined) -> BTreeSet<String> {
        let pinned = pinned_or_unread(joined).map(|(t, _)| t.as_str());
        let undescribed = undescribed(joined).map(|(t, _)| t);
        pinned.chain(undescribed).map(str::to_string).collect()
    }

    /// The groups of `read` judged against the scan's `joined`, a group at the
    /// LSO counting as blocked once the transaction's producer has written
    /// nothing for `blocked_after_ms`.
    pub fn of(joined: &Joined, read: &GroupsRead, blocked_after_ms: i64) -> GroupsFound {
        let max_timeout_ms = joined.max_timeout_ms();
        let b = blocked(
            joined,
            &read.answers,
            &BlockedOptions {
                max_timeout_ms,
                blocked_after_ms,
                // the series count groups: no commands, no partition no group reads
                groups_only: true,
                ..Default::default()
            },
        );
        let mut out = GroupsFound {
            failed_requests: read.listing_failures.len() as u64,
            ..Default::default()
        };
        if let Visibility::Unknown(_) = read.visibility {
            out.failed_requests += 1;
        }
        // partitions whose pinning kdp could not tell this scan
        let unread: BTreeSet<(&str, i32)> = joined
            .offsets
            .iter()
            .filter(|(_, o)| o.is_err())
            .map(|((t, p), _)| (t.as_str(), *p))
            .collect();
        let undescribed: BTreeSet<(&str, i32)> = undescribed(joined).collect();
        let mut unknown: BTreeSet<&str> = BTreeSet::new();
        for gap in &b.gaps {
            match gap {
                Gap::GroupOffsets(g, _) => {
                    out.failed_requests += 1;
                    unknown.insert(g);
                }
                Gap::GroupMembers(..) => out.failed_requests += 1,
                _ => {}
            }
        }
        let mut blocked: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for p in &b.partitions {
            for g in &p.groups {
                match g.verdict {
                    GroupVerdict::Blocked => {
                        let e = blocked.entry(g.group_id.as_str()).or_default();
                        e.0 += 1;
                        e.1 += u64::try_from(p.held_back()).unwrap_or(0);
                    }
                    // an offset refused where it may be blocked
                    GroupVerdict::Unread(_) => {
                        unknown.insert(g.group_id.as_str());
                    }
                    _ => {}
                }
            }
        }
        for a in read
            .answers
            .iter()
            .filter(|_| !unread.is_empty() || !undescribed.is_empty())
        {
            let Ok(offsets) = &a.offsets else { continue };
            let blind = offsets.iter().any(|((t, p), c)| {
                !matches!(c, Committed::Nothing)
                    && (unread.contains(&(t, p)) || undescribed.contains(&(t, p)))
            });
            if blind {
                unknown.insert(a.group_id.as_str());
            }
        }
        for a in &read.answers {
            let known = !unknown.contains(a.group_id.as_str());
            let (partitions, records) = blocked
                .get(a.group_id.as_str())
                .copied()
                .unwrap_or_default();
            let members = match &a.members {
                Some(Ok(n)) => Some(u64::from(*n)),
                _ => None,
            };
            // a group gone between its listing and its description: no series
            let gone =
                matches!(&a.members, Some(Err(e)) if e.code == ErrorCode::GROUP_ID_NOT_FOUND);
            if gone && matches!(&a.offsets, Ok(o) if o.is_empty()) {
                continue;
            }
            out.groups.push(GroupValue {
                group: a.group_id.clone(),
                blocked_partitions: known.then_some(partitions),
                blocked_records: known.then_some(records),
                members,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::CoordinatorView;
    use crate::partition::PartitionOutcome;
    use kdp_wire::messages::ProducerState;

    const NOW: i64 = 10_000_000_000;

    /// Pinned, maybe pinned (offsets unread) and undescribed partitions'
    /// topics; not a partition whose LSO is its high watermark.
    #[test]
    fn the_group_series_read_the_pinned_unread_and_undescribed_topics() {
        use crate::key_error::KeyError;
        use crate::offsets::Offsets;
        let offsets = |hw, lso| {
            Ok(Offsets {
                high_watermark: hw,
                last_stable_offset: lso,
            })
        };
        let err = || KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None);
        let mut j = Joined::new(NOW, TxnProtocol::V1);
        j.offsets.insert(("pinned".into(), 0), offsets(10, 4));
        j.offsets.insert(("clear".into(), 0), offsets(10, 10));
        j.offsets.insert(("unread".into(), 1), Err(err()));
        j.partitions.push(PartitionOutcome {
            topic: "undescribed".into(),
            partition: 2,
            broker_id: None,
            result: Err(err()),
        });
        j.partitions.push(PartitionOutcome::answered(
            "clear".to_string(),
            0,
            1,
            Vec::new(),
        ));
        let topics: Vec<String> = GroupsFound::topics_read(&j).into_iter().collect();
        assert_eq!(topics, ["pinned", "undescribed", "unread"]);
    }

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
            partitions: vec![PartitionOutcome::answered("t", 0, 1, producers)],
            cluster_max_timeout_ms: Some(900_000),
            view,
            ..Joined::new(NOW, TxnProtocol::V1)
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
            crate::key_error::KeyError::broker(
                kdp_wire::ErrorCode::COORDINATOR_NOT_AVAILABLE,
                None,
            ),
        ));
        let d = Diagnosis::of(&j);
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
        let d = Diagnosis::of(&joined(
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
            Ok(crate::offsets::Offsets {
                high_watermark: 100,
                last_stable_offset: 12,
            }),
        );
        let d = Diagnosis::of(&j);
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
