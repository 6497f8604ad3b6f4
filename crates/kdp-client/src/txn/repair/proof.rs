//! After a repair, whether it worked: each partition a step touched read
//! again (high watermark and LSO with ListOffsets, the producers with
//! DescribeProducers) and set beside what it was before the repair
//! ([`snapshot`], taken before [`execute`](super::execute)), with the
//! consumer groups that were blocked at the old LSO.
//!
//! A force-terminate returns once the coordinator bumped the epoch; the
//! coordinator writes the abort markers afterwards. So [`prove`] reads the
//! partitions again until every LSO moved or the deadline (the command's
//! one `--timeout`) passes, and a partition whose LSO did not move by then
//! is reported as [`LsoChange::NotMoved`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use crate::admin::{KeyError, TopicPartition};
use crate::deadline::Deadline;
use crate::diagnose::blocked::GroupVerdict;
use crate::groups::{read_groups, Committed};
use crate::txn::offsets::{offsets, Offsets};
use crate::txn::{driver_options, SharedClient};

use super::build::join_partitions;
use super::execute::{Outcome, RepairOptions, Report};
use super::plan::Plan;

/// The first pause between two reads of the partitions after a repair;
/// doubled up to [`POLL_MAX`].
const POLL_FIRST: Duration = Duration::from_millis(100);
/// The longest pause between two reads.
const POLL_MAX: Duration = Duration::from_secs(1);

/// One partition as read at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// High watermark and LSO (read_committed), or why they are unknown.
    pub offsets: Result<Offsets, KeyError>,
    /// Open transactions there, `(producer id, start offset)`, or why the
    /// producers are unknown.
    pub open: Result<Vec<(i64, i64)>, KeyError>,
}

impl PartitionState {
    /// The LSO, when read.
    pub fn lso(&self) -> Option<i64> {
        self.offsets.as_ref().ok().map(|o| o.last_stable_offset)
    }

    /// Whether `producer_id` has an open transaction here (`None`: the
    /// producers are unknown).
    pub fn has_open(&self, producer_id: i64) -> Option<bool> {
        self.open
            .as_ref()
            .ok()
            .map(|o| o.iter().any(|(p, _)| *p == producer_id))
    }
}

/// Each touched partition as it was before a repair, and the groups
/// blocked there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The partitions, each with the producers the plan's steps are about.
    pub partitions: BTreeMap<TopicPartition, PartitionState>,
    /// The producers each partition's steps end there.
    pub producers: BTreeMap<TopicPartition, BTreeSet<i64>>,
    /// Groups with a committed offset at the partition's LSO (blocked for
    /// a read_committed consumer), or why the groups could not be read.
    pub blocked_groups: Result<BTreeMap<TopicPartition, Vec<String>>, String>,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            partitions: BTreeMap::new(),
            producers: BTreeMap::new(),
            blocked_groups: Ok(BTreeMap::new()),
        }
    }
}

/// How a partition's LSO changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LsoChange {
    /// It moved forward.
    Moved,
    /// The repaired transaction is gone, but another producer's open
    /// transaction starts at the same LSO and holds it there.
    HeldByAnother {
        /// That producer.
        producer_id: i64,
    },
    /// It did not move by the deadline: the repair did not take effect.
    NotMoved,
    /// Before or after could not be read.
    Unknown,
}

impl LsoChange {
    /// Whether this partition shows the repair worked (or another
    /// transaction, not the repaired one, holds it).
    pub fn is_settled(&self) -> bool {
        matches!(self, LsoChange::Moved | LsoChange::HeldByAnother { .. })
    }
}

/// What changed on one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionProof {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The producers the repair ended there.
    pub producer_ids: Vec<i64>,
    /// Before the repair.
    pub before: PartitionState,
    /// After it (the last read).
    pub after: PartitionState,
    /// How the LSO changed.
    pub change: LsoChange,
    /// Whether the repaired producers' open transactions are gone
    /// (`None`: the producers could not be read).
    pub transaction_gone: Option<bool>,
    /// The groups blocked at the old LSO that can now advance (empty when
    /// the LSO did not move).
    pub groups_can_advance: Vec<String>,
}

impl PartitionProof {
    /// Records released to read_committed consumers: new LSO − old LSO.
    pub fn released(&self) -> Option<i64> {
        Some(self.after.lso()?.saturating_sub(self.before.lso()?).max(0))
    }
}

