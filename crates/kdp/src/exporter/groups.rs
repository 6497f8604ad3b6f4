//! Consumer groups held back by open transactions, per group: the
//! exporter's side of `kdp blocked`. After each scan the groups are read
//! once (ListGroups on every broker, every group's committed offsets and its
//! members, at their coordinators) beside the diagnosis' own lookups, and
//! judged by kdp-domain's
//! [`blocked`](kdp_domain::diagnose::blocked::blocked) against the scan's
//! join (no second describe), so the exporter and `kdp blocked` never
//! disagree on a group.
//!
//! - `kdp_group_blocked_partitions{group}`: partitions where the group is
//!   `blocked` (committed at the LSO of a transaction whose producer wrote
//!   nothing for `--blocked-after`; `waiting` on a live one is not counted);
//! - `kdp_group_blocked_records{group}`: the records held back there
//!   (high watermark − LSO, summed over those partitions);
//! - `kdp_group_members{group}`: members now (0: nobody waits behind it).
//!
//! No zero stands for a check not made: a group whose offsets could not be
//! read, that has an offset refused on a pinned partition, or that has an
//! offset on a partition this scan could not describe or whose offsets it
//! could not read, has no blocked series; a group not described has no
//! members series; groups hidden by a broker whose listing failed are not
//! known at all. Each such failure counts as a failed request, so the scan
//! is partial.

use kdp_domain::diagnose::summary::GroupsFound;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type IntGauge = Gauge<i64, std::sync::atomic::AtomicI64>;

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Registers the group families of `found` into a scan's snapshot; nothing
/// (not even the families) without it.
pub fn register(r: &mut Registry, found: Option<&GroupsFound>) {
    let Some(found) = found else { return };
    let partitions = Family::<Labels, IntGauge>::default();
    let records = Family::<Labels, IntGauge>::default();
    let members = Family::<Labels, IntGauge>::default();
    for g in &found.groups {
        let labels = vec![("group", g.group.clone())];
        if let (Some(p), Some(n)) = (g.blocked_partitions, g.blocked_records) {
            partitions.get_or_create(&labels).set(clamp(p));
            records.get_or_create(&labels).set(clamp(n));
        }
        if let Some(m) = g.members {
            members.get_or_create(&labels).set(clamp(m));
        }
    }
    r.register(
        "kdp_group_blocked_partitions",
        "Partitions where the consumer group's committed offset is at the last stable offset of a transaction whose producer has written nothing for --blocked-after (kdp blocked's 'blocked'; 'waiting' on a live transaction is not counted); no series for a group kdp could not fully check this scan",
        partitions,
    );
    r.register(
        "kdp_group_blocked_records",
        "Records held back from the consumer group on the partitions where it is blocked (high watermark minus LSO, summed); no series for a group kdp could not fully check this scan",
        records,
    );
    r.register(
        "kdp_group_members",
        "Members of the consumer group now (DescribeGroups, ConsumerGroupDescribe); 0: nobody consumes, so nobody waits behind a blocked offset",
        members,
    );
}

#[cfg(test)]
mod tests {
    use kdp_domain::coordinator::CoordinatorView;
    use kdp_domain::groups::{Committed, GroupAnswer, GroupState, GroupType, GroupsRead};
    use kdp_domain::joined::Joined;
    use kdp_domain::protocol::TxnProtocol;
    use kdp_domain::KeyError;
    use kdp_domain::Offsets;
    use kdp_domain::{DescribeSummary, PartitionOutcome};
    use kdp_wire::messages::ProducerState;
    use kdp_wire::ErrorCode;

    use super::*;
    use crate::exporter::exposition::{encode, Format};

    const NOW: i64 = 10_000_000_000;

