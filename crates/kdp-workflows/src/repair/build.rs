//! Plans built by asking the cluster: the join (or DescribeTransactions)
//! the pure planners take, run with the caller's bounds.

use std::collections::BTreeMap;

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::describe::{DescribeOptions, TopicSelection};
use kdp_client::txn::describe::describe_transactions;
use kdp_domain::joined::Joined;
use kdp_domain::key_error::KeyError;
use kdp_domain::repair::plan::{
    force_terminate_plan, place_partitions, plan_abort_from, AbortTarget, ForceTerminatePlan,
    PartitionSeen, Plan, Refusal,
};
use kdp_wire::messages::TransactionState;

use crate::join::{join, JoinOptions};

/// Why [`plan_abort`] made no plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The cluster could not be reached.
    #[error("cannot reach the cluster: {0}")]
    Unreachable(#[from] kdp_client::error::Error),
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
    bound: &TimeBound,
) -> kdp_client::error::Result<Joined> {
    let topics = TopicSelection::of_partitions(partitions);
    let opts = JoinOptions {
        describe: DescribeOptions {
            topics: Some(topics),
            broker_id: None,
            ..describe.clone()
        },
        open_only: true,
        lookups: Default::default(),
        retain: Default::default(),
    };
    join(client, &opts, bound).await
}

/// Describes the partition and plans the abort ([`plan_abort_from`]).
pub async fn plan_abort(
    client: &SharedClient,
    target: &AbortTarget,
    describe: &DescribeOptions,
    bound: &TimeBound,
) -> Result<Plan, PlanError> {
    let joined = join_partitions(client, [target.partition()], describe, bound).await?;
    Ok(plan_abort_from(&joined, target)?)
}

/// Describes each id at its coordinator and plans one force-terminate per
/// id described; the partitions of its transaction are then described so
/// that the plan says where the producer's transaction starts on each and
/// what ending it releases (`-1` and unknown when they do not answer).
pub async fn plan_force_terminate(
    client: &SharedClient,
    ids: &[String],
    describe: &DescribeOptions,
    bound: &TimeBound,
) -> ForceTerminatePlan {
    let mut ids = ids.to_vec();
    ids.sort();
    ids.dedup();
    let described: BTreeMap<String, Result<TransactionState, KeyError>> =
        describe_transactions(client, ids.clone(), &describe.driver_options(), bound)
            .await
            .into_iter()
            .map(|(id, d)| (id, d.result))
            .collect();
    let mut planned = force_terminate_plan(&ids, &described);
    let wanted: Vec<(String, i32)> = planned
        .plan
        .steps
        .iter()
        .flat_map(|s| s.seen.partitions.iter().map(PartitionSeen::key))
        .collect();
    if !wanted.is_empty() {
        if let Ok(joined) = join_partitions(client, wanted, describe, bound).await {
            place_partitions(&mut planned.plan, &joined);
        }
    }
    planned
}
