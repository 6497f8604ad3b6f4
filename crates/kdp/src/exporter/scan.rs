//! The scan loop: one task, so scans never overlap; each scan is the same
//! leaders' describe as `kdp describe`, read through each response's view
//! (kdp-workflows' `leaders::describe_viewed`) and folded into per-key
//! counts as results stream in, keeping only the producers the diagnosis
//! needs; the diagnosis then works from those (no second describe), and
//! the whole is published as a new snapshot. With `--producer-ids`, the
//! every-replica scan is that describe too: each leader's answer is taken
//! from it as it arrives (kdp-workflows' `leaders`), so each replica is
//! asked once a scan, and the diagnosis starts when it ends. Each scan has one
//! [`TimeBound`], made when it starts from `--timeout` (at most the
//! interval, by default): connecting, describing, the diagnosis and the
//! producer-id scan all draw on it, as a command's steps do.
//!
//! A scan that fails (the cluster unreachable) publishes nothing new: the
//! last good values stay, `kdp_scan_stale` says so and the error is counted.
//! The client is kept across scans (its connections follow broker restarts
//! and leadership moves through metadata refreshes) and rebuilt after a
//! failed scan.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kdp_client::txn::features::transaction_protocol;
use kdp_client::{BrokerAddress, Client, ClientConfig, DescribeOptions, TimeBound, TopicSelection};
use kdp_domain::diagnose::summary::Diagnosis;
use kdp_domain::protocol::TxnProtocol;
use kdp_domain::PartitionOutcome;
use kdp_workflows::leaders::{describe_viewed, every_replica_sharing_leaders, LeaderAnswer};
use kdp_workflows::replicas::ProducerRef;
use tokio::sync::watch;
use tokio::time::Instant;

use super::aggregate::{Aggregate, Counts, Key};
use super::diagnosis::{Diagnose, Scanned};
use super::metrics::{self, Health};
use super::pressure::{self, PressureConfig, Tracker};
use super::shared::{stopped, Shared};

/// What to scan and how.
pub struct ScanConfig {
    pub bootstrap: Vec<BrokerAddress>,
    pub client: ClientConfig,
    /// One request's bound (the properties' `request.timeout.ms`).
    pub request_timeout: Duration,
    /// Bound on one scan, connecting and the diagnosis included: each
    /// scan's [`TimeBound`] is made from it.
    pub timeout: Duration,
    pub interval: Duration,
    pub topics: Option<Vec<TopicSelection>>,
    pub per_partition: bool,
    /// Partitions per DescribeProducers request. The exporter's peak memory
    /// is the responses in flight (one per broker), so this, not the size of
    /// the cluster, bounds it.
    pub max_partitions_per_request: usize,
    /// `--producer-ids`: every replica asked for producer-id pressure
    /// ([`super::pressure`]), beside the diagnosis.
    pub producer_ids: Option<PressureConfig>,
    /// `--owners`: every transactional id's owner ([`super::owners`]),
    /// beside the diagnosis.
    pub owners: bool,
}

/// Scans every `interval` (measured start to start; a scan longer than the
/// interval delays the next, never overlaps it) until `shutdown` turns true.
pub async fn run(
    config: ScanConfig,
    shared: Arc<Shared>,
    diagnose: Arc<dyn Diagnose>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut scanner = Scanner {
        pressure: config.producer_ids.map(Tracker::new),
        config,
        shared,
        diagnose,
        client: None,
        previous: BTreeMap::new(),
    };
    loop {
        let started = Instant::now();
        tokio::select! {
            _ = scanner.scan() => {}
            _ = stopped(&mut shutdown) => break,
        }
        let next = started + scanner.config.interval;
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {}
            _ = stopped(&mut shutdown) => break,
        }
    }
}

struct Scanner {
    config: ScanConfig,
    shared: Arc<Shared>,
    diagnose: Arc<dyn Diagnose>,
    client: Option<Arc<Client>>,
    previous: BTreeMap<Key, Counts>,
    /// With `--producer-ids`: what producer-id pressure keeps across scans.
    pressure: Option<Tracker>,
}

/// Counts scans in flight; a second one at the same time is an overlap.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(n: &'a AtomicUsize, health: &Health) -> InFlight<'a> {
        if n.fetch_add(1, Ordering::SeqCst) > 0 {
            health.overlaps.inc();
        }
        InFlight(n)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

