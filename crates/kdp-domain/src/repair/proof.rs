//! Whether a repair worked, as data: each partition a step touched, read
//! before the repair ([`Snapshot`]) and after it, set side by side
//! ([`judge`], [`Proof::of`]), with the consumer groups that were blocked at
//! the old LSO ([`groups_blocked_at`]).
//!
//! A force-terminate returns once the coordinator bumped the epoch; the
//! coordinator writes the abort markers afterwards. So kdp-workflows'
//! `repair::prove` reads the partitions again until every LSO moved or the
//! deadline (the command's one `--timeout`) passes ([`Proof::settled`]),
//! and a partition whose LSO did not move by then is reported as
//! [`LsoChange::NotMoved`].

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnose::blocked::GroupVerdict;
use crate::groups::offsets::Committed;
use crate::groups::read::GroupsRead;
use crate::key_error::KeyError;
use crate::offsets::Offsets;
use crate::partition::TopicPartition;
use crate::repair::plan::Plan;
use crate::repair::report::{Outcome, Report};

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
    /// The name an audit line gives it: `moved`, `held by another`, `not
    /// moved`, `unknown`.
    pub fn label(&self) -> &'static str {
        match self {
            LsoChange::Moved => "moved",
            LsoChange::HeldByAnother { .. } => "held by another",
            LsoChange::NotMoved => "not moved",
            LsoChange::Unknown => "unknown",
        }
    }

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
pub fn touched(
    plan: &Plan,
    only: impl Fn(usize) -> bool,
) -> BTreeMap<TopicPartition, BTreeSet<i64>> {
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

/// A partition that was not described.
pub fn not_described() -> KeyError {
    KeyError::client(kdp_wire::ErrorCode::UNKNOWN_SERVER_ERROR, "not described")
}

/// The groups with a committed offset at each partition's LSO (blocked
/// for a read_committed consumer), from one read of the groups; `Err` when
/// the read may have left groups out (a broker did not list its groups).
pub fn groups_blocked_at(
    read: &GroupsRead,
    states: &BTreeMap<TopicPartition, PartitionState>,
) -> Result<BTreeMap<TopicPartition, Vec<String>>, String> {
    if let Some((broker, e)) = read.listing_failures.first() {
        return Err(format!(
            "broker {broker} did not list its groups: {}",
            e.name()
        ));
    }
    let mut out: BTreeMap<TopicPartition, Vec<String>> = BTreeMap::new();
    for answer in &read.answers {
        // a group kdp may not read is not claimed either way
        let Ok(committed) = &answer.offsets else {
            continue;
        };
        for (tp, state) in states {
            let Some(lso) = state.lso() else { continue };
            let at = match committed.get(&tp.0, tp.1) {
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

/// The partitions a repair's done steps touched, with the producers they
/// end there: what [`Proof::of`] is about. A partition where the producer
/// had no open transaction before is left out: not the repair's to move
/// (a force-terminated transaction's other partitions).
pub fn to_prove(before: &Snapshot, report: &Report) -> BTreeMap<TopicPartition, BTreeSet<i64>> {
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
    wanted.retain(|tp, producers| {
        before
            .partitions
            .get(tp)
            .is_none_or(|s| producers.iter().any(|p| s.has_open(*p) != Some(false)))
    });
    wanted
}

impl Proof {
    /// Whether every partition of `wanted` shows its repair took effect in
    /// `after` (read again), against `before`.
    pub fn settled(
        before: &Snapshot,
        after: &BTreeMap<TopicPartition, PartitionState>,
        wanted: &BTreeMap<TopicPartition, BTreeSet<i64>>,
    ) -> bool {
        let unknown = unknown();
        wanted.iter().all(|(tp, ps)| {
            let ps: Vec<i64> = ps.iter().copied().collect();
            let b = before.partitions.get(tp).unwrap_or(&unknown);
            let a = after.get(tp).unwrap_or(&unknown);
            judge(b, a, &ps).is_settled()
        })
    }

    /// The proof of the repair of `wanted`: each partition as `before` and
    /// the last read (`after`, the `reads`th) show it.
    pub fn of(
        before: &Snapshot,
        mut after: BTreeMap<TopicPartition, PartitionState>,
        wanted: BTreeMap<TopicPartition, BTreeSet<i64>>,
        reads: usize,
    ) -> Proof {
        let unknown = unknown();
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
            groups_error: before.blocked_groups.as_ref().err().cloned(),
        }
    }
}

/// A partition neither read before nor after.
fn unknown() -> PartitionState {
    PartitionState {
        offsets: Err(not_described()),
        open: Err(not_described()),
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
