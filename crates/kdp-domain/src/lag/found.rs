//! The lag of one scan as a monitor publishes it: per group, topic and
//! partition, the records to deliver (at least, at most), Kafka's offset
//! lag, the offsets open transactions hold back ahead of the group, and
//! the first timestamp of what it has not received. A position kdp could
//! not judge has no numbers (no zero stands for a check not made), and
//! each gap counts as a failed request.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::lag::model::{Lag, LagGap, LagRow};
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

/// [`LagFound`] folded row by row as the rows are judged
/// ([`lag_each`](crate::lag::lag_each)), summed per group and topic (per
/// partition too with `per_partition`): a scan holds one value per series
/// it publishes, not one per committed offset. A summed value's
/// `partition` is -1; `oldest_undelivered_ms` is the oldest of its
/// partitions'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LagFold {
    per_partition: bool,
    /// group → topic → partition (-1 when summed) → value.
    values: BTreeMap<String, BTreeMap<String, BTreeMap<i32, LagValue>>>,
    unknown: BTreeSet<(String, String)>,
}

impl LagFold {
    /// Nothing folded yet.
    pub fn new(per_partition: bool) -> LagFold {
        LagFold {
            per_partition,
            ..LagFold::default()
        }
    }

    /// Folds one judged row in.
    pub fn add(&mut self, r: &LagRow) {
        let Some(v) = value(r) else {
            if r.position.is_none_or(|p| p.committed.is_some()) {
                self.unknown
                    .insert((r.group_id.clone(), r.partition.0.clone()));
            }
            return;
        };
        let topics = match self.values.get_mut(&r.group_id) {
            Some(t) => t,
            None => self.values.entry(r.group_id.clone()).or_default(),
        };
        let partitions = match topics.get_mut(&r.partition.0) {
            Some(p) => p,
            None => topics.entry(r.partition.0.clone()).or_default(),
        };
        let partition = if self.per_partition { v.partition } else { -1 };
        match partitions.get_mut(&partition) {
            Some(s) => {
                s.records_at_least = s.records_at_least.saturating_add(v.records_at_least);
                s.records_at_most = s.records_at_most.saturating_add(v.records_at_most);
                // a share group's sums: none where a partition has none
                s.offset_lag = sum(s.offset_lag, v.offset_lag);
                s.kafka_share_lag = sum(s.kafka_share_lag, v.kafka_share_lag);
                s.share |= v.share;
                s.held_back = s.held_back.saturating_add(v.held_back);
                s.oldest_undelivered_ms = match (s.oldest_undelivered_ms, v.oldest_undelivered_ms) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            None => {
                partitions.insert(partition, LagValue { partition, ..v });
            }
        }
    }

    /// The values folded, with `gaps` (the judgement's) counted as failed
    /// requests as [`LagFound::of`] counts them.
    pub fn finish(self, gaps: &[LagGap]) -> LagFound {
        let failed = gaps.len();
        LagFound {
            values: self
                .values
                .into_values()
                .flat_map(BTreeMap::into_values)
                .flat_map(BTreeMap::into_values)
                .collect(),
            unknown: self.unknown.into_iter().collect(),
            failed_requests: failed as u64,
        }
    }
}

fn sum(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a?.saturating_add(b?))
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
