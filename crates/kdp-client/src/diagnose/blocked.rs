//! Blocked consumers: from a partition whose last stable offset (LSO) is
//! below its high watermark, to the transaction that pins it and the
//! consumer groups it holds back. A pure function over what the brokers
//! answered (the join behind `find-hanging`, the groups and their
//! committed offsets), so every verdict is tested without a cluster.
//!
//! Each group with a committed offset on a pinned partition gets a
//! [`GroupVerdict`]: a read_committed consumer stops at the LSO, so a group
//! committed exactly there is [`Blocked`](GroupVerdict::Blocked); below it,
//! [`Lagging`](GroupVerdict::Lagging) (it still has records to read);
//! above it, [`PastLso`](GroupVerdict::PastLso) (only a read_uncommitted
//! consumer gets there). A group named with `--group` that committed on
//! other partitions of the topic but not this one is
//! [`NoOffset`](GroupVerdict::NoOffset). A group's state is carried with
//! its verdict, so an Empty group at the LSO reads as such, never as a
//! live consumer.
//!
//! The repair of each pinned partition follows the rules of the plan
//! `find-hanging --repair` makes ([`plan_findings`]): force-terminate when
//! the coordinator's Ongoing transaction holds the partition (also when it
//! is younger than find-hanging's timeout: the coordinator would abort it
//! only at start + timeout, shown beside it as [`AutoAbort::At`]), a raw
//! abort when no coordinator knows it, the manual command when kdp cannot
//! tell, and none when the outcome is decided (PrepareCommit/PrepareAbort):
//! only the coordinator may finish it.

use kdp_wire::TxnState;

use crate::admin::{KeyError, TopicPartition};
use crate::diagnose::findings::findings;
use crate::diagnose::hanging::Verdict;
use crate::groups::{Committed, GroupState};
use crate::time::known_ms;
use crate::txn::join::Joined;
use crate::txn::repair::{findings as repair_findings, plan_findings, Action, CoordinatorAnswer};

pub use crate::groups::GroupAnswer;

/// A group's position on a pinned partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupVerdict {
    /// Committed at the LSO: a read_committed consumer waits there.
    Blocked,
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
    pub fn kind(&self) -> &'static str {
        match self {
            GroupVerdict::Blocked => "blocked",
            GroupVerdict::Lagging { .. } => "lagging",
            GroupVerdict::PastLso => "past the LSO",
            GroupVerdict::NoOffset => "no offset",
            GroupVerdict::Unread(_) => "unknown",
        }
    }

    /// The verdict of a committed offset against the LSO.
    pub fn of(committed: Option<i64>, lso: i64) -> GroupVerdict {
        match committed {
            None => GroupVerdict::NoOffset,
            Some(c) if c == lso => GroupVerdict::Blocked,
            Some(c) if c < lso => GroupVerdict::Lagging {
                behind: lso.saturating_sub(c),
            },
            Some(_) => GroupVerdict::PastLso,
        }
    }
}

/// One group on one pinned partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    /// The group id.
    pub group_id: String,
    /// Its state (`None`: its coordinator did not say).
    pub state: Option<GroupState>,
    /// Its committed offset here.
    pub committed: Option<i64>,
    /// Where that leaves it.
    pub verdict: GroupVerdict,
}

impl GroupRow {
    /// Blocked with members that consume (or a state kdp was not told):
    /// a consumer is waiting now.
    pub fn is_live_blocked(&self) -> bool {
        self.verdict == GroupVerdict::Blocked
            && self.state.as_ref().is_none_or(GroupState::has_members)
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
    /// When the coordinator will end it by itself.
    pub auto_abort: AutoAbort,
}

/// What unblocks a pinned partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unblock {
    /// Run this (program first), as `find-hanging --repair` would plan it.
    Command(Vec<String>),
    /// Nothing to run: the coordinator decided the outcome and is writing
    /// its markers (see [`Pinning::auto_abort`]).
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

/// What to diagnose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockedOptions {
    /// Candidates of `find-hanging` are idle longer than this (ms).
    pub max_timeout_ms: i64,
    /// Only these groups (empty: every group given).
    pub groups: Vec<String>,
    /// The flags that reach the cluster, put in suggested commands
    /// (`["--bootstrap-server", "host:9092"]`).
    pub connection: Vec<String>,
}

