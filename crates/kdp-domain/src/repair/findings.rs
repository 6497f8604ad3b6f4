//! The plan for what `find-hanging` found: one step per hanging, stuck or
//! unknown candidate (a transactional id's partitions share one
//! force-terminate).

use kdp_wire::messages::ProducerState;
use kdp_wire::TxnState;

use crate::diagnose::findings::{findings as judge, Findings};
use crate::diagnose::hanging::Verdict;
use crate::joined::Joined;

use crate::repair::levers::{marker_coordinator_epoch, AbortSpec};
use crate::repair::plan::{
    unblocks_in, Action, CoordinatorAnswer, Manual, ManualReason, PartitionSeen, Plan, Seen,
    SkipReason,
};

/// One candidate (an open transaction idle longer than the timeout) and
/// its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The producer as the partition reported it.
    pub producer: ProducerState,
    /// kdp's verdict.
    pub verdict: Verdict,
    /// What the coordinators said about the producer.
    pub coordinator: CoordinatorAnswer,
    /// Records ending this transaction releases ([`super::plan::unblocks`]).
    pub unblocks: Option<i64>,
}

/// Every candidate of a join, with its verdict, sorted by topic, partition
/// and producer (as `find-hanging` lists them).
pub fn findings(joined: &Joined, max_timeout_ms: i64) -> Vec<Finding> {
    // the one judgement find-hanging and the exporter share
    findings_judged(joined, &judge(joined, max_timeout_ms))
}

/// [`findings`] from the judgement of `joined` the caller already made
/// (`find-hanging` lists it and `kdp blocked` reads its LSO holders), so it
/// is made once.
pub fn findings_judged(joined: &Joined, judged: &Findings) -> Vec<Finding> {
    let by_partition = joined.by_partition();
    judged
        .candidates()
        .map(|(j, verdict)| Finding {
            topic: j.topic.clone(),
            partition: j.partition,
            producer: j.producer.clone(),
            verdict: verdict.clone(),
            coordinator: CoordinatorAnswer::of(joined, j.producer.producer_id),
            unblocks: unblocks_in(
                joined,
                by_partition.get(&(j.topic.as_str(), j.partition)).copied(),
                j.producer.producer_id,
            ),
        })
        .collect()
}

/// The plan for `findings`:
/// - hanging or stuck, the transactional id known and its Ongoing
///   transaction holding the partition: force-terminate (one per id);
/// - stuck in PrepareCommit/PrepareAbort: skipped (only the coordinator may
///   write a decided outcome);
/// - hanging otherwise: a raw abort with the partition's epochs;
/// - unknown: a manual step, `kdp abort ... --start-offset O` with
///   `connection` (the flags that reach the cluster, e.g.
///   `["--bootstrap-server", "host:9092"]`), and why kdp did not run it;
/// - not hanging: nothing.
pub fn plan_findings(findings: &[Finding], connection: &[String]) -> Plan {
    let mut plan = Plan::default();
    for f in findings {
        let part = PartitionSeen {
            topic: f.topic.clone(),
            partition: f.partition,
            start_offset: f.producer.current_txn_start_offset,
            unblocks: f.unblocks,
        };
        let seen = Seen {
            producer_id: f.producer.producer_id,
            producer_epoch: f.producer.producer_epoch,
            partitions: vec![part.clone()],
            coordinator: f.coordinator.clone(),
        };
        let action = match &f.verdict {
            Verdict::NotHanging => continue,
            Verdict::Unknown(reason) => {
                let mut args = vec!["kdp".to_string(), "abort".to_string()];
                args.extend(connection.iter().cloned());
                args.extend([
                    "--topic".to_string(),
                    f.topic.clone(),
                    "--partition".to_string(),
                    f.partition.to_string(),
                    "--start-offset".to_string(),
                    f.producer.current_txn_start_offset.to_string(),
                ]);
                Action::Manual(Manual {
                    args,
                    why: ManualReason::Unknown(reason.clone()),
                })
            }
            Verdict::Hanging(_) | Verdict::Stuck { .. } => {
                let tracked = f.coordinator.includes(&f.topic, f.partition) == Some(true);
                match (
                    f.coordinator.transactional_id(),
                    tracked,
                    f.coordinator.state(),
                ) {
                    (Some(id), true, Some(TxnState::Ongoing)) => {
                        let same = plan.steps.iter_mut().find(|s| {
                            matches!(&s.action, Action::ForceTerminate { transactional_id } if transactional_id == id)
                        });
                        if let Some(s) = same {
                            s.seen.partitions.push(part);
                            continue;
                        }
                        Action::ForceTerminate {
                            transactional_id: id.to_string(),
                        }
                    }
                    (_, true, Some(state @ (TxnState::PrepareCommit | TxnState::PrepareAbort))) => {
                        Action::Skip(SkipReason::Decided { state })
                    }
                    _ => match i16::try_from(f.producer.producer_epoch) {
                        Ok(epoch) => Action::Abort(AbortSpec {
                            topic: f.topic.clone(),
                            partition: f.partition,
                            producer_id: f.producer.producer_id,
                            producer_epoch: epoch,
                            coordinator_epoch: marker_coordinator_epoch(
                                f.producer.coordinator_epoch,
                            ),
                        }),
                        Err(_) => Action::Skip(SkipReason::EpochOutOfRange {
                            epoch: f.producer.producer_epoch,
                        }),
                    },
                }
            }
        };
        plan.push(action, seen);
    }
    plan
}

