//! The diagnosis as it was before it was made in one pass (issue 32):
//! `held_groups` judging the join twice over a whole `blocked` run, and
//! `blocked` indexing every producer. The tests compare today's functions
//! with these on generated clusters, so a faster path can never give
//! another answer.

use std::collections::HashMap;

use kdp_wire::messages::ProducerState;
use kdp_wire::TxnState;

use super::{
    command, group_row, row_of, AutoAbort, Blocked, BlockedOptions, Gap, GroupRow, GroupVerdict,
    HeldGroups, PinnedPartition, Pinning, Unblock,
};
use crate::diagnose::findings::{findings, LsoHolder};
use crate::diagnose::hanging::{transaction_start_ms, Verdict};
use crate::groups::offsets::Committed;
use crate::groups::read::{GroupAnswer, GroupsRead};
use crate::joined::Joined;
use crate::partition::TopicPartition;
use crate::repair::findings::{findings as repair_findings, plan_findings};
use crate::repair::plan::{Action, CoordinatorAnswer, Plan};
use crate::time::known_ms;

pub(super) fn held_groups(
    joined: &Joined,
    groups: Option<&GroupsRead>,
    max_timeout_ms: i64,
) -> HeldGroups {
    let mut out = HeldGroups::default();
    let judged = findings(joined, max_timeout_ms);
    let diagnosis = groups.map(|g| {
        // the groups at each LSO only: no repair plan (`unblock`), which
        // this column never shows and which cost a whole plan per scan
        let b = blocked(
            joined,
            &g.answers,
            &BlockedOptions {
                max_timeout_ms,
                groups_only: true,
                ..Default::default()
            },
        );
        let whole = g.listing_failures.is_empty()
            && !g.visibility.may_hide()
            && !b
                .gaps
                .iter()
                .any(|gap| matches!(gap, Gap::GroupOffsets(..)));
        (b, whole)
    });
    let mut pinned: HashMap<(&str, i32), &PinnedPartition> = HashMap::new();
    if let Some((b, _)) = &diagnosis {
        for p in &b.partitions {
            pinned.insert((p.topic.as_str(), p.partition), p);
        }
    }
    for (tp, holder) in &judged.lso_holders {
        let key = (tp.0.clone(), tp.1, holder.producer_id);
        match joined.offsets.get(tp) {
            Some(Ok(o)) if o.blocked() == 0 => continue,
            Some(Ok(_)) => {}
            // find-hanging's join reads the offsets of its candidates
            // only: a holder that is none is not asked about
            None if joined.candidates_only.is_some() && joined.unfinished.is_empty() => continue,
            // pinned or not, kdp cannot tell
            _ => {
                out.unknown.insert(key);
                continue;
            }
        }
        let Some((_, whole)) = &diagnosis else {
            out.unknown.insert(key);
            continue;
        };
        let p = pinned.get(&(tp.0.as_str(), tp.1));
        let refused = p.is_some_and(|p| {
            p.groups
                .iter()
                .any(|g| matches!(g.verdict, GroupVerdict::Unread(_)))
        });
        if !whole || refused {
            out.unknown.insert(key);
            continue;
        }
        let names: Vec<String> = p
            .map(|p| {
                p.groups
                    .iter()
                    .filter(|g| g.verdict.at_lso())
                    .map(|g| g.group_id.clone())
                    .collect()
            })
            .unwrap_or_default();
        out.by_holder.insert(key, names);
    }
    out
}

