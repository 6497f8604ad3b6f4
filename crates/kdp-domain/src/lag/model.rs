//! The lag model: each group's position on each partition with its
//! records to deliver, held back records and holding transaction, judged
//! from the groups, the partitions' bounds and counts, and the
//! transactions `kdp blocked` finds holding an LSO.

use std::collections::BTreeMap;

use crate::diagnose::blocked::{Blocked, Pinning};
use crate::groups::offsets::Committed;
use crate::groups::read::{GroupAnswer, GroupsRead};
use crate::groups::share::{Isolation, ShareRead};
use crate::groups::state::{GroupState, GroupType};
use crate::key_error::KeyError;
use crate::lag::position::{Bounds, Position};
use crate::lag::tally::{Records, Tally};
use crate::lag::verdict::LagVerdict;
use crate::partition::TopicPartition;

/// What kdp learned of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLag {
    /// Its bounds, or why ListOffsets failed.
    pub bounds: Result<Bounds, KeyError>,
    /// The count of [from, LSO) (`None`: nothing needed reading, every
    /// committed offset was at or past the LSO). Boxed, as the other
    /// count: a partition has one or none most often, and a read of a
    /// large cluster holds one `PartitionLag` per partition.
    pub tally: Option<Box<Tally>>,
    /// Why the read stopped before the LSO, when it did.
    pub stopped: Option<Stop>,
    /// The read_uncommitted count of [from, HWM) (`None`: no
    /// read_uncommitted position below the HWM needed one).
    pub uncommitted: Option<Box<Tally>>,
    /// Why that read stopped before the HWM, when it did.
    pub uncommitted_stopped: Option<Stop>,
}

/// Why a partition's read stopped before the LSO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The bytes budget per partition was spent: the figures are bounds
    /// by choice.
    Budget {
        /// Bytes read.
        bytes: u64,
    },
    /// A Fetch failed (or the deadline passed): the figures are bounds,
    /// and the answer is partial.
    Failed(KeyError),
}

/// One group's position on one partition, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagRow {
    /// The group id.
    pub group_id: String,
    /// Its type, when listed or described.
    pub group_type: Option<GroupType>,
    /// Its state, when listed or described.
    pub state: Option<GroupState>,
    /// The topic and partition.
    pub partition: TopicPartition,
    /// Where its committed offset stands (`bounds` -1 when unknown).
    pub position: Option<Position>,
    /// The isolation the row was judged under: `--isolation-level` for a
    /// consumer or streams group, `share.isolation.level` for a share
    /// group (`None` when it could not be read).
    pub isolation: Option<Isolation>,
    /// The records a consumer of that isolation at the committed offset
    /// (at the log start, when the offset is below it) still receives: up
    /// to the LSO under read_committed, up to the HWM under
    /// read_uncommitted; `None` when unknown.
    pub records: Option<Records>,
    /// Offsets held back above the LSO (HWM − LSO; 0 under
    /// read_uncommitted, which reads past the LSO).
    pub held_back: Option<i64>,
    /// The open transaction holding the LSO, when held back and found.
    pub holder: Option<Pinning>,
    /// The first timestamp of the first batch still to deliver (ms).
    pub oldest_undelivered_ms: Option<i64>,
    /// Whether `records` was proven without a read ([`crate::lag::proof`]):
    /// no marker or transactional record can lie in the range counted.
    pub proven: bool,
    /// A share group's facts (its position is the share-partition start
    /// offset, not a committed offset); `None` for other groups.
    pub share: Option<ShareFacts>,
    /// The verdict.
    pub verdict: LagVerdict,
}

/// What a share group's row adds (KIP-932): its isolation and Kafka's own
/// lag figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareFacts {
    /// `share.isolation.level`; `None` when DescribeConfigs failed.
    pub isolation: Option<Isolation>,
    /// DescribeShareGroupOffsets v1's `Lag`; `None` on a v0 broker or
    /// when the broker said unknown (-1).
    pub kafka_lag: Option<i64>,
}

impl LagRow {
    /// Kafka's offset lag (HWM − committed), as `kafka-consumer-groups.sh`
    /// prints it; `None` for a share group, which commits no offset (its
    /// Kafka figure is [`ShareFacts::kafka_lag`]).
    pub fn offset_lag(&self) -> Option<i64> {
        if self.share.is_some() {
            return None;
        }
        self.position.and_then(|p| p.offset_lag())
    }
}

