//! Blocked consumers: from a partition whose last stable offset (LSO) is
//! below its high watermark, to the transaction that pins it and the
//! consumer groups it holds back. A pure function over what the brokers
//! answered (the join behind `find-hanging`, the groups with their members
//! and committed offsets), so every verdict is tested without a cluster.
//!
//! Each group with a committed offset on a pinned partition gets a
//! [`GroupVerdict`]: a read_committed consumer stops at the LSO, so a group
//! committed exactly there is [`Blocked`](GroupVerdict::Blocked), unless
//! the transaction there is live ([`Waiting`](GroupVerdict::Waiting): its
//! producer wrote within [`BlockedOptions::blocked_after_ms`], as on any
//! busy transactional topic a caught-up group is at the LSO most of the
//! time); below it, [`Lagging`](GroupVerdict::Lagging) (it still has
//! records to read); above it, [`PastLso`](GroupVerdict::PastLso) (only a
//! read_uncommitted consumer gets there). A group named with `--group` that
//! committed on other partitions of the topic but not this one is
//! [`NoOffset`](GroupVerdict::NoOffset). A group's state and member count
//! are carried with its verdict, so an Empty group at the LSO reads as
//! such, never as a live consumer.
//!
//! The repair of each pinned partition follows the rules of the plan
//! `find-hanging --repair` makes ([`plan_findings`]): force-terminate when
//! the coordinator's Ongoing transaction holds the partition (also when it
//! is younger than find-hanging's timeout: the coordinator would abort it
//! only at start + timeout, shown beside it as [`AutoAbort::At`]), a raw
//! abort when no coordinator knows it, the manual command when kdp cannot
//! tell, and none when the outcome is decided (PrepareCommit/PrepareAbort):
//! only the coordinator may finish it. A live transaction gets
//! [`Unblock::Wait`]: fencing a producer that is working is never the fix.

use std::collections::HashMap;

use kdp_wire::messages::ProducerState;
use kdp_wire::TxnState;

use crate::diagnose::findings::{findings, Findings, LsoHolder};
use crate::diagnose::hanging::{transaction_start_ms, Verdict};
use crate::groups::offsets::Committed;
use crate::groups::read::{GroupAnswer, GroupsRead};
use crate::groups::state::{GroupState, GroupType};
use crate::joined::Joined;
use crate::key_error::KeyError;
use crate::lag::position::{At, Bounds, Position};
use crate::partition::TopicPartition;
use crate::repair::findings::{findings_judged as repair_findings, plan_findings};
use crate::repair::plan::{Action, CoordinatorAnswer, Plan};
use crate::severity::Severity;
use crate::time::known_ms;

/// `kdp blocked`'s default for [`BlockedOptions::blocked_after_ms`]: a
/// minute, Kafka's default `transaction.timeout.ms` (a producer on the
/// defaults that wrote nothing for longer is past its own timeout).
pub const DEFAULT_BLOCKED_AFTER_MS: i64 = 60_000;

/// A group's position on a pinned partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupVerdict {
    /// Committed at the LSO, behind a transaction whose producer has been
    /// idle at least [`BlockedOptions::blocked_after_ms`] (or whose last
    /// write is unknown): a read_committed consumer waits there until
    /// someone ends it.
    Blocked,
    /// Committed at the LSO behind a transaction whose producer wrote within
    /// [`BlockedOptions::blocked_after_ms`]: a live transaction, which its
    /// producer commits (or its coordinator aborts at
    /// [`Pinning::auto_abort`]); ending it by force would fence a producer
    /// that is working. A caught-up read_committed group on a busy topic is
    /// here most of the time.
    Waiting,
    /// Committed below the LSO: records remain before it blocks.
    Lagging {
        /// Records between its offset and the LSO.
        behind: i64,
    },
    /// Committed above the LSO: it reads uncommitted records.
    PastLso,
    /// No committed offset on this partition.
    NoOffset,
    /// Its offset here came with this error (e.g. TOPIC_AUTHORIZATION_FAILED):
    /// it may be blocked, kdp cannot tell.
    Unread(kdp_wire::ErrorCode),
}

impl GroupVerdict {
    /// The verdict's name as kdp prints it.
    pub fn label(&self) -> &'static str {
        match self {
            GroupVerdict::Blocked => "blocked",
            GroupVerdict::Waiting => "waiting",
            GroupVerdict::Lagging { .. } => "lagging",
            GroupVerdict::PastLso => "past the LSO",
            GroupVerdict::NoOffset => "no offset",
            GroupVerdict::Unread(_) => "unknown",
        }
    }

    /// Blocked needs action; lagging and past the LSO are worth a look;
    /// waiting is fine (a live transaction); an unread offset is unknown.
    pub fn severity(&self) -> Severity {
        match self {
            GroupVerdict::Blocked => Severity::Problem,
            GroupVerdict::Lagging { .. } | GroupVerdict::PastLso => Severity::Warning,
            GroupVerdict::Waiting | GroupVerdict::NoOffset => Severity::Ok,
            GroupVerdict::Unread(_) => Severity::Unknown,
        }
    }

    /// The verdict of a committed offset against the LSO (at the LSO:
    /// [`Blocked`](GroupVerdict::Blocked); whether the transaction there is
    /// live is the partition's to say, see [`Pinning::is_live`]).
    pub fn of(committed: Option<i64>, lso: i64) -> GroupVerdict {
        GroupVerdict::of_position(&Position {
            committed,
            bounds: Bounds {
                log_start: None,
                last_stable_offset: lso,
                // blocked judges a pinned partition against its LSO only
                high_watermark: lso,
            },
        })
    }

    /// The verdict of a group's [`Position`], the model `kdp lag` judges
    /// too: blocked is its view of the positions an open transaction
    /// holds (at the LSO) or will hold (below it).
    pub fn of_position(position: &Position) -> GroupVerdict {
        match position.at() {
            At::Nothing => GroupVerdict::NoOffset,
            At::Lso => GroupVerdict::Blocked,
            At::BelowLso { offsets } => GroupVerdict::Lagging { behind: offsets },
            // below the log start is below the LSO too: records remain
            At::BeforeLogStart { .. } => GroupVerdict::Lagging {
                behind: position
                    .bounds
                    .last_stable_offset
                    .saturating_sub(position.committed.unwrap_or_default()),
            },
            At::PastLso => GroupVerdict::PastLso,
        }
    }

    /// At the LSO: [`Blocked`](GroupVerdict::Blocked) or
    /// [`Waiting`](GroupVerdict::Waiting).
    pub fn at_lso(&self) -> bool {
        matches!(self, GroupVerdict::Blocked | GroupVerdict::Waiting)
    }
}

/// One group on one pinned partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    /// The group id.
    pub group_id: String,
    /// Its state (`None`: its coordinator did not say).
    pub state: Option<GroupState>,
    /// Its type (`None`: its coordinator did not say).
    pub group_type: Option<GroupType>,
    /// Its members now (`None`: not described).
    pub members: Option<u32>,
    /// Its committed offset here.
    pub committed: Option<i64>,
    /// Where that leaves it.
    pub verdict: GroupVerdict,
}

impl GroupRow {
    /// Blocked with members that consume (or members kdp was not told of):
    /// a consumer is waiting now.
    pub fn is_live_blocked(&self) -> bool {
        let live = match self.members {
            Some(n) => n > 0,
            None => self.state.as_ref().is_none_or(GroupState::has_members),
        };
        self.verdict == GroupVerdict::Blocked && live
    }
}

/// When the coordinator ends the pinning transaction by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoAbort {
    /// It tracks it, Ongoing: it aborts at start + timeout (ms since the
    /// epoch; in the past when overdue).
    At(i64),
    /// Its outcome is decided (PrepareCommit/PrepareAbort): the coordinator
    /// is writing markers, it will not abort.
    Decided(TxnState),
    /// No coordinator tracks it on this partition: never.
    Never,
    /// kdp could not tell (an id it may not describe, a broker that did
    /// not answer).
    Unknown,
}