enum Outcome {
    Ok,
    Partial,
    Failed(&'static str),
}

impl Scanner {
    async fn scan(&mut self) {
        let shared = self.shared.clone();
        let health = &shared.health;
        let _guard = InFlight::enter(&shared.scans_in_flight, health);
        let start = Instant::now();
        let outcome = self.scan_once().await;
        health.scan_duration.observe(start.elapsed().as_secs_f64());
        let result = match outcome {
            Outcome::Ok => "ok",
            Outcome::Partial => "partial",
            Outcome::Failed(error) => {
                health
                    .scan_errors
                    .get_or_create(&vec![("error", error.to_string())])
                    .inc();
                health.stale.set(1);
                // a fresh client next time: bootstrap again from the list
                self.client = None;
                "failed"
            }
        };
        health
            .scans
            .get_or_create(&vec![("result", result.to_string())])
            .inc();
    }

    async fn scan_once(&mut self) -> Outcome {
        // one bound for the whole scan: connecting, describing, diagnosing
        let bound =
            TimeBound::after(self.config.timeout).with_request_timeout(self.config.request_timeout);
        let client = match &self.client {
            Some(c) => c.clone(),
            None => {
                let bootstrap = self.config.bootstrap.clone();
                match Client::connect_within(bootstrap, self.config.client.clone(), &bound).await {
                    Ok(c) => {
                        let c = Arc::new(c);
                        self.client = Some(c.clone());
                        c
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "scan failed: cannot reach the cluster");
                        return Outcome::Failed(error_name(&e));
                    }
                }
            }
        };
        // what the diagnosis keeps may depend on the protocol (cached
        // ApiVersions, no request when the connection is up)
        let protocol = if self.diagnose.needs_protocol() {
            bound
                .run("ApiVersions", transaction_protocol(&client))
                .await
                .unwrap_or(TxnProtocol::V1)
        } else {
            TxnProtocol::V1
        };
        let opts = DescribeOptions {
            topics: self.config.topics.clone(),
            max_partitions_per_request: self.config.max_partitions_per_request,
            ..DescribeOptions::default()
        };
        let now_ms = kdp_workflows::clock::now_ms();
        let leaders = Leaders {
            agg: Aggregate::new(self.config.per_partition),
            kept: Vec::new(),
        };
        let keeps = {
            let diagnose = self.diagnose.clone();
            move |p: &ProducerRef<'_>| diagnose.keeps(p, protocol)
        };
        // with `--producer-ids` or `--compare-replicas`, every replica is
        // asked once for the leaders' view and the rest; otherwise the
        // leaders only
        let compare = self.diagnose.compares_replicas();
        let (result, leaders, producer_ids, replicas) = match self.pressure.as_mut() {
            Some(tracker) => {
                let shared = Arc::new(Mutex::new(leaders));
                let into = shared.clone();
                let sink = move |a: LeaderAnswer<'_>| lock(&into).add(a, &keeps);
                let r = tracker
                    .scan_sharing_leaders(&client, &opts, &bound, compare, sink)
                    .await;
                let leaders = std::mem::take(&mut *lock(&shared));
                match r {
                    Ok((scanned, summary, every)) => {
                        (Ok(summary), leaders, Some(scanned), every.map(Ok))
                    }
                    Err(e) => (Err(e), leaders, None, None),
                }
            }
            None if compare => {
                let shared = Arc::new(Mutex::new(leaders));
                let into = shared.clone();
                let sink = move |a: LeaderAnswer<'_>| lock(&into).add(a, &keeps);
                let r = every_replica_sharing_leaders(&client, &opts, &bound, sink).await;
                let leaders = std::mem::take(&mut *lock(&shared));
                match r {
                    Ok((every, summary)) => (Ok(summary), leaders, None, Some(Ok(every))),
                    Err(e) => (Err(e), leaders, None, None),
                }
            }
            None => {
                let mut leaders = leaders;
                // read through each response's view: only what `keeps` wants is built
                let sink = |a: LeaderAnswer<'_>| leaders.add(a, &keeps);
                let r = describe_viewed(client.clone(), &opts, &bound, sink).await;
                (r, leaders, None, None)
            }
        };
        let summary = match result {
            Ok(summary) => summary,
            Err(e) => {
                tracing::warn!(error = %e, "scan failed");
                return Outcome::Failed(error_name(&e));
            }
        };
        let Leaders { agg, kept } = leaders;