pub(super) fn blocked(joined: &Joined, groups: &[GroupAnswer], opts: &BlockedOptions) -> Blocked {
    let mut out = Blocked::default();
    let named = !opts.groups.is_empty();
    let chosen: Vec<&GroupAnswer> = groups
        .iter()
        .filter(|g| !named || opts.groups.contains(&g.group_id))
        .collect();
    for g in &chosen {
        match &g.offsets {
            Err(e) => out
                .gaps
                .push(Gap::GroupOffsets(g.group_id.clone(), e.clone())),
            Ok(offsets) => {
                for ((t, p), c) in offsets.iter() {
                    if let Committed::Failed(code) = c {
                        out.gaps.push(Gap::GroupPartition(
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
                out.gaps
                    .push(Gap::GroupMembers(g.group_id.clone(), e.clone()));
            }
        }
        if named && g.is_unknown() {
            out.gaps.push(Gap::UnknownGroup(g.group_id.clone()));
        }
    }
    // The pinned partitions, and each one's groups in group order.
    let mut pinned: Vec<(&TopicPartition, i64, i64)> = Vec::new();
    for (tp, offsets) in &joined.offsets {
        match offsets {
            Ok(o) if o.blocked() > 0 => {
                pinned.push((tp, o.high_watermark, o.last_stable_offset));
            }
            Ok(_) => {}
            Err(e) => out.gaps.push(Gap::PartitionOffsets(tp.clone(), e.clone())),
        }
    }
    if pinned.is_empty() {
        return out;
    }
    // each topic's pinned partitions, in partition order (`pinned` is in
    // topic and partition order): one lookup per topic of a group's
    // offsets, not one per offset
    let mut by_topic: HashMap<&str, PinnedOf> = HashMap::new();
    for (i, (tp, _, _)) in pinned.iter().enumerate() {
        by_topic.entry(tp.0.as_str()).or_default().push((tp.1, i));
    }
    let mut on: Vec<Vec<(usize, &Committed)>> = vec![Vec::new(); pinned.len()];
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

    // a pinned partition no group reads has no row to count
    let skipped = |i: usize| opts.groups_only && !named && on[i].is_empty();
    if (0..pinned.len()).all(skipped) {
        return out;
    }
    let judged = findings(joined, opts.max_timeout_ms);
    let plan = if opts.groups_only {
        Plan::default()
    } else {
        plan_findings(
            &repair_findings(joined, opts.max_timeout_ms),
            &opts.connection,
        )
    };
    let mut steps: HashMap<(&str, i32), &Action> = HashMap::new();
    for s in &plan.steps {
        for ps in &s.seen.partitions {
            steps
                .entry((ps.topic.as_str(), ps.partition))
                .or_insert(&s.action);
        }
    }
    let mut open: HashMap<(&str, i32, i64), &ProducerState> = HashMap::new();
    let mut last_write: HashMap<i64, i64> = HashMap::new();
    for (t, p, s) in joined.producers() {
        if s.current_txn_start_offset >= 0 {
            open.insert((t, p, s.producer_id), s);
        }
        if let Some(ts) = known_ms(s.last_timestamp) {
            let w = last_write.entry(s.producer_id).or_insert(ts);
            *w = (*w).max(ts);
        }
    }

    for (i, &(tp, high_watermark, lso)) in pinned.iter().enumerate() {
        if skipped(i) {
            continue;
        }
        let (topic, partition) = (tp.0.as_str(), tp.1);
        let mut rows: Vec<GroupRow> = on[i]
            .iter()
            .filter_map(|&(gi, c)| group_row(chosen[gi], c, lso))
            .collect();
        if named {
            // a named group that reads the topic but has nothing here
            for g in &chosen {
                let Ok(offsets) = &g.offsets else { continue };
                if !rows.iter().any(|r| r.group_id == g.group_id) && offsets.has_topic(topic) {
                    rows.push(row_of(g, None, GroupVerdict::NoOffset));
                }
            }
            if rows.is_empty() {
                continue;
            }
            rows.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        }
        let holder = judged.lso_holder(topic, partition);
        let producer = holder.and_then(|h| open.get(&(topic, partition, h.producer_id)).copied());
        let pinned_by = producer.map(|p| pinning(joined, p, topic, partition, holder, &last_write));
        let live = pinned_by
            .as_ref()
            .is_some_and(|p| p.is_live(joined.now_ms, opts.blocked_after_ms));
        if live {
            for r in &mut rows {
                if r.verdict == GroupVerdict::Blocked {
                    r.verdict = GroupVerdict::Waiting;
                }
            }
        }
        let unblock = match (steps.get(&(topic, partition)), &pinned_by) {
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
        out.partitions.push(PinnedPartition {
            topic: topic.to_string(),
            partition,
            high_watermark,
            last_stable_offset: lso,
            pinned_by,
            groups: rows,
            unblock,
        });
    }
    out
}

/// A topic's pinned partitions: (partition, index into the pinned list).
type PinnedOf = Vec<(i32, usize)>;

/// The transaction `p` holding `topic`-`partition`'s LSO, as its
/// coordinator and the scan show it.
fn pinning(
    joined: &Joined,
    p: &ProducerState,
    topic: &str,
    partition: i32,
    holder: Option<&LsoHolder>,
    last_write: &HashMap<i64, i64>,
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
        last_write_ms: last_write.get(&p.producer_id).copied(),
        auto_abort,
    }
}