/// The open transaction holding a partition's LSO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinning {
    /// Its producer.
    pub producer_id: i64,
    /// Its epoch on the partition.
    pub producer_epoch: i32,
    /// Its first offset (the LSO).
    pub start_offset: i64,
    /// Its transactional id, when a coordinator listed one.
    pub transactional_id: Option<String>,
    /// The coordinator's state, when described.
    pub coordinator_state: Option<TxnState>,
    /// When it started (ms since the epoch): the coordinator's start time,
    /// else the producer's last write on the partition; `None` unknown.
    pub started_ms: Option<i64>,
    /// The producer's last write (ms since the epoch): the latest
    /// `LastTimestamp` it has on any partition described (a transaction
    /// may write one partition once and go on writing others); `None`
    /// unknown.
    pub last_write_ms: Option<i64>,
    /// When the coordinator will end it by itself.
    pub auto_abort: AutoAbort,
}

impl Pinning {
    /// Whether its producer wrote less than `blocked_after_ms` before
    /// `now_ms`: a live transaction. An unknown last write is not live
    /// (kdp cannot tell, and a group held there must not read as fine);
    /// `blocked_after_ms` 0 makes none live.
    pub fn is_live(&self, now_ms: i64, blocked_after_ms: i64) -> bool {
        self.last_write_ms
            .is_some_and(|w| now_ms.saturating_sub(w) < blocked_after_ms)
    }

    /// How long its producer has written nothing (ms), if known.
    pub fn idle_ms(&self, now_ms: i64) -> Option<i64> {
        self.last_write_ms.map(|w| now_ms.saturating_sub(w).max(0))
    }
}

/// What unblocks a pinned partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unblock {
    /// Run this (program first), as `find-hanging --repair` would plan it.
    Command(Vec<String>),
    /// Nothing to run: the transaction's producer is live (see
    /// [`GroupVerdict::Waiting`]), or its coordinator decided the outcome
    /// and is writing its markers (see [`Pinning::auto_abort`]).
    Wait,
}

/// One pinned partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedPartition {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The high watermark.
    pub high_watermark: i64,
    /// The last stable offset.
    pub last_stable_offset: i64,
    /// The transaction holding the LSO, if the partition's producers show it.
    pub pinned_by: Option<Pinning>,
    /// The groups on it, by group id.
    pub groups: Vec<GroupRow>,
    /// What unblocks it; `None` when kdp has no repair to suggest (e.g. the
    /// pinning transaction was not found among the producers).
    pub unblock: Option<Unblock>,
}

impl PinnedPartition {
    /// Records held back from read_committed consumers (HW − LSO).
    pub fn held_back(&self) -> i64 {
        self.high_watermark
            .saturating_sub(self.last_stable_offset)
            .max(0)
    }
}

/// What could not be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// A partition's offsets could not be read.
    PartitionOffsets(TopicPartition, KeyError),
    /// A group's committed offsets could not be read.
    GroupOffsets(String, KeyError),
    /// A group's offset on one partition came with an error.
    GroupPartition(String, TopicPartition, kdp_wire::ErrorCode),
    /// A group's members could not be read (its coordinator's description
    /// failed): whether anyone waits behind its offsets is unknown.
    GroupMembers(String, KeyError),
    /// A group asked for by name that its coordinator does not know
    /// (nothing committed, described as Dead or not found): most often a
    /// misspelt id, never a clean answer.
    UnknownGroup(String),
}

/// The whole diagnosis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blocked {
    /// Pinned partitions, by topic and partition.
    pub partitions: Vec<PinnedPartition>,
    /// What could not be checked.
    pub gaps: Vec<Gap>,
}

impl Blocked {
    /// Whether any group is blocked.
    pub fn any_blocked(&self) -> bool {
        self.partitions
            .iter()
            .flat_map(|p| &p.groups)
            .any(|g| g.verdict == GroupVerdict::Blocked)
    }
}

/// The groups at the LSO each open transaction holds (verdicts
/// [`Blocked`](GroupVerdict::Blocked) and [`Waiting`](GroupVerdict::Waiting)),
/// by topic, partition and producer id: the blocked-groups column of
/// `find-hanging` and `describe --with-transactions`, made by
/// [`held_groups`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldGroups {
    by_holder: HashMap<(String, i32, i64), Vec<String>>,
    /// Holders whose groups kdp could not read in full.
    unknown: std::collections::HashSet<(String, i32, i64)>,
}

impl HeldGroups {
    /// The groups `producer_id`'s open transaction on `topic`-`partition`
    /// holds at the LSO, by group id: empty when it holds nothing (it is
    /// not the transaction holding the LSO, or no group waits there);
    /// `None` when kdp cannot tell (the partition's offsets or the groups
    /// were not read in full).
    pub fn of(&self, topic: &str, partition: i32, producer_id: i64) -> Option<&[String]> {
        let key = (topic.to_string(), partition, producer_id);
        if self.unknown.contains(&key) {
            return None;
        }
        Some(self.by_holder.get(&key).map_or(&[], Vec::as_slice))
    }

    /// Whether some holder's groups are unknown.
    pub fn is_partial(&self) -> bool {
        !self.unknown.is_empty()
    }
}

/// The groups each open transaction of `joined` holds at the LSO, from one
/// read of the groups (`None`: not read, or the read failed). A holder of a
/// pinned partition is unknown when the groups were not read in full (a
/// listing failed, ACLs may hide groups, a group's offsets were refused) or
/// its partition's offsets were not read; a transaction that holds no LSO
/// holds no group. Groups need reading only when something is pinned
/// ([`any_pinned`]).
pub fn held_groups(
    joined: &Joined,
    groups: Option<&GroupsRead>,
    max_timeout_ms: i64,
) -> HeldGroups {
    held_groups_judged(joined, &findings(joined, max_timeout_ms), groups)
}

/// [`held_groups`] from the judgement of `joined` the caller already made
/// (`find-hanging` lists the same [`Findings`]), so it is made once.
///
/// Costs the groups' committed offsets (one index lookup each) and the
/// partitions whose offsets were read, not the cluster: at a pinned
/// partition only the groups' rows are made (a group at the LSO is held
/// whether its producer is live or not), with no repair plan, no pinning
/// transaction and no index of every producer.
pub fn held_groups_judged(
    joined: &Joined,
    judged: &Findings,
    groups: Option<&GroupsRead>,
) -> HeldGroups {
    let mut out = HeldGroups::default();
    let diagnosis = groups.map(|g| {
        let mut gaps = Vec::new();
        let at = PinnedGroups::of(joined, &g.answers, &[], &mut gaps);
        let whole = g.listing_failures.is_empty()
            && !g.visibility.may_hide()
            && !gaps.iter().any(|gap| matches!(gap, Gap::GroupOffsets(..)));
        (at, whole)
    });
    // find-hanging's join reads the offsets of its candidates only: a
    // holder of any other partition is not asked about, so only the
    // partitions read are visited
    let asked_only = joined.candidates_only.is_some() && joined.unfinished.is_empty();
    type Read = std::result::Result<crate::offsets::Offsets, KeyError>;
    let holders: Box<dyn Iterator<Item = (&TopicPartition, &LsoHolder, Option<&Read>)>> =
        if asked_only {
            // both in topic and partition order: one walk pairs them
            let mut held = judged.lso_holders.iter().peekable();
            Box::new(joined.offsets.iter().filter_map(move |(tp, o)| {
                while held.next_if(|&(k, _)| k < tp).is_some() {}
                let (_, h) = held.next_if(|&(k, _)| k == tp)?;
                Some((tp, h, Some(o)))
            }))
        } else {
            Box::new(
                judged
                    .lso_holders
                    .iter()
                    .map(|(tp, h)| (tp, h, joined.offsets.get(tp))),
            )
        };
    for (tp, holder, offsets) in holders {
        let key = || (tp.0.clone(), tp.1, holder.producer_id);
        match offsets {
            Some(Ok(o)) if o.blocked() == 0 => continue,
            Some(Ok(_)) => {}
            None if asked_only => continue,
            // pinned or not, kdp cannot tell
            _ => {
                out.unknown.insert(key());
                continue;
            }
        }
        let Some((at, whole)) = &diagnosis else {
            out.unknown.insert(key());
            continue;
        };
        let i = at.find(tp);
        let refused = i.is_some_and(|i| {
            at.verdicts(i)
                .any(|(_, v)| matches!(v, GroupVerdict::Unread(_)))
        });
        if !whole || refused {
            out.unknown.insert(key());
            continue;
        }
        let names: Vec<String> = i
            .map(|i| {
                at.verdicts(i)
                    .filter(|(_, v)| v.at_lso())
                    .map(|(g, _)| g.group_id.clone())
                    .collect()
            })
            .unwrap_or_default();
        out.by_holder.insert(key(), names);
    }
    out
}

