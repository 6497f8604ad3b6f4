//! Consumer lag in records, per group and topic (per partition with
//! `--per-partition`): the exporter's side of `kdp lag` (`--lag`). Each
//! scan reads the groups' lag once through kdp-workflows' lag gather and
//! publishes kdp-domain's [`LagFound`], so the exporter and `kdp lag`
//! never disagree:
//!
//! - `kdp_group_lag_records{group,topic}`: records a read_committed
//!   consumer would still receive up to the LSO (markers and aborted
//!   records excluded); exact where counted, else the lower bound;
//! - `kdp_group_lag_records_at_most{group,topic}`: the upper bound (equal
//!   where counted);
//! - `kdp_group_lag_offsets{group,topic}`: Kafka's offset lag (HWM −
//!   committed), what kafka-consumer-groups.sh and other lag exporters
//!   show, for the side by side;
//! - `kdp_group_lag_held_back_offsets{group,topic}`: offsets open
//!   transactions hold back above the LSO ahead of the group;
//! - `kdp_group_lag_oldest_undelivered_age_seconds{group,topic}`: age of
//!   the first batch the group has not received, where its batch was read.
//!
//! Share groups (KIP-932) commit no offset, and the records above their
//! share-partition start offset may be acknowledged already, so kdp knows
//! their records to deliver only as bounds. They publish
//! `kdp_group_lag_records_at_most` and `kdp_group_lag_held_back_offsets`
//! (the same meaning), no `kdp_group_lag_records` and no
//! `kdp_group_lag_offsets` (no committed offset), and beside them:
//!
//! - `kdp_group_lag_records_at_least{group,topic}`: the lower bound kdp
//!   derives from Kafka's Lag (docs/LAG.md section 5), what share-group
//!   alerts fire on; no series where Kafka gives no Lag for a partition (a
//!   0 there would be an all clear nobody checked);
//! - `kdp_share_group_lag{group,topic}`: the lag Kafka reports for the
//!   share-partitions (DescribeShareGroupOffsets v1, what
//!   kafka-share-groups.sh prints as LAG); no series where Kafka gives
//!   none.
//!
//! A group and topic with a position kdp could not judge has none of
//! these series (no zero claims a check not made).

use std::collections::{BTreeMap, BTreeSet};

use kdp_domain::lag::found::LagFound;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type IntGauge = Gauge<i64, std::sync::atomic::AtomicI64>;
type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

#[derive(Default)]
struct Sum {
    at_least: i64,
    at_most: i64,
    offsets: i64,
    held_back: i64,
    oldest_ms: Option<i64>,
    share: bool,
    kafka_share_lag: Option<i64>,
    kafka_share_lag_missing: bool,
}