/// What could not be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LagGap {
    /// A broker did not list its groups.
    Listing(i32, KeyError),
    /// The principal's ACLs may hide groups from the listing.
    MayHideGroups,
    /// A group's committed offsets could not be read.
    GroupOffsets(String, KeyError),
    /// A partition's bounds could not be read.
    Bounds(TopicPartition, KeyError),
    /// A partition's read failed before the LSO.
    Read(TopicPartition, KeyError),
    /// A share group (KIP-932) whose start offsets were not read (the read
    /// of the groups did not ask for them).
    ShareGroup(String),
    /// A share group's start offsets could not be read
    /// (DescribeShareGroupOffsets).
    ShareOffsets(String, KeyError),
    /// A share group's `share.isolation.level` could not be read
    /// (DescribeConfigs): its records to deliver are unknown.
    ShareIsolation(String, KeyError),
    /// A group named with `--group` that its coordinator does not know
    /// (nothing committed, not described): most often a misspelt id.
    UnknownGroup(String),
}

/// The lag of every group asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lag {
    /// Rows by group, then topic and partition.
    pub rows: Vec<LagRow>,
    /// What could not be checked; any makes the answer partial.
    pub gaps: Vec<LagGap>,
}

impl Lag {
    /// Whether everything asked was answered (bounds a budget chose are an
    /// answer; a failed read is not).
    pub fn is_complete(&self) -> bool {
        self.gaps.is_empty()
            && self
                .rows
                .iter()
                .all(|r| !matches!(r.verdict, LagVerdict::Unknown))
    }
}

/// Which rows to keep, and how their consumers read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagOptions {
    /// Only these groups (empty: all).
    pub groups: Vec<String>,
    /// Only these topics (empty: all).
    pub topics: Vec<String>,
    /// The `isolation.level` of the consumer and streams groups' consumers
    /// (the broker does not know it; the operator says it). Share groups
    /// have their own (`share.isolation.level`).
    pub isolation: Isolation,
    /// Groups whose consumers read otherwise than `isolation` (a Kafka
    /// Streams app with `at_least_once` reads read_uncommitted beside
    /// `exactly_once_v2` apps reading read_committed on the same topics).
    pub group_isolation: BTreeMap<String, Isolation>,
}

impl Default for LagOptions {
    /// Every group and topic, read_committed (what a transactional
    /// pipeline's consumers use; `kafka-console-consumer.sh` defaults to
    /// read_uncommitted, as Kafka's consumer does).
    fn default() -> Self {
        LagOptions {
            groups: Vec::new(),
            topics: Vec::new(),
            isolation: Isolation::ReadCommitted,
            group_isolation: BTreeMap::new(),
        }
    }
}

impl LagOptions {
    /// The isolation `group`'s consumers read with (a consumer or streams
    /// group's; a share group's is its config).
    pub fn isolation_of(&self, group: &str) -> Isolation {
        self.group_isolation
            .get(group)
            .copied()
            .unwrap_or(self.isolation)
    }

    /// Whether `tp` of `group` is asked for.
    pub fn wants(&self, group: &str, tp: &TopicPartition) -> bool {
        (self.groups.is_empty() || self.groups.iter().any(|g| g == group))
            && self.wants_topic(&tp.0)
    }

    /// Whether `topic` is asked for (of any group).
    pub fn wants_topic(&self, topic: &str) -> bool {
        self.topics.is_empty() || self.topics.iter().any(|t| t == topic)
    }
}

/// The partitions whose committed offsets (and share-partition start
/// offsets) `groups` holds, as `opts` narrows, each with the smallest
/// offset a count must start from (`None`: only failed or missing
/// offsets, or only read_uncommitted share groups, which need bounds and
/// no count): where a read must start.
pub fn partitions_to_read(
    groups: &GroupsRead,
    opts: &LagOptions,
) -> BTreeMap<TopicPartition, Option<i64>> {
    let mut out: BTreeMap<TopicPartition, Option<i64>> = BTreeMap::new();
    each_start(groups, opts, Isolation::ReadCommitted, |tp, start| {
        // a name copied per partition, not per committed offset
        let slot = match out.get_mut(tp) {
            Some(slot) => slot,
            None => out.entry(tp.clone()).or_insert(None),
        };
        if let Some(o) = start {
            *slot = Some(slot.map_or(o, |s: i64| s.min(o)));
        }
    });
    out
}

/// Every position `opts` asks for, with the offset a read_committed count
/// starts from where one is needed: committed offsets of consumer groups
/// read_committed, and the start offsets of read_committed share groups
/// (a read_uncommitted position needs [`uncommitted_starts`]' count
/// instead; an unknown isolation is judged on no count).
pub fn read_starts(groups: &GroupsRead, opts: &LagOptions) -> Vec<(TopicPartition, Option<i64>)> {
    starts(groups, opts, Isolation::ReadCommitted)
}

