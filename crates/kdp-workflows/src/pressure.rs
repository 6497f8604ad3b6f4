//! The scan behind [`kdp_domain::diagnose::pressure`]: each broker's
//! `producer.id.expiration.ms` (DescribeConfigs), then every replica's
//! producers (DescribeProducers of each broker) folded as they arrive, and
//! the transactional ids (ListTransactions), all within one [`TimeBound`].
//!
//! Cost in requests: one DescribeConfigs per broker; per broker, one
//! DescribeProducers per `max_partitions_per_request` partition replicas it
//! hosts (so the replication factor times a leaders-only describe); with
//! [`ScanOptions::transactions`], one ListTransactions per broker and one
//! DescribeTransactions per coordinator of an id in `PrepareEpochFence`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::describe::{resolve, DescribeOptions};
use kdp_client::error::Result;
use kdp_client::txn::configs::{broker_configs, PRODUCER_ID_EXPIRATION_MS};
use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::list::{list_transactions, ListFilters};
use kdp_domain::diagnose::pressure::{EpochFence, Fold, Pressure};
use kdp_domain::diagnose::replicas::ReplicaError;
use kdp_domain::partition::{DescribeSummary, TopicPartition};
use kdp_domain::time::known_ms;
use kdp_wire::TxnState;

use crate::clock::now_ms;
use crate::leaders::{LeaderAnswer, LeaderTap};
use crate::replicas::{each_replica_settling, ComparedReplicas, Comparer, Producers};

/// How long a lean scan waits for the brokers' settings before asking for
/// their producers ([`ScanOptions::lean`]).
const LEAN_SETTINGS_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What to compute besides the counts.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Epochs within this many of 32767 are near their end.
    pub epoch_margin: i32,
    /// How many topics [`Pressure::top_topics`] ranks.
    pub top: usize,
    /// Ask only these brokers (empty: all).
    pub only_brokers: BTreeSet<i32>,
    /// List the transactional ids (prefixes, names of producers near the
    /// end of their epochs, fences past their timeout).
    pub transactions: bool,
    /// Keep no more than the exporter publishes ([`Fold::lean`]): the
    /// brokers' settings are asked first and waited for up to a second
    /// (then beside the producers), each goes to the fold as soon as it is
    /// read, so the producers that arrive after it keep no idle time, no
    /// median idle time is computed, and the ids held come as
    /// [`Pressure::held_sets`](kdp_domain::diagnose::pressure::Pressure::held_sets).
    pub lean: bool,
    /// Also keep every replica's producers (owned) and what could not be
    /// asked, for a comparison ([`SharedScan`]): the exporter's
    /// `--compare-replicas` reads the same pass.
    pub replicas: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            epoch_margin: kdp_domain::diagnose::pressure::DEFAULT_EPOCH_MARGIN,
            top: 10,
            only_brokers: BTreeSet::new(),
            transactions: true,
            lean: false,
            replicas: false,
        }
    }
}

/// The report, and which broker failed at what.
#[derive(Debug, Default)]
pub struct Scan {
    /// The report.
    pub pressure: Pressure,
    /// Brokers whose whole scan failed, and why.
    pub failed: BTreeMap<i32, Vec<String>>,
    /// Brokers that failed some request (a partition, configs, listing).
    pub incomplete: BTreeMap<i32, Vec<String>>,
    /// Scans that ended without saying which broker (a lost task).
    pub lost: usize,
    /// Partition replicas that answered.
    pub answered: usize,
}

/// What [`scan_sharing_leaders`] read: the scan (`Err` as [`scan`]'s), the
/// leaders' counts, and with [`ScanOptions::replicas`] every partition's
/// replicas compared and what could not be asked, as
/// [`compare_every_replica`](crate::replicas::compare_every_replica)
/// answers (whether or not the scan's other requests failed).
pub type SharedScan = (Result<Scan>, DescribeSummary, Option<ComparedReplicas>);