#[cfg(test)]
mod tests {
    use kdp_wire::messages::{TopicData, TransactionState};

    use super::*;
    use crate::diagnose::hanging::{HangingReason, UnknownReason};
    use crate::repair::plan::NotAsked;

    fn finding(
        partition: i32,
        verdict: Verdict,
        id: Option<&str>,
        state: Option<&str>,
        tracked: bool,
    ) -> Finding {
        let coordinator = match (id, state) {
            (Some(id), Some(state)) => CoordinatorAnswer::Described(TransactionState {
                transactional_id: id.into(),
                transaction_state: state.into(),
                topics: if tracked {
                    vec![TopicData {
                        topic: "t".into(),
                        partitions: vec![partition],
                        ..Default::default()
                    }]
                } else {
                    Vec::new()
                },
                ..Default::default()
            }),
            (Some(id), None) => CoordinatorAnswer::NotAsked(NotAsked::Denied {
                transactional_id: id.into(),
            }),
            _ => CoordinatorAnswer::NotListed,
        };
        Finding {
            topic: "t".into(),
            partition,
            producer: ProducerState {
                producer_id: 100 + i64::from(partition),
                producer_epoch: 3,
                coordinator_epoch: -1,
                current_txn_start_offset: 10,
                ..Default::default()
            },
            verdict,
            coordinator,
            unblocks: Some(5),
        }
    }

    #[test]
    fn force_terminate_is_preferred_decided_ones_are_skipped_and_unknown_ones_left_by_hand() {
        let hanging = Verdict::Hanging(HangingReason::NoTransaction);
        let findings = vec![
            finding(0, hanging.clone(), None, None, false),
            finding(1, hanging.clone(), Some("a"), Some("Ongoing"), true),
            finding(2, hanging.clone(), Some("a"), Some("Ongoing"), true),
            finding(3, hanging.clone(), Some("b"), Some("Ongoing"), false),
            finding(
                4,
                Verdict::Stuck {
                    state: TxnState::PrepareCommit,
                },
                Some("c"),
                Some("PrepareCommit"),
                true,
            ),
            finding(
                5,
                Verdict::Unknown(UnknownReason::NotAuthorized),
                Some("d"),
                None,
                false,
            ),
            finding(6, Verdict::NotHanging, Some("e"), Some("Ongoing"), true),
        ];
        let flags = ["--bootstrap-server".to_string(), "h:9092".to_string()];
        let plan = plan_findings(&findings, &flags);
        let kinds: Vec<String> = plan
            .steps
            .iter()
            .map(|s| match &s.action {
                Action::Abort(a) => format!(
                    "{} abort {} epoch {} ce {}",
                    s.number, a.partition, a.producer_epoch, a.coordinator_epoch
                ),
                Action::ForceTerminate { transactional_id } => format!(
                    "{} terminate {transactional_id} x{}",
                    s.number,
                    s.seen.partitions.len()
                ),
                Action::Skip(_) => format!("{} skip {}", s.number, s.seen.partitions[0].partition),
                Action::Manual(m) => format!("{} manual: {}", s.number, m.command_line()),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "1 abort 0 epoch 3 ce 0",
                "2 terminate a x2",
                "3 abort 3 epoch 3 ce 0",
                "4 skip 4",
                "5 manual: kdp abort --bootstrap-server h:9092 --topic t --partition 5 \
                 --start-offset 10",
            ]
        );
        assert_eq!(plan.steps[1].seen.unblocks(), Some(10));
        assert!(plan.sends_anything());
    }

    #[test]
    fn a_command_line_quotes_what_the_shell_would_split() {
        let m = Manual {
            args: vec!["kdp".into(), "--topic".into(), "a b'c".into()],
            why: ManualReason::Unknown(UnknownReason::ListingIncomplete),
        };
        assert_eq!(m.command_line(), r"kdp --topic 'a b'\''c'");
    }
}
