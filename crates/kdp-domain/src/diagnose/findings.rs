//! One judgement of a join's open transactions, shared by every caller:
//! `kdp find-hanging` lists it, its `--repair` plans from it, and the
//! exporter counts it, so the verdict on one transaction can never differ
//! between them.
//!
//! Each open transaction is a candidate or not ([`hanging::is_candidate`]:
//! idle longer than the timeout, or of unknown age), and each candidate
//! gets [`hanging::decide`]'s verdict (an unknown LastTimestamp is
//! [`UnknownReason::UnknownTimestamp`](hanging::UnknownReason), never
//! hanging). Each partition's last stable offset is held by the open
//! transaction that started first; [`Findings::lso_holder`] names it.

use std::collections::BTreeMap;

use kdp_wire::messages::ProducerState;
use serde::Deserialize;

use crate::diagnose::hanging::{self, OpenTxn, Verdict, VerdictKind};
use crate::joined::Joined;
use crate::partition::TopicPartition;

/// One open transaction (CurrentTxnStartOffset set) on one partition, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The producer as the partition reported it.
    pub producer: ProducerState,
    /// The verdict; `None` when it is no candidate (its producer wrote
    /// within the timeout: live, not judged).
    pub verdict: Option<Verdict>,
}

impl Judged {
    /// The verdict when it is hanging or stuck.
    pub fn problem(&self) -> Option<&Verdict> {
        self.verdict.as_ref().filter(|v| v.is_problem())
    }
}

/// The open transaction holding a partition's last stable offset: the one
/// with the lowest CurrentTxnStartOffset (the first reported among equals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LsoHolder {
    /// Its producer.
    pub producer_id: i64,
    /// Its CurrentTxnStartOffset.
    pub start_offset: i64,
    /// Its verdict (`None`: no candidate).
    pub verdict: Option<Verdict>,
}

impl LsoHolder {
    /// Its verdict without the reason, as the exporter labels it.
    pub fn holder(&self) -> Holder {
        Holder::of(self.verdict.as_ref())
    }
}

/// The verdict on the open transaction holding a partition's last stable
/// offset, without its reason: the `verdict` label of the exporter's
/// `kdp_blocked_records_by_verdict`, a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// Hanging: no coordinator will end it.
    Hanging,
    /// Stuck: decided, markers not written.
    Stuck,
    /// A candidate kdp could not judge.
    Unknown,
    /// Open and tracked by its coordinator, or not idle long enough to be a
    /// candidate.
    Open,
}

impl Holder {
    /// Every holder verdict, in label order.
    pub const ALL: [Holder; 4] = [
        Holder::Hanging,
        Holder::Stuck,
        Holder::Unknown,
        Holder::Open,
    ];

    /// The holder verdict of a judged transaction (`None`: no candidate).
    pub fn of(verdict: Option<&Verdict>) -> Holder {
        match verdict.map(Verdict::kind) {
            Some(VerdictKind::Hanging) => Holder::Hanging,
            Some(VerdictKind::Stuck) => Holder::Stuck,
            Some(VerdictKind::Unknown) => Holder::Unknown,
            Some(VerdictKind::Ok) | None => Holder::Open,
        }
    }

    /// `hanging`, `stuck` and `unknown` as the verdicts are named, and
    /// `open` for the rest.
    pub fn label(self) -> &'static str {
        match self {
            Holder::Hanging => VerdictKind::Hanging.label(),
            Holder::Stuck => VerdictKind::Stuck.label(),
            Holder::Unknown => VerdictKind::Unknown.label(),
            Holder::Open => "open",
        }
    }
}

/// Every open transaction of a join, judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// The candidate threshold used (ms).
    pub max_timeout_ms: i64,
    /// Every open transaction, by topic, partition and producer id.
    pub open: Vec<Judged>,
    /// Each partition with an open transaction, and what holds its LSO.
    pub lso_holders: BTreeMap<TopicPartition, LsoHolder>,
}

impl Findings {
    /// The candidates and their verdicts, in order.
    pub fn candidates(&self) -> impl Iterator<Item = (&Judged, &Verdict)> {
        self.open
            .iter()
            .filter_map(|j| j.verdict.as_ref().map(|v| (j, v)))
    }

    /// What holds `topic`/`partition`'s last stable offset, if an open
    /// transaction does.
    pub fn lso_holder(&self, topic: &str, partition: i32) -> Option<&LsoHolder> {
        self.lso_holders.get(&(topic.to_string(), partition))
    }
}

