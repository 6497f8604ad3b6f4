//! Producer-id pressure, scan by scan (`kdp exporter --producer-ids`): what
//! `kdp producers` reports, as series per broker and per topic, never per
//! producer id.
//!
//! A broker's count is one per partition replica and producer (what its
//! `ProducerIdCount` gauge counts), so every replica is asked, not only the
//! leaders: each scan sends every broker DescribeProducers for the
//! partition replicas it hosts (one request per
//! `--max-partitions-per-request` of them, at most 100, so about the
//! replication factor times the leaders' scan in bytes, in its place) and
//! one DescribeConfigs (`producer.id.expiration.ms`, asked first). The
//! leaders' answers among them are the scan's describe (no leaders'
//! describe of its own; a partition no leader answered is described again
//! the leaders' way), then the diagnosis runs on the same deadline. It
//! folds each answer as it arrives (kdp-workflows'
//! [`kdp_workflows::pressure::scan_sharing_leaders`], lean): memory
//! is the answers in flight and the ids held per broker and topic, each
//! answer's delta-encoded at once as an [`IdSet`] (a byte or two each) and
//! kept so to the next scan for the new-ids counters; never the producers,
//! nor their idle times once the broker's setting is known.
//!
//! Never a count from part of the replicas published as if whole: a broker
//! that did not answer for every partition it hosts has no series, a topic
//! with a replica that did not answer has none, and a broker whose
//! `producer.id.expiration.ms` could not be read has no expiry series; the
//! scan is then partial. The new-ids counters count, per broker and topic,
//! the ids held now that the last answer of that broker for that topic did
//! not hold; a broker's first answer is the baseline, and what a broker did
//! not answer is compared with its last answer once it does, so they only
//! grow, across broker restarts and failed scans alike.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use kdp_client::{Client, DescribeOptions, TimeBound};
use kdp_domain::diagnose::id_set::IdSet;
use kdp_domain::diagnose::pressure::{Pressure, DEFAULT_EPOCH_MARGIN};
use kdp_domain::DescribeSummary;
use kdp_workflows::diagnosis::ComparedReplicas;
use kdp_workflows::leaders::LeaderAnswer;
use kdp_workflows::pressure::{scan_sharing_leaders, ScanOptions};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type IntGauge = Gauge<i64, AtomicI64>;

/// Partitions per DescribeProducers request of the every-replica scan, at
/// most. Up to 8 brokers' answers are in flight at once, each held as bytes
/// and then decoded, and that is the scan's peak: a broker answering for
/// its 600 replicas of 100 producers at once is 2.2 MB on the wire and 3.8 MB
/// decoded, in requests of 100 partitions a sixth of that (issue 32 in
/// docs/PERFORMANCE.md), for six requests instead of one.
const REPLICA_PARTITIONS_PER_REQUEST: usize = 100;

/// `--producer-ids`: what to compute.
#[derive(Debug, Clone, Copy)]
pub struct PressureConfig {
    /// Epochs within this many of 32767 are near their end.
    pub epoch_margin: i32,
}

impl Default for PressureConfig {
    fn default() -> Self {
        PressureConfig {
            epoch_margin: DEFAULT_EPOCH_MARGIN,
        }
    }
}

/// What is kept from one scan to the next: the ids each broker last held
/// per topic (delta-encoded, a byte or two per id), and the counters.
pub struct Tracker {
    config: PressureConfig,
    last: HashMap<(i32, String), IdSet>,
    baselined: BTreeSet<i32>,
    /// Topics with a `kdp_topic_new_producer_ids_total` series.
    counted_topics: BTreeSet<String>,
    /// `kdp_broker_new_producer_ids_total{broker}`
    pub broker_new: Family<Labels, Counter>,
    /// `kdp_topic_new_producer_ids_total{topic}`
    pub topic_new: Family<Labels, Counter>,
}

/// One scan's result: the report, or why there is none.
pub enum Scanned {
    /// The report (partial or not).
    Report(Box<Pressure>),
    /// The brokers could not be listed: nothing was asked.
    Failed,
}

impl Scanned {
    /// Whether this scan's pressure is short of something.
    pub fn partial(&self) -> bool {
        match self {
            Scanned::Report(p) => p.partial,
            Scanned::Failed => true,
        }
    }
}

impl Tracker {
    pub fn new(config: PressureConfig) -> Tracker {
        Tracker {
            config,
            last: HashMap::new(),
            baselined: BTreeSet::new(),
            counted_topics: BTreeSet::new(),
            broker_new: Family::default(),
            topic_new: Family::default(),
        }
    }