/// Why the blocked-groups column is unknown (`-`) for some holders: the
/// first of these that applies to the read of the groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldGap {
    /// The groups could not be read at all.
    NotRead,
    /// Brokers did not list their groups.
    ListingFailed {
        /// How many.
        brokers: usize,
    },
    /// The principal's ACLs may hide groups from the listing.
    MayHide,
    /// Some groups' or partitions' offsets were not read.
    OffsetsNotRead,
}

impl HeldGap {
    /// What left [`held_groups`] partial, from the read it was given.
    pub fn of(read: Option<&GroupsRead>) -> HeldGap {
        match read {
            None => HeldGap::NotRead,
            Some(r) if !r.listing_failures.is_empty() => HeldGap::ListingFailed {
                brokers: r.listing_failures.len(),
            },
            Some(r) if r.visibility.may_hide() => HeldGap::MayHide,
            Some(_) => HeldGap::OffsetsNotRead,
        }
    }
}

/// Whether any partition of `joined` is pinned (its LSO below its high
/// watermark) or may be (its offsets were not read): only then do the
/// groups need reading for [`held_groups`].
pub fn any_pinned(joined: &Joined) -> bool {
    pinned_or_unread(joined).next().is_some()
}

/// The partitions of `joined` that are pinned (LSO below the high
/// watermark) or may be (their offsets were not read): the only ones
/// whose groups [`blocked`] judges or leaves unknown.
pub fn pinned_or_unread(joined: &Joined) -> impl Iterator<Item = &TopicPartition> {
    joined
        .offsets
        .iter()
        .filter(|(_, o)| o.as_ref().map_or(true, |o| o.blocked() > 0))
        .map(|(tp, _)| tp)
}

/// What to diagnose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockedOptions {
    /// Candidates of `find-hanging` are idle longer than this (ms).
    pub max_timeout_ms: i64,
    /// A group at the LSO is [`GroupVerdict::Blocked`] once the pinning
    /// transaction's producer has written nothing for this long (ms), and
    /// [`GroupVerdict::Waiting`] before (0: never waiting). See
    /// [`DEFAULT_BLOCKED_AFTER_MS`].
    pub blocked_after_ms: i64,
    /// Only these groups (empty: every group given).
    pub groups: Vec<String>,
    /// The flags that reach the cluster, put in suggested commands
    /// (`["--bootstrap-server", "host:9092"]`).
    pub connection: Vec<String>,
    /// Only what per-group counts read (the exporter's `kdp_group_*`
    /// series): the pinned partitions some group has an offset on (all of
    /// them when groups are named), each without its
    /// [`PinnedPartition::unblock`], so no repair plan is made; with no such
    /// partition, no judgement of the transactions either. Their groups'
    /// rows are the ones of the whole diagnosis.
    pub groups_only: bool,
}

/// The diagnosis of `joined` (the scan behind `find-hanging`) and `groups`.
///
/// Linear in the committed offsets and the open transactions: each group's
/// offsets are read once, against an index of the pinned partitions.
pub fn blocked(joined: &Joined, groups: &[GroupAnswer], opts: &BlockedOptions) -> Blocked {
    let mut out = Blocked::default();
    let named = !opts.groups.is_empty();
    let PinnedGroups { chosen, pinned, on } =
        PinnedGroups::of(joined, groups, &opts.groups, &mut out.gaps);
    if pinned.is_empty() {
        return out;
    }

    // a pinned partition no group reads has no row to count
    let skipped = |i: usize| opts.groups_only && !named && on[i].is_empty();
    if (0..pinned.len()).all(skipped) {
        return out;
    }
    let judged = findings(joined, opts.max_timeout_ms);
    let plan = if opts.groups_only {
        Plan::default()
    } else {
        plan_findings(&repair_findings(joined, &judged), &opts.connection)
    };
    let mut steps: HashMap<(&str, i32), &Action> =
        HashMap::with_capacity(plan.steps.iter().map(|s| s.seen.partitions.len()).sum());
    for s in &plan.steps {
        for ps in &s.seen.partitions {
            steps
                .entry((ps.topic.as_str(), ps.partition))
                .or_insert(&s.action);
        }
    }
    // each shown pinned partition's LSO holder: the holders and `pinned`
    // are both in topic and partition order, so one walk pairs them, with
    // no key built to look one up
    let mut holders = judged.lso_holders.iter().peekable();
    let holder_of: Vec<Option<&LsoHolder>> = pinned
        .iter()
        .enumerate()
        .map(|(i, &(tp, _, _))| {
            while holders.next_if(|&(k, _)| k < tp).is_some() {}
            let here = holders.next_if(|&(k, _)| k == tp).map(|(_, h)| h);
            here.filter(|_| !skipped(i))
        })
        .collect();
    // the holders' producers and latest writes, from one walk of the scan:
    // only the holders are looked for, no producer of the cluster indexed
    let mut producer_of: Vec<Option<&ProducerState>> = vec![None; pinned.len()];
    // sorted, looked up by binary search: cheaper than hashing each of
    // the cluster's producers
    let mut last_write: Vec<(i64, Option<i64>)> = holder_of
        .iter()
        .flatten()
        .map(|h| (h.producer_id, None))
        .collect();
    last_write.sort_unstable();
    last_write.dedup_by_key(|w| w.0);
    let write_of = |writes: &[(i64, Option<i64>)], producer_id: i64| {
        writes.binary_search_by_key(&producer_id, |w| w.0).ok()
    };
    for o in &joined.partitions {
        let Ok(producers) = &o.result else { continue };
        let here = pinned
            .binary_search_by(|&(tp, _, _)| {
                (tp.0.as_str(), tp.1).cmp(&(o.topic.as_str(), o.partition))
            })
            .ok()
            .and_then(|i| Some((i, holder_of.get(i).copied().flatten()?.producer_id)));
        for p in producers {
            match here {
                // the last one reported, as an index of them would keep
                Some((i, holder)) if p.producer_id == holder && p.current_txn_start_offset >= 0 => {
                    if let Some(slot) = producer_of.get_mut(i) {
                        *slot = Some(p);
                    }
                }
                _ => {}
            }
            if let (Some(ts), Some(k)) = (
                known_ms(p.last_timestamp),
                write_of(&last_write, p.producer_id),
            ) {
                if let Some((_, w)) = last_write.get_mut(k) {
                    *w = Some(w.map_or(ts, |w| w.max(ts)));
                }
            }
        }
    }
    // and their writes among the producers the join did not keep
    for (pid, w) in &mut last_write {
        if let Some(ts) = joined.unkept_writes.get(*pid) {
            *w = Some(w.map_or(ts, |w| w.max(ts)));
        }
    }

    for (i, &(tp, high_watermark, lso)) in pinned.iter().enumerate() {
        if skipped(i) {
            continue;
        }
        let (topic, partition) = (tp.0.as_str(), tp.1);
        let Some(rows) = rows_at(&chosen, &on[i], named, topic, lso) else {
            continue;
        };
        let holder = holder_of[i];
        let pinned_by = producer_of[i].map(|p| {
            let last_write_ms = write_of(&last_write, p.producer_id)
                .and_then(|k| last_write.get(k))
                .and_then(|w| w.1);
            pinning(joined, p, topic, partition, holder, last_write_ms)
        });
        out.partitions.push(pinned_partition(
            (topic, partition, high_watermark, lso),
            rows,
            pinned_by,
            steps.get(&(topic, partition)).copied(),
            joined.now_ms,
            opts,
        ));
    }
    out
}