    /// `t-0`: producer 7, idle an hour, pins LSO 40 of 100; `t-1`: producer
    /// 8 wrote a second ago, pins 10 of 20; `t-2`: not described.
    fn joined() -> Joined {
        let open = |pid, ts, start| ProducerState {
            producer_id: pid,
            last_timestamp: ts,
            coordinator_epoch: 1,
            current_txn_start_offset: start,
            ..Default::default()
        };
        let part = |p, result| PartitionOutcome {
            topic: "t".into(),
            partition: p,
            broker_id: Some(1),
            result,
        };
        let offsets = |hw, lso| {
            Ok(Offsets {
                high_watermark: hw,
                last_stable_offset: lso,
            })
        };
        Joined {
            now_ms: NOW,
            unkept_writes: Default::default(),
            partitions: vec![
                part(0, Ok(vec![open(7, NOW - 3_600_000, 40)])),
                part(1, Ok(vec![open(8, NOW - 1_000, 10)])),
                part(
                    2,
                    Err(KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None)),
                ),
            ],
            summary: DescribeSummary::default(),
            protocol: TxnProtocol::V2,
            cluster_max_timeout_ms: Some(900_000),
            producer_id_expiration_ms: None,
            view: CoordinatorView {
                listing_complete: true,
                may_describe_any: true,
                ..Default::default()
            },
            offsets: [
                (("t".to_string(), 0), offsets(100, 40)),
                (("t".to_string(), 1), offsets(20, 10)),
            ]
            .into(),
            listing_errors: Vec::new(),
            unfinished: Vec::new(),
            candidates_only: None,
        }
    }

    fn group(id: &str, members: u32, at: &[(i32, i64)]) -> GroupAnswer {
        GroupAnswer {
            group_id: id.into(),
            state: Some(if members > 0 {
                GroupState::Stable
            } else {
                GroupState::Empty
            }),
            group_type: Some(GroupType::Classic),
            members: Some(Ok(members)),
            offsets: Ok(at
                .iter()
                .map(|&(p, o)| (("t".to_string(), p), Committed::At(o)))
                .collect()),
        }
    }

    fn read(answers: Vec<GroupAnswer>) -> GroupsRead {
        GroupsRead {
            answers,
            ..Default::default()
        }
    }

    fn value(found: &GroupsFound, g: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
        let v = found
            .groups
            .iter()
            .find(|v| v.group == g)
            .unwrap_or_else(|| panic!("{g} in {found:?}"));
        (v.blocked_partitions, v.blocked_records, v.members)
    }

    #[test]
    fn blocked_groups_count_partitions_and_records_and_waiting_ones_do_not() {
        let found = GroupsFound::of(
            &joined(),
            &read(vec![
                group("ledger", 2, &[(0, 40), (1, 10)]),
                group("lagging", 1, &[(0, 12)]),
                group("gone-home", 0, &[(0, 40)]),
            ]),
            60_000,
        );
        assert_eq!(found.failed_requests, 0);
        // t-0: blocked (78... 60 records); t-1: waiting on a live producer
        assert_eq!(value(&found, "ledger"), (Some(1), Some(60), Some(2)));
        // checked and not blocked: a zero is a claim this scan may make
        assert_eq!(value(&found, "lagging"), (Some(0), Some(0), Some(1)));
        // blocked, and nobody is there
        assert_eq!(value(&found, "gone-home"), (Some(1), Some(60), Some(0)));
        // with --blocked-after 0 the live one blocks too
        let found = GroupsFound::of(
            &joined(),
            &read(vec![group("ledger", 2, &[(0, 40), (1, 10)])]),
            0,
        );
        assert_eq!(value(&found, "ledger"), (Some(2), Some(70), Some(2)));
    }

    #[test]
    fn what_was_not_checked_has_no_series_and_makes_the_scan_partial() {
        let mut refused = group("refused", 1, &[]);
        refused.offsets = Err(KeyError::broker(
            ErrorCode::GROUP_AUTHORIZATION_FAILED,
            None,
        ));
        let mut undescribed = group("undescribed", 1, &[(0, 1)]);
        undescribed.members = Some(Err(KeyError::broker(ErrorCode::REQUEST_TIMED_OUT, None)));
        let mut half = group("half", 1, &[(0, 40)]);
        if let Ok(o) = &mut half.offsets {
            o.insert(
                ("t".to_string(), 1),
                Committed::Failed(ErrorCode::TOPIC_AUTHORIZATION_FAILED),
            );
        }
        let mut r = read(vec![
            refused,
            undescribed,
            half,
            // t-2 was not described this scan: it may be pinned there
            group("blind", 1, &[(2, 5)]),
            group("fine", 1, &[(0, 3)]),
        ]);
        r.listing_failures.push((
            3,
            KeyError::broker(ErrorCode::COORDINATOR_NOT_AVAILABLE, None),
        ));
        let found = GroupsFound::of(&joined(), &r, 60_000);
        assert_eq!(value(&found, "refused"), (None, None, Some(1)));
        assert_eq!(value(&found, "undescribed"), (Some(0), Some(0), None));
        // blocked on t-0 but refused on pinned t-1: more may be held
        assert_eq!(value(&found, "half"), (None, None, Some(1)));
        assert_eq!(value(&found, "blind"), (None, None, Some(1)));
        assert_eq!(value(&found, "fine"), (Some(0), Some(0), Some(1)));
        // the listing, refused's offsets, undescribed's description
        assert_eq!(found.failed_requests, 3);
    }

    #[test]
    fn series_as_scraped_and_none_without_a_reading() {
        let found = GroupsFound::of(
            &joined(),
            &read(vec![group("ledger", 2, &[(0, 40)])]),
            60_000,
        );
        let mut r = Registry::default();
        register(&mut r, Some(&found));
        let text = encode(&r, Format::Text).unwrap();
        for line in [
            "kdp_group_blocked_partitions{group=\"ledger\"} 1",
            "kdp_group_blocked_records{group=\"ledger\"} 60",
            "kdp_group_members{group=\"ledger\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in {text}");
        }
        assert!(
            text.contains("# TYPE kdp_group_blocked_partitions gauge"),
            "{text}"
        );
        let mut r = Registry::default();
        register(&mut r, None);
        assert!(!encode(&r, Format::Text).unwrap().contains("kdp_group"));
    }
}
