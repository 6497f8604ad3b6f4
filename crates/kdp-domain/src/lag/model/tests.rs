use kdp_wire::records::{Attributes, BatchHeader, ControlType};

use super::*;
use crate::diagnose::blocked::{AutoAbort, PinnedPartition};
use crate::groups::offsets::GroupOffsets;
use crate::groups::read::GroupAnswer;
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
        tally: Some(t),
        stopped: None,
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
        tally: Some(t),
        stopped: None,
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
        tally: Some(partial.clone()),
        stopped: Some(Stop::Budget { bytes: 1 << 20 }),
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
        tally: Some(partial),
        stopped: Some(Stop::Failed(KeyError::client(
            kdp_wire::ErrorCode::REQUEST_TIMED_OUT,
            "deadline",
        ))),
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

#[test]
fn a_share_group_is_not_measured_and_makes_the_answer_partial() {
    let mut share = group("queue-workers", Committed::Nothing);
    share.group_type = Some(GroupType::Share);
    share.offsets = Ok(GroupOffsets::new());
    let lag = lag(
        &read(vec![share]),
        &BTreeMap::new(),
        &Blocked::default(),
        &LagOptions::default(),
    );
    assert!(lag.rows.is_empty());
    assert_eq!(lag.gaps, vec![LagGap::ShareGroup("queue-workers".into())]);
    assert!(!lag.is_complete());
    // narrowed to topics: its topics are not known, it is not this answer's
    let narrowed = LagOptions {
        groups: Vec::new(),
        topics: vec!["orders".into()],
    };
    let mut share = group("queue-workers", Committed::Nothing);
    share.group_type = Some(GroupType::Share);
    let lag = super::lag(
        &read(vec![share]),
        &BTreeMap::new(),
        &Blocked::default(),
        &narrowed,
    );
    assert!(lag.gaps.is_empty());
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
        topics: Vec::new(),
    };
    let lag = lag(
        &read(vec![ghost]),
        &BTreeMap::new(),
        &Blocked::default(),
        &opts,
    );
    assert_eq!(lag.gaps, vec![LagGap::UnknownGroup("ghost".into())]);
}
