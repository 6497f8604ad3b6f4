//! The metric catalogue: names, types, help, and how one scan's state
//! becomes a registry. How a registry is written out (the two text formats)
//! is [`super::exposition`].
//!
//! Two kinds. Per-scan state (producers, open transactions, the diagnosis)
//! is built into a fresh [`Registry`] after each scan and published whole, so
//! a scrape never sees half of one scan and half of another. Counters and
//! gauges about the exporter itself ([`Health`]) live across scans as shared
//! atomics, registered into every snapshot.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicI64, AtomicU64};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::aggregate::{Counts, Key};
use kdp_domain::diagnose::findings::Holder;
use kdp_domain::diagnose::hanging::{Problem, UnknownKind};

use kdp_domain::diagnose::summary::Diagnosis;

type Labels = Vec<(&'static str, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The exporter's own metrics, kept across scans.
#[derive(Clone)]
pub struct Health {
    /// `kdp_scans_total{result="ok|partial|failed"}`
    pub scans: Family<Labels, Counter>,
    /// `kdp_scan_errors_total{error="KAFKA_ERROR_NAME"}`
    pub scan_errors: Family<Labels, Counter>,
    pub scan_duration: Histogram,
    pub last_successful_scan: FloatGauge,
    pub stale: Gauge<i64, AtomicI64>,
    pub scan_partitions: Gauge<i64, AtomicI64>,
    pub scan_partitions_failed: Gauge<i64, AtomicI64>,
    pub overlaps: Counter,
    pub interval: FloatGauge,
    pub diagnosis_available: Gauge<i64, AtomicI64>,
    pub build_info: Family<Labels, Gauge<i64, AtomicI64>>,
}

impl Health {
    pub fn new(interval_seconds: f64) -> Health {
        let h = Health {
            scans: Family::default(),
            scan_errors: Family::default(),
            // 10 ms .. ~164 s
            scan_duration: Histogram::new(exponential_buckets(0.01, 2.0, 15)),
            last_successful_scan: FloatGauge::default(),
            stale: Gauge::default(),
            scan_partitions: Gauge::default(),
            scan_partitions_failed: Gauge::default(),
            overlaps: Counter::default(),
            interval: FloatGauge::default(),
            diagnosis_available: Gauge::default(),
            build_info: Family::default(),
        };
        h.interval.set(interval_seconds);
        h.build_info
            .get_or_create(&vec![("version", env!("CARGO_PKG_VERSION").to_string())])
            .set(1);
        // before the first scan the values are not from a scan
        h.stale.set(1);
        h
    }

    fn register(&self, r: &mut Registry) {
        r.register(
            "kdp_scans",
            "Scans finished, by result: ok, partial (some partitions failed, the diagnosis did not run or some of its requests failed, or with --producer-ids some replica or broker setting could not be read) or failed (the cluster could not be scanned)",
            self.scans.clone(),
        );
        r.register(
            "kdp_scan_errors",
            "Partitions that could not be described, and scans that failed, by Kafka error name",
            self.scan_errors.clone(),
        );
        r.register(
            "kdp_scan_duration_seconds",
            "Time one scan of the cluster took",
            self.scan_duration.clone(),
        );
        r.register(
            "kdp_last_successful_scan_timestamp_seconds",
            "When the last scan that reached the cluster (ok or partial) ended, in seconds since the epoch; 0 before the first",
            self.last_successful_scan.clone(),
        );
        r.register(
            "kdp_scan_stale",
            "1 when the last scan failed or some of its partitions could not be described, so some values are from an earlier scan; else 0 (a diagnosis that failed keeps no old values: see kdp_diagnosis_available)",
            self.stale.clone(),
        );
        r.register(
            "kdp_scan_partitions",
            "Partitions the last scan reported on",
            self.scan_partitions.clone(),
        );
        r.register(
            "kdp_scan_partitions_failed",
            "Partitions the last scan could not describe",
            self.scan_partitions_failed.clone(),
        );
        r.register(
            "kdp_scan_overlaps",
            "Scans started while another was running (never, by design; a guard counts it)",
            self.overlaps.clone(),
        );
        r.register(
            "kdp_scan_interval_seconds",
            "The configured time between two scans (--interval)",
            self.interval.clone(),
        );
        r.register(
            "kdp_diagnosis_available",
            "1 when the last scan's diagnosis ran and every request it made was answered; 0 when it did not run, ran out of time or part of it failed: then only what it could decide has series (no zero stands for a check not made)",
            self.diagnosis_available.clone(),
        );
        r.register(
            "kdp_build_info",
            "Always 1; the version of kdp in its labels",
            self.build_info.clone(),
        );
    }
}

/// The per-scan families; one set per snapshot.
struct State {
    producers: Family<Labels, Gauge<i64, AtomicI64>>,
    open_transactions: Family<Labels, Gauge<i64, AtomicI64>>,
    oldest_open_age: Family<Labels, FloatGauge>,
    diagnosis: DiagnosisFamilies,
}

/// The diagnosis' families: registered always, fed only by a [`Diagnosis`].
#[derive(Default)]
struct DiagnosisFamilies {
    hanging: Family<Labels, Gauge<i64, AtomicI64>>,
    stuck: Family<Labels, Gauge<i64, AtomicI64>>,
    unknown: Family<Labels, Gauge<i64, AtomicI64>>,
    fenced: Family<Labels, Gauge<i64, AtomicI64>>,
    divergences: Family<Labels, Gauge<i64, AtomicI64>>,
    blocked: Family<Labels, Gauge<i64, AtomicI64>>,
    blocked_by_verdict: Family<Labels, Gauge<i64, AtomicI64>>,
}

/// Builds the registry of one snapshot: the scan's state, the diagnosis if
/// any, and the shared [`Health`]. `now_ms` is when the scan ended (the ages
/// are as of then).
pub fn snapshot(
    counts: &BTreeMap<Key, Counts>,
    diagnosis: Option<&Diagnosis>,
    per_partition: bool,
    now_ms: i64,
    health: &Health,
) -> Registry {
    snapshot_of_scan(
        counts,
        diagnosis,
        &BTreeSet::new(),
        per_partition,
        now_ms,
        health,
    )
}

/// [`snapshot`] of a scan in which the keys `unchecked` were not described
/// (their counts are the last scan's): the diagnosis gives them no series
/// of its own, since a zero would claim this scan checked them.
pub fn snapshot_of_scan(
    counts: &BTreeMap<Key, Counts>,
    diagnosis: Option<&Diagnosis>,
    unchecked: &BTreeSet<Key>,
    per_partition: bool,
    now_ms: i64,
    health: &Health,
) -> Registry {
    let state = State {
        producers: Family::default(),
        open_transactions: Family::default(),
        oldest_open_age: Family::default(),
        diagnosis: DiagnosisFamilies::default(),
    };
    for (key, c) in counts {
        let labels = key.labels();
        state
            .producers
            .get_or_create(&labels)
            .set(clamp(c.producers));
        state
            .open_transactions
            .get_or_create(&labels)
            .set(clamp(c.open_transactions));
        // no series where every open transaction's time is unknown
        if let Some(ts) = c.oldest_open_last_timestamp_ms {
            let age = (now_ms.saturating_sub(ts)).max(0) as f64 / 1000.0;
            state.oldest_open_age.get_or_create(&labels).set(age);
        }
    }
    if let Some(d) = diagnosis {
        feed(&state.diagnosis, d, counts.keys(), unchecked, per_partition);
    }

    let mut r = Registry::default();
    r.register(
        "kdp_producers",
        "Active producers (DescribeProducers on each partition's leader) as of the last scan",
        state.producers,
    );
    r.register(
        "kdp_open_transactions",
        "Producers with an open transaction (CurrentTxnStartOffset >= 0) as of the last scan; each holds records back (kdp_blocked_records), and those idle past the transaction timeout are judged hanging, stuck or unknown",
        state.open_transactions,
    );
    r.register(
        "kdp_oldest_open_transaction_age_seconds",
        "Age of the oldest open transaction as of the last scan, from its producer's LastTimestamp (the last write: a lower bound of the transaction's age); a LastTimestamp of 0 or below is unknown and gives no age, and a topic whose open transactions all have one has no series",
        state.oldest_open_age,
    );
    let d = state.diagnosis;
    r.register(
        "kdp_hanging_transactions",
        "Open transactions idle past the transaction timeout that no coordinator will end (by reason); from the diagnosis. A topic with undecided candidates (kdp_unknown_transactions) has no zero series here",
        d.hanging,
    );
    r.register(
        "kdp_stuck_transactions",
        "Transactions in PrepareCommit/PrepareAbort past the timeout whose markers were not written (by reason); from the diagnosis. A topic with undecided candidates has no zero series here",
        d.stuck,
    );
    r.register(
        "kdp_unknown_transactions",
        "Open transactions idle past the transaction timeout whose verdict could not be made (by reason: not_authorized, listing_incomplete, describe_failed, unknown_timestamp), neither hanging nor healthy; from the diagnosis",
        d.unknown,
    );
    r.register(
        "kdp_fenced_producers",
        "Producers still listed whose instance the coordinator has fenced; from the diagnosis",
        d.fenced,
    );
    r.register(
        "kdp_replica_divergences",
        "Producers whose state differs between the replicas of a partition; from the diagnosis",
        d.divergences,
    );
    r.register(
        "kdp_blocked_records",
        "Records between the last stable offset and the high watermark, held from read_committed consumers by every open transaction, hanging or live; from the diagnosis (no series where the offsets could not be read)",
        d.blocked,
    );
    r.register(
        "kdp_blocked_records_by_verdict",
        "kdp_blocked_records split by the verdict on the open transaction holding each partition's last stable offset (hanging, stuck, unknown, or open: tracked by its coordinator or not idle long enough to judge); the sum over verdict is kdp_blocked_records",
        d.blocked_by_verdict,
    );
    super::groups::register(&mut r, diagnosis.and_then(|d| d.groups.as_ref()));
    super::lag::register(
        &mut r,
        diagnosis.and_then(|d| d.lag.as_ref()),
        per_partition,
        now_ms,
    );
    health.register(&mut r);
    r
}

/// A fed diagnosis gives every scanned key a series where it decided
/// (0: diagnosed, nothing found); what it could not decide gets no zero,
/// since 0 would claim a check that was not made, and neither does a key
/// this scan did not describe (`unchecked`: its blocked records, summed
/// from part of it, would be too low). Without a diagnosis there are no
/// series at all.
fn feed<'k>(
    f: &DiagnosisFamilies,
    d: &Diagnosis,
    keys: impl Iterator<Item = &'k Key>,
    unchecked: &BTreeSet<Key>,
    per_partition: bool,
) {
    let key = |topic: &str, partition: i32| Key::new(topic, partition, per_partition);
    let undecided: BTreeSet<Key> = d
        .unknown_transactions
        .iter()
        .map(|u| key(&u.topic, u.partition))
        .collect();
    let unread: BTreeSet<Key> = d
        .blocked_records_unknown
        .iter()
        .map(|u| key(&u.topic, u.partition))
        .chain(unchecked.iter().cloned())
        .collect();
    let diverged_unknown: BTreeSet<Key> = d
        .replica_divergences_unknown
        .iter()
        .map(|u| key(&u.topic, u.partition))
        .chain(unchecked.iter().cloned())
        .collect();
    for k in keys.filter(|k| !unchecked.contains(k)) {
        for reason in UnknownKind::ALL {
            let mut labels = k.labels();
            labels.push(("reason", reason.label().to_string()));
            drop(f.unknown.get_or_create(&labels));
        }
        if !undecided.contains(k) {
            for reason in Problem::ALL {
                let mut labels = k.labels();
                labels.push(("reason", reason.label().to_string()));
                let family = if reason.is_stuck() {
                    &f.stuck
                } else {
                    &f.hanging
                };
                drop(family.get_or_create(&labels));
            }
        }
        if !unread.contains(k) {
            drop(f.blocked.get_or_create(&k.labels()));
            for verdict in Holder::ALL {
                let mut labels = k.labels();
                labels.push(("verdict", verdict.label().to_string()));
                drop(f.blocked_by_verdict.get_or_create(&labels));
            }
        }
        drop(f.fenced.get_or_create(&k.labels()));
        if d.replica_divergences.is_some() && !diverged_unknown.contains(k) {
            drop(f.divergences.get_or_create(&k.labels()));
        }
    }
    for t in &d.transactions {
        let mut labels = key(&t.topic, t.partition).labels();
        labels.push(("reason", t.reason.label().to_string()));
        let family = if t.reason.is_stuck() {
            &f.stuck
        } else {
            &f.hanging
        };
        family.get_or_create(&labels).inc();
    }
    for u in &d.unknown_transactions {
        let mut labels = key(&u.topic, u.partition).labels();
        labels.push(("reason", u.reason.label().to_string()));
        f.unknown.get_or_create(&labels).inc();
    }
    for v in &d.fenced_producers {
        let labels = key(&v.topic, v.partition).labels();
        f.fenced.get_or_create(&labels).inc_by(clamp(v.value));
    }
    // a divergence found counts (as a hanging transaction does); a zero for
    // a key with a replica not asked would claim they agree: none
    for v in d.replica_divergences.as_deref().unwrap_or_default() {
        let k = key(&v.topic, v.partition);
        if v.value > 0 || !diverged_unknown.contains(&k) {
            f.divergences
                .get_or_create(&k.labels())
                .inc_by(clamp(v.value));
        }
    }
    // a sum over a key with an unread partition would be too low: none
    for v in &d.blocked_records {
        let k = key(&v.topic, v.partition);
        if !unread.contains(&k) {
            f.blocked.get_or_create(&k.labels()).inc_by(clamp(v.value));
        }
    }
    for v in &d.blocked_records_by_verdict {
        let k = key(&v.topic, v.partition);
        if !unread.contains(&k) {
            let mut labels = k.labels();
            labels.push(("verdict", v.verdict.label().to_string()));
            f.blocked_by_verdict
                .get_or_create(&labels)
                .inc_by(clamp(v.value));
        }
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::exposition::{encode, Format};
    use super::*;
    use kdp_domain::diagnose::summary::{Finding, PartitionValue, Undecided};

    fn sample(out: &str, prefix: &str) -> Option<f64> {
        out.lines()
            .find_map(|l| l.strip_prefix(prefix)?.strip_prefix(' ')?.parse().ok())
    }

    fn counts() -> BTreeMap<Key, Counts> {
        let mut m = BTreeMap::new();
        m.insert(
            Key {
                topic: "orders".into(),
                partition: None,
            },
            Counts {
                producers: 3,
                open_transactions: 1,
                oldest_open_last_timestamp_ms: Some(40_000),
            },
        );
        m
    }

    #[test]
    fn state_and_health_in_the_classic_format() {
        let health = Health::new(60.0);
        health
            .scans
            .get_or_create(&vec![("result", "ok".into())])
            .inc();
        let r = snapshot(&counts(), None, false, 100_000, &health);
        let out = encode(&r, Format::Text).unwrap();
        assert_eq!(sample(&out, r#"kdp_producers{topic="orders"}"#), Some(3.0));
        assert_eq!(
            sample(&out, r#"kdp_open_transactions{topic="orders"}"#),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &out,
                r#"kdp_oldest_open_transaction_age_seconds{topic="orders"}"#
            ),
            Some(60.0)
        );
        assert!(out.contains("# TYPE kdp_scans_total counter\n"), "{out}");
        assert!(
            out.contains("# HELP kdp_scans_total Scans finished"),
            "{out}"
        );
        assert_eq!(sample(&out, r#"kdp_scans_total{result="ok"}"#), Some(1.0));
        assert!(!out.contains("# EOF"));
        // no diagnosis, no diagnosis series: 0 would claim a check not made
        assert!(!out.contains("kdp_hanging_transactions"));
        assert_eq!(sample(&out, "kdp_diagnosis_available"), Some(0.0));
    }

    #[test]
    fn openmetrics_keeps_family_names_and_ends_with_eof() {
        let health = Health::new(60.0);
        let r = snapshot(&counts(), None, false, 100_000, &health);
        let out = encode(&r, Format::OpenMetrics).unwrap();
        assert!(out.contains("# TYPE kdp_scan_overlaps counter\n"), "{out}");
        assert!(out.contains("\nkdp_scan_overlaps_total 0\n"), "{out}");
        assert!(out.ends_with("# EOF\n"));
    }

    #[test]
    fn a_diagnosis_feeds_its_families_by_topic_and_reason() {
        let health = Health::new(60.0);
        let d = Diagnosis {
            transactions: vec![
                Finding {
                    topic: "t".into(),
                    partition: 0,
                    reason: Problem::NoTransaction,
                },
                Finding {
                    topic: "t".into(),
                    partition: 1,
                    reason: Problem::NoTransaction,
                },
                Finding {
                    topic: "t".into(),
                    partition: 2,
                    reason: Problem::PrepareCommit,
                },
            ],
            blocked_records: vec![
                PartitionValue {
                    topic: "t".into(),
                    partition: 0,
                    value: 5,
                },
                PartitionValue {
                    topic: "t".into(),
                    partition: 1,
                    value: 7,
                },
            ],
            ..Diagnosis::default()
        };
        let mut scanned = BTreeMap::new();
        scanned.insert(
            Key {
                topic: "quiet".into(),
                partition: None,
            },
            Counts::default(),
        );
        let r = snapshot(&scanned, Some(&d), false, 0, &health);
        let out = encode(&r, Format::Text).unwrap();
        // a scanned topic where nothing was found has zeros
        assert_eq!(
            sample(
                &out,
                r#"kdp_stuck_transactions{topic="quiet",reason="prepare_abort"}"#
            ),
            Some(0.0)
        );
        assert_eq!(
            sample(&out, r#"kdp_fenced_producers{topic="quiet"}"#),
            Some(0.0)
        );
        assert_eq!(
            sample(
                &out,
                r#"kdp_hanging_transactions{topic="t",reason="no_transaction"}"#
            ),
            Some(2.0)
        );
        assert_eq!(
            sample(
                &out,
                r#"kdp_stuck_transactions{topic="t",reason="prepare_commit"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(&out, r#"kdp_blocked_records{topic="t"}"#),
            Some(12.0)
        );
        let r = snapshot(&BTreeMap::new(), Some(&d), true, 0, &health);
        let out = encode(&r, Format::Text).unwrap();
        assert_eq!(
            sample(&out, r#"kdp_blocked_records{topic="t",partition="1"}"#),
            Some(7.0)
        );
    }

    #[test]
    fn an_undecided_topic_has_unknown_series_and_no_zero_hanging_or_stuck() {
        let health = Health::new(60.0);
        let d = Diagnosis {
            unknown_transactions: vec![Undecided {
                topic: "payments".into(),
                partition: 0,
                reason: UnknownKind::ListingIncomplete,
            }],
            failed_requests: 1,
            ..Diagnosis::default()
        };
        let mut scanned = BTreeMap::new();
        for topic in ["payments", "quiet"] {
            scanned.insert(
                Key {
                    topic: topic.into(),
                    partition: None,
                },
                Counts::default(),
            );
        }
        let out = encode(
            &snapshot(&scanned, Some(&d), false, 0, &health),
            Format::Text,
        )
        .unwrap();
        assert_eq!(
            sample(
                &out,
                r#"kdp_unknown_transactions{topic="payments",reason="listing_incomplete"}"#
            ),
            Some(1.0),
            "{out}"
        );
        assert!(
            !out.contains(r#"kdp_hanging_transactions{topic="payments""#)
                && !out.contains(r#"kdp_stuck_transactions{topic="payments""#),
            "no zero for a check not made: {out}"
        );
        // a topic with nothing to judge was checked: its zeros stand
        assert_eq!(
            sample(
                &out,
                r#"kdp_hanging_transactions{topic="quiet",reason="no_transaction"}"#
            ),
            Some(0.0),
            "{out}"
        );
    }
}
