use kdp_wire::records::{Attributes, BatchHeader, ControlType};

use super::*;
use crate::diagnose::blocked::{AutoAbort, PinnedPartition};
use crate::groups::offsets::GroupOffsets;
use crate::groups::read::GroupAnswer;
use crate::groups::share::{Isolation, ShareOffsets, ShareRead, ShareStart};
use crate::lag::found::LagFound;
use crate::severity::Severity;

fn tp() -> TopicPartition {
    ("orders".to_string(), 0)
}

fn group(id: &str, committed: Committed) -> GroupAnswer {
    let mut offsets = GroupOffsets::new();
    offsets.insert(tp(), committed);
    GroupAnswer {
        group_id: id.to_string(),
        state: Some(GroupState::Empty),
        group_type: Some(GroupType::Classic),
        members: Some(Ok(0)),
        offsets: Ok(offsets),
    }
}

fn read(answers: Vec<GroupAnswer>) -> GroupsRead {
    GroupsRead {
        answers,
        ..Default::default()
    }
}

fn bounds(start: i64, lso: i64, hwm: i64) -> Bounds {
    Bounds {
        log_start: Some(start),
        last_stable_offset: lso,
        high_watermark: hwm,
    }
}

fn marker(at: i64, pid: i64) -> BatchHeader {
    BatchHeader {
        base_offset: at,
        batch_length: 0,
        partition_leader_epoch: 0,
        magic: 2,
        crc: 0,
        attributes: Attributes(0x30),
        last_offset_delta: 0,
        base_timestamp: 5,
        max_timestamp: 5,
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: -1,
        record_count: 1,
    }
}

fn one(facts: PartitionLag) -> BTreeMap<TopicPartition, PartitionLag> {
    BTreeMap::from([(tp(), facts)])
}