/// The offsets a read_uncommitted count (Fetch READ_UNCOMMITTED up to the
/// high watermark) starts from: committed offsets of consumer groups read
/// read_uncommitted, and the start offsets of read_uncommitted share
/// groups. Every position is listed, `None` where it needs no such count.
pub fn uncommitted_starts(
    groups: &GroupsRead,
    opts: &LagOptions,
) -> Vec<(TopicPartition, Option<i64>)> {
    starts(groups, opts, Isolation::ReadUncommitted)
}

fn starts(
    groups: &GroupsRead,
    opts: &LagOptions,
    wanted: Isolation,
) -> Vec<(TopicPartition, Option<i64>)> {
    let mut out = Vec::new();
    each_start(groups, opts, wanted, |tp, start| {
        out.push((tp.clone(), start))
    });
    out
}

/// [`read_starts`] (`wanted` read_committed) or [`uncommitted_starts`]
/// (read_uncommitted) handed over one by one, borrowed: a caller that
/// keeps one entry per partition does not copy a million committed
/// offsets' names first.
pub fn each_start(
    groups: &GroupsRead,
    opts: &LagOptions,
    wanted: Isolation,
    mut out: impl FnMut(&TopicPartition, Option<i64>),
) {
    for g in &groups.answers {
        if g.group_type == Some(GroupType::Share) {
            let Some(ShareRead {
                offsets: Ok(offsets),
                isolation,
            }) = groups.shares.get(&g.group_id)
            else {
                continue;
            };
            let counted = matches!(isolation, Ok(i) if *i == wanted);
            for (tp, s) in offsets {
                if opts.wants(&g.group_id, tp) {
                    let start = match s.start {
                        Committed::At(o) if counted => Some(o),
                        _ => None,
                    };
                    out(tp, start);
                }
            }
            continue;
        }
        let Ok(offsets) = &g.offsets else { continue };
        let counted = opts.isolation_of(&g.group_id) == wanted;
        offsets.each(|tp, c| {
            if opts.wants(&g.group_id, tp) {
                let start = match c {
                    Committed::At(o) if counted => Some(*o),
                    _ => None,
                };
                out(tp, start);
            }
        });
    }
}

/// Every committed offset `opts` asks for, judged against its partition.
/// `blocked` names the transaction holding each pinned partition's LSO
/// (the diagnosis `kdp blocked` makes).
pub fn lag(
    groups: &GroupsRead,
    partitions: &BTreeMap<TopicPartition, PartitionLag>,
    blocked: &Blocked,
    opts: &LagOptions,
) -> Lag {
    let mut rows = Vec::new();
    let gaps = lag_each(groups, partitions, blocked, opts, |row| rows.push(row));
    Lag { rows, gaps }
}