/// The chosen groups' rows at a pinned partition (`on`: those with an
/// offset there, in group order); when groups are `named`, also each one
/// that reads the topic with nothing committed here, and `None` when no
/// named group has a row (the partition is not shown).
fn rows_at(
    chosen: &[&GroupAnswer],
    on: &[(usize, &Committed)],
    named: bool,
    topic: &str,
    lso: i64,
) -> Option<Vec<GroupRow>> {
    let mut rows: Vec<GroupRow> = on
        .iter()
        .filter_map(|&(gi, c)| group_row(chosen.get(gi)?, c, lso))
        .collect();
    if named {
        // a named group that reads the topic but has nothing here
        for g in chosen {
            let Ok(offsets) = &g.offsets else { continue };
            if !rows.iter().any(|r| r.group_id == g.group_id) && offsets.has_topic(topic) {
                rows.push(row_of(g, None, GroupVerdict::NoOffset));
            }
        }
        if rows.is_empty() {
            return None;
        }
        rows.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    }
    Some(rows)
}

/// A pinned partition's entry from its rows and the transaction pinning
/// it: the groups a live transaction holds are waiting, not blocked, and
/// the way to unblock it follows the repair plan's `step` for it, else
/// the transaction's own state.
fn pinned_partition(
    (topic, partition, high_watermark, lso): (&str, i32, i64, i64),
    mut rows: Vec<GroupRow>,
    pinned_by: Option<Pinning>,
    step: Option<&Action>,
    now_ms: i64,
    opts: &BlockedOptions,
) -> PinnedPartition {
    let live = pinned_by
        .as_ref()
        .is_some_and(|p| p.is_live(now_ms, opts.blocked_after_ms));
    if live {
        for r in &mut rows {
            if r.verdict == GroupVerdict::Blocked {
                r.verdict = GroupVerdict::Waiting;
            }
        }
    }
    let unblock = match (step, &pinned_by) {
        // a live producer: nothing to do but let it (or its
        // coordinator) end the transaction; never fence it
        _ if live => Some(Unblock::Wait),
        (Some(action), _) => command(action, &opts.connection).map(Unblock::Command),
        // Younger than find-hanging's timeout, but by its rule for an
        // Ongoing transaction its coordinator tracks here: the group is
        // held now, and waiting means until `auto_abort` (an hour, for
        // a producer killed with a one-hour timeout).
        (
            None,
            Some(Pinning {
                auto_abort: AutoAbort::At(_),
                transactional_id: Some(id),
                ..
            }),
        ) => command(
            &Action::ForceTerminate {
                transactional_id: id.clone(),
            },
            &opts.connection,
        )
        .map(Unblock::Command),
        (None, Some(p)) if matches!(p.auto_abort, AutoAbort::Decided(_)) => Some(Unblock::Wait),
        _ => None,
    };
    let unblock = unblock.filter(|_| !opts.groups_only);
    PinnedPartition {
        topic: topic.to_string(),
        partition,
        high_watermark,
        last_stable_offset: lso,
        pinned_by,
        groups: rows,
        unblock,
    }
}

/// A topic's pinned partitions: (partition, index into the pinned list).
type PinnedOf = Vec<(i32, usize)>;

