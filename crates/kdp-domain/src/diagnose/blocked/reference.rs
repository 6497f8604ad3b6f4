//! The diagnosis as it was before it was made in one pass (issue 32):
//! `held_groups` judging the join twice over a whole `blocked` run, and
//! `blocked` indexing every producer. The tests compare today's functions
//! with these on generated clusters, so a faster path can never give
//! another answer. Only what the one-pass change rewrote is kept here; the
//! steps it left as they were (the pinned groups, a partition's rows, its
//! pinning and unblock) are the diagnosis' own.

use std::collections::HashMap;

use kdp_wire::messages::ProducerState;

use super::{
    pinned_partition, pinning, rows_at, Blocked, BlockedOptions, Gap, GroupVerdict, HeldGroups,
    PinnedGroups, PinnedPartition,
};
use crate::diagnose::findings::findings;
use crate::groups::read::{GroupAnswer, GroupsRead};
use crate::joined::Joined;
use crate::repair::findings::{findings as repair_findings, plan_findings};
use crate::repair::plan::{Action, Plan};
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
        let Some(rows) = rows_at(&chosen, &on[i], named, topic, lso) else {
            continue;
        };
        let holder = judged.lso_holder(topic, partition);
        let producer = holder.and_then(|h| open.get(&(topic, partition, h.producer_id)).copied());
        let pinned_by = producer.map(|p| {
            pinning(
                joined,
                p,
                topic,
                partition,
                holder,
                last_write.get(&p.producer_id).copied(),
            )
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
