//! Carrying a plan out: each step checked against the cluster again
//! ([`recheck`]), the ones still valid sent, and a report with one typed
//! outcome per step, numbered as in the plan.

use std::collections::{BTreeMap, BTreeSet};

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::describe::DescribeOptions;
use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::init_producer_id::force_terminate;
use kdp_client::txn::write_txn_markers::abort;
use kdp_domain::repair::levers::AbortSpec;
use kdp_domain::repair::plan::{Action, Plan};
use kdp_domain::repair::report::{Changed, Done, Failure, Outcome, Report, StepOutcome};
use kdp_domain::repair::revalidate::recheck;

use crate::repair::build::join_partitions;

/// How a repair batches, and what a force-terminate asks for. Time is the
/// caller's [`TimeBound`].
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// Batching of the re-checks and the repairs (the topics and broker are
    /// ignored: each step names its own).
    pub describe: DescribeOptions,
    /// What a force-terminate's InitProducerId asks the coordinator to
    /// record as the transaction timeout (Kafka's Admin sends its request
    /// timeout).
    pub transaction_timeout_ms: i32,
}

impl RepairOptions {
    /// The default batching, the force-terminate's transaction timeout the
    /// request timeout of `bound` (as Kafka's Admin).
    pub fn new(bound: &TimeBound) -> Self {
        let transaction_timeout_ms =
            i32::try_from(bound.request_timeout_setting().as_millis()).unwrap_or(i32::MAX);
        RepairOptions {
            describe: DescribeOptions::default(),
            transaction_timeout_ms,
        }
    }
}

/// For each step, in order, whether the cluster still shows what the plan
/// saw: the partition's producer with the same open transaction and epochs
/// (an abort), the id with the same producer and state (a force-terminate).
/// Skipped and manual steps are always `Ok`.
pub async fn revalidate(
    client: &SharedClient,
    plan: &Plan,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Vec<Result<(), Changed>> {
    let partitions = plan.abort_partitions();
    let producers = if partitions.is_empty() {
        None
    } else {
        Some(
            join_partitions(client, partitions, &opts.describe, bound)
                .await
                .map_err(|e| e.to_string()),
        )
    };
    let ids = plan.force_terminate_ids();
    let described = if ids.is_empty() {
        BTreeMap::new()
    } else {
        describe_transactions(client, ids, &opts.describe.driver_options(), bound)
            .await
            .into_iter()
            .map(|(id, d)| (id, d.result))
            .collect()
    };
    plan.steps
        .iter()
        .map(|s| recheck(s, producers.as_ref(), &described))
        .collect()
}

/// Checks the plan against the cluster again ([`revalidate`]), then sends
/// each step still valid: aborts at the partitions' leaders (one per
/// partition and round), then force-terminates at the coordinators. A step
/// whose state changed is not sent.
pub async fn execute(
    client: &SharedClient,
    plan: &Plan,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Report {
    let checks = revalidate(client, plan, opts, bound).await;
    let dopts = opts.describe.driver_options();
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
        let specs = now.iter().map(|(_, s)| s.clone()).collect();
        let results = abort(client, specs, &dopts, bound).await;
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
        let results =
            force_terminate(client, ids, opts.transaction_timeout_ms, &dopts, bound).await;
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