/// The pinned partitions of a join and the chosen groups' committed
/// offsets on each: what [`blocked`] and [`held_groups_judged`] start from.
struct PinnedGroups<'a> {
    /// The groups looked at (the named ones, or all), in the given order.
    chosen: Vec<&'a GroupAnswer>,
    /// Each pinned partition with its high watermark and LSO, in topic and
    /// partition order.
    pinned: Vec<(&'a TopicPartition, i64, i64)>,
    /// By pinned partition: the groups with an offset there (index into
    /// `chosen`, in group order) and that offset.
    on: Vec<Vec<(usize, &'a Committed)>>,
}

impl<'a> PinnedGroups<'a> {
    /// Linear in the committed offsets and the partitions whose offsets
    /// were read: each group's offsets are read once, against an index of
    /// the pinned partitions. What could not be read goes to `gaps`.
    fn of(
        joined: &'a Joined,
        groups: &'a [GroupAnswer],
        named: &[String],
        gaps: &mut Vec<Gap>,
    ) -> PinnedGroups<'a> {
        let chosen: Vec<&GroupAnswer> = groups
            .iter()
            .filter(|g| named.is_empty() || named.contains(&g.group_id))
            .collect();
        for g in &chosen {
            match &g.offsets {
                Err(e) => gaps.push(Gap::GroupOffsets(g.group_id.clone(), e.clone())),
                Ok(offsets) => {
                    for ((t, p), c) in offsets.iter() {
                        if let Committed::Failed(code) = c {
                            gaps.push(Gap::GroupPartition(
                                g.group_id.clone(),
                                (t.to_string(), p),
                                *code,
                            ));
                        }
                    }
                }
            }
            if let (Some(Err(e)), Ok(_)) = (&g.members, &g.offsets) {
                // a group refused whole is its offsets' gap already
                if e.code != kdp_wire::ErrorCode::GROUP_ID_NOT_FOUND {
                    gaps.push(Gap::GroupMembers(g.group_id.clone(), e.clone()));
                }
            }
            if !named.is_empty() && g.is_unknown() {
                gaps.push(Gap::UnknownGroup(g.group_id.clone()));
            }
        }
        let mut pinned: Vec<(&TopicPartition, i64, i64)> = Vec::new();
        for (tp, offsets) in &joined.offsets {
            match offsets {
                Ok(o) if o.blocked() > 0 => {
                    pinned.push((tp, o.high_watermark, o.last_stable_offset));
                }
                Ok(_) => {}
                Err(e) => gaps.push(Gap::PartitionOffsets(tp.clone(), e.clone())),
            }
        }
        let mut on: Vec<Vec<(usize, &Committed)>> = vec![Vec::new(); pinned.len()];
        if pinned.is_empty() {
            return PinnedGroups { chosen, pinned, on };
        }
        // each topic's pinned partitions, in partition order (`pinned` is
        // in topic and partition order): one lookup per topic of a group's
        // offsets, not one per offset
        let mut by_topic: HashMap<&str, PinnedOf> = HashMap::new();
        for (i, (tp, _, _)) in pinned.iter().enumerate() {
            by_topic.entry(tp.0.as_str()).or_default().push((tp.1, i));
        }
        for (gi, g) in chosen.iter().enumerate() {
            let Ok(offsets) = &g.offsets else { continue };
            // the topic of the offsets before, and its pinned partitions
            let mut topic: Option<(&str, Option<&PinnedOf>)> = None;
            for ((t, p), c) in offsets.iter() {
                let here = match topic {
                    Some((name, here)) if name == t => here,
                    _ => {
                        let here = by_topic.get(t);
                        topic = Some((t, here));
                        here
                    }
                };
                let Some(here) = here else { continue };
                if let Ok(k) = here.binary_search_by_key(&p, |&(partition, _)| partition) {
                    on[here[k].1].push((gi, c));
                }
            }
        }
        PinnedGroups { chosen, pinned, on }
    }

    /// The index of `tp` among the pinned partitions.
    fn find(&self, tp: &TopicPartition) -> Option<usize> {
        self.pinned.binary_search_by(|(t, _, _)| (*t).cmp(tp)).ok()
    }

    /// The verdict of each group with an offset on pinned partition `i`,
    /// before the liveness of the transaction there is known (see
    /// [`verdict_at`]), without building its [`GroupRow`].
    fn verdicts(&self, i: usize) -> impl Iterator<Item = (&'a GroupAnswer, GroupVerdict)> + '_ {
        let lso = self.pinned.get(i).map_or(0, |p| p.2);
        self.on
            .get(i)
            .into_iter()
            .flatten()
            .filter_map(move |&(gi, c)| Some((*self.chosen.get(gi)?, verdict_at(c, lso)?)))
    }
}

/// The transaction `p` holding `topic`-`partition`'s LSO, as its
/// coordinator and the scan show it.
fn pinning(
    joined: &Joined,
    p: &ProducerState,
    topic: &str,
    partition: i32,
    holder: Option<&LsoHolder>,
    last_write_ms: Option<i64>,
) -> Pinning {
    let answer = CoordinatorAnswer::of(joined, p.producer_id);
    let tracked = answer.includes(topic, partition) == Some(true);
    let described = match &answer {
        CoordinatorAnswer::Described(t) => Some(t),
        _ => None,
    };
    let started_ms = known_ms(transaction_start_ms(described.filter(|_| tracked), p));
    let auto_abort = match (answer.state(), tracked, &answer) {
        (Some(TxnState::Ongoing), true, CoordinatorAnswer::Described(t)) => {
            match known_ms(t.transaction_start_time_ms) {
                Some(start) => {
                    AutoAbort::At(start.saturating_add(i64::from(t.transaction_timeout_ms)))
                }
                None => AutoAbort::Unknown,
            }
        }
        (Some(s @ (TxnState::PrepareCommit | TxnState::PrepareAbort)), true, _) => {
            AutoAbort::Decided(s)
        }
        _ => match holder.and_then(|h| h.verdict.as_ref()) {
            Some(Verdict::Hanging(_)) => AutoAbort::Never,
            Some(Verdict::Unknown(_)) => AutoAbort::Unknown,
            // not a candidate (younger than the timeout): known
            // untracked only when every id was visible
            _ if matches!(
                answer,
                CoordinatorAnswer::NotFound { .. } | CoordinatorAnswer::NotListed
            ) || (described.is_some() && !tracked) =>
            {
                AutoAbort::Never
            }
            _ => AutoAbort::Unknown,
        },
    };
    Pinning {
        producer_id: p.producer_id,
        producer_epoch: p.producer_epoch,
        start_offset: p.current_txn_start_offset,
        transactional_id: answer.transactional_id().map(str::to_string),
        coordinator_state: answer.state(),
        started_ms,
        last_write_ms,
        auto_abort,
    }
}

fn row_of(g: &GroupAnswer, committed: Option<i64>, verdict: GroupVerdict) -> GroupRow {
    GroupRow {
        group_id: g.group_id.clone(),
        state: g.state.clone(),
        group_type: g.group_type.clone(),
        members: g.members.as_ref().and_then(|m| m.as_ref().ok().copied()),
        committed,
        verdict,
    }
}

/// A group's row from its committed offset on a pinned partition.
fn group_row(g: &GroupAnswer, c: &Committed, lso: i64) -> Option<GroupRow> {
    let committed = match c {
        Committed::At(o) => Some(*o),
        _ => None,
    };
    verdict_at(c, lso).map(|v| row_of(g, committed, v))
}

/// The verdict of a committed offset on a pinned partition, before the
/// liveness of the transaction there is known; `None` for no offset (only
/// a named group's missing offset is shown, see [`blocked`]).
fn verdict_at(c: &Committed, lso: i64) -> Option<GroupVerdict> {
    match c {
        Committed::At(o) => Some(GroupVerdict::of(Some(*o), lso)),
        // on a pinned partition a refused offset may hide a blocked group
        Committed::Failed(code) => Some(GroupVerdict::Unread(*code)),
        Committed::Nothing => None,
    }
}

/// The command line of a plan step, program first; `None` for a step that
/// sends nothing (a decided outcome only the coordinator may write).
pub fn command(action: &Action, connection: &[String]) -> Option<Vec<String>> {
    // an abort's words, at most: one allocation for the list
    let mut args = Vec::with_capacity(14 + connection.len());
    args.push("kdp".to_string());
    match action {
        Action::ForceTerminate { transactional_id } => {
            args.push("force-terminate".into());
            args.extend(connection.iter().cloned());
            args.extend(["--transactional-id".to_string(), transactional_id.clone()]);
        }
        Action::Abort(spec) => {
            args.push("abort".into());
            args.extend(connection.iter().cloned());
            args.extend([
                "--topic".to_string(),
                spec.topic.clone(),
                "--partition".to_string(),
                spec.partition.to_string(),
                "--producer-id".to_string(),
                spec.producer_id.to_string(),
                "--producer-epoch".to_string(),
                spec.producer_epoch.to_string(),
                "--coordinator-epoch".to_string(),
                spec.coordinator_epoch.to_string(),
            ]);
        }
        Action::Manual(m) => return Some(m.args.clone()),
        Action::Skip(_) => return None,
    }
    Some(args)
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kdp_wire::messages::{ProducerState, TopicData, TransactionState};

    use super::*;
    use crate::coordinator::{CoordinatorView, Description};
    use crate::offsets::Offsets;
    use crate::partition::PartitionOutcome;
    use crate::protocol::TxnProtocol;

    const NOW: i64 = 10_000_000_000;
    const TIMEOUT: i64 = 900_000;
    const HOUR: i64 = 3_600_000;

    fn open(pid: i64, last_timestamp: i64, start: i64) -> ProducerState {
        ProducerState {
            producer_id: pid,
            producer_epoch: 4,
            last_timestamp,
            coordinator_epoch: 2,
            current_txn_start_offset: start,
            ..Default::default()
        }
    }

    /// `t-0`: producer 7 (no coordinator knows it, idle an hour) pins LSO
    /// 40 of HW 100. `t-1`: producer 8 (`app`, Ongoing, an hour old) pins
    /// 10 of 20. `t-2`: producer 9 (`fresh`, Ongoing, a minute old) pins 5
    /// of 6. `t-3`: nothing open.
    fn joined() -> Joined {
        let mut view = CoordinatorView {
            listing_complete: true,
            may_describe_any: true,
            ..Default::default()
        };
        for (pid, id, start, partition) in
            [(8, "app", NOW - HOUR, 1), (9, "fresh", NOW - 60_000, 2)]
        {
            view.listed.insert(pid, id.into());
            view.descriptions.insert(
                id.into(),
                Description::Described(TransactionState {
                    transactional_id: id.into(),
                    transaction_state: "Ongoing".into(),
                    transaction_timeout_ms: 60_000,
                    transaction_start_time_ms: start,
                    producer_id: pid,
                    topics: vec![TopicData {
                        topic: "t".into(),
                        partitions: vec![partition],
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            );
        }
        let part = |p, producers| PartitionOutcome::answered("t", p, 1, producers);
        let offsets = |hw, lso| {
            Ok(Offsets {
                high_watermark: hw,
                last_stable_offset: lso,
            })
        };
        Joined {
            partitions: vec![
                part(0, vec![open(7, NOW - HOUR, 40)]),
                part(1, vec![open(8, NOW - HOUR, 10)]),
                part(2, vec![open(9, NOW - 60_000, 5)]),
                part(3, vec![]),
            ],
            cluster_max_timeout_ms: Some(TIMEOUT),
            view,
            offsets: BTreeMap::from([
                (("t".to_string(), 0), offsets(100, 40)),
                (("t".to_string(), 1), offsets(20, 10)),
                (("t".to_string(), 2), offsets(6, 5)),
                (("t".to_string(), 3), offsets(50, 50)),
            ]),
            ..Joined::new(NOW, TxnProtocol::V2)
        }
    }

    fn group(id: &str, state: GroupState, at: &[(i32, i64)]) -> GroupAnswer {
        GroupAnswer {
            group_id: id.into(),
            members: Some(Ok(u32::from(state.has_members()) * 2)),
            state: Some(state),
            group_type: Some(GroupType::Classic),
            offsets: Ok(at
                .iter()
                .map(|&(p, o)| (("t".to_string(), p), Committed::At(o)))
                .collect()),
        }
    }

    fn groups() -> Vec<GroupAnswer> {
        vec![
            group("ledger", GroupState::Stable, &[(0, 40), (1, 10), (2, 5)]),
            group("audit", GroupState::Stable, &[(0, 30), (3, 50)]),
            group("reporting", GroupState::Stable, &[(0, 90)]),
            group("archive", GroupState::Empty, &[(0, 40)]),
            group("elsewhere", GroupState::Stable, &[(3, 50)]),
        ]
    }

    fn opts() -> BlockedOptions {
        BlockedOptions {
            max_timeout_ms: TIMEOUT,
            blocked_after_ms: DEFAULT_BLOCKED_AFTER_MS,
            groups: Vec::new(),
            connection: vec!["--bootstrap-server".into(), "b:9092".into()],
            groups_only: false,
        }
    }

    /// What the group series read is the same with `groups_only`: every
    /// pinned partition a group has an offset on, with the same rows, and
    /// no repair plan; no group on a pinned partition leaves nothing.
    #[test]
    fn groups_only_keeps_every_partition_a_group_reads() {
        for named in [vec![], vec!["audit".to_string()]] {
            let full = blocked(
                &joined(),
                &groups(),
                &BlockedOptions {
                    groups: named.clone(),
                    ..opts()
                },
            );
            let lean = blocked(
                &joined(),
                &groups(),
                &BlockedOptions {
                    groups: named.clone(),
                    groups_only: true,
                    ..opts()
                },
            );
            let expected: Vec<PinnedPartition> = full
                .partitions
                .iter()
                .filter(|p| !named.is_empty() || !p.groups.is_empty())
                .map(|p| PinnedPartition {
                    unblock: None,
                    ..p.clone()
                })
                .collect();
            assert!(!expected.is_empty());
            assert!(
                full.partitions.iter().any(|p| p.unblock.is_some()),
                "the full diagnosis suggests commands"
            );
            assert_eq!(lean.partitions, expected, "named: {named:?}");
            assert_eq!(lean.gaps, full.gaps);
        }
        let none = blocked(
            &joined(),
            &[],
            &BlockedOptions {
                groups_only: true,
                ..opts()
            },
        );
        assert!(none.partitions.is_empty());
        assert!(!blocked(&joined(), &[], &opts()).partitions.is_empty());
    }

    fn verdicts(p: &PinnedPartition) -> Vec<(&str, GroupVerdict)> {
        p.groups
            .iter()
            .map(|g| (g.group_id.as_str(), g.verdict))
            .collect()
    }

    #[test]
    fn every_verdict_on_a_partition_no_coordinator_knows() {
        let b = blocked(&joined(), &groups(), &opts());
        // t-3 is not pinned: LSO == HW.
        let names: Vec<(&str, i32)> = b
            .partitions
            .iter()
            .map(|p| (p.topic.as_str(), p.partition))
            .collect();
        assert_eq!(names, vec![("t", 0), ("t", 1), ("t", 2)]);
        let p = &b.partitions[0];
        assert_eq!(p.held_back(), 60);
        assert_eq!(
            verdicts(p),
            vec![
                ("ledger", GroupVerdict::Blocked),
                ("audit", GroupVerdict::Lagging { behind: 10 }),
                ("reporting", GroupVerdict::PastLso),
                ("archive", GroupVerdict::Blocked),
            ]
        );
        // The Empty group is blocked, but nobody waits.
        assert!(p.groups[0].is_live_blocked());
        assert!(!p.groups[3].is_live_blocked());
        let pin = p.pinned_by.as_ref().unwrap();
        assert_eq!((pin.producer_id, pin.start_offset), (7, 40));
        assert_eq!(pin.transactional_id, None);
        assert_eq!(pin.auto_abort, AutoAbort::Never);
        // find-hanging --repair's rule: no coordinator knows it, a raw abort.
        assert_eq!(
            p.unblock,
            Some(Unblock::Command(
                "kdp abort --bootstrap-server b:9092 --topic t --partition 0 --producer-id 7 --producer-epoch 4 --coordinator-epoch 2"
                    .split(' ')
                    .map(str::to_string)
                    .collect()
            ))
        );
        assert!(b.any_blocked());
        assert!(b.gaps.is_empty());
    }

    #[test]
    fn a_tracked_transaction_is_force_terminated_with_its_auto_abort_beside() {
        let b = blocked(&joined(), &groups(), &opts());
        let force = |id: &str| {
            Some(Unblock::Command(
                format!("kdp force-terminate --bootstrap-server b:9092 --transactional-id {id}")
                    .split(' ')
                    .map(str::to_string)
                    .collect(),
            ))
        };
        let overdue = &b.partitions[1];
        let pin = overdue.pinned_by.as_ref().unwrap();
        assert_eq!(pin.transactional_id.as_deref(), Some("app"));
        assert_eq!(pin.coordinator_state, Some(TxnState::Ongoing));
        // The coordinator tracks it and would abort it at start + timeout
        // (overdue here, which the CLI says); ending it now is
        // find-hanging --repair's lever for an Ongoing transaction.
        assert_eq!(pin.auto_abort, AutoAbort::At(NOW - HOUR + 60_000));
        assert_eq!(overdue.unblock, force("app"));
        // A minute old, under find-hanging's timeout: the same lever, the
        // coordinator's own abort time beside it.
        let fresh = &b.partitions[2];
        assert_eq!(
            fresh.pinned_by.as_ref().unwrap().auto_abort,
            AutoAbort::At(NOW)
        );
        assert_eq!(fresh.unblock, force("fresh"));
        assert_eq!(verdicts(fresh), vec![("ledger", GroupVerdict::Blocked)]);
    }

    #[test]
    fn a_decided_transaction_has_no_command() {
        let mut j = joined();
        if let Some(Description::Described(t)) = j.view.descriptions.get_mut("app") {
            t.transaction_state = "PrepareCommit".into();
        }
        let b = blocked(&j, &groups(), &opts());
        let p = &b.partitions[1];
        assert_eq!(
            p.pinned_by.as_ref().unwrap().auto_abort,
            AutoAbort::Decided(TxnState::PrepareCommit)
        );
        // find-hanging --repair skips it: only the coordinator may finish it.
        assert_eq!(p.unblock, None);
    }

    #[test]
    fn named_groups_narrow_and_show_no_offset() {
        let o = BlockedOptions {
            groups: vec!["audit".into()],
            ..opts()
        };
        let b = blocked(&joined(), &groups(), &o);
        // audit committed on t-0 and t-3: t-0 lagging; on t-1 and t-2 it
        // reads the topic but has no offset there.
        let rows: Vec<(i32, Vec<(&str, GroupVerdict)>)> = b
            .partitions
            .iter()
            .map(|p| (p.partition, verdicts(p)))
            .collect();
        assert_eq!(
            rows,
            vec![
                (0, vec![("audit", GroupVerdict::Lagging { behind: 10 })]),
                (1, vec![("audit", GroupVerdict::NoOffset)]),
                (2, vec![("audit", GroupVerdict::NoOffset)]),
            ]
        );
        assert!(!b.any_blocked());
        // A named group on no pinned partition's topic: nothing shown.
        let o = BlockedOptions {
            groups: vec!["nobody".into()],
            ..opts()
        };
        assert!(blocked(&joined(), &groups(), &o).partitions.is_empty());
    }

    #[test]
    fn what_could_not_be_read_is_a_gap_not_an_all_clear() {
        let mut j = joined();
        let refused = KeyError::broker(kdp_wire::ErrorCode::NOT_LEADER_OR_FOLLOWER, None);
        j.offsets.insert(("t".to_string(), 0), Err(refused.clone()));
        let mut gs = groups();
        gs[0].offsets = Err(KeyError::broker(
            kdp_wire::ErrorCode::GROUP_AUTHORIZATION_FAILED,
            None,
        ));
        if let Ok(o) = &mut gs[1].offsets {
            o.insert(
                ("t".to_string(), 1),
                Committed::Failed(kdp_wire::ErrorCode::TOPIC_AUTHORIZATION_FAILED),
            );
        }
        let b = blocked(&j, &gs, &opts());
        assert_eq!(b.gaps.len(), 3, "{:?}", b.gaps);
        assert!(b
            .gaps
            .contains(&Gap::PartitionOffsets(("t".to_string(), 0), refused)));
        // With ledger unreadable, nothing is blocked, but there are gaps.
        assert!(!b.any_blocked());
        assert!(b.partitions.iter().all(|p| p.partition != 0));
        // The refused offset on pinned t-1 is a row of its own, not silence.
        let t1 = b.partitions.iter().find(|p| p.partition == 1).expect("t-1");
        let row = t1
            .groups
            .iter()
            .find(|g| g.group_id == gs[1].group_id)
            .expect("the refused group's row");
        assert_eq!(
            row.verdict,
            GroupVerdict::Unread(kdp_wire::ErrorCode::TOPIC_AUTHORIZATION_FAILED)
        );
        assert_eq!(row.committed, None);
    }

    #[test]
    fn a_live_transaction_makes_a_caught_up_group_wait_and_is_never_fenced() {
        // producer 9 (`fresh`, tracked, Ongoing) last wrote a minute ago
        let o = BlockedOptions {
            blocked_after_ms: 5 * 60_000,
            ..opts()
        };
        let b = blocked(&joined(), &groups(), &o);
        let fresh = &b.partitions[2];
        assert_eq!(verdicts(fresh), vec![("ledger", GroupVerdict::Waiting)]);
        // its coordinator (or its producer) ends it: no force-terminate
        assert_eq!(fresh.unblock, Some(Unblock::Wait));
        let pin = fresh.pinned_by.as_ref().unwrap();
        assert_eq!(pin.idle_ms(NOW), Some(60_000));
        assert!(pin.is_live(NOW, o.blocked_after_ms));
        // the hour-idle ones are still blocked, with their commands
        assert_eq!(b.partitions[1].groups[0].verdict, GroupVerdict::Blocked);
        assert!(matches!(b.partitions[1].unblock, Some(Unblock::Command(_))));
        assert!(b.any_blocked());
        // only the waiting one: nothing is blocked (exit 0 in the CLI)
        let o = BlockedOptions {
            groups: vec!["ledger".into()],
            ..o
        };
        let mut j = joined();
        j.offsets.remove(&("t".to_string(), 0));
        j.offsets.remove(&("t".to_string(), 1));
        assert!(!blocked(&j, &groups(), &o).any_blocked());
        // 0 turns the rule off: a minute-idle transaction blocks
        let b = blocked(
            &joined(),
            &groups(),
            &BlockedOptions {
                blocked_after_ms: 0,
                ..opts()
            },
        );
        assert_eq!(b.partitions[2].groups[0].verdict, GroupVerdict::Blocked);
    }

    #[test]
    fn a_producer_writing_elsewhere_is_live_and_an_unknown_last_write_is_not() {
        let o = BlockedOptions {
            blocked_after_ms: 5 * 60_000,
            ..opts()
        };
        // producer 8 wrote t-1 once an hour ago, and t-3 a second ago
        let mut j = joined();
        j.partitions[3].result = Ok(vec![ProducerState {
            current_txn_start_offset: -1,
            ..open(8, NOW - 1_000, -1)
        }]);
        let b = blocked(&j, &groups(), &o);
        let t1 = &b.partitions[1];
        assert_eq!(
            t1.pinned_by.as_ref().unwrap().last_write_ms,
            Some(NOW - 1_000)
        );
        assert_eq!(verdicts(t1), vec![("ledger", GroupVerdict::Waiting)]);
        // no LastTimestamp at all: kdp cannot call it live
        let mut j = joined();
        j.partitions[2].result = Ok(vec![open(9, -1, 5)]);
        let b = blocked(&j, &groups(), &o);
        assert_eq!(
            b.partitions[2].pinned_by.as_ref().unwrap().last_write_ms,
            None
        );
        assert_eq!(b.partitions[2].groups[0].verdict, GroupVerdict::Blocked);
    }

    #[test]
    fn members_say_whether_anyone_waits() {
        let mut gs = groups();
        // described: the state says Stable, but nobody is left
        gs[0].members = Some(Ok(0));
        // not described: the listing's state decides
        gs[3].members = None;
        let b = blocked(&joined(), &gs, &opts());
        let p = &b.partitions[0];
        let ledger = &p.groups[0];
        assert_eq!(
            (ledger.verdict, ledger.members),
            (GroupVerdict::Blocked, Some(0))
        );
        assert!(!ledger.is_live_blocked());
        let archive = p.groups.iter().find(|g| g.group_id == "archive").unwrap();
        assert_eq!(archive.members, None);
        assert!(!archive.is_live_blocked(), "Empty: nobody waits");
        let b = blocked(&joined(), &groups(), &opts());
        assert!(b.partitions[0].groups[0].is_live_blocked());
        assert_eq!(b.partitions[0].groups[0].members, Some(2));
    }

    #[test]
    fn a_failed_description_or_an_unknown_named_group_is_a_gap() {
        let mut gs = groups();
        let loading = KeyError::broker(kdp_wire::ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, None);
        gs[1].members = Some(Err(loading.clone()));
        gs.push(GroupAnswer {
            group_id: "typo".into(),
            state: None,
            group_type: None,
            members: Some(Err(KeyError::broker(
                kdp_wire::ErrorCode::GROUP_ID_NOT_FOUND,
                None,
            ))),
            offsets: Ok(Default::default()),
        });
        let b = blocked(&joined(), &gs, &opts());
        assert_eq!(b.gaps, vec![Gap::GroupMembers("audit".into(), loading)]);
        // a whole-cluster scan does not name it; asked for by name, it is a gap
        let o = BlockedOptions {
            groups: vec!["typo".into()],
            ..opts()
        };
        let b = blocked(&joined(), &gs, &o);
        assert_eq!(b.gaps, vec![Gap::UnknownGroup("typo".into())]);
        assert!(b.partitions.is_empty());
    }

    #[test]
    fn held_groups_name_the_groups_at_each_holders_lso() {
        use crate::groups::read::Visibility;
        let mut j = joined();
        // a second, later transaction on t-0 holds nothing
        if let Ok(ps) = &mut j.partitions[0].result {
            ps.push(open(70, NOW - HOUR, 60));
        }
        let read = GroupsRead {
            answers: groups(),
            ..Default::default()
        };
        let held = held_groups(&j, Some(&read), TIMEOUT);
        assert!(!held.is_partial());
        assert_eq!(
            held.of("t", 0, 7),
            Some(&["ledger".to_string(), "archive".into()][..])
        );
        assert_eq!(held.of("t", 0, 70), Some(&[][..]));
        // the waiting group on t-2 is held too
        assert_eq!(held.of("t", 2, 9), Some(&["ledger".to_string()][..]));
        assert_eq!(held.of("t", 1, 8), Some(&["ledger".to_string()][..]));
        // not read: every pinned holder is unknown, never 0
        let unread = held_groups(&j, None, TIMEOUT);
        assert!(unread.is_partial());
        assert_eq!(unread.of("t", 0, 7), None);
        assert_eq!(unread.of("t", 0, 70), Some(&[][..]), "holds no LSO");
        // a listing ACLs may have cut short: unknown too
        let limited = GroupsRead {
            answers: groups(),
            visibility: Visibility::Limited,
            ..Default::default()
        };
        assert_eq!(held_groups(&j, Some(&limited), TIMEOUT).of("t", 1, 8), None);
        // a partition whose offsets were not read: unknown
        j.offsets.insert(
            ("t".to_string(), 1),
            Err(KeyError::broker(
                kdp_wire::ErrorCode::NOT_LEADER_OR_FOLLOWER,
                None,
            )),
        );
        let held = held_groups(&j, Some(&read), TIMEOUT);
        assert_eq!(held.of("t", 1, 8), None);
        assert!(any_pinned(&j));
        // find-hanging's join leaves out the offsets of non-candidates: not
        // asked about, so neither unknown nor a reason for a partial note;
        // the same gap in a full join stays unknown
        j.offsets.remove(&("t".to_string(), 1));
        assert!(held_groups(&j, Some(&read), TIMEOUT).is_partial());
        j.candidates_only = Some(TIMEOUT);
        let held = held_groups(&j, Some(&read), TIMEOUT);
        assert!(!held.is_partial());
        assert_eq!(
            held.of("t", 0, 7),
            Some(&["ledger".to_string(), "archive".into()][..])
        );
    }

    /// A small deterministic generator (xorshift), so the generated
    /// clusters are the same on every run.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn pick<T: Clone>(&mut self, of: &[T]) -> T {
            of[self.next(of.len() as u64) as usize].clone()
        }
    }

    /// A cluster of three topics with every shape the diagnosis reads:
    /// producers open or not, of every age and none, tracked, decided,
    /// unknown to or hidden from the coordinators; partitions pinned, clean,
    /// unread or not asked about; groups at, below and past the LSO, with
    /// refused offsets, failed descriptions and failed listings.
    fn generated(seed: u64) -> (Joined, GroupsRead) {
        let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let topics = ["a", "b", "c"];
        let mut view = CoordinatorView {
            listing_complete: g.next(4) > 0,
            may_describe_any: g.next(4) > 0,
            ..Default::default()
        };
        for pid in 1..24_i64 {
            match g.next(4) {
                0 => {}
                1 => {
                    view.listed.insert(pid, format!("id-{pid}"));
                    view.descriptions
                        .insert(format!("id-{pid}"), Description::NotFound);
                }
                _ => {
                    let id = format!("id-{pid}");
                    view.listed.insert(pid, id.clone());
                    let topic = g.pick(&topics);
                    view.descriptions.insert(
                        id.clone(),
                        Description::Described(TransactionState {
                            transactional_id: id,
                            transaction_state: g
                                .pick(&["Ongoing", "Ongoing", "PrepareCommit", "Empty"])
                                .into(),
                            transaction_start_time_ms: g.pick(&[NOW - HOUR, NOW - 1_000, -1]),
                            transaction_timeout_ms: 60_000,
                            producer_id: pid,
                            topics: vec![TopicData {
                                topic: topic.into(),
                                partitions: vec![g.next(4) as i32, g.next(4) as i32],
                                ..Default::default()
                            }],
                            ..Default::default()
                        }),
                    );
                }
            }
        }
        let mut partitions = Vec::new();
        let mut offsets = BTreeMap::new();
        for topic in topics {
            for p in 0..4 {
                let producers = (0..g.next(4))
                    .map(|_| {
                        let start = g.pick(&[-1, 3, 5, 8, 20]);
                        open(
                            1 + g.next(23) as i64,
                            g.pick(&[NOW - HOUR, NOW - 1_000, NOW - 120_000, 0, -1]),
                            start,
                        )
                    })
                    .collect();
                partitions.push(PartitionOutcome::answered(topic, p, 1, producers));
                let tp = (topic.to_string(), p);
                match g.next(6) {
                    0 => {}
                    1 => {
                        offsets.insert(
                            tp,
                            Err(KeyError::broker(
                                kdp_wire::ErrorCode::NOT_LEADER_OR_FOLLOWER,
                                None,
                            )),
                        );
                    }
                    _ => {
                        let lso = g.pick(&[3, 5, 8, 20]);
                        let hw = lso + g.pick(&[0, 1, 10]);
                        offsets.insert(
                            tp,
                            Ok(Offsets {
                                high_watermark: hw,
                                last_stable_offset: lso,
                            }),
                        );
                    }
                }
            }
        }
        let mut answers = Vec::new();
        for gi in 0..g.next(8) {
            let mut at = BTreeMap::new();
            for _ in 0..g.next(16) {
                let c = match g.next(8) {
                    0 => Committed::Nothing,
                    1 => Committed::Failed(kdp_wire::ErrorCode::TOPIC_AUTHORIZATION_FAILED),
                    _ => Committed::At(g.pick(&[2, 3, 5, 8, 8, 9, 20, 30])),
                };
                at.insert((g.pick(&topics).to_string(), g.next(4) as i32), c);
            }
            let state = g.pick(&[GroupState::Stable, GroupState::Empty]);
            answers.push(GroupAnswer {
                group_id: format!("g{gi}"),
                members: match g.next(5) {
                    0 => None,
                    1 => Some(Err(KeyError::broker(
                        kdp_wire::ErrorCode::COORDINATOR_LOAD_IN_PROGRESS,
                        None,
                    ))),
                    _ => Some(Ok(u32::from(state.has_members()))),
                },
                state: Some(state),
                group_type: Some(GroupType::Classic),
                offsets: if g.next(8) == 0 {
                    Err(KeyError::broker(
                        kdp_wire::ErrorCode::GROUP_AUTHORIZATION_FAILED,
                        None,
                    ))
                } else {
                    Ok(at.into_iter().collect())
                },
            });
        }
        let read = GroupsRead {
            answers,
            listing_failures: if g.next(6) == 0 {
                vec![(
                    1,
                    KeyError::broker(kdp_wire::ErrorCode::UNKNOWN_SERVER_ERROR, None),
                )]
            } else {
                Vec::new()
            },
            visibility: g.pick(&[
                crate::groups::read::Visibility::Any,
                crate::groups::read::Visibility::Named,
                crate::groups::read::Visibility::Limited,
            ]),
            ..Default::default()
        };
        let joined = Joined {
            partitions,
            cluster_max_timeout_ms: Some(TIMEOUT),
            view,
            offsets,
            candidates_only: (g.next(2) == 0).then_some(TIMEOUT),
            ..Joined::new(NOW, TxnProtocol::V2)
        };
        (joined, read)
    }

    /// `find-hanging` judges its scan once and hands the judgement to its
    /// rows, its BlockedGroups column and its repair plan: on generated
    /// clusters each gives what it gave when every one judged the scan
    /// again (the column through a whole `blocked` run), and `blocked`
    /// gives what it gave when it indexed every producer.
    #[test]
    fn one_judgement_gives_what_the_judgements_of_each_part_gave() {
        let (mut pinned_holders, mut commands) = (0, 0);
        for seed in 0..400 {
            let (j, read) = generated(seed);
            let judged = findings(&j, TIMEOUT);
            for groups in [None, Some(&read)] {
                let held = held_groups_judged(&j, &judged, groups);
                assert_eq!(
                    held,
                    reference::held_groups(&j, groups, TIMEOUT),
                    "seed {seed}, groups read: {}",
                    groups.is_some()
                );
                assert_eq!(held, held_groups(&j, groups, TIMEOUT), "seed {seed}");
                pinned_holders += held.by_holder.values().filter(|g| !g.is_empty()).count();
            }
            assert_eq!(
                crate::repair::findings::findings_judged(&j, &judged),
                crate::repair::findings::findings(&j, TIMEOUT),
                "seed {seed}"
            );
            let full = blocked(&j, &read.answers, &opts());
            commands += full
                .partitions
                .iter()
                .filter(|p| matches!(p.unblock, Some(Unblock::Command(_))))
                .count();
            for o in [
                opts(),
                BlockedOptions {
                    groups_only: true,
                    ..opts()
                },
                BlockedOptions {
                    groups: vec!["g1".into(), "g3".into()],
                    blocked_after_ms: 5 * 60_000,
                    ..opts()
                },
            ] {
                assert_eq!(
                    blocked(&j, &read.answers, &o),
                    reference::blocked(&j, &read.answers, &o),
                    "seed {seed}, {o:?}"
                );
            }
        }
        // the generated clusters hold groups at the LSO: the test compares
        // answers that say something
        assert!(pinned_holders > 40, "{pinned_holders}");
        assert!(commands > 40, "{commands}");
    }

    #[test]
    fn verdict_of_an_offset_against_the_lso() {
        assert_eq!(GroupVerdict::of(Some(5), 5), GroupVerdict::Blocked);
        assert_eq!(
            GroupVerdict::of(Some(2), 5),
            GroupVerdict::Lagging { behind: 3 }
        );
        assert_eq!(GroupVerdict::of(Some(6), 5), GroupVerdict::PastLso);
        assert_eq!(GroupVerdict::of(None, 5), GroupVerdict::NoOffset);
    }
}
