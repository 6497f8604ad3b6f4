//! The metrics: names, types, help, and the exposition formats.
//!
//! Two kinds. Per-scan state (producers, open transactions, the diagnosis)
//! is built into a fresh [`Registry`] after each scan and published whole, so
//! a scrape never sees half of one scan and half of another. Counters and
//! gauges about the exporter itself ([`Health`]) live across scans as shared
//! atomics, registered into every snapshot.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64};

use prometheus_client::encoding::text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::aggregate::{Counts, Key};
use super::diagnosis::{Diagnosis, Reason};

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
            "Scans finished, by result: ok, partial (some partitions failed) or failed (the cluster could not be scanned)",
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
            "1 when the last scan failed or was partial, so some values are from an earlier scan; else 0",
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
            "1 when the diagnosis metrics (hanging, stuck, fenced, divergences, blocked records) were fed by the last scan, else 0",
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
struct DiagnosisFamilies {
    hanging: Family<Labels, Gauge<i64, AtomicI64>>,
    stuck: Family<Labels, Gauge<i64, AtomicI64>>,
    fenced: Family<Labels, Gauge<i64, AtomicI64>>,
    divergences: Family<Labels, Gauge<i64, AtomicI64>>,
    blocked: Family<Labels, Gauge<i64, AtomicI64>>,
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
    let state = State {
        producers: Family::default(),
        open_transactions: Family::default(),
        oldest_open_age: Family::default(),
        diagnosis: DiagnosisFamilies {
            hanging: Family::default(),
            stuck: Family::default(),
            fenced: Family::default(),
            divergences: Family::default(),
            blocked: Family::default(),
        },
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
        if let Some(ts) = c.oldest_open_last_timestamp_ms {
            let age = (now_ms.saturating_sub(ts)).max(0) as f64 / 1000.0;
            state.oldest_open_age.get_or_create(&labels).set(age);
        }
    }
    if let Some(d) = diagnosis {
        feed(&state.diagnosis, d, counts.keys(), per_partition);
    }

    let mut r = Registry::default();
    r.register(
        "kdp_producers",
        "Active producers (DescribeProducers on each partition's leader) as of the last scan",
        state.producers,
    );
    r.register(
        "kdp_open_transactions",
        "Producers with an open transaction (CurrentTxnStartOffset >= 0) as of the last scan",
        state.open_transactions,
    );
    r.register(
        "kdp_oldest_open_transaction_age_seconds",
        "Age of the oldest open transaction as of the last scan, from its producer's LastTimestamp (the last write: a lower bound of the transaction's age)",
        state.oldest_open_age,
    );
    let d = state.diagnosis;
    r.register(
        "kdp_hanging_transactions",
        "Open transactions the coordinator does not know (by reason); from the diagnosis",
        d.hanging,
    );
    r.register(
        "kdp_stuck_transactions",
        "Transactions in PrepareCommit/PrepareAbort past the timeout whose markers were not written (by reason); from the diagnosis",
        d.stuck,
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
        "Records between the last stable offset and the high watermark (held from read_committed consumers); from the diagnosis",
        d.blocked,
    );
    health.register(&mut r);
    r
}

/// A fed diagnosis gives every scanned key a series (0: diagnosed, nothing
/// found); without one there are no series at all, since 0 would claim a
/// check that was not made.
fn feed<'k>(
    f: &DiagnosisFamilies,
    d: &Diagnosis,
    keys: impl Iterator<Item = &'k Key>,
    per_partition: bool,
) {
    for key in keys {
        for reason in Reason::ALL {
            let mut labels = key.labels();
            labels.push(("reason", reason.label().to_string()));
            let family = if reason.is_stuck() {
                &f.stuck
            } else {
                &f.hanging
            };
            drop(family.get_or_create(&labels));
        }
        for family in [&f.fenced, &f.blocked] {
            drop(family.get_or_create(&key.labels()));
        }
        if d.replica_divergences.is_some() {
            drop(f.divergences.get_or_create(&key.labels()));
        }
    }
    for t in &d.transactions {
        let mut labels = Key::new(&t.topic, t.partition, per_partition).labels();
        labels.push(("reason", t.reason.label().to_string()));
        let family = if t.reason.is_stuck() {
            &f.stuck
        } else {
            &f.hanging
        };
        family.get_or_create(&labels).inc();
    }
    for (family, values) in [
        (&f.fenced, d.fenced_producers.as_slice()),
        (
            &f.divergences,
            d.replica_divergences.as_deref().unwrap_or_default(),
        ),
        (&f.blocked, d.blocked_records.as_slice()),
    ] {
        for v in values {
            let labels = Key::new(&v.topic, v.partition, per_partition).labels();
            family.get_or_create(&labels).inc_by(clamp(v.value));
        }
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The two exposition formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus' text format 0.0.4 (the default).
    Text,
    /// OpenMetrics 1.0.0 text, when the scraper's Accept header asks for it.
    OpenMetrics,
}

impl Format {
    /// OpenMetrics only when the Accept header names it (Prometheus sends it
    /// first when it prefers it); anything else gets the classic format.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let asks = accept.is_some_and(|a| {
            a.split(',').any(|part| {
                let mut params = part.split(';');
                let media = params.next().unwrap_or("").trim();
                let q_zero = params.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f64>().ok())
                        .is_some_and(|q| q == 0.0)
                });
                media.eq_ignore_ascii_case("application/openmetrics-text") && !q_zero
            })
        });
        if asks {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// Encodes a registry in the format asked for.
pub fn encode(registry: &Registry, format: Format) -> Result<String, std::fmt::Error> {
    let mut om = String::new();
    text::encode(&mut om, registry)?;
    Ok(match format {
        Format::OpenMetrics => om,
        Format::Text => openmetrics_to_text(&om),
    })
}

/// prometheus-client writes OpenMetrics only. The classic format differs,
/// for what kdp registers, in three ways: a counter's HELP and TYPE name the
/// sample (`x_total`, where OpenMetrics names the family `x`), there is no
/// `# UNIT` and no `# EOF`. Samples are the same lines.
fn openmetrics_to_text(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut help: Option<&str> = None;
    for line in om.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if line.starts_with("# HELP ") {
            // held until the TYPE line tells whether the name needs `_total`
            if let Some(h) = help.replace(line) {
                out.push_str(h);
                out.push('\n');
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let counter = kind == "counter";
            if let Some(h) = help.take() {
                match (
                    counter,
                    h.strip_prefix("# HELP ").and_then(|r| r.split_once(' ')),
                ) {
                    (true, Some((hname, text))) => {
                        out.push_str(&format!("# HELP {hname}_total {text}\n"));
                    }
                    _ => {
                        out.push_str(h);
                        out.push('\n');
                    }
                }
            }
            if counter {
                out.push_str(&format!("# TYPE {name}_total counter\n"));
            } else {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(h) = help {
        out.push_str(h);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::diagnosis::{Finding, PartitionValue, Reason};
    use super::*;

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
                    reason: Reason::NoTransaction,
                },
                Finding {
                    topic: "t".into(),
                    partition: 1,
                    reason: Reason::NoTransaction,
                },
                Finding {
                    topic: "t".into(),
                    partition: 2,
                    reason: Reason::PrepareCommit,
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
    fn openmetrics_only_when_asked_for() {
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Text
        );
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        assert_eq!(
            Format::negotiate(Some(
                "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.1"
            )),
            Format::OpenMetrics
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text; q=0, text/plain")),
            Format::Text
        );
    }
}
