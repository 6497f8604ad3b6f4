//! One snapshot built by hand, every verdict asked of it, with no async
//! runtime and no cluster: the domain answers from data alone.
//!
//! `orders`, partition by partition, on a transaction protocol v1 cluster
//! where every broker answered ListTransactions and the caller may describe
//! any transactional id:
//!
//! - 0: producer 10, no coordinator lists it, idle an hour, pins LSO 100 of
//!   200: hanging; `billing` waits at the LSO, `audit` lags behind it.
//! - 1: producer 20 (`app-tx`, Ongoing at its coordinator for an hour,
//!   60 s timeout) pins LSO 10 of 30: tracked, so not hanging; `billing` is
//!   blocked there and force-terminate is what unblocks it.
//! - 2: producer 30 (`decided-tx`, PrepareCommit for an hour) pins LSO 5:
//!   stuck; only its coordinator may finish it.
//! - 3: producer 40 (`hidden-tx`, the caller may not describe it) pins
//!   LSO 60: unknown, left to an operator.
//! - 4: producer 50 (`old-tx`), closed at epoch 2 while its coordinator is
//!   at epoch 5 (v1: a later instance fenced it), silent for ten days.

use std::collections::BTreeMap;

use kdp_domain::coordinator::{CoordinatorView, Description};
use kdp_domain::diagnose::blocked::{
    blocked, held_groups, AutoAbort, BlockedOptions, GroupVerdict, Unblock,
};
use kdp_domain::diagnose::fence::{FenceProof, FenceSource, FenceUnknown, FenceVerdict, LogView};
use kdp_domain::diagnose::findings::{findings, Holder};
use kdp_domain::diagnose::flags::{flags, Coordinator, Flag};
use kdp_domain::diagnose::hanging::{
    kafka_says_hanging, transaction_start_ms, HangingReason, OpenTxn, Problem, UnknownKind,
    UnknownReason, Verdict,
};
use kdp_domain::groups::{Committed, GroupAnswer, GroupState, GroupsRead};
use kdp_domain::repair::{
    findings as repair_findings, plan_findings, recheck, Action, Changed, CoordinatorAnswer,
    NotAsked, SkipReason,
};
use kdp_domain::{Joined, Offsets, PartitionOutcome, Severity, TxnProtocol};
use kdp_wire::messages::{ProducerState, TopicData, TransactionState};
use kdp_wire::TxnState;

const NOW: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
const TIMEOUT: i64 = 900_000;

fn producer(id: i64, epoch: i32, coordinator_epoch: i32, start: i64, idle: i64) -> ProducerState {
    ProducerState {
        producer_id: id,
        producer_epoch: epoch,
        last_sequence: 4,
        last_timestamp: NOW - idle,
        coordinator_epoch,
        current_txn_start_offset: start,
        ..Default::default()
    }
}

