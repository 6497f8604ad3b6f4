//! After a repair, whether it worked: each partition a step touched read
//! again (high watermark and LSO with ListOffsets, the producers with
//! DescribeProducers) and set beside what it was before the repair
//! ([`snapshot`], taken before [`execute`](super::execute::execute)), with
//! the consumer groups that were blocked at the old LSO.
//!
//! A force-terminate returns once the coordinator bumped the epoch; the
//! coordinator writes the abort markers afterwards. So [`prove`] reads the
//! partitions again until every LSO moved or the deadline (the command's
//! one `--timeout`, its [`TimeBound`]) passes ([`Proof::settled`]).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::txn::offsets::offsets;
use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;
use kdp_domain::repair::plan::Plan;
use kdp_domain::repair::proof::{
    groups_blocked_at, not_described, to_prove, touched, PartitionState, Proof, Snapshot,
};
use kdp_domain::repair::report::Report;

use crate::groups::read_groups;
use crate::repair::build::join_partitions;
use crate::repair::execute::RepairOptions;

/// The first pause between two reads of the partitions after a repair;
/// doubled up to [`POLL_MAX`].
const POLL_FIRST: Duration = Duration::from_millis(100);
/// The longest pause between two reads.
const POLL_MAX: Duration = Duration::from_secs(1);

/// Reads `partitions`: offsets and open transactions.
async fn read(
    client: &SharedClient,
    partitions: &[TopicPartition],
    opts: &RepairOptions,
    bound: &TimeBound,
) -> BTreeMap<TopicPartition, PartitionState> {
    let dopts = opts.describe.driver_options();
    let (read_offsets, joined) = tokio::join!(
        offsets(client, partitions.to_vec(), &dopts, bound),
        join_partitions(client, partitions.iter().cloned(), &opts.describe, bound),
    );
    // each partition's producers by key: a search per partition would be
    // quadratic in a repair of many partitions
    let described = joined.as_ref().map(|j| {
        j.partitions
            .iter()
            .map(|o| ((o.topic.as_str(), o.partition), &o.result))
            .collect::<HashMap<_, _>>()
    });
    partitions
        .iter()
        .map(|tp| {
            let offsets = read_offsets.get(tp).cloned().unwrap_or_else(|| {
                Err(KeyError::client(
                    kdp_wire::ErrorCode::REQUEST_TIMED_OUT,
                    "no ListOffsets answer",
                ))
            });
            let open = match &described {
                Err(e) => Err(KeyError::client(
                    kdp_wire::ErrorCode::UNKNOWN_SERVER_ERROR,
                    e.to_string(),
                )),
                Ok(described) => match described.get(&(tp.0.as_str(), tp.1)) {
                    Some(Ok(ps)) => Ok(ps
                        .iter()
                        .filter(|p| p.current_txn_start_offset >= 0)
                        .map(|p| (p.producer_id, p.current_txn_start_offset))
                        .collect()),
                    Some(Err(e)) => Err(e.clone()),
                    None => Err(not_described()),
                },
            };
            (tp.clone(), PartitionState { offsets, open })
        })
        .collect()
}

/// The groups with a committed offset at each partition's LSO.
async fn blocked_groups(
    client: &SharedClient,
    states: &BTreeMap<TopicPartition, PartitionState>,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<TopicPartition, Vec<String>>, String> {
    let dopts = opts.describe.driver_options();
    let read = read_groups(client, &Default::default(), &dopts, bound)
        .await
        .map_err(|e| e.to_string())?;
    groups_blocked_at(&read, states)
}

/// Reads every partition the plan's sending steps touch, before the
/// repair: offsets, open transactions and the groups blocked at the LSO.
pub async fn snapshot(
    client: &SharedClient,
    plan: &Plan,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Snapshot {
    let producers = touched(plan, |_| true);
    if producers.is_empty() {
        return Snapshot::default();
    }
    let keys: Vec<TopicPartition> = producers.keys().cloned().collect();
    let partitions = read(client, &keys, opts, bound).await;
    let blocked_groups = blocked_groups(client, &partitions, opts, bound).await;
    Snapshot {
        partitions,
        producers,
        blocked_groups,
    }
}

/// The proof of a repair: the partitions of the steps the report says are
/// done, read again until each LSO moved or `bound`'s deadline passes
/// (pausing between reads on tokio's clock), set beside `before`.
pub async fn prove(
    client: &SharedClient,
    before: &Snapshot,
    report: &Report,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Proof {
    let wanted = to_prove(before, report);
    if wanted.is_empty() {
        return Proof::of(before, BTreeMap::new(), wanted, 0);
    }
    let keys: Vec<TopicPartition> = wanted.keys().cloned().collect();
    let mut pause = POLL_FIRST;
    let mut reads = 0;
    let mut after;
    loop {
        after = read(client, &keys, opts, bound).await;
        reads += 1;
        if Proof::settled(before, &after, &wanted) || bound.remaining() <= pause {
            break;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(POLL_MAX);
    }
    Proof::of(before, after, wanted, reads)
}
