//! The lag of one scan as a monitor publishes it: per group, topic and
//! partition, the records to deliver (at least, at most), Kafka's offset
//! lag, the offsets open transactions hold back ahead of the group, and
//! the first timestamp of what it has not received. A position kdp could
//! not judge has no numbers (no zero stands for a check not made), and
//! each gap counts as a failed request.

use serde::Deserialize;

use crate::lag::model::{Lag, LagRow};
use crate::lag::position::At;

/// One group's numbers on one partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LagValue {
    /// The group id.
    pub group: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Records to deliver, at least (the exact figure when counted).
    pub records_at_least: i64,
    /// Records to deliver, at most.
    pub records_at_most: i64,
    /// Kafka's offset lag (HWM − committed); `None` for a share group,
    /// which commits no offset.
    #[serde(default)]
    pub offset_lag: Option<i64>,
    /// Offsets held back above the LSO while the group is at or below it.
    pub held_back: i64,
    /// The first timestamp of the first batch still to deliver (ms).
    #[serde(default)]
    pub oldest_undelivered_ms: Option<i64>,
    /// A share group's position (its records are "at most" figures).
    #[serde(default)]
    pub share: bool,
    /// A share group's Lag as Kafka reports it (DescribeShareGroupOffsets
    /// v1), when it does.
    #[serde(default)]
    pub kafka_share_lag: Option<i64>,
}

/// The lag of every position kdp could judge.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LagFound {
    /// By group, topic and partition.
    #[serde(default)]
    pub values: Vec<LagValue>,
    /// Groups or topics some position of which could not be judged
    /// (group, topic): they get no series.
    #[serde(default)]
    pub unknown: Vec<(String, String)>,
    /// Gaps of the read (listings, offsets, reads that failed).
    #[serde(default)]
    pub failed_requests: u64,
}

impl LagFound {
    /// The judged rows as numbers.
    pub fn of(lag: &Lag) -> LagFound {
        let failed = lag.gaps.len();
        let mut out = LagFound {
            failed_requests: failed as u64,
            ..LagFound::default()
        };
        for r in &lag.rows {
            match value(r) {
                Some(v) => out.values.push(v),
                None if r.position.is_some_and(|p| p.committed.is_none()) => {}
                None => out
                    .unknown
                    .push((r.group_id.clone(), r.partition.0.clone())),
            }
        }
        out.unknown.sort();
        out.unknown.dedup();
        out
    }
}

fn value(r: &LagRow) -> Option<LagValue> {
    let pos = r.position?;
    let records = r.records?;
    if let Some(share) = r.share {
        pos.committed?;
        return Some(LagValue {
            group: r.group_id.clone(),
            topic: r.partition.0.clone(),
            partition: r.partition.1,
            records_at_least: records.at_least(),
            records_at_most: records.at_most(),
            offset_lag: None,
            held_back: r.held_back?,
            oldest_undelivered_ms: None,
            share: true,
            kafka_share_lag: share.kafka_lag,
        });
    }
    let held_back = match pos.at() {
        At::PastLso | At::Nothing => 0,
        _ => pos.bounds.held_back(),
    };
    Some(LagValue {
        group: r.group_id.clone(),
        topic: r.partition.0.clone(),
        partition: r.partition.1,
        records_at_least: records.at_least(),
        records_at_most: records.at_most(),
        offset_lag: Some(r.offset_lag()?),
        held_back,
        oldest_undelivered_ms: r.oldest_undelivered_ms,
        share: false,
        kafka_share_lag: None,
    })
}