/// [`lag`] row by row: each row goes to `row` as it is judged, in the
/// same order, and the gaps are returned (a monitor folds the rows into
/// its series without holding one per committed offset).
pub fn lag_each(
    groups: &GroupsRead,
    partitions: &BTreeMap<TopicPartition, PartitionLag>,
    blocked: &Blocked,
    opts: &LagOptions,
    mut row: impl FnMut(LagRow),
) -> Vec<LagGap> {
    let mut out = Lag::default();
    for (broker, e) in &groups.listing_failures {
        out.gaps.push(LagGap::Listing(*broker, e.clone()));
    }
    if opts.groups.is_empty() && groups.visibility.may_hide() {
        out.gaps.push(LagGap::MayHideGroups);
    }
    for (tp, p) in partitions {
        match (&p.bounds, &p.stopped) {
            (Err(e), _) => out.gaps.push(LagGap::Bounds(tp.clone(), e.clone())),
            (Ok(_), Some(Stop::Failed(e))) => out.gaps.push(LagGap::Read(tp.clone(), e.clone())),
            _ => {}
        }
        if let (Ok(_), Some(Stop::Failed(e))) = (&p.bounds, &p.uncommitted_stopped) {
            out.gaps.push(LagGap::Read(tp.clone(), e.clone()));
        }
    }
    let holders: BTreeMap<(&str, i32), &Pinning> = blocked
        .partitions
        .iter()
        .filter_map(|p| Some(((p.topic.as_str(), p.partition), p.pinned_by.as_ref()?)))
        .collect();
    for g in &groups.answers {
        if !opts.groups.is_empty() && !opts.groups.contains(&g.group_id) {
            continue;
        }
        if !opts.groups.is_empty() && g.is_unknown() {
            out.gaps.push(LagGap::UnknownGroup(g.group_id.clone()));
            continue;
        }
        if g.group_type == Some(GroupType::Share) {
            share_rows(g, groups, partitions, &holders, opts, &mut out, &mut row);
            continue;
        }
        let offsets = match &g.offsets {
            Ok(o) => o,
            Err(e) => {
                out.gaps
                    .push(LagGap::GroupOffsets(g.group_id.clone(), e.clone()));
                continue;
            }
        };
        offsets.each(|tp, c| {
            if !opts.wants(&g.group_id, tp) {
                return;
            }
            let facts = partitions.get(tp);
            let bounds = facts.and_then(|p| p.bounds.as_ref().ok().copied());
            let committed = match c {
                Committed::At(o) => Some(*o),
                _ => None,
            };
            let position = bounds.map(|bounds| Position { committed, bounds });
            let isolation = opts.isolation_of(&g.group_id);
            let committed_read = isolation == Isolation::ReadCommitted;
            let tally = facts.and_then(|p| match committed_read {
                true => p.tally.as_deref(),
                false => p.uncommitted.as_deref(),
            });
            let records = match (position, c) {
                (Some(pos), Committed::At(_)) if committed_read => records_at(&pos, tally),
                (Some(pos), Committed::At(_)) => records_uncommitted(&pos, tally),
                _ => None,
            };
            let held_back = bounds.map(|b| match committed_read {
                true => b.held_back(),
                false => 0,
            });
            let holder = held_back
                .filter(|&h| h > 0)
                .and_then(|_| holders.get(&(tp.0.as_str(), tp.1)))
                .map(|p| (*p).clone());
            let start = position.and_then(|p| reader_start(&p));
            let oldest_undelivered_ms = match (tally, start) {
                (Some(t), Some(s)) => t.oldest_undelivered_ms(s),
                _ => None,
            };
            let verdict = match c {
                Committed::Failed(_) => LagVerdict::Unknown,
                _ if committed_read => LagVerdict::of(position.as_ref(), records),
                _ => LagVerdict::of_uncommitted(position.as_ref(), records),
            };
            row(LagRow {
                group_id: g.group_id.clone(),
                group_type: g.group_type.clone(),
                state: g.state.clone(),
                partition: tp.clone(),
                position,
                isolation: Some(isolation),
                records,
                held_back,
                holder,
                oldest_undelivered_ms,
                proven: records.is_some() && tally.is_some_and(Tally::is_proven),
                share: None,
                verdict,
            });
        });
    }
    out.gaps
}

/// A share group's rows: its start offset on each partition against the
/// partition's bounds. The start offset moves only when every record below
/// it is acknowledged or archived, and not promptly even then (docs/LAG.md
/// section 5): records above it may be delivered and acknowledged already.
/// So the records it still delivers are known only as "at most" (exact
/// only when nothing deliverable lies above the start offset), and Kafka's
/// own `Lag` is shown beside them.
fn share_rows(
    g: &GroupAnswer,
    groups: &GroupsRead,
    partitions: &BTreeMap<TopicPartition, PartitionLag>,
    holders: &BTreeMap<(&str, i32), &Pinning>,
    opts: &LagOptions,
    out: &mut Lag,
    row: &mut impl FnMut(LagRow),
) {
    let Some(read) = groups.shares.get(&g.group_id) else {
        // a whole-cluster answer, or one naming it, is missing it
        if opts.topics.is_empty() || !opts.groups.is_empty() {
            out.gaps.push(LagGap::ShareGroup(g.group_id.clone()));
        }
        return;
    };
    let offsets = match &read.offsets {
        Ok(o) => o,
        Err(e) => {
            out.gaps
                .push(LagGap::ShareOffsets(g.group_id.clone(), e.clone()));
            return;
        }
    };
    let isolation = match &read.isolation {
        Ok(i) => Some(*i),
        Err(e) => {
            out.gaps
                .push(LagGap::ShareIsolation(g.group_id.clone(), e.clone()));
            None
        }
    };
    for (tp, s) in offsets {
        if !opts.wants(&g.group_id, tp) {
            continue;
        }
        let facts = partitions.get(tp);
        let bounds = facts.and_then(|p| p.bounds.as_ref().ok().copied());
        let start = match s.start {
            Committed::At(o) => Some(o),
            _ => None,
        };
        let position = bounds.map(|bounds| Position {
            committed: start,
            bounds,
        });
        let records = match (position, isolation, facts) {
            (Some(pos), Some(iso), Some(facts)) => share_records(&pos, iso, facts, s.kafka_lag),
            _ => None,
        };
        let held_back = match (bounds, isolation) {
            (Some(b), Some(Isolation::ReadCommitted)) => Some(b.held_back()),
            (Some(_), Some(Isolation::ReadUncommitted)) => Some(0),
            _ => None,
        };
        let holder = held_back
            .filter(|&h| h > 0)
            .and_then(|_| holders.get(&(tp.0.as_str(), tp.1)))
            .map(|p| (*p).clone());
        let verdict = match s.start {
            Committed::Failed(_) => LagVerdict::Unknown,
            _ => LagVerdict::of_share(position.as_ref(), records, held_back),
        };
        row(LagRow {
            group_id: g.group_id.clone(),
            group_type: g.group_type.clone(),
            state: g.state.clone(),
            partition: tp.clone(),
            position,
            isolation,
            records,
            held_back,
            holder,
            oldest_undelivered_ms: None,
            proven: false,
            share: Some(ShareFacts {
                isolation,
                kafka_lag: s.kafka_lag,
            }),
            verdict,
        });
    }
}