fn described(id: &str, pid: i64, epoch: i16, state: &str, partition: i32) -> TransactionState {
    TransactionState {
        transactional_id: id.into(),
        transaction_state: state.into(),
        transaction_timeout_ms: 60_000,
        transaction_start_time_ms: NOW - HOUR,
        producer_id: pid,
        producer_epoch: epoch,
        topics: vec![TopicData {
            topic: "orders".into(),
            partitions: vec![partition],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn joined() -> Joined {
    let mut view = CoordinatorView {
        listing_complete: true,
        may_describe_any: true,
        ..Default::default()
    };
    for (pid, id, d) in [
        (
            20,
            "app-tx",
            Description::Described(described("app-tx", 20, 0, "Ongoing", 1)),
        ),
        (
            30,
            "decided-tx",
            Description::Described(described("decided-tx", 30, 0, "PrepareCommit", 2)),
        ),
        (40, "hidden-tx", Description::Denied),
        // the coordinator moved on: epoch 5, another partition
        (
            50,
            "old-tx",
            Description::Described(described("old-tx", 50, 5, "Ongoing", 9)),
        ),
    ] {
        view.listed.insert(pid, id.into());
        view.descriptions.insert(id.into(), d);
    }
    let partition = |p, producers| PartitionOutcome::answered("orders", p, 1, producers);
    let offsets = |hw, lso| {
        Ok(Offsets {
            high_watermark: hw,
            last_stable_offset: lso,
        })
    };
    Joined {
        partitions: vec![
            partition(0, vec![producer(10, 3, 1, 100, HOUR)]),
            partition(1, vec![producer(20, 0, -1, 10, HOUR)]),
            partition(2, vec![producer(30, 0, -1, 5, HOUR)]),
            partition(3, vec![producer(40, 1, 0, 60, HOUR)]),
            partition(4, vec![producer(50, 2, 4, -1, 10 * DAY)]),
        ],
        cluster_max_timeout_ms: Some(TIMEOUT),
        producer_id_expiration_ms: Some(7 * DAY),
        view,
        offsets: [
            (("orders".to_string(), 0), offsets(200, 100)),
            (("orders".to_string(), 1), offsets(30, 10)),
            (("orders".to_string(), 2), offsets(8, 5)),
            (("orders".to_string(), 3), offsets(70, 60)),
            (("orders".to_string(), 4), offsets(10, 10)),
        ]
        .into_iter()
        .collect(),
        ..Joined::new(NOW, TxnProtocol::V1)
    }
}

fn group(id: &str, offsets: &[(i32, i64)]) -> GroupAnswer {
    GroupAnswer {
        group_id: id.into(),
        state: Some(GroupState::Stable),
        group_type: None,
        members: Some(Ok(2)),
        offsets: Ok(offsets
            .iter()
            .map(|&(p, o)| (("orders".to_string(), p), Committed::At(o)))
            .collect()),
    }
}

fn groups() -> Vec<GroupAnswer> {
    vec![
        group("billing", &[(0, 100), (1, 10), (2, 5)]),
        group("audit", &[(0, 50)]),
    ]
}

fn connection() -> Vec<String> {
    vec!["--bootstrap-server".into(), "b:9092".into()]
}

fn args(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

#[test]
fn hanging_stuck_unknown_and_ok_each_where_the_data_says() {
    let j = joined();
    assert_eq!(j.max_timeout_ms(), TIMEOUT);
    let judged = findings(&j, j.max_timeout_ms());
    let verdicts: Vec<(i64, Verdict)> = judged
        .candidates()
        .map(|(o, v)| (o.producer.producer_id, v.clone()))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            (10, Verdict::Hanging(HangingReason::NoTransaction)),
            (20, Verdict::NotHanging),
            (
                30,
                Verdict::Stuck {
                    state: TxnState::PrepareCommit
                }
            ),
            (40, Verdict::Unknown(UnknownReason::NotAuthorized)),
        ],
        "producer 50 has no open transaction: not judged"
    );
    let kinds: Vec<(&str, Severity)> = verdicts
        .iter()
        .map(|(_, v)| (v.kind().label(), v.kind().severity()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("hanging", Severity::Problem),
            ("ok", Severity::Ok),
            ("stuck", Severity::Warning),
            ("unknown", Severity::Unknown)
        ]
    );
    assert_eq!(verdicts[0].1.problem(), Some(Problem::NoTransaction));
    assert_eq!(verdicts[2].1.problem(), Some(Problem::PrepareCommit));
    assert!(verdicts[2].1.problem().unwrap().is_stuck());
    assert_eq!(verdicts[1].1.problem(), None);
    let Verdict::Unknown(why) = &verdicts[3].1 else {
        panic!("{:?}", verdicts[3])
    };
    assert_eq!(why.kind(), UnknownKind::NotAuthorized);
    assert_eq!(
        verdicts[0].1.explain(),
        "hanging: the coordinator has no transaction for this producer"
    );
    // each partition's LSO holder, as the exporter labels it
    let holders: Vec<Holder> = (0..4)
        .map(|p| {
            judged
                .lso_holder("orders", p)
                .expect("an open transaction")
                .holder()
        })
        .collect();
    assert_eq!(
        holders,
        [
            Holder::Hanging,
            Holder::Open,
            Holder::Stuck,
            Holder::Unknown
        ]
    );
    assert_eq!(judged.lso_holder("orders", 4), None);
    // Kafka's own rule calls the hidden one hanging: kdp does not
    let hidden = OpenTxn {
        topic: "orders".into(),
        partition: 3,
        producer: producer(40, 1, 0, 60, HOUR),
    };
    assert!(kafka_says_hanging(&hidden, &j.view));
}

#[test]
fn flags_and_fences_prove_only_what_the_data_proves() {
    let j = joined();
    let cx = j.flags_context();
    let flagged: BTreeMap<i64, Vec<&str>> = j
        .producers()
        .map(|(topic, partition, p)| {
            let fence = j.fence_verdict(p, LogView::NotRead);
            let f = flags(p, topic, partition, &j.coordinator(p), &cx, &fence);
            (p.producer_id, f.into_iter().map(Flag::label).collect())
        })
        .collect();
    assert_eq!(flagged[&10], ["open-too-long", "orphan"]);
    assert_eq!(flagged[&20], ["open-too-long"]);
    assert_eq!(flagged[&30], ["open-too-long"]);
    assert_eq!(flagged[&40], ["open-too-long"]);
    assert_eq!(flagged[&50], ["fenced", "idle"]);
    assert_eq!(Flag::Orphan.severity(), Severity::Problem);
    assert_eq!(Flag::Idle.severity(), Severity::Warning);

    // what the coordinators say of each, as the flags take it
    let of = |pid: i64| {
        let (_, _, p) = j
            .producers()
            .find(|(_, _, p)| p.producer_id == pid)
            .unwrap();
        j.coordinator(p)
    };
    assert_eq!(of(10), Coordinator::Unknown);
    assert!(matches!(of(20), Coordinator::Known(t) if t.transactional_id == "app-tx"));
    assert_eq!(of(40), Coordinator::Unseen);

    // v1: the epochs prove the fence of 50 without the log
    let (_, _, p50) = j.producers().find(|(_, _, p)| p.producer_id == 50).unwrap();
    let fence = j.fence_verdict(p50, LogView::NotRead);
    assert_eq!(
        fence,
        FenceVerdict::Fenced(FenceProof::Epochs {
            coordinator_epoch: 5
        })
    );
    assert_eq!(
        (fence.label(), fence.source()),
        ("fenced", Some(FenceSource::Epochs))
    );
    assert!(!fence.is_unchecked());
    // the same state under v2 proves nothing: unknown, and unchecked
    let v2 = Joined {
        protocol: TxnProtocol::V2,
        ..joined()
    };
    let fence = v2.fence_verdict(p50, LogView::NotRead);
    assert_eq!(fence, FenceVerdict::Unknown(FenceUnknown::NotRead));
    assert!(fence.is_unchecked() && fence.source().is_none());
    // no transactional id, no log to read: unknown, but not unchecked
    let (_, _, p10) = j.producers().find(|(_, _, p)| p.producer_id == 10).unwrap();
    let fence = j.fence_from_logs(p10, &BTreeMap::new()).unwrap();
    assert_eq!(
        fence,
        FenceVerdict::Unknown(FenceUnknown::NoTransactionalId)
    );
    assert!(!fence.is_unchecked());
}

#[test]
fn blocked_groups_and_what_unblocks_each_partition() {
    let j = joined();
    let opts = BlockedOptions {
        max_timeout_ms: TIMEOUT,
        blocked_after_ms: 60_000,
        groups: Vec::new(),
        connection: connection(),
        groups_only: false,
    };
    let b = blocked(&j, &groups(), &opts);
    assert!(b.gaps.is_empty(), "{:?}", b.gaps);
    let pinned: Vec<i32> = b.partitions.iter().map(|p| p.partition).collect();
    assert_eq!(pinned, [0, 1, 2, 3], "orders-4's LSO is its high watermark");
    let rows = |i: usize| -> Vec<(&str, GroupVerdict)> {
        b.partitions[i]
            .groups
            .iter()
            .map(|g| (g.group_id.as_str(), g.verdict))
            .collect()
    };
    assert_eq!(
        rows(0),
        [
            ("billing", GroupVerdict::Blocked),
            ("audit", GroupVerdict::Lagging { behind: 50 })
        ]
    );
    assert_eq!(b.partitions[0].held_back(), 100);
    assert_eq!(
        b.partitions[0].unblock,
        Some(Unblock::Command(args(
            "kdp abort --bootstrap-server b:9092 --topic orders --partition 0 --producer-id 10 \
             --producer-epoch 3 --coordinator-epoch 1"
        )))
    );
    assert_eq!(
        b.partitions[0].pinned_by.as_ref().unwrap().auto_abort,
        AutoAbort::Never
    );
    // tracked and Ongoing: its coordinator would abort it at start + timeout
    assert_eq!(rows(1), [("billing", GroupVerdict::Blocked)]);
    let pin = b.partitions[1].pinned_by.as_ref().unwrap();
    assert_eq!(pin.transactional_id.as_deref(), Some("app-tx"));
    assert_eq!(pin.auto_abort, AutoAbort::At(NOW - HOUR + 60_000));
    assert_eq!(pin.started_ms, Some(NOW - HOUR));
    assert_eq!(
        b.partitions[1].unblock,
        Some(Unblock::Command(args(
            "kdp force-terminate --bootstrap-server b:9092 --transactional-id app-tx"
        )))
    );
    // decided: only the coordinator may finish it, no command
    assert_eq!(rows(2), [("billing", GroupVerdict::Blocked)]);
    assert_eq!(
        b.partitions[2].pinned_by.as_ref().unwrap().auto_abort,
        AutoAbort::Decided(TxnState::PrepareCommit)
    );
    assert_eq!(b.partitions[2].unblock, None);
    // unknown: the command an operator runs by hand, by its start offset
    assert!(b.partitions[3].groups.is_empty());
    assert_eq!(
        b.partitions[3].unblock,
        Some(Unblock::Command(args(
            "kdp abort --bootstrap-server b:9092 --topic orders --partition 3 --start-offset 60"
        )))
    );
    assert!(b.any_blocked());
    assert_eq!(GroupVerdict::Blocked.severity(), Severity::Problem);
    assert_eq!(GroupVerdict::Waiting.severity(), Severity::Ok);

    // the blocked-groups column: the groups at the LSO each holder holds
    let read = GroupsRead {
        answers: groups(),
        ..Default::default()
    };
    let held = held_groups(&j, Some(&read), TIMEOUT);
    assert!(!held.is_partial());
    assert_eq!(held.of("orders", 0, 10), Some(&["billing".to_string()][..]));
    assert_eq!(held.of("orders", 3, 40), Some(&[][..]));
    // not read: unknown, never an empty list
    assert_eq!(held_groups(&j, None, TIMEOUT).of("orders", 0, 10), None);
}

#[test]
fn the_repair_plan_and_its_recheck() {
    let j = joined();
    let found = repair_findings(&j, TIMEOUT);
    assert_eq!(
        found
            .iter()
            .map(|f| &f.coordinator)
            .filter(|c| matches!(c, CoordinatorAnswer::NotListed))
            .count(),
        1,
        "only producer 10 is known to have no transaction"
    );
    assert_eq!(
        found[3].coordinator,
        CoordinatorAnswer::NotAsked(NotAsked::Denied {
            transactional_id: "hidden-tx".into()
        })
    );
    assert_eq!(
        found[0].unblocks,
        Some(100),
        "from LSO 100 to the high watermark"
    );
    let plan = plan_findings(&found, &connection());
    let steps: Vec<(usize, String)> = plan
        .steps
        .iter()
        .map(|s| {
            let what = match &s.action {
                Action::Abort(a) => format!(
                    "abort {}-{} producer {} epoch {} coordinator epoch {}",
                    a.topic, a.partition, a.producer_id, a.producer_epoch, a.coordinator_epoch
                ),
                Action::ForceTerminate { transactional_id } => {
                    format!("force-terminate {transactional_id}")
                }
                Action::Skip(why) => {
                    format!("skip {}", s.seen.partitions[0].partition)
                        + match why {
                            SkipReason::Decided { state } => format!(" decided {state}"),
                            SkipReason::EpochOutOfRange { .. } => " out of range".to_string(),
                        }
                        .as_str()
                }
                Action::Manual(m) => format!("manual {}", m.command_line()),
            };
            (s.number, what)
        })
        .collect();
    assert_eq!(
        steps,
        [
            (
                1,
                "abort orders-0 producer 10 epoch 3 coordinator epoch 1".to_string()
            ),
            (2, "skip 2 decided PrepareCommit".to_string()),
            (
                3,
                "manual kdp abort --bootstrap-server b:9092 --topic orders --partition 3 \
                 --start-offset 60"
                    .to_string()
            ),
        ],
        "the tracked Ongoing transaction on orders-1 is no candidate for repair"
    );
    assert!(plan.sends_anything());
    assert_eq!(plan.abort_partitions().len(), 1);

    // re-checked against the cluster as read again: unchanged, it is sent;
    // once producer 10's transaction ended, it is not
    let none = BTreeMap::new();
    assert_eq!(recheck(&plan.steps[0], Some(&Ok(joined())), &none), Ok(()));
    let mut later = joined();
    later.partitions[0].result = Ok(vec![producer(10, 3, 1, -1, 0)]);
    assert_eq!(
        recheck(&plan.steps[0], Some(&Ok(later)), &none),
        Err(Changed::TransactionEnded {
            partition: "orders-0".into(),
            producer_id: 10
        })
    );
    // skipped and manual steps are never refused: nothing is sent for them
    assert_eq!(recheck(&plan.steps[1], None, &none), Ok(()));
}

#[test]
fn a_transaction_started_when_its_coordinator_says_else_at_its_last_write() {
    let j = joined();
    let (_, _, p20) = j.producers().find(|(_, _, p)| p.producer_id == 20).unwrap();
    let tracked = j.tracked("orders", 1, 20);
    assert!(tracked.is_some());
    assert_eq!(transaction_start_ms(tracked, p20), NOW - HOUR);
    // not the partition of its transaction: the producer's last write
    assert_eq!(j.tracked("orders", 0, 20), None);
    let (_, _, p10) = j.producers().find(|(_, _, p)| p.producer_id == 10).unwrap();
    assert_eq!(transaction_start_ms(None, p10), p10.last_timestamp);
}
