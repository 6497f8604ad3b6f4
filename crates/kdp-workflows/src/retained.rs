//! The join's describe as it arrives: each partition's answer, read where
//! it lies ([`LeaderAnswer`]), kept as the join's [`Retain`] says, so the
//! producers `find-hanging` and `blocked` do not read are never built.

use std::collections::HashSet;

use kdp_domain::partition::{has_open_transaction, PartitionOutcome};
use kdp_domain::retained::{LastWrites, Retain};

use crate::leaders::LeaderAnswer;

/// What a join keeps of its describe, answer by answer.
#[derive(Debug, Default)]
pub struct Retained {
    retain: Retain,
    open_only: bool,
    partitions: Vec<PartitionOutcome>,
    unkept_writes: LastWrites,
}

impl Retained {
    /// Keeping what `retain` says of a join that looks up only open
    /// transactions (`open_only`) or also the marked producers.
    pub fn new(retain: Retain, open_only: bool) -> Self {
        Retained {
            retain,
            open_only,
            ..Retained::default()
        }
    }

    /// One partition's answer: its outcome with the producers kept; the
    /// others' writes folded when they are read.
    pub fn add(&mut self, a: LeaderAnswer<'_>) {
        if self.retain == Retain::Every {
            self.partitions.push(a.to_outcome());
            return;
        }
        let (retain, open_only) = (self.retain, self.open_only);
        let folds = retain.folds_writes();
        let writes = &mut self.unkept_writes;
        self.partitions.push(a.keeping(
            |p| retain.keeps(p, open_only),
            |p| {
                if folds {
                    writes.add(&p);
                }
            },
        ));
    }

    /// The partitions, in the order they were answered, and the writes of
    /// the producers not kept whose id has an open transaction (no other
    /// is read: a pinning producer has one).
    pub fn finish(self) -> (Vec<PartitionOutcome>, LastWrites) {
        let mut partitions = self.partitions;
        // pushed one answer at a time, the vector doubled: up to half of
        // it is spare, and it lives as long as the join
        partitions.shrink_to_fit();
        let mut writes = self.unkept_writes;
        if !writes.is_empty() {
            let open: HashSet<i64> = partitions
                .iter()
                .filter_map(|o| o.result.as_ref().ok())
                .flatten()
                .filter(|p| has_open_transaction(*p))
                .map(|p| p.producer_id)
                .collect();
            writes.retain_ids(|pid| open.contains(&pid));
        }
        (partitions, writes)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kdp_domain::coordinator::{CoordinatorView, Description};
    use kdp_domain::diagnose::blocked::{blocked, BlockedOptions};
    use kdp_domain::diagnose::findings;
    use kdp_domain::joined::Joined;
    use kdp_domain::key_error::KeyError;
    use kdp_domain::offsets::Offsets;
    use kdp_domain::protocol::TxnProtocol;
    use kdp_domain::repair::findings_judged;
    use kdp_wire::messages::{ProducerState, TopicData, TransactionState};
    use kdp_wire::testgen::Gen;
    use kdp_wire::ErrorCode;

    use super::*;

    const NOW: i64 = 10_000_000_000;
    const TIMEOUT: i64 = 900_000;

    /// A join of every producer: ids from a small pool (so most write to
    /// several partitions), open or not, LastTimestamps old, recent or
    /// unknown, some partitions failed; the offsets of each partition with
    /// an open transaction, pinned or not; some ids listed, described with
    /// some of their partitions, or not found.
    fn generated(seed: u64) -> Joined {
        let mut r = Gen::new(seed);
        let stamps = [NOW - 3_600_000, NOW - 1_000, 0, -1, NOW - 7 * 86_400_000];
        let mut partitions = Vec::new();
        let mut offsets = BTreeMap::new();
        for t in 0..3 {
            for p in 0..4 {
                let topic = format!("t{t}");
                if r.below(9) == 0 {
                    partitions.push(PartitionOutcome {
                        topic,
                        partition: p,
                        broker_id: Some(1),
                        result: Err(KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None)),
                    });
                    continue;
                }
                let mut ps: Vec<ProducerState> = Vec::new();
                let mut open = false;
                for _ in 0..r.below(6) {
                    let producer_id = 100 + i64::try_from(r.below(8)).unwrap_or(0);
                    if ps.iter().any(|s| s.producer_id == producer_id) {
                        continue;
                    }
                    let start = match r.below(3) {
                        0 => 10 + i64::try_from(r.below(40)).unwrap_or(0),
                        _ => -1,
                    };
                    open |= start >= 0;
                    ps.push(ProducerState {
                        producer_id,
                        producer_epoch: 1,
                        last_sequence: 3,
                        last_timestamp: stamps[usize::try_from(r.below(5)).unwrap_or(0)],
                        coordinator_epoch: if start >= 0 || r.below(2) == 0 { 2 } else { -1 },
                        current_txn_start_offset: start,
                        ..Default::default()
                    });
                }
                if open {
                    let lso = ps
                        .iter()
                        .map(|s| s.current_txn_start_offset)
                        .filter(|&s| s >= 0)
                        .min()
                        .unwrap_or(0);
                    let hw = lso + i64::try_from(r.below(3)).unwrap_or(0) * 50;
                    offsets.insert(
                        (topic.clone(), p),
                        Ok(Offsets {
                            high_watermark: hw,
                            last_stable_offset: lso,
                        }),
                    );
                }
                partitions.push(PartitionOutcome::answered(topic, p, 1, ps));
            }
        }
        let mut view = CoordinatorView {
            listing_complete: true,
            may_describe_any: r.below(4) != 0,
            ..Default::default()
        };
        for pid in 100..108 {
            let id = format!("tx-{pid}");
            match r.below(3) {
                0 => continue,
                1 => {
                    view.descriptions.insert(id.clone(), Description::NotFound);
                }
                _ => {
                    let t = format!("t{}", r.below(3));
                    let state = ["Ongoing", "PrepareCommit", "Empty"]
                        [usize::try_from(r.below(3)).unwrap_or(0)];
                    view.descriptions.insert(
                        id.clone(),
                        Description::Described(TransactionState {
                            transactional_id: id.clone(),
                            transaction_state: state.into(),
                            transaction_timeout_ms: 60_000,
                            transaction_start_time_ms: NOW - 2 * 3_600_000,
                            producer_id: pid,
                            producer_epoch: 1,
                            topics: vec![TopicData {
                                topic: t,
                                partitions: vec![0, 2],
                                ..Default::default()
                            }],
                            ..Default::default()
                        }),
                    );
                }
            }
            view.listed.insert(pid, id);
        }
        Joined {
            partitions,
            cluster_max_timeout_ms: Some(TIMEOUT),
            view,
            offsets,
            ..Joined::new(NOW, TxnProtocol::V1)
        }
    }

