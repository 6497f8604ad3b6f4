//! Carrying a plan out: each step checked against the cluster again, the
//! ones still valid sent, and a report with one typed outcome per step,
//! numbered as in the plan.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kdp_wire::messages::ProducerState;
use kdp_wire::ErrorCode;

use crate::admin::KeyError;
use crate::describe::DescribeOptions;
use crate::txn::describe::describe_transactions;
use crate::txn::{driver_options, SharedClient};

use super::build::join_partitions;
use super::levers::{
    abort, advice, force_terminate, marker_coordinator_epoch, AbortSpec, Terminated,
};
use super::plan::{Action, Plan, Step};

/// The bounds a repair runs within.
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// Timeouts and retries for the re-checks and the repairs (the topics
    /// and broker are ignored: each step names its own).
    pub describe: DescribeOptions,
    /// What a force-terminate's InitProducerId asks the coordinator to
    /// record as the transaction timeout (Kafka's Admin sends its request
    /// timeout).
    pub transaction_timeout_ms: i32,
}

impl RepairOptions {
    /// Bounds from `describe`, the force-terminate's transaction timeout
    /// its request timeout (as Kafka's Admin).
    pub fn new(describe: DescribeOptions) -> Self {
        let transaction_timeout_ms =
            i32::try_from(describe.request_timeout.as_millis()).unwrap_or(i32::MAX);
        RepairOptions {
            describe,
            transaction_timeout_ms,
        }
    }
}

/// How the cluster no longer matches what a step's plan saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// The partition (or id) could not be described again.
    NotDescribed {
        /// What (`topic-partition` or the transactional id).
        what: String,
        /// Why.
        error: String,
    },
    /// The producer's open transaction ended.
    TransactionEnded {
        /// `topic-partition`.
        partition: String,
        /// The producer.
        producer_id: i64,
    },
    /// The producer's open transaction, epoch or coordinator epoch is not
    /// the planned one.
    ProducerMoved {
        /// `topic-partition`.
        partition: String,
        /// The producer as the partition reports it now.
        now: ProducerState,
    },
    /// The transactional id's producer or state is not the planned one.
    CoordinatorMoved {
        /// The transactional id.
        transactional_id: String,
        /// Its producer now.
        producer_id: i64,
        /// Its epoch now.
        producer_epoch: i16,
        /// Its state now.
        state: String,
    },
}

impl fmt::Display for Changed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Changed::NotDescribed { what, error } => write!(f, "cannot describe {what}: {error}"),
            Changed::TransactionEnded {
                partition,
                producer_id,
            } => write!(
                f,
                "{partition}: producer {producer_id} has no open transaction any more"
            ),
            Changed::ProducerMoved { partition, now } => write!(
                f,
                "{partition}: producer {} is now at epoch {} (coordinator epoch {}) with a \
                 transaction from offset {}",
                now.producer_id,
                now.producer_epoch,
                now.coordinator_epoch,
                now.current_txn_start_offset
            ),
            Changed::CoordinatorMoved {
                transactional_id,
                producer_id,
                producer_epoch,
                state,
            } => write!(
                f,
                "{transactional_id}: now producer {producer_id} epoch {producer_epoch} in {state}"
            ),
        }
    }
}

fn key_error_text(e: &KeyError) -> String {
    let mut s = e.name().to_string();
    if let Some(m) = &e.message {
        s.push_str(&format!(" ({m})"));
    }
    s
}