#[test]
fn a_group_on_the_marker_is_caught_up_although_kafka_says_lag_1() {
    let mut t = Tally::new(7, 8);
    t.answer(Some(&[]));
    t.batch(&marker(7, 1), Some(ControlType::Commit), None);
    let parts = one(PartitionLag {
        bounds: Ok(bounds(0, 8, 8)),
        tally: Some(Box::new(t)),
        stopped: None,
        uncommitted: None,
        uncommitted_stopped: None,
    });
    let lag = lag(
        &read(vec![
            group("idle", Committed::At(7)),
            group("end", Committed::At(8)),
        ]),
        &parts,
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(lag.is_complete());
    let idle = &lag.rows[0];
    assert_eq!(idle.group_id, "idle");
    assert_eq!(idle.offset_lag(), Some(1));
    assert_eq!(idle.records, Some(Records::Exact(0)));
    assert_eq!(idle.verdict, LagVerdict::CaughtUp);
    assert_eq!(idle.verdict.severity(), Severity::Ok);
    // at the end: no read was needed for it
    assert_eq!(lag.rows[1].records, Some(Records::Exact(0)));
}

#[test]
fn held_back_names_the_transaction_holding_the_lso() {
    let holder = Pinning {
        producer_id: 2,
        producer_epoch: 0,
        start_offset: 27,
        transactional_id: Some("lag-open-0".into()),
        coordinator_state: None,
        started_ms: Some(1_000),
        last_write_ms: Some(1_000),
        auto_abort: AutoAbort::Unknown,
    };
    let blocked = Blocked {
        partitions: vec![PinnedPartition {
            topic: "orders".into(),
            partition: 0,
            high_watermark: 36,
            last_stable_offset: 27,
            pinned_by: Some(holder.clone()),
            groups: Vec::new(),
            unblock: None,
        }],
        gaps: Vec::new(),
    };
    // nothing read: the group is at the LSO
    let parts = one(PartitionLag {
        bounds: Ok(bounds(0, 27, 36)),
        tally: None,
        stopped: None,
        uncommitted: None,
        uncommitted_stopped: None,
    });
    let lag = lag(
        &read(vec![group("g", Committed::At(27))]),
        &parts,
        &blocked,
        &LagOptions::default(),
    );
    let row = &lag.rows[0];
    assert_eq!(row.verdict, LagVerdict::HeldBack);
    assert_eq!(row.held_back, Some(9));
    assert_eq!(row.offset_lag(), Some(9));
    assert_eq!(row.holder.as_ref(), Some(&holder));
    // blocked's view of the same position
    assert!(row.position.unwrap().is_held());
}

#[test]
fn a_log_start_past_the_committed_offset_counts_from_the_log_start() {
    let mut t = Tally::new(8, 16);
    t.answer(Some(&[]));
    t.batch(
        &{
            let mut h = marker(8, 1);
            h.attributes = Attributes(0);
            h.last_offset_delta = 6;
            h.record_count = 7;
            h
        },
        None,
        None,
    );
    t.batch(&marker(15, 1), Some(ControlType::Commit), None);
    let parts = one(PartitionLag {
        bounds: Ok(bounds(8, 16, 16)),
        tally: Some(Box::new(t)),
        stopped: None,
        uncommitted: None,
        uncommitted_stopped: None,
    });
    let lag = lag(
        &read(vec![group("trunc", Committed::At(3))]),
        &parts,
        &Blocked::default(),
        &LagOptions::default(),
    );
    let row = &lag.rows[0];
    assert_eq!(row.verdict, LagVerdict::BehindLogStart);
    assert_eq!(row.verdict.severity(), Severity::Problem);
    // LAG.md: offset lag 13, an `earliest` consumer reads 7
    assert_eq!(row.offset_lag(), Some(13));
    assert_eq!(row.records, Some(Records::Exact(7)));
}

#[test]
fn a_budget_gives_bounds_and_a_failed_read_makes_the_answer_partial() {
    let partial = Tally::new(0, 100);
    let budget = one(PartitionLag {
        bounds: Ok(bounds(0, 100, 100)),
        tally: Some(Box::new(partial.clone())),
        stopped: Some(Stop::Budget { bytes: 1 << 20 }),
        uncommitted: None,
        uncommitted_stopped: None,
    });
    let groups = read(vec![group("g", Committed::At(40))]);
    let by_choice = lag(
        &groups,
        &budget,
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(by_choice.is_complete());
    assert_eq!(
        by_choice.rows[0].records,
        Some(Records::Between {
            at_least: 0,
            at_most: 60
        })
    );
    assert_eq!(by_choice.rows[0].verdict, LagVerdict::MaybeLagging);
    let failed = one(PartitionLag {
        bounds: Ok(bounds(0, 100, 100)),
        tally: Some(Box::new(partial)),
        stopped: Some(Stop::Failed(KeyError::client(
            kdp_wire::ErrorCode::REQUEST_TIMED_OUT,
            "deadline",
        ))),
        uncommitted: None,
        uncommitted_stopped: None,
    });
    let failed = lag(
        &groups,
        &failed,
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(!failed.is_complete());
    assert_eq!(failed.rows[0].records.unwrap().at_most(), 60);
}

#[test]
fn narrowing_by_group_and_topic_and_where_reads_start() {
    let mut other = group("b", Committed::At(3));
    if let Ok(o) = &mut other.offsets {
        o.insert(("audit".into(), 0), Committed::At(1));
    }
    let groups = read(vec![group("a", Committed::At(5)), other]);
    let all = partitions_to_read(&groups, &LagOptions::default());
    assert_eq!(all.get(&tp()), Some(&Some(3)));
    assert_eq!(all.get(&("audit".to_string(), 0)), Some(&Some(1)));
    let opts = LagOptions {
        groups: vec!["a".into()],
        topics: vec!["orders".into()],
        ..LagOptions::default()
    };
    let narrowed = partitions_to_read(&groups, &opts);
    assert_eq!(narrowed.len(), 1);
    assert_eq!(narrowed.get(&tp()), Some(&Some(5)));
}

#[test]
fn every_verdict_has_a_label_a_key_and_a_severity() {
    let mut keys: Vec<&str> = LagVerdict::ALL.iter().map(LagVerdict::key).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), LagVerdict::ALL.len());
    assert_eq!(LagVerdict::Unknown.severity(), Severity::Unknown);
    assert_eq!(LagVerdict::Lagging.label(), "lagging");
}

fn share(
    id: &str,
    start: i64,
    kafka_lag: i64,
    isolation: Result<Isolation, KeyError>,
) -> GroupsRead {
    let mut g = group(id, Committed::Nothing);
    g.group_type = Some(GroupType::Share);
    g.offsets = Ok(GroupOffsets::new());
    let mut offsets = ShareOffsets::new();
    offsets.insert(
        tp(),
        ShareStart::of(start, kafka_lag, kdp_wire::ErrorCode::NONE),
    );
    let mut r = read(vec![g]);
    r.shares.insert(
        id.to_string(),
        ShareRead {
            offsets: Ok(offsets),
            isolation,
        },
    );
    r
}

/// docs/LAG.md's mixed partition, counted from 0 to its LSO 27: 16
/// records a read_committed reader receives (HWM 36).
fn mixed_counted() -> BTreeMap<TopicPartition, PartitionLag> {
    let mut t = Tally::new(0, 27);
    t.answer(Some(&[]));
    // 16 data records then 11 offsets of markers, read as one stretch
    t.batch(&data(0, 16), None, None);
    for o in 16..27 {
        t.batch(&marker(o, 1), Some(ControlType::Commit), None);
    }
    one(PartitionLag {
        bounds: Ok(bounds(0, 27, 36)),
        tally: Some(Box::new(t)),
        stopped: None,
        uncommitted: None,
        uncommitted_stopped: None,
    })
}

fn data(base: i64, n: i32) -> BatchHeader {
    BatchHeader {
        attributes: Attributes(0),
        last_offset_delta: n - 1,
        record_count: n,
        base_offset: base,
        ..marker(base, 9)
    }
}

#[test]
fn a_read_committed_share_group_may_deliver_at_most_the_counted_records_never_exactly() {
    let lag = lag(
        &share("queue", 0, 15, Ok(Isolation::ReadCommitted)),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(lag.gaps.is_empty(), "{:?}", lag.gaps);
    let r = &lag.rows[0];
    // records above the start offset may be acknowledged already: a bound
    assert_eq!(
        r.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 16
        })
    );
    assert_eq!(r.verdict, LagVerdict::MaybeLagging);
    // held back above the LSO: read_committed waits for them
    assert_eq!(r.held_back, Some(9));
    // Kafka's figure beside it, and no offset lag (nothing committed)
    assert_eq!(r.share.and_then(|s| s.kafka_lag), Some(15));
    assert_eq!(r.offset_lag(), None);
    let found = LagFound::of(&lag);
    assert_eq!(found.values.len(), 1);
    let v = &found.values[0];
    assert!(v.share);
    assert_eq!((v.records_at_least, v.records_at_most), (0, 16));
    assert_eq!(
        (v.offset_lag, v.kafka_share_lag, v.held_back),
        (None, Some(15), 9)
    );
}