/// The judgement of every open transaction of `joined`, candidates being
/// idle longer than `max_timeout_ms` (see the module docs).
pub fn findings(joined: &Joined, max_timeout_ms: i64) -> Findings {
    let mut out = Findings {
        max_timeout_ms,
        ..Findings::default()
    };
    for (topic, partition, p) in joined.open_transactions() {
        let verdict = hanging::is_candidate(p, joined.now_ms, max_timeout_ms).then(|| {
            let txn = OpenTxn {
                topic: topic.to_string(),
                partition,
                producer: p.clone(),
            };
            hanging::decide(&txn, &joined.view, joined.now_ms, max_timeout_ms)
        });
        let holder = LsoHolder {
            producer_id: p.producer_id,
            start_offset: p.current_txn_start_offset,
            verdict: verdict.clone(),
        };
        out.lso_holders
            .entry((topic.to_string(), partition))
            .and_modify(|h| {
                if holder.start_offset < h.start_offset {
                    *h = holder.clone();
                }
            })
            .or_insert_with(|| holder.clone());
        out.open.push(Judged {
            topic: topic.to_string(),
            partition,
            producer: p.clone(),
            verdict,
        });
    }
    out.open.sort_by(|a, b| {
        (&a.topic, a.partition, a.producer.producer_id).cmp(&(
            &b.topic,
            b.partition,
            b.producer.producer_id,
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::CoordinatorView;
    use crate::diagnose::hanging::{HangingReason, UnknownReason};
    use crate::partition::PartitionOutcome;
    use crate::protocol::TxnProtocol;

    const NOW: i64 = 10_000_000_000;
    const TIMEOUT: i64 = 900_000;

    fn open(pid: i64, last_timestamp: i64, start: i64) -> ProducerState {
        ProducerState {
            producer_id: pid,
            producer_epoch: 1,
            last_timestamp,
            coordinator_epoch: 1,
            current_txn_start_offset: start,
            ..Default::default()
        }
    }

    fn joined(producers: Vec<ProducerState>, view: CoordinatorView) -> Joined {
        Joined {
            partitions: vec![PartitionOutcome::answered("t", 0, 1, producers)],
            cluster_max_timeout_ms: Some(TIMEOUT),
            view,
            ..Joined::new(NOW, TxnProtocol::V1)
        }
    }

    fn visible() -> CoordinatorView {
        CoordinatorView {
            listing_complete: true,
            may_describe_any: true,
            ..Default::default()
        }
    }

    #[test]
    fn every_open_transaction_is_judged_in_order_the_recent_ones_not_candidates() {
        let f = findings(
            &joined(
                vec![
                    open(9, NOW - 3_600_000, 50),
                    open(3, NOW - 1_000, 40),
                    ProducerState {
                        current_txn_start_offset: -1,
                        ..open(5, NOW - 3_600_000, 0)
                    },
                ],
                visible(),
            ),
            TIMEOUT,
        );
        let judged: Vec<_> = f
            .open
            .iter()
            .map(|j| (j.producer.producer_id, j.verdict.clone()))
            .collect();
        assert_eq!(
            judged,
            vec![
                (3, None),
                (9, Some(Verdict::Hanging(HangingReason::NoTransaction)))
            ],
            "no entry for the producer without an open transaction"
        );
        assert_eq!(f.candidates().count(), 1);
        assert_eq!(f.open[1].problem(), f.open[1].verdict.as_ref());
        assert_eq!(f.open[0].problem(), None);
    }

    #[test]
    fn an_unknown_timestamp_is_unknown_where_a_known_one_hangs() {
        let f = findings(
            &joined(
                vec![open(1, 0, 5), open(2, -1, 6), open(3, NOW - 3_600_000, 7)],
                visible(),
            ),
            TIMEOUT,
        );
        let verdicts: Vec<_> = f.candidates().map(|(_, v)| v.clone()).collect();
        assert_eq!(
            verdicts,
            vec![
                Verdict::Unknown(UnknownReason::UnknownTimestamp),
                Verdict::Unknown(UnknownReason::UnknownTimestamp),
                Verdict::Hanging(HangingReason::NoTransaction),
            ]
        );
    }

    #[test]
    fn the_lso_is_held_by_the_transaction_that_started_first() {
        let f = findings(
            &joined(
                vec![open(4, NOW - 1_000, 90), open(3, NOW - 3_600_000, 12)],
                visible(),
            ),
            TIMEOUT,
        );
        assert_eq!(
            f.lso_holder("t", 0),
            Some(&LsoHolder {
                producer_id: 3,
                start_offset: 12,
                verdict: Some(Verdict::Hanging(HangingReason::NoTransaction)),
            })
        );
        assert_eq!(f.lso_holder("t", 1), None);
    }
}