/// For each step, in order, whether the cluster still shows what the plan
/// saw: the partition's producer with the same open transaction and epochs
/// (an abort), the id with the same producer and state (a force-terminate).
/// Skipped and manual steps are always `Ok`.
pub async fn revalidate(
    client: &SharedClient,
    plan: &Plan,
    opts: &RepairOptions,
) -> Vec<Result<(), Changed>> {
    let partitions: BTreeSet<(String, i32)> = plan
        .steps
        .iter()
        .filter(|s| matches!(s.action, Action::Abort(_)))
        .flat_map(|s| s.seen.partitions.iter().map(|p| p.key()))
        .collect();
    let producers = if partitions.is_empty() {
        None
    } else {
        Some(
            join_partitions(client, partitions, &opts.describe)
                .await
                .map_err(|e| e.to_string()),
        )
    };
    let ids: Vec<String> = plan
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::ForceTerminate { transactional_id } => Some(transactional_id.clone()),
            _ => None,
        })
        .collect();
    let described = if ids.is_empty() {
        BTreeMap::new()
    } else {
        describe_transactions(client, ids, &driver_options(&opts.describe)).await
    };
    plan.steps
        .iter()
        .map(|s| match &s.action {
            Action::Abort(spec) => {
                let what = format!("{}-{}", spec.topic, spec.partition);
                let joined = match &producers {
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
                for part in &s.seen.partitions {
                    let partition = format!("{}-{}", part.topic, part.partition);
                    let now = joined.open_transactions().find(|(t, p, ps)| {
                        *t == part.topic
                            && *p == part.partition
                            && ps.producer_id == spec.producer_id
                    });
                    match now {
                        Some((_, _, ps))
                            if ps.current_txn_start_offset == part.start_offset
                                && ps.producer_epoch == s.seen.producer_epoch
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
                Some(d) => match &d.result {
                    // the partition's epoch may lag the coordinator's: compare the producer and state
                    Ok(t)
                        if t.producer_id == s.seen.producer_id
                            && t.state().is_some()
                            && t.state() == s.seen.coordinator.state() =>
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
        })
        .collect()
}

/// What a step that was sent did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// The leader wrote the ABORT marker.
    Aborted,
    /// The coordinator bumped the epoch (and aborted the transaction).
    Terminated(Terminated),
}

/// Why a step that was sent failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error (a broker's, or kdp's own as the closest Kafka code).
    pub error: KeyError,
    /// What to do about it, when there is something to do.
    pub advice: Option<&'static str>,
}

impl Failure {
    fn of(error: KeyError) -> Self {
        let advice = advice(error.code);
        Failure { error, advice }
    }

    fn no_answer() -> Self {
        Failure::of(KeyError::client(
            ErrorCode::REQUEST_TIMED_OUT,
            "no answer within the timeout",
        ))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", key_error_text(&self.error))?;
        if let Some(a) = self.advice {
            write!(f, ": {a}")?;
        }
        Ok(())
    }
}

/// What became of one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Sent, and done.
    Done(Done),
    /// Not sent, as planned: a skip or a manual step (the step says why).
    Skipped,
    /// Not sent: the cluster changed since the plan.
    Refused(Changed),
    /// Sent, and it failed.
    Failed(Failure),
}

/// One step and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    /// The step, with its plan number.
    pub step: Step,
    /// What became of it.
    pub outcome: Outcome,
}

/// What became of every step of a plan, in the plan's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// One per step, in step-number order.
    pub outcomes: Vec<StepOutcome>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| f(&o.outcome)).count()
    }

    /// Steps sent and done.
    pub fn done(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Done(_)))
    }

    /// Steps sent that failed.
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    /// Steps not sent because the cluster changed.
    pub fn refused(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Refused(_)))
    }

    /// Steps left, as planned, to an operator (skip and manual).
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped))
    }

    /// Whether every step that was to be sent was sent and done.
    pub fn all_sent_done(&self) -> bool {
        self.failed() == 0 && self.refused() == 0
    }
}

/// Checks the plan against the cluster again ([`revalidate`]), then sends
/// each step still valid: aborts at the partitions' leaders (one per
/// partition and round), then force-terminates at the coordinators. A step
/// whose state changed is not sent.
pub async fn execute(client: &SharedClient, plan: &Plan, opts: &RepairOptions) -> Report {
    let checks = revalidate(client, plan, opts).await;
    let dopts = driver_options(&opts.describe);
    let mut outcomes: BTreeMap<usize, Outcome> = BTreeMap::new();
    let mut aborts: Vec<(usize, AbortSpec)> = Vec::new();
    let mut terminates: Vec<(usize, String)> = Vec::new();
    for (step, check) in plan.steps.iter().zip(checks) {
        if let Err(changed) = check {
            outcomes.insert(step.number, Outcome::Refused(changed));
            continue;
        }
        match &step.action {
            Action::Abort(spec) => aborts.push((step.number, spec.clone())),
            Action::ForceTerminate { transactional_id } => {
                terminates.push((step.number, transactional_id.clone()))
            }
            Action::Skip(_) | Action::Manual(_) => {
                outcomes.insert(step.number, Outcome::Skipped);
            }
        }
    }
    // one abort per partition and driver run
    while !aborts.is_empty() {
        let mut seen = BTreeSet::new();
        let (now, later): (Vec<_>, Vec<_>) =
            aborts.into_iter().partition(|(_, s)| seen.insert(s.key()));
        aborts = later;
        let results = abort(client, now.iter().map(|(_, s)| s.clone()).collect(), &dopts).await;
        for (number, spec) in now {
            let outcome = match results.get(&spec.key()) {
                Some(Ok(())) => Outcome::Done(Done::Aborted),
                Some(Err(e)) => Outcome::Failed(Failure::of(e.clone())),
                None => Outcome::Failed(Failure::no_answer()),
            };
            outcomes.insert(number, outcome);
        }
    }
    if !terminates.is_empty() {
        let ids = terminates.iter().map(|(_, id)| id.clone()).collect();
        let results = force_terminate(client, ids, opts.transaction_timeout_ms, &dopts).await;
        for (number, id) in terminates {
            let outcome = match results.get(&id) {
                Some(Ok(t)) => Outcome::Done(Done::Terminated(*t)),
                Some(Err(e)) => Outcome::Failed(Failure::of(e.clone())),
                None => Outcome::Failed(Failure::no_answer()),
            };
            outcomes.insert(number, outcome);
        }
    }
    Report {
        outcomes: plan
            .steps
            .iter()
            .map(|s| StepOutcome {
                step: s.clone(),
                outcome: outcomes
                    .remove(&s.number)
                    .unwrap_or(Outcome::Failed(Failure::no_answer())),
            })
            .collect(),
    }
}
