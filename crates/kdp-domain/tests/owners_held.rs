//! The groups an owner's open transaction holds back: `kdp blocked`'s
//! model ([`held_groups`]) read per transactional id, never computed a
//! second way.

use std::collections::BTreeMap;

use kdp_domain::coordinator::{CoordinatorView, Description};
use kdp_domain::diagnose::blocked::held_groups;
use kdp_domain::groups::read::{GroupAnswer, GroupsRead, Visibility};
use kdp_domain::groups::{Committed, GroupState, GroupType};
use kdp_domain::joined::Joined;
use kdp_domain::offsets::Offsets;
use kdp_domain::owners::{Owners, OwnersInput, TxnEntry};
use kdp_domain::partition::PartitionOutcome;
use kdp_domain::protocol::TxnProtocol;
use kdp_wire::messages::{ProducerState, TopicData, TransactionState};

const NOW: i64 = 10_000_000_000;
const HOUR: i64 = 3_600_000;
const ORPHAN: &str = "orders-app-5e1d0a7b-93c4-4f6e-8a21-0b7c9d3e4f12-1";
const LIVE: &str = "orders-app-c64c5f99-f79b-4139-b9eb-3ace5599ac75-1";

fn described(id: &str, pid: i64, state: &str, partitions: Vec<i32>) -> TransactionState {
    TransactionState {
        transactional_id: id.into(),
        transaction_state: state.into(),
        transaction_timeout_ms: 600_000,
        transaction_start_time_ms: NOW - HOUR,
        producer_id: pid,
        topics: vec![TopicData {
            topic: "out".into(),
            partitions,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn open(pid: i64, start: i64) -> ProducerState {
    ProducerState {
        producer_id: pid,
        producer_epoch: 0,
        last_timestamp: NOW - HOUR,
        coordinator_epoch: 1,
        current_txn_start_offset: start,
        ..Default::default()
    }
}

/// `out-0`: the orphan (producer 1) holds LSO 40. `out-1`: the orphan's
/// transaction starts at 70, but the live one (producer 2) holds the LSO
/// at 60 below it.
fn joined() -> Joined {
    let mut view = CoordinatorView {
        listing_complete: true,
        may_describe_any: true,
        ..Default::default()
    };
    for (pid, id, partitions) in [(1, ORPHAN, vec![0, 1]), (2, LIVE, vec![1])] {
        view.listed.insert(pid, id.into());
        view.descriptions.insert(
            id.into(),
            Description::Described(described(id, pid, "Ongoing", partitions)),
        );
    }
    let part = |p, producers| PartitionOutcome::answered("out", p, 1, producers);
    let offsets = |hw, lso| {
        Ok(Offsets {
            high_watermark: hw,
            last_stable_offset: lso,
        })
    };
    Joined {
        partitions: vec![
            part(0, vec![open(1, 40)]),
            part(1, vec![open(1, 70), open(2, 60)]),
        ],
        cluster_max_timeout_ms: Some(900_000),
        view,
        offsets: BTreeMap::from([
            (("out".to_string(), 0), offsets(100, 40)),
            (("out".to_string(), 1), offsets(100, 60)),
        ]),
        ..Joined::new(NOW, TxnProtocol::V2)
    }
}

fn group(id: &str, at: &[(i32, i64)]) -> GroupAnswer {
    GroupAnswer {
        group_id: id.into(),
        state: Some(GroupState::Stable),
        group_type: Some(GroupType::Classic),
        members: Some(Ok(1)),
        offsets: Ok(at
            .iter()
            .map(|&(p, o)| (("out".to_string(), p), Committed::At(o)))
            .collect()),
    }
}

fn read(visibility: Visibility) -> GroupsRead {
    GroupsRead {
        answers: vec![
            // at the orphan's LSO on out-0 and at the live one's on out-1
            group("report", &[(0, 40), (1, 60)]),
            // below the LSO: lagging, not held
            group("audit", &[(0, 10)]),
        ],
        visibility,
        ..Default::default()
    }
}

fn input(held: Option<kdp_domain::diagnose::blocked::HeldGroups>) -> OwnersInput {
    let entry = |id: &str, pid, state, partitions| TxnEntry {
        transactional_id: id.into(),
        coordinator: Some(1),
        described: Ok(described(id, pid, state, partitions)),
    };
    OwnersInput {
        now_ms: NOW,
        transactions: vec![
            entry(ORPHAN, 1, "Ongoing", vec![0, 1]),
            entry(LIVE, 2, "Ongoing", vec![1]),
            entry("legacy.7", 3, "CompleteCommit", vec![]),
        ],
        listing_complete: true,
        held,
        ..Default::default()
    }
}

fn groups_blocked(o: &Owners, id: &str) -> Option<Vec<String>> {
    o.owners
        .iter()
        .find(|o| o.transactional_id == id)
        .unwrap()
        .groups_blocked
        .clone()
}

#[test]
fn each_open_transaction_names_the_groups_at_the_lso_it_holds() {
    let j = joined();
    let held = held_groups(&j, Some(&read(Visibility::Any)), j.max_timeout_ms());
    let o = Owners::judge(&input(Some(held)));
    // out-0's LSO is the orphan's; on out-1 the live transaction below it
    // holds the LSO, so the group there waits on the live one
    assert_eq!(groups_blocked(&o, ORPHAN), Some(vec!["report".to_string()]));
    assert_eq!(groups_blocked(&o, LIVE), Some(vec!["report".to_string()]));
    // a closed transaction holds nothing
    assert_eq!(groups_blocked(&o, "legacy.7"), Some(vec![]));
}

#[test]
fn groups_not_read_in_full_leave_an_open_transaction_unknown_never_empty() {
    let j = joined();
    // ACLs may hide groups: kdp blocked's model cannot tell
    let held = held_groups(&j, Some(&read(Visibility::Limited)), j.max_timeout_ms());
    let o = Owners::judge(&input(Some(held)));
    assert_eq!(groups_blocked(&o, ORPHAN), None);
    assert_eq!(groups_blocked(&o, "legacy.7"), Some(vec![]));
    // not read at all
    let o = Owners::judge(&input(None));
    assert_eq!(groups_blocked(&o, LIVE), None);
    // the application's summary is unknown as soon as one of its open
    // transactions is
    let app = o
        .applications
        .iter()
        .find(|a| a.application == "orders-app")
        .expect("attributed, its group unread");
    assert_eq!(app.groups_blocked, None);
}

#[test]
fn pinned_partitions_are_an_open_transactions_only() {
    let i = input(None);
    let pinned: Vec<Vec<(String, i32)>> = i.transactions.iter().map(TxnEntry::pinned).collect();
    assert_eq!(
        pinned,
        vec![
            vec![("out".to_string(), 0), ("out".to_string(), 1)],
            vec![("out".to_string(), 1)],
            vec![],
        ]
    );
}