/// Registers the lag families of `found` (nothing without it); `now_ms`:
/// when the scan ended.
pub fn register(r: &mut Registry, found: Option<&LagFound>, per_partition: bool, now_ms: i64) {
    let Some(found) = found else { return };
    let unknown: BTreeSet<(&str, &str)> = found
        .unknown
        .iter()
        .map(|(g, t)| (g.as_str(), t.as_str()))
        .collect();
    let mut sums: BTreeMap<Labels, Sum> = BTreeMap::new();
    for v in &found.values {
        if unknown.contains(&(v.group.as_str(), v.topic.as_str())) {
            continue;
        }
        let mut labels = vec![("group", v.group.clone()), ("topic", v.topic.clone())];
        if per_partition {
            labels.push(("partition", v.partition.to_string()));
        }
        let s = sums.entry(labels).or_default();
        s.at_least = s.at_least.saturating_add(v.records_at_least);
        s.at_most = s.at_most.saturating_add(v.records_at_most);
        s.offsets = s.offsets.saturating_add(v.offset_lag.unwrap_or(0));
        s.share |= v.share;
        match v.kafka_share_lag {
            Some(l) => s.kafka_share_lag = Some(s.kafka_share_lag.unwrap_or(0).saturating_add(l)),
            None => s.kafka_share_lag_missing = true,
        }
        s.held_back = s.held_back.saturating_add(v.held_back);
        if let Some(ts) = v.oldest_undelivered_ms {
            s.oldest_ms = Some(s.oldest_ms.map_or(ts, |o: i64| o.min(ts)));
        }
    }
    let records = Family::<Labels, IntGauge>::default();
    let at_most = Family::<Labels, IntGauge>::default();
    let offsets = Family::<Labels, IntGauge>::default();
    let held = Family::<Labels, IntGauge>::default();
    let age = Family::<Labels, FloatGauge>::default();
    let share_lag = Family::<Labels, IntGauge>::default();
    let at_least = Family::<Labels, IntGauge>::default();
    for (labels, s) in &sums {
        at_most.get_or_create(labels).set(s.at_most);
        held.get_or_create(labels).set(s.held_back);
        if s.share {
            // a sum over partitions some of which Kafka gave no Lag for
            // would be a figure too small: none, and no lower bound
            // either (without Kafka's Lag it is 0 by default, not by
            // evidence)
            if let (Some(l), false) = (s.kafka_share_lag, s.kafka_share_lag_missing) {
                share_lag.get_or_create(labels).set(l);
                at_least.get_or_create(labels).set(s.at_least);
            }
            continue;
        }
        records.get_or_create(labels).set(s.at_least);
        offsets.get_or_create(labels).set(s.offsets);
        if let Some(ts) = s.oldest_ms {
            let secs = now_ms.saturating_sub(ts).max(0) as f64 / 1000.0;
            age.get_or_create(labels).set(secs);
        }
    }
    r.register(
        "kdp_group_lag_records",
        "Records a read_committed consumer at the group's committed offset would still receive up to the last stable offset (commit/abort markers and aborted records excluded, counted from record batches); exact where kdp read up to the LSO, else the lower bound (see kdp_group_lag_records_at_most); kdp lag's Records",
        records,
    );
    r.register(
        "kdp_group_lag_records_at_most",
        "Upper bound of kdp_group_lag_records (one record per offset not read); equal to it where counted exactly; for a share group the records still to deliver above its share-partition start offset, at most (those above it may be acknowledged already)",
        at_most,
    );
    r.register(
        "kdp_group_lag_offsets",
        "Kafka's offset lag: high watermark minus committed offset, as kafka-consumer-groups.sh prints LAG (markers, aborted records and offsets above the LSO included)",
        offsets,
    );
    r.register(
        "kdp_group_lag_held_back_offsets",
        "Offsets above the last stable offset that open transactions hold back from the group (high watermark minus LSO, where the group is at or below the LSO)",
        held,
    );
    r.register(
        "kdp_group_lag_oldest_undelivered_age_seconds",
        "Age of the first record batch the group has not received (its first timestamp), where kdp read that batch; no series where it did not",
        age,
    );
    r.register(
        "kdp_group_lag_records_at_least",
        "A share group's records still to deliver, at least: the records counted above its share-partition start offset minus every offset Kafka's Lag leaves as possibly final (high watermark - start offset - Lag); what share-group alerts fire on; no series where Kafka gives no Lag",
        at_least,
    );
    r.register(
        "kdp_share_group_lag",
        "A share group's lag as Kafka reports it (DescribeShareGroupOffsets v1 Lag, what kafka-share-groups.sh --describe --offsets prints as LAG: high watermark minus start offset minus the records in a final state); no series where Kafka gives none",
        share_lag,
    );
}

#[cfg(test)]
mod tests {
    use kdp_domain::lag::found::LagValue;

    use super::*;
    use crate::exporter::exposition::{encode, Format};