/// Scans the partitions `opts` selects on every broker (or those of
/// `options.only_brokers`). `Err`: the cluster could not be listed.
pub async fn scan(
    client: &SharedClient,
    opts: &DescribeOptions,
    options: &ScanOptions,
    bound: &TimeBound,
) -> Result<Scan> {
    let (scan, _, _) = run(client, opts, options, bound, None::<fn(LeaderAnswer<'_>)>).await?;
    scan
}

/// A [`scan`] that is also the leaders' describe of the same partitions:
/// each partition's leader's answer goes to `leaders` as
/// [`describe_producers`](kdp_client::describe::describe_producers) would
/// report it (what no leader answered is described after, the leaders'
/// way: [`LeaderTap`]), so the replicas are asked once for both.
/// `Err`: the selection could not be looked up (nothing was asked); the
/// scan's own `Err` is [`scan`]'s, the leaders' counts beside it.
pub async fn scan_sharing_leaders<S>(
    client: &SharedClient,
    opts: &DescribeOptions,
    options: &ScanOptions,
    bound: &TimeBound,
    leaders: S,
) -> Result<SharedScan>
where
    S: FnMut(LeaderAnswer<'_>) + Send + 'static,
{
    let (scan, summary, every) = run(client, opts, options, bound, Some(leaders)).await?;
    Ok((scan, summary.unwrap_or_default(), every))
}

/// What [`run`] read: [`SharedScan`], the leaders' counts only when shared.
type Ran = (
    Result<Scan>,
    Option<DescribeSummary>,
    Option<ComparedReplicas>,
);

/// [`scan`], and with `leaders` [`scan_sharing_leaders`]. The outer `Err`:
/// the selection could not be looked up.
async fn run<S>(
    client: &SharedClient,
    opts: &DescribeOptions,
    options: &ScanOptions,
    bound: &TimeBound,
    leaders: Option<S>,
) -> Result<Ran>
where
    S: FnMut(LeaderAnswer<'_>) + Send + 'static,
{
    let dopts = opts.driver_options();
    let mut s = Scan::default();
    let only: Vec<i32> = options.only_brokers.iter().copied().collect();
    let kept = |b: &i32| only.is_empty() || only.contains(b);
    let configs = broker_configs(client, &[PRODUCER_ID_EXPIRATION_MS], &dopts, bound);
    let mut configs = std::pin::pin!(configs);
    let mut fold = Fold::new(now_ms(), options.epoch_margin);
    let mut early = None;
    if options.lean {
        fold = fold.lean();
        // the settings first (one small request per broker), so that each
        // producer's expiry is counted as it arrives; not answered within
        // a moment, they come beside the producers as without `lean`
        if let Ok(c) = tokio::time::timeout(LEAN_SETTINGS_WAIT, configs.as_mut()).await {
            if let Ok(c) = &c {
                for (b, ms) in expirations(c, kept) {
                    fold.expiration(b, ms);
                }
            }
            early = Some(c);
        }
    }
    let fold = Arc::new(Mutex::new(fold));
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let replicas = async {
        // one lookup for every broker (and the leaders, when shared)
        let resolved = resolve(client, opts, bound).await?;
        let tap = leaders.map(|sink| Arc::new(LeaderTap::new(&resolved, sink)));
        let (fold, answered, into) = (fold.clone(), answered.clone(), tap.clone());
        let collect = options.replicas.then(|| Comparer::new(&resolved, &only));
        let (kept, done) = (collect.clone(), collect.clone());
        let sink = move |b, topic: &str, partition, ps: Producers<'_>| {
            if let Some(c) = &kept {
                c.add(b, topic, partition, ps);
            }
            answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            {
                let mut fold = fold.lock().unwrap_or_else(PoisonError::into_inner);
                match ps {
                    Producers::Viewed(v) => fold.add_each(b, topic, v.iter()),
                    Producers::Owned(ps) => fold.add(b, topic, ps),
                }
            }
            if let Some(tap) = &into {
                tap.answer(b, topic, partition, ps);
            }
        };
        // each partition compared once its replicas have all answered
        let done = move |b, tp: &TopicPartition| {
            if let Some(c) = &done {
                c.settled(b, tp);
            }
        };
        let r = each_replica_settling(client, opts, bound, &only, resolved, sink, done).await?;
        Ok::<_, kdp_client::error::Error>((r, tap, collect))
    };
    // the settings beside the producers: a broker slow to answer them
    // costs its expiry forecast, not the scan; a lean fold takes them as
    // soon as they come (usually long before the producers)
    let configs = async {
        if let Some(c) = early {
            return c;
        }
        let c = configs.await;
        if let (true, Ok(c)) = (options.lean, &c) {
            let mut f = fold.lock().unwrap_or_else(PoisonError::into_inner);
            for (b, ms) in expirations(c, kept) {
                f.expiration(b, ms);
            }
        }
        c
    };
    let listing = async {
        if options.transactions {
            Some(list_transactions(client, &ListFilters::default(), &dopts, bound).await)
        } else {
            None
        }
    };
    let (replicas, configs, listing) = tokio::join!(replicas, configs, listing);
    let ((asked, errors), tap, collect) = replicas?;
    let every = collect.map(|c| (c.take(), errors.clone()));
    let leaders = match tap {
        Some(tap) => Some(tap.finish(client, opts, bound, &errors).await?),
        None => None,
    };
    // what follows fails on its own: the leaders' view stands without it
    let scan = async {
        let mut fold = std::mem::replace(
            &mut *fold.lock().unwrap_or_else(PoisonError::into_inner),
            Fold::new(0, 0),
        );
        s.answered = answered.load(std::sync::atomic::Ordering::Relaxed);
        for b in asked {
            fold.broker(b);
        }
        let configs = configs?;
        let expiration_ms = expirations(&configs, kept);
        for (b, c) in configs.into_iter().filter(|(b, _)| kept(b)) {
            if let Err(e) = c {
                fold.incomplete(b);
                s.incomplete
                    .entry(b)
                    .or_default()
                    .push(format!("DescribeConfigs: {}", e.name()));
            }
        }
        for e in errors {
            match e {
                ReplicaError::Broker { broker, error } => {
                    fold.failed_broker(broker);
                    s.failed
                        .entry(broker)
                        .or_default()
                        .push(format!("DescribeProducers: {error}"));
                }
                ReplicaError::Partition {
                    partition: (t, p),
                    broker,
                    error,
                } => {
                    fold.failed_partition(broker, &t);
                    s.incomplete
                        .entry(broker)
                        .or_default()
                        .push(format!("DescribeProducers {t}-{p}: {}", error.name()));
                }
                ReplicaError::Lost => {
                    fold.lost();
                    s.lost += 1;
                }
            }
        }
        let mut transactional_ids = BTreeMap::new();
        let mut fences = Vec::new();
        if let Some(listing) = listing {
            let mut fencing = Vec::new();
            for (b, l) in listing? {
                match l {
                    Ok(l) => {
                        for t in l.transactions {
                            if t.transaction_state.parse() == Ok(TxnState::PrepareEpochFence) {
                                fencing.push((t.transactional_id.clone(), t.producer_id, b));
                            }
                            transactional_ids.insert(t.producer_id, t.transactional_id);
                        }
                    }
                    Err(e) => {
                        if kept(&b) {
                            fold.incomplete(b);
                            s.incomplete
                                .entry(b)
                                .or_default()
                                .push(format!("ListTransactions: {}", e.name()));
                        }
                    }
                }
            }
            if !fencing.is_empty() {
                let ids = fencing.iter().map(|f| f.0.clone()).collect();
                let described = describe_transactions(client, ids, &dopts, bound).await;
                for (id, producer_id, coordinator) in fencing {
                    let why = match described.get(&id).map(|d| &d.result) {
                        Some(Ok(t)) => {
                            fences.push(EpochFence {
                                transactional_id: id,
                                producer_id,
                                coordinator,
                                transaction_start_time_ms: known_ms(t.transaction_start_time_ms),
                                transaction_timeout_ms: t.transaction_timeout_ms,
                            });
                            continue;
                        }
                        Some(Err(e)) => format!("DescribeTransactions {id}: {}", e.name()),
                        None => format!("DescribeTransactions {id}: no answer"),
                    };
                    fold.incomplete(coordinator);
                    s.incomplete.entry(coordinator).or_default().push(why);
                }
            }
        }
        s.pressure = fold.finish(&expiration_ms, &transactional_ids, options.top, &fences);
        // a broker that answered nothing at all: its failures are the whole scan's
        for b in s.pressure.brokers.iter().filter(|b| !b.answered) {
            if let Some(why) = s.incomplete.remove(&b.broker) {
                s.failed.entry(b.broker).or_default().extend(why);
            }
        }
        Ok(s)
    }
    .await;
    Ok((scan, leaders, every))
}

/// Each kept broker's `producer.id.expiration.ms`, where it was read.
fn expirations<E>(
    configs: &BTreeMap<i32, std::result::Result<BTreeMap<String, Option<String>>, E>>,
    kept: impl Fn(&i32) -> bool,
) -> BTreeMap<i32, i64> {
    configs
        .iter()
        .filter(|(b, _)| kept(b))
        .filter_map(|(b, c)| {
            let ms = c
                .as_ref()
                .ok()?
                .get(PRODUCER_ID_EXPIRATION_MS)?
                .as_deref()?
                .parse::<i64>()
                .ok()?;
            Some((*b, ms))
        })
        .collect()
}