/// What a repair changed, partition by partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proof {
    /// One per partition a done step touched, by topic and partition.
    pub partitions: Vec<PartitionProof>,
    /// How many times the partitions were read after the repair.
    pub reads: usize,
    /// Why the groups could not be read, when they could not.
    pub groups_error: Option<String>,
}

impl Proof {
    /// Whether every touched partition shows the repair took effect.
    pub fn all_settled(&self) -> bool {
        self.partitions.iter().all(|p| p.change.is_settled())
    }

    /// Partitions whose LSO did not move (or could not be read).
    pub fn unsettled(&self) -> usize {
        self.partitions
            .iter()
            .filter(|p| !p.change.is_settled())
            .count()
    }
}

/// The producers each partition's sending steps end there.
fn touched(plan: &Plan, only: impl Fn(usize) -> bool) -> BTreeMap<TopicPartition, BTreeSet<i64>> {
    let mut out: BTreeMap<TopicPartition, BTreeSet<i64>> = BTreeMap::new();
    for s in plan
        .steps
        .iter()
        .filter(|s| s.action.sends() && only(s.number))
    {
        for p in &s.seen.partitions {
            out.entry(p.key()).or_default().insert(s.seen.producer_id);
        }
    }
    out
}

fn not_described() -> KeyError {
    KeyError::client(kdp_wire::ErrorCode::UNKNOWN_SERVER_ERROR, "not described")
}