        let scanned = Scanned {
            now_ms,
            partitions: kept,
            summary,
            replicas,
        };
        let diagnosis = self.diagnose.diagnose(client.clone(), scanned, &bound);
        // and the owners of every transactional id, beside the diagnosis
        let owners = async {
            if !self.config.owners {
                return None;
            }
            let dopts = kdp_client::admin::DriverOptions::default();
            let scope = kdp_workflows::owners::Scope::default();
            Some(kdp_workflows::owners::read_owners(&client, &scope, now_ms, &dopts, &bound).await)
        };
        let (diagnosis, owners) = tokio::join!(diagnosis, owners);
        let owners = match owners {
            Some(Ok(read)) => Some(read.judged),
            Some(Err(e)) => {
                tracing::warn!(error = %e, "owners not read");
                None
            }
            None => None,
        };
        let owners_partial = self.config.owners
            && !owners
                .as_ref()
                .is_some_and(kdp_domain::owners::Owners::decided);
        let pressure_partial = producer_ids
            .as_ref()
            .is_some_and(pressure::Scanned::partial);
        let health = &self.shared.health;
        for (error, n) in &agg.errors {
            health
                .scan_errors
                .get_or_create(&vec![("error", error.to_string())])
                .inc_by(*n);
        }
        let (partitions, failed) = (agg.partitions, agg.failed_partitions);
        let (failed_keys, failed_topics) = (agg.failed_keys.clone(), agg.failed_topics.clone());
        let counts = agg.merge_over(&self.previous);
        // keys this scan did not describe: the last scan's counts, and no
        // diagnosis of this one (it did not see them)
        let unchecked: BTreeSet<Key> = counts
            .keys()
            .filter(|k| failed_keys.contains(k) || failed_topics.contains(&k.topic))
            .cloned()
            .collect();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut registry = metrics::snapshot_of_scan(
            &counts,
            diagnosis.as_ref(),
            &unchecked,
            self.config.per_partition,
            now.as_millis() as i64,
            health,
        );
        if let Some(tracker) = &self.pressure {
            pressure::register(&mut registry, producer_ids.as_ref(), tracker);
        }
        super::owners::register(&mut registry, owners.as_ref());
        let diagnosed = diagnosis.as_ref().is_some_and(Diagnosis::is_complete);
        // published before the shared gauges say what it holds: a scrape
        // that sees them new also sees this snapshot
        self.shared.publish(registry);
        health.scan_partitions.set(partitions as i64);
        health.scan_partitions_failed.set(failed as i64);
        health.stale.set(i64::from(failed > 0));
        health.diagnosis_available.set(i64::from(diagnosed));
        health.last_successful_scan.set(now.as_secs_f64());
        self.previous = counts;
        tracing::info!(
            partitions,
            failed,
            diagnosed,
            keys = self.previous.len(),
            "scan done"
        );
        if failed > 0 || !diagnosed || pressure_partial || owners_partial {
            Outcome::Partial
        } else {
            Outcome::Ok
        }
    }
}

/// The leaders' view of one scan as it arrives: the counts, and each
/// partition with the producers the diagnosis keeps.
#[derive(Default)]
struct Leaders {
    agg: Aggregate,
    kept: Vec<PartitionOutcome>,
}

impl Leaders {
    fn add(&mut self, a: LeaderAnswer<'_>, keeps: impl Fn(&ProducerRef<'_>) -> bool) {
        self.agg.add_answer(&a);
        self.kept.push(a.keeping(keeps, |_| {}));
    }
}

/// The lock of what scan tasks share; a panic elsewhere leaves it usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The Kafka error name a failed scan is counted under. A bootstrap that
/// stopped at an error no retry fixes (a refused SASL login, a TLS failure)
/// is named by that error, not as a network failure.
fn error_name(e: &kdp_client::Error) -> &'static str {
    let code = match e {
        kdp_client::Error::Bootstrap { attempts } => attempts
            .iter()
            .find(|a| a.is_fatal())
            .map_or(e.kafka_code(), kdp_client::Error::kafka_code),
        _ => e.kafka_code(),
    };
    code.label()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod pressure_tests;