/// The diagnosis of `joined` (the scan behind `find-hanging`) and `groups`.
pub fn blocked(joined: &Joined, groups: &[GroupAnswer], opts: &BlockedOptions) -> Blocked {
    let mut out = Blocked::default();
    let judged = findings(joined, opts.max_timeout_ms);
    let plan = plan_findings(
        &repair_findings(joined, opts.max_timeout_ms),
        &opts.connection,
    );
    let chosen: Vec<&GroupAnswer> = groups
        .iter()
        .filter(|g| opts.groups.is_empty() || opts.groups.contains(&g.group_id))
        .collect();
    for g in &chosen {
        match &g.offsets {
            Err(e) => out
                .gaps
                .push(Gap::GroupOffsets(g.group_id.clone(), e.clone())),
            Ok(offsets) => {
                for (tp, c) in offsets {
                    if let Committed::Failed(code) = c {
                        out.gaps
                            .push(Gap::GroupPartition(g.group_id.clone(), tp.clone(), *code));
                    }
                }
            }
        }
    }
    for (tp, offsets) in &joined.offsets {
        let o = match offsets {
            Ok(o) => o,
            Err(e) => {
                out.gaps.push(Gap::PartitionOffsets(tp.clone(), e.clone()));
                continue;
            }
        };
        if o.blocked() == 0 {
            continue;
        }
        let (topic, partition) = (tp.0.as_str(), tp.1);
        let rows: Vec<GroupRow> = chosen
            .iter()
            .filter_map(|g| {
                group_row(
                    g,
                    topic,
                    partition,
                    o.last_stable_offset,
                    !opts.groups.is_empty(),
                )
            })
            .collect();
        if !opts.groups.is_empty() && rows.is_empty() {
            continue;
        }
        let holder = judged.lso_holder(topic, partition);
        let producer = holder.and_then(|h| {
            joined
                .open_transactions()
                .find(|(t, p, s)| *t == topic && *p == partition && s.producer_id == h.producer_id)
                .map(|(_, _, s)| s)
        });
        let pinned_by = producer.map(|p| {
            let answer = CoordinatorAnswer::of(joined, p.producer_id);
            let tracked = answer.includes(topic, partition) == Some(true);
            let described = match &answer {
                CoordinatorAnswer::Described(t) => Some(t),
                _ => None,
            };
            let started_ms = described
                .filter(|_| tracked)
                .and_then(|t| known_ms(t.transaction_start_time_ms))
                .or_else(|| known_ms(p.last_timestamp));
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
                auto_abort,
            }
        });
        let step = plan.steps.iter().find(|s| {
            s.seen
                .partitions
                .iter()
                .any(|ps| ps.topic == topic && ps.partition == partition)
        });
        let unblock = match (step.map(|s| &s.action), &pinned_by) {
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
        out.partitions.push(PinnedPartition {
            topic: topic.to_string(),
            partition,
            high_watermark: o.high_watermark,
            last_stable_offset: o.last_stable_offset,
            pinned_by,
            groups: rows,
            unblock,
        });
    }
    out
}

fn group_row(
    g: &GroupAnswer,
    topic: &str,
    partition: i32,
    lso: i64,
    named: bool,
) -> Option<GroupRow> {
    let offsets = g.offsets.as_ref().ok()?;
    let committed = match offsets.get(&(topic.to_string(), partition)) {
        Some(Committed::At(o)) => Some(*o),
        // on a pinned partition a refused offset may hide a blocked group
        Some(Committed::Failed(code)) => {
            return Some(GroupRow {
                group_id: g.group_id.clone(),
                state: g.state.clone(),
                committed: None,
                verdict: GroupVerdict::Unread(*code),
            })
        }
        Some(Committed::Nothing) | None => None,
    };
    // Without an offset here, only a named group that reads the topic.
    if committed.is_none() && !(named && offsets.keys().any(|(t, _)| t == topic)) {
        return None;
    }
    Some(GroupRow {
        group_id: g.group_id.clone(),
        state: g.state.clone(),
        committed,
        verdict: GroupVerdict::of(committed, lso),
    })
}

/// The command line of a plan step, program first; `None` for a step that
/// sends nothing (a decided outcome only the coordinator may write).
pub fn command(action: &Action, connection: &[String]) -> Option<Vec<String>> {
    let mut args = vec!["kdp".to_string()];
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
mod tests {
    use std::collections::BTreeMap;

    use kdp_wire::messages::{ProducerState, TopicData, TransactionState};

    use super::*;
    use crate::diagnose::hanging::{CoordinatorView, Description};
    use crate::diagnose::TxnProtocol;
    use crate::txn::offsets::Offsets;
    use crate::{DescribeSummary, PartitionOutcome};

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
        let part = |p: i32, producers: Vec<ProducerState>| PartitionOutcome {
            topic: "t".into(),
            partition: p,
            broker_id: Some(1),
            result: Ok(producers),
        };
        let offsets = |hw, lso| {
            Ok(Offsets {
                high_watermark: hw,
                last_stable_offset: lso,
            })
        };
        Joined {
            now_ms: NOW,
            partitions: vec![
                part(0, vec![open(7, NOW - HOUR, 40)]),
                part(1, vec![open(8, NOW - HOUR, 10)]),
                part(2, vec![open(9, NOW - 60_000, 5)]),
                part(3, vec![]),
            ],
            summary: DescribeSummary::default(),
            protocol: TxnProtocol::V2,
            cluster_max_timeout_ms: Some(TIMEOUT),
            producer_id_expiration_ms: None,
            view,
            offsets: BTreeMap::from([
                (("t".to_string(), 0), offsets(100, 40)),
                (("t".to_string(), 1), offsets(20, 10)),
                (("t".to_string(), 2), offsets(6, 5)),
                (("t".to_string(), 3), offsets(50, 50)),
            ]),
            listing_errors: Vec::new(),
            unfinished: Vec::new(),
            candidates_only: None,
        }
    }

    fn group(id: &str, state: GroupState, at: &[(i32, i64)]) -> GroupAnswer {
        GroupAnswer {
            group_id: id.into(),
            state: Some(state),
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
            groups: Vec::new(),
            connection: vec!["--bootstrap-server".into(), "b:9092".into()],
        }
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