/// Reads `partitions`: offsets and open transactions.
async fn read(
    client: &SharedClient,
    partitions: &[TopicPartition],
    opts: &RepairOptions,
) -> BTreeMap<TopicPartition, PartitionState> {
    let dopts = driver_options(&opts.describe);
    let (read_offsets, joined) = tokio::join!(
        offsets(client, partitions.to_vec(), &dopts),
        join_partitions(client, partitions.iter().cloned(), &opts.describe),
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
) -> Result<BTreeMap<TopicPartition, Vec<String>>, String> {
    let dopts = driver_options(&opts.describe);
    let read = read_groups(client, &Default::default(), &dopts)
        .await
        .map_err(|e| e.to_string())?;
    if let Some((broker, e)) = read.listing_failures.first() {
        return Err(format!(
            "broker {broker} did not list its groups: {}",
            e.name()
        ));
    }
    let mut out: BTreeMap<TopicPartition, Vec<String>> = BTreeMap::new();
    for answer in read.answers {
        // a group kdp may not read is not claimed either way
        let Ok(committed) = answer.offsets else {
            continue;
        };
        for (tp, state) in states {
            let Some(lso) = state.lso() else { continue };
            let at = match committed.get(tp) {
                Some(Committed::At(o)) => Some(*o),
                _ => None,
            };
            if GroupVerdict::of(at, lso) == GroupVerdict::Blocked {
                out.entry(tp.clone())
                    .or_default()
                    .push(answer.group_id.clone());
            }
        }
    }
    Ok(out)
}

/// Reads every partition the plan's sending steps touch, before the
/// repair: offsets, open transactions and the groups blocked at the LSO.
pub async fn snapshot(client: &SharedClient, plan: &Plan, opts: &RepairOptions) -> Snapshot {
    let producers = touched(plan, |_| true);
    if producers.is_empty() {
        return Snapshot::default();
    }
    let keys: Vec<TopicPartition> = producers.keys().cloned().collect();
    let partitions = read(client, &keys, opts).await;
    let blocked_groups = blocked_groups(client, &partitions, opts).await;
    Snapshot {
        partitions,
        producers,
        blocked_groups,
    }
}

/// How `after` stands against `before` for the repair of `producers`.
pub fn judge(before: &PartitionState, after: &PartitionState, producers: &[i64]) -> LsoChange {
    let (Some(old), Some(new)) = (before.lso(), after.lso()) else {
        return LsoChange::Unknown;
    };
    if new > old {
        return LsoChange::Moved;
    }
    let gone = producers.iter().all(|p| after.has_open(*p) == Some(false));
    if gone {
        let other = after.open.as_ref().ok().and_then(|o| {
            o.iter()
                .filter(|(p, start)| !producers.contains(p) && *start == new)
                .map(|(p, _)| *p)
                .next()
        });
        if let Some(producer_id) = other {
            return LsoChange::HeldByAnother { producer_id };
        }
    }
    LsoChange::NotMoved
}

/// The proof of a repair: the partitions of the steps the report says are
/// done, read again until each LSO moved or `deadline` passes (pausing
/// between reads on tokio's clock), set beside `before`.
pub async fn prove(
    client: &SharedClient,
    before: &Snapshot,
    report: &Report,
    opts: &RepairOptions,
    deadline: Deadline,
) -> Proof {
    let done: BTreeSet<usize> = report
        .outcomes
        .iter()
        .filter(|o| matches!(o.outcome, Outcome::Done(_)))
        .map(|o| o.step.number)
        .collect();
    let plan = Plan {
        steps: report.outcomes.iter().map(|o| o.step.clone()).collect(),
    };
    let mut wanted = touched(&plan, |n| done.contains(&n));
    // a partition where the producer had no open transaction before is not
    // the repair's to move (a force-terminated transaction's other partitions)
    wanted.retain(|tp, producers| {
        before
            .partitions
            .get(tp)
            .is_none_or(|s| producers.iter().any(|p| s.has_open(*p) != Some(false)))
    });
    let groups_error = before.blocked_groups.as_ref().err().cloned();
    if wanted.is_empty() {
        return Proof {
            groups_error,
            ..Default::default()
        };
    }
    let keys: Vec<TopicPartition> = wanted.keys().cloned().collect();
    let opts = RepairOptions {
        describe: crate::describe::DescribeOptions {
            deadline: Some(deadline),
            timeout: deadline.remaining(),
            ..opts.describe.clone()
        },
        ..opts.clone()
    };
    let unknown = PartitionState {
        offsets: Err(not_described()),
        open: Err(not_described()),
    };
    let mut pause = POLL_FIRST;
    let mut reads = 0;
    let mut after;
    loop {
        after = read(client, &keys, &opts).await;
        reads += 1;
        let settled = wanted.iter().all(|(tp, ps)| {
            let ps: Vec<i64> = ps.iter().copied().collect();
            let b = before.partitions.get(tp).unwrap_or(&unknown);
            let a = after.get(tp).unwrap_or(&unknown);
            judge(b, a, &ps).is_settled()
        });
        if settled || deadline.remaining() <= pause {
            break;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(POLL_MAX);
    }
    let partitions = wanted
        .into_iter()
        .map(|(tp, ps)| {
            let producer_ids: Vec<i64> = ps.into_iter().collect();
            let b = before.partitions.get(&tp).unwrap_or(&unknown).clone();
            let a = after.remove(&tp).unwrap_or_else(|| unknown.clone());
            let change = judge(&b, &a, &producer_ids);
            let transaction_gone = producer_ids
                .iter()
                .map(|p| a.has_open(*p).map(|open| !open))
                .try_fold(true, |all, g| g.map(|g| all && g));
            let groups_can_advance = if change == LsoChange::Moved {
                before
                    .blocked_groups
                    .as_ref()
                    .ok()
                    .and_then(|g| g.get(&tp).cloned())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            PartitionProof {
                topic: tp.0,
                partition: tp.1,
                producer_ids,
                before: b,
                after: a,
                change,
                transaction_gone,
                groups_can_advance,
            }
        })
        .collect();
    Proof {
        partitions,
        reads,
        groups_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(hw: i64, lso: i64, open: &[(i64, i64)]) -> PartitionState {
        PartitionState {
            offsets: Ok(Offsets {
                high_watermark: hw,
                last_stable_offset: lso,
            }),
            open: Ok(open.to_vec()),
        }
    }

    #[test]
    fn an_lso_that_moved_a_held_one_and_one_that_did_not() {
        let before = state(100, 40, &[(7, 40), (8, 60)]);
        assert_eq!(
            judge(&before, &state(101, 60, &[(8, 60)]), &[7]),
            LsoChange::Moved
        );
        // 7 is gone but 9's transaction also starts at 40
        assert_eq!(
            judge(&before, &state(100, 40, &[(9, 40)]), &[7]),
            LsoChange::HeldByAnother { producer_id: 9 }
        );
        // 7 still open: the markers are not written yet
        assert_eq!(
            judge(&before, &state(100, 40, &[(7, 40)]), &[7]),
            LsoChange::NotMoved
        );
        let unread = PartitionState {
            offsets: Err(not_described()),
            open: Err(not_described()),
        };
        assert_eq!(judge(&before, &unread, &[7]), LsoChange::Unknown);
        assert!(!LsoChange::Unknown.is_settled());
    }
}
