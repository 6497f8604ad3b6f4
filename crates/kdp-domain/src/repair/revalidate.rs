//! The re-check right before a plan is carried out: each step against the
//! cluster as read again, so that nothing is sent once the state a step was
//! planned from has changed. Pure: kdp-workflows reads the cluster again
//! and asks [`recheck`] of each step.

use std::collections::BTreeMap;

use kdp_wire::messages::TransactionState;

use crate::joined::Joined;
use crate::key_error::KeyError;
use crate::repair::levers::marker_coordinator_epoch;
use crate::repair::plan::{Action, Step};
use crate::repair::report::{key_error_text, Changed};

/// Whether the cluster still shows what `step`'s plan saw: the
/// partition's producer with the same open transaction and epochs (an
/// abort; `joined` is the join over the plan's abort partitions, or why it
/// could not be made, `None` when it was not made), the id with the same
/// producer and state (a force-terminate; `described` holds each id's
/// DescribeTransactions answer). Skipped and manual steps are always `Ok`.
pub fn recheck(
    step: &Step,
    joined: Option<&Result<Joined, String>>,
    described: &BTreeMap<String, Result<TransactionState, KeyError>>,
) -> Result<(), Changed> {
    match &step.action {
        Action::Abort(spec) => {
            let what = format!("{}-{}", spec.topic, spec.partition);
            let joined = match joined {
                Some(Ok(j)) => j,
                Some(Err(e)) => {
                    return Err(Changed::NotDescribed {
                        what,
                        error: e.clone(),
                    })
                }
                None => {
                    return Err(Changed::NotDescribed {
                        what,
                        error: "not described".into(),
                    })
                }
            };
            if let Some(Err(e)) = joined
                .partitions
                .iter()
                .find(|o| o.topic == spec.topic && o.partition == spec.partition)
                .map(|o| &o.result)
            {
                return Err(Changed::NotDescribed {
                    what,
                    error: key_error_text(e),
                });
            }
            for part in &step.seen.partitions {
                let partition = format!("{}-{}", part.topic, part.partition);
                let now = joined.open_transactions().find(|(t, p, ps)| {
                    *t == part.topic && *p == part.partition && ps.producer_id == spec.producer_id
                });
                match now {
                    Some((_, _, ps))
                        if ps.current_txn_start_offset == part.start_offset
                            && ps.producer_epoch == step.seen.producer_epoch
                            && marker_coordinator_epoch(ps.coordinator_epoch)
                                == spec.coordinator_epoch => {}
                    Some((_, _, ps)) => {
                        return Err(Changed::ProducerMoved {
                            partition,
                            now: ps.clone(),
                        })
                    }
                    None => {
                        return Err(Changed::TransactionEnded {
                            partition,
                            producer_id: spec.producer_id,
                        })
                    }
                }
            }
            Ok(())
        }
        Action::ForceTerminate { transactional_id } => match described.get(transactional_id) {
            Some(d) => match d {
                // the partition's epoch may lag the coordinator's: compare the producer and state
                Ok(t)
                    if t.producer_id == step.seen.producer_id
                        && t.state().is_some()
                        && t.state() == step.seen.coordinator.state() =>
                {
                    Ok(())
                }
                Ok(t) => Err(Changed::CoordinatorMoved {
                    transactional_id: transactional_id.clone(),
                    producer_id: t.producer_id,
                    producer_epoch: t.producer_epoch,
                    state: t.transaction_state.clone(),
                }),
                Err(e) => Err(Changed::NotDescribed {
                    what: transactional_id.clone(),
                    error: key_error_text(e),
                }),
            },
            None => Err(Changed::NotDescribed {
                what: transactional_id.clone(),
                error: "no answer from its coordinator".into(),
            }),
        },
        Action::Skip(_) | Action::Manual(_) => Ok(()),
    }
}
