//! Plans built by asking the cluster: the join (or DescribeTransactions)
//! the pure planners take, run with the caller's bounds.

use std::collections::BTreeMap;

use crate::admin::KeyError;
use crate::describe::{DescribeOptions, TopicSelection};
use crate::txn::describe::describe_transactions;
use crate::txn::join::{join, JoinOptions, Joined};
use crate::txn::{driver_options, SharedClient};

use super::plan::{
    plan_abort_from, unblocks_in, AbortTarget, Action, CoordinatorAnswer, PartitionSeen, Plan,
    Refusal, Seen,
};

/// Why [`plan_abort`] made no plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The cluster could not be reached.
    #[error("cannot reach the cluster: {0}")]
    Unreachable(#[from] crate::error::Error),
    /// The plan would not be right (see [`Refusal`]).
    #[error("{0}")]
    Refused(#[from] Refusal),
}

/// The join over the given partitions, open transactions looked up at
/// their coordinators: what every repair plan is made from.
pub async fn join_partitions(
    client: &SharedClient,
    partitions: impl IntoIterator<Item = (String, i32)>,
    describe: &DescribeOptions,
) -> crate::error::Result<Joined> {
    let mut wanted: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        let ps = wanted.entry(t).or_default();
        if !ps.contains(&p) {
            ps.push(p);
        }
    }
    let topics = wanted
        .into_iter()
        .map(|(name, mut partitions)| {
            partitions.sort_unstable();
            TopicSelection {
                name,
                partitions: Some(partitions),
            }
        })
        .collect();
    let opts = JoinOptions {
        describe: DescribeOptions {
            topics: Some(topics),
            broker_id: None,
            ..describe.clone()
        },
        open_only: true,
        lookups: Default::default(),
    };
    join(client, &opts).await
}

/// Describes the partition and plans the abort ([`plan_abort_from`]).
pub async fn plan_abort(
    client: &SharedClient,
    target: &AbortTarget,
    describe: &DescribeOptions,
) -> Result<Plan, PlanError> {
    let joined = join_partitions(client, [target.partition()], describe).await?;
    Ok(plan_abort_from(&joined, target)?)
}

/// A force-terminate plan, and the ids left out of it.
#[derive(Debug, Clone)]
pub struct ForceTerminatePlan {
    /// One step per id its coordinator described.
    pub plan: Plan,
    /// The ids no coordinator described, with the error when there is one:
    /// nothing is planned (or sent) for them.
    pub left_alone: Vec<(String, Option<KeyError>)>,
}

/// Describes each id at its coordinator and plans one force-terminate per
/// id described; the partitions of its transaction are then described so
/// that the plan says where the producer's transaction starts on each and
/// what ending it releases (`-1` and unknown when they do not answer).
pub async fn plan_force_terminate(
    client: &SharedClient,
    ids: &[String],
    describe: &DescribeOptions,
) -> ForceTerminatePlan {
    let mut ids = ids.to_vec();
    ids.sort();
    ids.dedup();
    let described = describe_transactions(client, ids.clone(), &driver_options(describe)).await;
    let mut plan = Plan::default();
    let mut left_alone = Vec::new();
    for id in ids {
        match described.get(&id).map(|d| &d.result) {
            Some(Ok(t)) => {
                let partitions = t
                    .topics
                    .iter()
                    .flat_map(|td| {
                        td.partitions.iter().map(|p| PartitionSeen {
                            topic: td.topic.clone(),
                            partition: *p,
                            start_offset: -1,
                            unblocks: None,
                        })
                    })
                    .collect();
                plan.push(
                    Action::ForceTerminate {
                        transactional_id: id.clone(),
                    },
                    Seen {
                        producer_id: t.producer_id,
                        producer_epoch: i32::from(t.producer_epoch),
                        partitions,
                        coordinator: CoordinatorAnswer::Described(t.clone()),
                    },
                );
            }
            Some(Err(e)) => left_alone.push((id, Some(e.clone()))),
            None => left_alone.push((id, None)),
        }
    }
    let wanted: Vec<(String, i32)> = plan
        .steps
        .iter()
        .flat_map(|s| s.seen.partitions.iter().map(PartitionSeen::key))
        .collect();
    if !wanted.is_empty() {
        if let Ok(joined) = join_partitions(client, wanted, describe).await {
            let by_partition = joined.by_partition();
            for step in &mut plan.steps {
                let pid = step.seen.producer_id;
                for part in &mut step.seen.partitions {
                    let outcome = by_partition
                        .get(&(part.topic.as_str(), part.partition))
                        .copied();
                    let open = outcome
                        .and_then(|o| o.result.as_deref().ok())
                        .unwrap_or_default()
                        .iter()
                        .find(|ps| ps.producer_id == pid && ps.current_txn_start_offset >= 0);
                    if let Some(ps) = open {
                        part.start_offset = ps.current_txn_start_offset;
                        part.unblocks = unblocks_in(&joined, outcome, pid);
                    } else if outcome.is_some_and(|o| o.result.is_ok()) {
                        // described, and no open transaction of the producer there
                        part.unblocks = Some(0);
                    }
                }
            }
        }
    }
    ForceTerminatePlan { plan, left_alone }
}