    /// `joined` as a join that keeps what `retain` says would hold it.
    fn retained(joined: &Joined, retain: Retain) -> Joined {
        let mut r = Retained::new(retain, true);
        for o in &joined.partitions {
            r.add(LeaderAnswer::of(o));
        }
        let (partitions, unkept_writes) = r.finish();
        Joined {
            partitions,
            unkept_writes,
            ..joined.clone()
        }
    }

    #[test]
    fn the_judgements_of_the_retained_producers_are_those_of_them_all() {
        let opts = BlockedOptions {
            max_timeout_ms: TIMEOUT,
            ..Default::default()
        };
        // how often keeping no other write changes the diagnosis: the
        // comparison can fail
        let mut writes_mattered = 0;
        for seed in 0..300 {
            let every = generated(seed);
            let kept = retained(&every, Retain::SelectedAndWrites);
            let found = findings(&every, TIMEOUT);
            assert_eq!(findings(&kept, TIMEOUT), found, "seed {seed}");
            assert_eq!(
                findings_judged(&kept, &found),
                findings_judged(&every, &found),
                "seed {seed}"
            );
            assert_eq!(
                blocked(&kept, &[], &opts),
                blocked(&every, &[], &opts),
                "seed {seed}"
            );
            let selected = retained(&every, Retain::Selected);
            assert_eq!(findings(&selected, TIMEOUT), found, "seed {seed}");
            assert!(selected.unkept_writes.is_empty());
            writes_mattered +=
                usize::from(blocked(&selected, &[], &opts) != blocked(&every, &[], &opts));
            // every partition kept, its error as it was
            let keys = |j: &Joined| -> Vec<_> {
                j.partitions
                    .iter()
                    .map(|o| {
                        (
                            o.topic.clone(),
                            o.partition,
                            o.result.as_ref().err().cloned(),
                        )
                    })
                    .collect()
            };
            assert_eq!(keys(&kept), keys(&every), "seed {seed}");
            let every_kept = retained(&every, Retain::Every);
            assert_eq!(every_kept.partitions, every.partitions, "seed {seed}");
        }
        assert!(writes_mattered > 0);
    }
}