/// The records a share group at start offset S (`pos`) still has to
/// deliver (docs/LAG.md section 5).
///
/// At most: the records a consumer of its isolation would receive from S
/// (read_committed: of [S, LSO), markers and aborted records excluded;
/// read_uncommitted: of [S, HWM), markers excluded), as any of them may
/// be delivered and acknowledged already.
///
/// At least, from Kafka's own `Lag` L (the offsets of [S, HWM') not in a
/// final state, HWM' the high watermark the coordinator asked, read
/// before kdp's, so HWM' ≤ HWM): at most HWM − S − L offsets of [S, HWM)
/// are final, so at least R − (HWM − S − L) of the R records counted are
/// not: never more than L either. 0 without L (a v0 broker, or Kafka did
/// not know it): no evidence, no claim.
fn share_records(
    pos: &Position,
    isolation: Isolation,
    facts: &PartitionLag,
    kafka_lag: Option<i64>,
) -> Option<Records> {
    let s = pos.committed?;
    let counted = match isolation {
        Isolation::ReadCommitted => records_at(pos, facts.tally.as_deref())?,
        Isolation::ReadUncommitted => records_uncommitted(pos, facts.uncommitted.as_deref())?,
    };
    let most = counted.at_most();
    let least = match kafka_lag {
        Some(l) if l >= 0 => {
            let at_most_final = pos
                .bounds
                .high_watermark
                .saturating_sub(s)
                .saturating_sub(l)
                .max(0);
            counted
                .at_least()
                .saturating_sub(at_most_final)
                .min(l)
                .clamp(0, most)
        }
        _ => 0,
    };
    Some(Records::of(least, most))
}

/// Where a consumer at `pos` starts reading: its offset, or the log start
/// when its offset is below it (what `auto.offset.reset=earliest` does);
/// `None` without an offset.
fn reader_start(pos: &Position) -> Option<i64> {
    let c = pos.committed?;
    Some(pos.bounds.log_start.map_or(c, |s| c.max(s)))
}

/// The records a read_uncommitted consumer at `pos` receives up to the
/// high watermark: 0 at or past it (no read needed), the read_uncommitted
/// count's figure below it (markers excluded, aborted and open
/// transactions' records included), at most one per offset when nothing
/// was read.
fn records_uncommitted(pos: &Position, tally: Option<&Tally>) -> Option<Records> {
    let start = reader_start(pos)?;
    let hwm = pos.bounds.high_watermark;
    if start >= hwm {
        return Some(Records::Exact(0));
    }
    Some(match tally {
        Some(t) if t.end() == hwm && !t.is_read_committed() => t.records_from(start),
        _ => Records::Between {
            at_least: 0,
            at_most: hwm.saturating_sub(start),
        },
    })
}

/// The records a consumer at `pos` receives: 0 at or past the LSO (no
/// read needed), the tally's figure below it, at most one per offset when
/// nothing was read.
fn records_at(pos: &Position, tally: Option<&Tally>) -> Option<Records> {
    let start = reader_start(pos)?;
    let lso = pos.bounds.last_stable_offset;
    if start >= lso {
        return Some(Records::Exact(0));
    }
    Some(match tally {
        Some(t) if t.end() == lso => t.records_from(start),
        _ => Records::Between {
            at_least: 0,
            at_most: lso.saturating_sub(start),
        },
    })
}

#[cfg(test)]
mod tests;