    fn v(group: &str, partition: i32, least: i64, most: i64, offsets: i64) -> LagValue {
        LagValue {
            group: group.into(),
            topic: "orders".into(),
            partition,
            records_at_least: least,
            records_at_most: most,
            offset_lag: Some(offsets),
            held_back: 0,
            oldest_undelivered_ms: Some(1_000 * i64::from(partition)),
            share: false,
            kafka_share_lag: None,
        }
    }

    #[test]
    fn records_and_offsets_side_by_side_and_no_series_for_what_was_not_judged() {
        let found = LagFound {
            values: vec![
                v("idle", 0, 0, 0, 1),
                v("busy", 0, 5, 5, 7),
                v("busy", 1, 2, 9, 9),
                v("refused", 0, 1, 1, 1),
            ],
            unknown: vec![("refused".into(), "orders".into())],
            failed_requests: 1,
        };
        let mut r = Registry::default();
        register(&mut r, Some(&found), false, 10_000);
        let text = encode(&r, Format::Text).unwrap();
        assert!(
            text.contains("kdp_group_lag_records{group=\"idle\",topic=\"orders\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("kdp_group_lag_offsets{group=\"idle\",topic=\"orders\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("kdp_group_lag_records{group=\"busy\",topic=\"orders\"} 7\n"),
            "{text}"
        );
        assert!(
            text.contains("kdp_group_lag_records_at_most{group=\"busy\",topic=\"orders\"} 14\n"),
            "{text}"
        );
        // the oldest of its partitions: 10 s before the scan's end
        assert!(text.contains("kdp_group_lag_oldest_undelivered_age_seconds{group=\"busy\",topic=\"orders\"} 10.0\n"), "{text}");
        assert!(!text.contains("refused"), "{text}");
        let mut r = Registry::default();
        register(&mut r, Some(&found), true, 10_000);
        let text = encode(&r, Format::Text).unwrap();
        assert!(
            text.contains(
                "kdp_group_lag_records{group=\"busy\",topic=\"orders\",partition=\"1\"} 2\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_share_group_publishes_its_bounds_and_kafkas_lag_never_a_lower_bound_without_it() {
        let share = |partition, most, kafka| LagValue {
            share: true,
            records_at_least: 1,
            offset_lag: None,
            oldest_undelivered_ms: None,
            held_back: 3,
            kafka_share_lag: kafka,
            ..v("queue", partition, 0, most, 0)
        };
        let found = LagFound {
            values: vec![share(0, 16, Some(15)), share(1, 4, Some(2))],
            ..LagFound::default()
        };
        let mut r = Registry::default();
        register(&mut r, Some(&found), false, 10_000);
        let text = encode(&r, Format::Text).unwrap();
        assert!(
            text.contains("kdp_group_lag_records_at_most{group=\"queue\",topic=\"orders\"} 20\n"),
            "{text}"
        );
        assert!(
            text.contains("kdp_share_group_lag{group=\"queue\",topic=\"orders\"} 17\n"),
            "{text}"
        );
        // the lower bound, summed, where Kafka gave every partition's Lag
        assert!(
            text.contains("kdp_group_lag_records_at_least{group=\"queue\",topic=\"orders\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("kdp_group_lag_held_back_offsets{group=\"queue\",topic=\"orders\"} 6\n"),
            "{text}"
        );
        assert!(
            !text.contains("kdp_group_lag_records{group=\"queue\""),
            "{text}"
        );
        assert!(
            !text.contains("kdp_group_lag_offsets{group=\"queue\""),
            "{text}"
        );
        // a partition Kafka gave no Lag for: no sum that would be too small
        let found = LagFound {
            values: vec![share(0, 16, Some(15)), share(1, 4, None)],
            ..LagFound::default()
        };
        let mut r = Registry::default();
        register(&mut r, Some(&found), false, 10_000);
        let text = encode(&r, Format::Text).unwrap();
        assert!(!text.contains("kdp_share_group_lag{"), "{text}");
        assert!(!text.contains("kdp_group_lag_records_at_least{"), "{text}");
    }
}