#[test]
fn a_read_uncommitted_share_group_is_bounded_by_the_high_watermark_and_holds_nothing_back() {
    let lag = lag(
        &share("queue", 10, -1, Ok(Isolation::ReadUncommitted)),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    let r = &lag.rows[0];
    assert_eq!(
        r.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 26
        })
    );
    assert_eq!(r.held_back, Some(0));
    // Kafka said unknown (-1, or a v0 broker): no figure, never a zero
    assert_eq!(r.share.and_then(|s| s.kafka_lag), None);
    assert_eq!(r.verdict, LagVerdict::MaybeLagging);
}

#[test]
fn a_share_group_at_the_end_is_exactly_caught_up_or_held_back() {
    // read_uncommitted at the HWM: nothing left, exactly
    let lag1 = lag(
        &share("queue", 36, 0, Ok(Isolation::ReadUncommitted)),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(lag1.rows[0].records, Some(Records::Exact(0)));
    assert_eq!(lag1.rows[0].verdict, LagVerdict::CaughtUp);
    // read_committed at the LSO of an open transaction: held back
    let lag2 = lag(
        &share("queue", 27, 9, Ok(Isolation::ReadCommitted)),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(lag2.rows[0].records, Some(Records::Exact(0)));
    assert_eq!(lag2.rows[0].verdict, LagVerdict::HeldBack);
    // read_committed below the LSO with only markers left: exactly 0
    let lag3 = lag(
        &share("queue", 16, 11, Ok(Isolation::ReadCommitted)),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(lag3.rows[0].records, Some(Records::Exact(0)));
}

#[test]
fn a_share_group_whose_isolation_or_offsets_failed_is_partial_never_caught_up() {
    let refused = KeyError::broker(kdp_wire::ErrorCode::GROUP_AUTHORIZATION_FAILED, None);
    let lag1 = lag(
        &share("queue", 27, 9, Err(refused.clone())),
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(
        lag1.gaps,
        vec![LagGap::ShareIsolation("queue".into(), refused.clone())]
    );
    assert_eq!(lag1.rows[0].verdict, LagVerdict::Unknown);
    assert_eq!(lag1.rows[0].records, None);
    assert!(!lag1.is_complete());
    assert_eq!(LagFound::of(&lag1).failed_requests, 1);
    let mut r = share("queue", 0, 0, Ok(Isolation::ReadCommitted));
    if let Some(s) = r.shares.get_mut("queue") {
        s.offsets = Err(refused.clone());
    }
    let lag2 = lag(
        &r,
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(lag2.rows.is_empty());
    assert_eq!(
        lag2.gaps,
        vec![LagGap::ShareOffsets("queue".into(), refused)]
    );
    // not read at all: named, never left out
    let mut r = share("queue", 0, 0, Ok(Isolation::ReadCommitted));
    r.shares.clear();
    let lag3 = lag(
        &r,
        &mixed_counted(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(lag3.gaps, vec![LagGap::ShareGroup("queue".into())]);
}

#[test]
fn only_read_committed_share_groups_need_a_count() {
    let rc = share("rc", 4, 0, Ok(Isolation::ReadCommitted));
    assert_eq!(
        partitions_to_read(&rc, &LagOptions::default()).get(&tp()),
        Some(&Some(4))
    );
    let ru = share("ru", 4, 0, Ok(Isolation::ReadUncommitted));
    assert_eq!(
        partitions_to_read(&ru, &LagOptions::default()).get(&tp()),
        Some(&None)
    );
}

#[test]
fn a_named_group_nobody_knows_is_a_gap_never_an_empty_all_clear() {
    let mut ghost = group("ghost", Committed::Nothing);
    ghost.offsets = Ok(GroupOffsets::new());
    ghost.members = Some(Err(KeyError::broker(
        kdp_wire::ErrorCode::GROUP_ID_NOT_FOUND,
        None,
    )));
    let opts = LagOptions {
        groups: vec!["ghost".into()],
        ..LagOptions::default()
    };
    let lag = lag(
        &read(vec![ghost]),
        &BTreeMap::new(),
        &Blocked::default(),
        &opts,
    );
    assert_eq!(lag.gaps, vec![LagGap::UnknownGroup("ghost".into())]);
}

/// [`mixed_counted`] with its read_uncommitted count of [0, HWM 36) too:
/// 16 data records, 11 markers, the open transaction 27-29, 5 idempotent
/// records 30-34 and a marker at 35 (24 records from 0).
fn mixed_both() -> BTreeMap<TopicPartition, PartitionLag> {
    let mut parts = mixed_counted();
    let mut u = Tally::uncommitted(0, 36);
    // a READ_UNCOMMITTED answer has no aborted list
    u.answer(None);
    u.batch(&data(0, 16), None, None);
    for o in 16..27 {
        u.batch(&marker(o, 1), Some(ControlType::Commit), None);
    }
    u.batch(
        &BatchHeader {
            attributes: Attributes(0x10),
            ..data(27, 3)
        },
        None,
        None,
    );
    u.batch(&data(30, 5), None, None);
    u.batch(&marker(35, 1), Some(ControlType::Commit), None);
    if let Some(p) = parts.get_mut(&tp()) {
        p.uncommitted = Some(Box::new(u));
    }
    parts
}

fn uncommitted() -> LagOptions {
    LagOptions {
        isolation: Isolation::ReadUncommitted,
        ..LagOptions::default()
    }
}

#[test]
fn a_read_uncommitted_group_counts_to_the_high_watermark_and_is_never_held_back() {
    let groups = read(vec![
        group("g0", Committed::At(0)),
        group("g16", Committed::At(16)),
        group("g27", Committed::At(27)),
        group("g30", Committed::At(30)),
        group("g36", Committed::At(36)),
    ]);
    let by = |lag: &Lag, id: &str| lag.rows.iter().find(|r| r.group_id == id).cloned();
    let ru = lag(&groups, &mixed_both(), &Blocked::default(), &uncommitted());
    assert!(ru.is_complete(), "{:?}", ru.gaps);
    for (id, n, verdict) in [
        ("g0", 24, LagVerdict::Lagging),
        ("g16", 8, LagVerdict::Lagging),
        ("g27", 8, LagVerdict::Lagging),
        ("g30", 5, LagVerdict::Lagging),
        ("g36", 0, LagVerdict::CaughtUp),
    ] {
        let r = by(&ru, id).unwrap();
        assert_eq!(r.records, Some(Records::Exact(n)), "{id}");
        assert_eq!(r.verdict, verdict, "{id}");
        assert_eq!(r.held_back, Some(0), "{id}");
        assert_eq!(r.holder, None, "{id}");
        assert_eq!(r.isolation, Some(Isolation::ReadUncommitted), "{id}");
        // Kafka's offset lag is the same whatever the isolation
        assert_eq!(
            r.offset_lag(),
            Some(36 - r.position.unwrap().committed.unwrap())
        );
    }
    // the same positions read_committed: held back at the LSO, past it above
    let rc = lag(
        &groups,
        &mixed_both(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert_eq!(by(&rc, "g27").unwrap().verdict, LagVerdict::HeldBack);
    assert_eq!(by(&rc, "g30").unwrap().verdict, LagVerdict::PastLso);
    assert_eq!(by(&rc, "g16").unwrap().verdict, LagVerdict::HeldBack);
    assert_eq!(by(&rc, "g0").unwrap().records, Some(Records::Exact(16)));
    assert_eq!(
        by(&rc, "g0").unwrap().isolation,
        Some(Isolation::ReadCommitted)
    );
    // the read_uncommitted count not made (or cut short): bounds to the HWM
    let unread = lag(
        &groups,
        &mixed_counted(),
        &Blocked::default(),
        &uncommitted(),
    );
    let r = by(&unread, "g16").unwrap();
    assert_eq!(
        r.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 20
        })
    );
    assert_eq!(r.verdict, LagVerdict::MaybeLagging);
    // a committed offset beyond the high watermark is past the end
    let beyond = lag(
        &read(vec![group("g40", Committed::At(40))]),
        &mixed_both(),
        &Blocked::default(),
        &uncommitted(),
    );
    assert_eq!(beyond.rows[0].verdict, LagVerdict::PastLso);
}

#[test]
fn each_isolation_asks_for_its_own_count() {
    let groups = read(vec![group("a", Committed::At(5))]);
    let rc = LagOptions::default();
    assert_eq!(read_starts(&groups, &rc), vec![(tp(), Some(5))]);
    assert_eq!(uncommitted_starts(&groups, &rc), vec![(tp(), None)]);
    let ru = uncommitted();
    assert_eq!(read_starts(&groups, &ru), vec![(tp(), None)]);
    assert_eq!(uncommitted_starts(&groups, &ru), vec![(tp(), Some(5))]);
    // every position is a partition to bound, whichever count it needs
    assert_eq!(partitions_to_read(&groups, &ru).get(&tp()), Some(&None));
    // one group read otherwise than the rest
    let mut mixed = LagOptions::default();
    mixed
        .group_isolation
        .insert("a".into(), Isolation::ReadUncommitted);
    assert_eq!(mixed.isolation_of("a"), Isolation::ReadUncommitted);
    assert_eq!(mixed.isolation_of("b"), Isolation::ReadCommitted);
    assert_eq!(uncommitted_starts(&groups, &mixed), vec![(tp(), Some(5))]);
    let share_ru = share("ru", 4, 0, Ok(Isolation::ReadUncommitted));
    assert_eq!(uncommitted_starts(&share_ru, &rc), vec![(tp(), Some(4))]);
}

/// The share layout of real_kafka_lag.rs: idem 0-4, commit 5-8, marker 9,
/// abort 10-12, marker 13, open 14-16: LSO 14, HWM 17; 9 records a
/// read_committed reader receives below the LSO.
fn share_layout() -> BTreeMap<TopicPartition, PartitionLag> {
    let mut t = Tally::new(0, 14);
    t.answer(Some(&[(2, 10)]));
    t.batch(&data(0, 9), None, None);
    t.batch(&marker(9, 1), Some(ControlType::Commit), None);
    t.batch(
        &BatchHeader {
            attributes: Attributes(0x10),
            producer_id: 2,
            ..data(10, 3)
        },
        None,
        None,
    );
    t.batch(&marker(13, 2), Some(ControlType::Abort), None);
    one(PartitionLag {
        bounds: Ok(bounds(0, 14, 17)),
        tally: Some(Box::new(t)),
        stopped: None,
        uncommitted: None,
        uncommitted_stopped: None,
    })
}

/// A read_committed share group at `start` with Kafka's Lag `kafka_lag`
/// over [`share_layout`], judged.
fn share_judged(start: i64, kafka_lag: i64) -> Lag {
    lag(
        &share("queue", start, kafka_lag, Ok(Isolation::ReadCommitted)),
        &share_layout(),
        &Blocked::default(),
        &LagOptions::default(),
    )
}

#[test]
fn kafkas_share_lag_gives_a_lower_bound_that_never_overstates() {
    // 3 of 9 accepted: Kafka's Lag 9 = 6 records + 3 open offsets above
    // the LSO. At most 17 - 0 - 9 = 8 offsets are final, so at least
    // 9 - 8 = 1 of the 9 records is still to deliver (the truth is 6)
    let judged = share_judged(0, 9);
    let r = &judged.rows[0];
    assert_eq!(
        r.records,
        Some(Records::Between {
            at_least: 1,
            at_most: 9
        })
    );
    assert_eq!(r.verdict, LagVerdict::Lagging);
    let v = &LagFound::of(&judged).values[0];
    assert_eq!((v.records_at_least, v.records_at_most), (1, 9));
    // all accepted: Kafka's Lag 3 (the open transaction): at least 0
    let done = share_judged(0, 3);
    assert_eq!(done.rows[0].records.unwrap().at_least(), 0);
    assert_eq!(done.rows[0].verdict, LagVerdict::MaybeLagging);
    // no Lag from Kafka: no lower bound
    let unknown = share_judged(0, -1);
    assert_eq!(unknown.rows[0].records.unwrap().at_least(), 0);
    // a Lag larger than the offsets kdp saw (the log grew in between):
    // never above the records counted, nor above Kafka's Lag
    let skew = share_judged(0, 40);
    assert_eq!(skew.rows[0].records, Some(Records::Exact(9)));
    let small = lag(
        &share("queue", 0, 2, Ok(Isolation::ReadUncommitted)),
        &mixed_both(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(small.rows[0].records.unwrap().at_least() <= 2);
}

#[test]
fn a_read_uncommitted_share_group_is_bounded_by_its_count_and_kafkas_lag() {
    // 24 records below the HWM 36; Kafka's Lag 20: at most 16 offsets of
    // [0, 36) are final, so at least 24 - 16 = 8 records remain
    let judged = lag(
        &share("queue", 0, 20, Ok(Isolation::ReadUncommitted)),
        &mixed_both(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    let r = &judged.rows[0];
    assert_eq!(
        r.records,
        Some(Records::Between {
            at_least: 8,
            at_most: 24
        })
    );
    assert_eq!(r.held_back, Some(0));
    assert_eq!(r.isolation, Some(Isolation::ReadUncommitted));
    assert_eq!(r.verdict, LagVerdict::Lagging);
}