    /// Asks every replica (within the scan's `bound`), counts the new ids,
    /// and returns the report to publish; the same answers are the leaders'
    /// describe: each partition's leader's answer goes to `leaders` (kdp-workflows'
    /// [`scan_sharing_leaders`]), so the scan asks the replicas once.
    /// With `replicas`, each partition's replicas are compared too, for the
    /// diagnosis (`--compare-replicas`): the same pass.
    /// `Err`: the selection could not be looked up (nothing was asked).
    pub async fn scan_sharing_leaders<S>(
        &mut self,
        client: &Arc<Client>,
        opts: &DescribeOptions,
        bound: &TimeBound,
        replicas: bool,
        leaders: S,
    ) -> kdp_client::Result<(Scanned, DescribeSummary, Option<ComparedReplicas>)>
    where
        S: FnMut(LeaderAnswer<'_>) + Send + 'static,
    {
        let opts = replica_opts(opts);
        let options = ScanOptions {
            replicas,
            ..self.options()
        };
        let (r, summary, every) =
            scan_sharing_leaders(client, &opts, &options, bound, leaders).await?;
        Ok((self.settle(r), summary, every))
    }

    fn options(&self) -> ScanOptions {
        ScanOptions {
            epoch_margin: self.config.epoch_margin,
            top: 0,
            only_brokers: BTreeSet::new(),
            transactions: false,
            lean: true,
            replicas: false,
        }
    }

    /// The new ids of a scan counted, and the report to publish.
    fn settle(&mut self, r: kdp_client::Result<kdp_workflows::pressure::Scan>) -> Scanned {
        match r {
            Ok(s) => {
                for (b, why) in s.failed.iter().chain(&s.incomplete) {
                    tracing::warn!(broker = b, errors = ?why, "producer ids: a broker did not answer fully; its series are left out this scan");
                }
                let mut p = s.pressure;
                self.count_new(&mut p);
                let (lists, bytes) = self.kept();
                tracing::debug!(lists, bytes, "producer ids kept for the next scan");
                Scanned::Report(Box::new(p))
            }
            Err(e) => {
                tracing::warn!(error = %e, "producer ids: cannot list the brokers; no producer-id series this scan");
                Scanned::Failed
            }
        }
    }

    /// What is kept for the next scan: the (broker, topic) lists, and the
    /// bytes their ids take.
    pub fn kept(&self) -> (usize, usize) {
        let bytes = self.last.values().map(IdSet::heap_bytes).sum();
        (self.last.len(), bytes)
    }

    /// Counts the ids each broker holds now that its last answer for the
    /// same topic did not, and keeps this answer for the next scan. Takes
    /// the held ids out of `p` (they are not published): its
    /// [`Pressure::held_sets`], kept as they are, and any plain
    /// [`Pressure::held`] lists, encoded.
    pub fn count_new(&mut self, p: &mut Pressure) {
        let mut held = std::mem::take(&mut p.held_sets);
        for (b, topics) in std::mem::take(&mut p.held) {
            let sets = held.entry(b).or_default();
            for (t, ids) in topics {
                sets.insert(t, IdSet::from_sorted(&ids));
            }
        }
        let no_topics = BTreeSet::new();
        for b in p.brokers.iter().filter(|b| b.answered) {
            let broker = b.broker;
            let unanswered = p.unanswered.get(&broker).unwrap_or(&no_topics);
            let baselined = self.baselined.contains(&broker);
            let topics = held.remove(&broker).unwrap_or_default();
            // a topic this broker answered for wholly, and no longer holds
            // (deleted, or moved away): gone from the comparison
            self.last.retain(|(lb, t), _| {
                *lb != broker || unanswered.contains(t) || topics.contains_key(t)
            });
            let mut total = 0u64;
            for (topic, ids) in topics {
                if unanswered.contains(&topic) {
                    continue;
                }
                let key = (broker, topic);
                let new = match self.last.get(&key) {
                    Some(before) => before.count_missing_from_set(&ids),
                    None if baselined => ids.len() as u64,
                    None => 0,
                };
                if !self.counted_topics.contains(&key.1) {
                    self.counted_topics.insert(key.1.clone());
                }
                // created at 0 on the baseline: the series exists from then on
                self.topic_new
                    .get_or_create(&vec![("topic", key.1.clone())])
                    .inc_by(new);
                total += new;
                self.last.insert(key, ids);
            }
            self.broker_new
                .get_or_create(&vec![("broker", broker.to_string())])
                .inc_by(total);
            self.baselined.insert(broker);
        }
        // a complete scan that saw no replica of a topic: the topic is gone
        if !p.partial {
            let present: BTreeSet<&str> = p.topics.iter().map(|t| t.topic.as_str()).collect();
            let gone: Vec<String> = self
                .counted_topics
                .iter()
                .filter(|t| !present.contains(t.as_str()))
                .cloned()
                .collect();
            for t in gone {
                self.counted_topics.remove(&t);
                self.topic_new.remove(&vec![("topic", t)]);
            }
        }
    }
}

/// The scan's options with the every-replica scan's batching: each broker
/// answers for every replica it hosts; smaller answers, not fewer, keep
/// the scan's memory to what is in flight.
fn replica_opts(opts: &DescribeOptions) -> DescribeOptions {
    DescribeOptions {
        max_partitions_per_request: opts
            .max_partitions_per_request
            .min(REPLICA_PARTITIONS_PER_REQUEST),
        ..opts.clone()
    }
}

/// The per-scan families of one snapshot.
#[derive(Default)]
struct Families {
    broker_ids: Family<Labels, IntGauge>,
    broker_expiring: Family<Labels, IntGauge>,
    broker_past: Family<Labels, IntGauge>,
    topic_ids: Family<Labels, IntGauge>,
    topic_max_epoch: Family<Labels, IntGauge>,
    topic_near: Family<Labels, IntGauge>,
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Registers the producer-id families into a snapshot: this scan's gauges
/// (`scanned`, `None` before the first scan with `--producer-ids`) and the
/// tracker's counters.
pub fn register(r: &mut Registry, scanned: Option<&Scanned>, tracker: &Tracker) {
    let f = Families::default();
    if let Some(Scanned::Report(p)) = scanned {
        for b in p.brokers.iter().filter(|b| b.answered) {
            if p.unanswered.contains_key(&b.broker) {
                continue;
            }
            let labels = vec![("broker", b.broker.to_string())];
            f.broker_ids
                .get_or_create(&labels)
                .set(clamp(b.producer_ids));
            if b.expiration_ms.is_some() {
                f.broker_expiring
                    .get_or_create(&labels)
                    .set(clamp(b.expiring_within_hour));
                f.broker_past
                    .get_or_create(&labels)
                    .set(clamp(b.past_expiration));
            }
        }
        for t in p.topics.iter().filter(|t| !t.partial) {
            let labels = vec![("topic", t.topic.clone())];
            f.topic_ids
                .get_or_create(&labels)
                .set(clamp(t.producer_ids));
            f.topic_near
                .get_or_create(&labels)
                .set(clamp(t.near_exhaustion));
            if t.max_epoch >= 0 {
                f.topic_max_epoch
                    .get_or_create(&labels)
                    .set(i64::from(t.max_epoch));
            }
        }
    }
    r.register(
        "kdp_broker_producer_ids",
        "Producer ids the broker holds, one per partition replica and producer (what its ProducerIdCount gauge counts), every replica asked (--producer-ids); no series for a broker that did not answer for every partition it hosts",
        f.broker_ids,
    );
    r.register(
        "kdp_broker_producer_ids_expiring_within_hour",
        "Producer ids the broker holds with no open transaction that reach its producer.id.expiration.ms within the next hour; no series where the setting or some replica could not be read",
        f.broker_expiring,
    );
    r.register(
        "kdp_broker_producer_ids_past_expiration",
        "Producer ids idle longer than the broker's producer.id.expiration.ms and still held (its expiration check, producer.id.expiration.check.interval.ms, has not removed them yet)",
        f.broker_past,
    );
    r.register(
        "kdp_topic_producer_ids",
        "Producer ids held for the topic, over every replica of every partition; no series when some replica of it did not answer",
        f.topic_ids,
    );
    r.register(
        "kdp_topic_max_producer_epoch",
        "The largest producer epoch any replica of the topic holds (32767 is the last; under transaction protocol v2 every transaction uses one)",
        f.topic_max_epoch,
    );
    r.register(
        "kdp_topic_producers_near_epoch_exhaustion",
        "Producers of the topic whose epoch is within --epoch-margin of 32767",
        f.topic_near,
    );
    r.register(
        "kdp_broker_new_producer_ids",
        "Producer ids a broker holds that its previous answer did not, summed scan by scan (a broker's first answer is the baseline); rate() of it is the producer-id churn",
        tracker.broker_new.clone(),
    );
    r.register(
        "kdp_topic_new_producer_ids",
        "kdp_broker_new_producer_ids by topic, summed over the brokers holding its replicas",
        tracker.topic_new.clone(),
    );
}

#[cfg(test)]
mod tests;
