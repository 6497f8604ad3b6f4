//! The join: producer state joined with what the transaction coordinators
//! know ([`Joined`]), gathered over the wire.
//!
//! One scan: DescribeProducers of the selected partitions; the cluster's
//! settings (DescribeConfigs) and transaction protocol (ApiVersions);
//! ListTransactions on every broker (filtered by the producer ids seen, when
//! there are few); DescribeTransactions of each listed id at its
//! coordinator; a probe of whether the caller may describe any id; and the
//! high watermark and LSO of each partition with an open transaction.
//!
//! Every phase draws on the caller's one [`TimeBound`]: the describe
//! first, then side by side
//! the settings (configs, protocol), the coordinators' view (listing, then
//! descriptions) and the offsets, since none of these waits for another.
//! When time runs out the scan still returns what it has, with the phases
//! that did not finish in [`Joined::unfinished`].
//!
//! The describe's answers are read through each response's view
//! ([`describe_viewed`]): only the producers the caller reads are built
//! ([`JoinOptions::retain`]; `find-hanging` and `blocked` read the open
//! transactions alone, `describe --with-transactions` every producer).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::Client;
use kdp_client::describe::DescribeOptions;
use kdp_client::error::{Error, Result};
use kdp_client::txn::configs::{self, broker_configs};
use kdp_client::txn::describe::{describe_transactions_with, Described};
use kdp_client::txn::features::transaction_protocol;
use kdp_client::txn::list::{list_transactions_with, ListFilters};
use kdp_client::txn::offsets::offsets;
use kdp_domain::coordinator::{CoordinatorView, Description};
use kdp_domain::diagnose::hanging::is_candidate;
use kdp_domain::joined::{max_timeout, JoinPhase, Joined};
use kdp_domain::key_error::KeyError;
use kdp_domain::partition::{DescribeSummary, PartitionOutcome, TopicPartition};
use kdp_domain::protocol::TxnProtocol;
use kdp_domain::retained::Retain;
use kdp_wire::api::ApiKey;
use kdp_wire::messages::ProducerState;

use crate::clock::now_ms;
use crate::leaders::describe_viewed;
use crate::retained::Retained;

/// Producer ids up to this many are sent as a ListTransactions filter;
/// more, and every transaction is listed and filtered here.
const MAX_PRODUCER_ID_FILTERS: usize = 10_000;

/// What the join covers.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    /// The partitions, broker and batching, as for `describe`.
    pub describe: DescribeOptions,
    /// Only look up producers with an open transaction (find-hanging);
    /// otherwise every transactional producer seen (describe).
    pub open_only: bool,
    /// Which of them the coordinators are asked about and whose partitions'
    /// offsets are read.
    pub lookups: Lookups,
    /// Which producers [`Joined::partitions`] keeps (every one unless the
    /// caller reads fewer).
    pub retain: Retain,
}

/// Which producers the join looks up after the describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lookups {
    /// Every one `open_only` selects.
    #[default]
    All,
    /// Only Kafka's find-hanging candidates ([`is_candidate`]): open
    /// transactions whose producer has been idle longer than the maximum
    /// transaction timeout, this one if given, else the brokers' (read
    /// first), else Kafka's default. Only their producers are looked up and
    /// only their partitions' offsets read; every other producer is
    /// [`Coordinator::Unseen`](kdp_domain::diagnose::flags::Coordinator::Unseen).
    Candidates {
        /// The threshold (ms), when the caller sets it.
        max_timeout_ms: Option<i64>,
    },
}

impl JoinOptions {
    /// A join over `describe`'s selection, every producer `open_only`
    /// selects looked up.
    pub fn new(describe: DescribeOptions, open_only: bool) -> Self {
        JoinOptions {
            describe,
            open_only,
            lookups: Lookups::All,
            retain: Retain::Every,
        }
    }

    /// The same join, keeping only the producers `retain` says.
    pub fn retaining(self, retain: Retain) -> Self {
        JoinOptions { retain, ..self }
    }

    /// The same join, looking up Kafka's find-hanging candidates only.
    pub fn candidates_only(self, max_timeout_ms: Option<i64>) -> Self {
        JoinOptions {
            lookups: Lookups::Candidates { max_timeout_ms },
            ..self
        }
    }
}

/// A transactional id nobody uses: DescribeTransactions of it answers
/// TRANSACTIONAL_ID_NOT_FOUND to a caller that may describe any id, and an
/// authorization error to one whose ACLs do not cover arbitrary ids.
fn probe_id(now_ms: i64) -> String {
    format!("__kdp-acl-probe-{now_ms}-{}", std::process::id())
}

/// What the coordinators' lookup read, kept for a later read in the same
/// run (`kdp owners`' column beside `blocked` and `find-hanging`), which
/// then asks none of it again.
#[derive(Debug, Clone, Default)]
pub struct TxnRead {
    /// Every id ListTransactions listed (unfiltered) on the brokers that
    /// answered, and the brokers whose ListTransactions failed; `None`
    /// when the listing was filtered by producer id.
    pub listed: Option<Listed>,
    /// DescribeTransactions' answer for each id the join described.
    pub described: BTreeMap<String, Described>,
}

/// Every id listed, and the brokers whose ListTransactions failed.
pub type Listed = (BTreeSet<String>, Vec<(i32, KeyError)>);

/// What [`join_keeping`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing ([`join`]).
    Nothing,
    /// The descriptions; the listing stays filtered by producer id, as a
    /// later read may need no listing (`find-hanging` shows an owner only
    /// for the rows it finds).
    Descriptions,
    /// Every transaction listed (unfiltered) and the descriptions: a later
    /// read needs the listing (`blocked` names each pinning id's owner).
    Everything,
}

/// Runs the scan within `bound`. Fails only if the cluster cannot be
/// reached at all (the first metadata request).
pub async fn join(client: &Arc<Client>, opts: &JoinOptions, bound: &TimeBound) -> Result<Joined> {
    scan(client, opts, Keep::Nothing, bound)
        .await
        .map(|(j, _)| j)
}

/// [`join`], keeping what `keep` says ([`TxnRead`]; `None` when no lookup
/// ran or the listing failed) for a later read of the same ids.
pub async fn join_keeping(
    client: &Arc<Client>,
    opts: &JoinOptions,
    keep: Keep,
    bound: &TimeBound,
) -> Result<(Joined, Option<TxnRead>)> {
    scan(client, opts, keep, bound).await
}

async fn scan(
    client: &Arc<Client>,
    opts: &JoinOptions,
    keep: Keep,
    bound: &TimeBound,
) -> Result<(Joined, Option<TxnRead>)> {
    let now_ms = now_ms();
    // each answer read through its response's view: only the producers
    // the join retains are built
    let mut retained = Retained::new(opts.retain, opts.open_only);
    let summary =
        describe_viewed(client.clone(), &opts.describe, bound, |a| retained.add(a)).await?;
    let (partitions, unkept_writes) = retained.finish();
    let described_out = ran_out(bound.is_past(), partitions.iter().map(|o| &o.result));
    let (mut joined, kept) =
        lookups(client, opts, now_ms, partitions, summary, keep, bound).await?;
    joined.unkept_writes = unkept_writes;
    if described_out {
        joined.unfinished.insert(0, JoinPhase::DescribeProducers);
    }
    Ok((joined, kept))
}

/// [`join`] of partitions the caller has already described (the exporter's
/// scan feeds its own DescribeProducers answers, so the cluster is described
/// once): every lookup after the describe, within `bound`. `partitions` may
/// hold only the producers the lookups need (those with an open
/// transaction and, with `open_only` false, the transactional ones).
/// `now_ms` is when the describe started.
///
/// The phases that do not depend on each other run at once (the brokers'
/// configs and protocol, the coordinators' view, the offsets). ListTransactions
/// gets half of what is left, so a broker that never answers it leaves time
/// for DescribeTransactions and comes back as a listing error in time
/// ([`TimeBound::share`]).
pub async fn join_described(
    client: &Arc<Client>,
    opts: &JoinOptions,
    now_ms: i64,
    partitions: Vec<PartitionOutcome>,
    summary: DescribeSummary,
    bound: &TimeBound,
) -> Result<Joined> {
    lookups(
        client,
        opts,
        now_ms,
        partitions,
        summary,
        Keep::Nothing,
        bound,
    )
    .await
    .map(|(j, _)| j)
}

/// [`join_described`], keeping what `keep` says of the lookup's read.
async fn lookups(
    client: &Arc<Client>,
    opts: &JoinOptions,
    now_ms: i64,
    partitions: Vec<PartitionOutcome>,
    summary: DescribeSummary,
    keep: Keep,
    bound: &TimeBound,
) -> Result<(Joined, Option<TxnRead>)> {
    let dopts = opts.describe.driver_options();
    let mut unfinished = Vec::new();

    // v1 until the brokers' features say otherwise (below)
    let mut joined = Joined {
        partitions,
        summary,
        ..Joined::new(now_ms, TxnProtocol::V1)
    };

    // Only candidates: the threshold first (the brokers' when not given),
    // then the lookups of what it selects; otherwise everything at once.
    let (read_first, threshold) = match opts.lookups {
        Lookups::All => (None, None),
        Lookups::Candidates {
            max_timeout_ms: Some(t),
        } => (None, Some(t)),
        Lookups::Candidates {
            max_timeout_ms: None,
        } => {
            let s = settings(client, &dopts, bound).await;
            let cluster = configs::max_ms(&s.0, configs::TRANSACTION_MAX_TIMEOUT_MS);
            let t = max_timeout(None, cluster).0;
            (Some(s), Some(t))
        }
    };
    joined.candidates_only = threshold;
    let selected = |p: &ProducerState| match threshold {
        Some(t) => is_candidate(p, now_ms, t),
        None => p.current_txn_start_offset >= 0,
    };

    // Producers to look up: with an open transaction (a candidate), or
    // (describe) every one that has written a transaction marker.
    let wanted: BTreeSet<i64> = joined
        .producers()
        .filter(|(_, _, p)| selected(p) || (!opts.open_only && p.coordinator_epoch >= 0))
        .map(|(_, _, p)| p.producer_id)
        .collect();
    let open: Vec<TopicPartition> = joined
        .producers()
        .filter(|(_, _, p)| selected(p))
        .map(|(t, p, _)| (t.to_string(), p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    // none of these waits for another
    let view = async {
        if wanted.is_empty() {
            return (
                Ok((CoordinatorView::default(), Vec::new())),
                Vec::new(),
                None,
            );
        }
        look_up(client, now_ms, &wanted, keep, &dopts, bound).await
    };
    let blocked = async {
        if open.is_empty() {
            return (BTreeMap::new(), false);
        }
        let o = offsets(client, open, &dopts, bound).await;
        let out = ran_out(bound.is_past(), o.values());
        (o, out)
    };
    let ((configs, configs_out, protocol), (view, view_out, kept), (offsets, offsets_out)) =
        match read_first {
            Some(s) => {
                let (view, blocked) = tokio::join!(view, blocked);
                (s, view, blocked)
            }
            None => tokio::join!(settings(client, &dopts, bound), view, blocked),
        };

    if configs_out {
        unfinished.push(JoinPhase::DescribeConfigs);
    }
    joined.cluster_max_timeout_ms = configs::max_ms(&configs, configs::TRANSACTION_MAX_TIMEOUT_MS);
    joined.producer_id_expiration_ms =
        configs::max_ms(&configs, configs::PRODUCER_ID_EXPIRATION_MS);
    match protocol {
        Ok(p) => joined.protocol = p,
        Err(e) => {
            tracing::debug!(error = %e, "transaction protocol unknown; taking v1");
            if matches!(e, Error::Deadline { .. }) {
                unfinished.push(JoinPhase::ApiVersions);
            }
        }
    }
    let (view, listing_errors) = view?;
    joined.view = view;
    joined.listing_errors = listing_errors;
    unfinished.extend(view_out);
    if offsets_out {
        unfinished.push(JoinPhase::ListOffsets);
    }
    joined.offsets = offsets;
    unfinished.sort();
    unfinished.dedup();
    joined.unfinished = unfinished;
    Ok((joined, kept))
}

/// Each broker's configs, or why it did not answer.
type BrokerConfigs = BTreeMap<i32, std::result::Result<configs::BrokerConfig, KeyError>>;

/// The brokers' configs kdp reads, whether they ran out of time, and the
/// cluster's transaction protocol.
async fn settings(
    client: &Arc<Client>,
    dopts: &DriverOptions,
    bound: &TimeBound,
) -> (BrokerConfigs, bool, Result<TxnProtocol>) {
    let keys = [
        configs::TRANSACTION_MAX_TIMEOUT_MS,
        configs::PRODUCER_ID_EXPIRATION_MS,
    ];
    let configs = async {
        let c = broker_configs(client, &keys, dopts, bound).await;
        let out = match &c {
            Ok(c) => ran_out(bound.is_past(), c.values()),
            Err(_) => bound.is_past(),
        };
        (c.unwrap_or_default(), out)
    };
    let protocol = bound.run("ApiVersions", transaction_protocol(client));
    let ((configs, out), protocol) = tokio::join!(configs, protocol);
    (configs, out, protocol)
}

/// Whether a phase ran out of time: the deadline had passed when it ended
/// (`past`) and some of its keys have no answer.
fn ran_out<'a, V: 'a>(
    past: bool,
    results: impl IntoIterator<Item = &'a std::result::Result<V, KeyError>>,
) -> bool {
    past && results.into_iter().any(|r| r.is_err())
}

/// The coordinators' view of `wanted`, the brokers whose listing failed,
/// the phases that ran out of time, and (when kept) the read itself.
type LookedUp = (
    Result<(CoordinatorView, Vec<(i32, KeyError)>)>,
    Vec<JoinPhase>,
    Option<TxnRead>,
);

async fn look_up(
    client: &Arc<Client>,
    now_ms: i64,
    wanted: &BTreeSet<i64>,
    keep: Keep,
    dopts: &DriverOptions,
    bound: &TimeBound,
) -> LookedUp {
    let mut unfinished = Vec::new();
    // every id listed, kept for the later read's siblings
    let every = keep == Keep::Everything;
    let filters = ListFilters {
        producer_ids: if !every && wanted.len() <= MAX_PRODUCER_ID_FILTERS {
            wanted.iter().copied().collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    let half = bound.share(1, 2);
    // only the wanted producers' ids are kept of the listing (every id
    // when the read is kept)
    let listings = match list_transactions_with(client, &filters, dopts, &half, |t| {
        let pid = t.producer_id();
        (every || wanted.contains(&pid)).then(|| (pid, t.transactional_id().to_owned()))
    })
    .await
    {
        Ok(l) => l,
        Err(e) if half.is_past() => {
            // out of time before any broker was asked: nothing is listed,
            // and the view says the listing is incomplete
            tracing::debug!(error = %e, "no time left for ListTransactions");
            unfinished.extend([JoinPhase::ListTransactions, JoinPhase::DescribeTransactions]);
            return (
                Ok((CoordinatorView::default(), Vec::new())),
                unfinished,
                None,
            );
        }
        Err(e) => return (Err(e), unfinished, None),
    };
    if ran_out(half.is_past(), listings.values()) {
        unfinished.push(JoinPhase::ListTransactions);
    }
    let mut listed: HashMap<i64, String> = HashMap::new();
    // the broker that listed an id coordinates it (no FindCoordinator)
    let mut coordinators: BTreeMap<String, i32> = BTreeMap::new();
    let mut listing_errors = Vec::new();
    let mut every_id = BTreeSet::new();
    for (broker, l) in listings {
        match l {
            Ok(l) => {
                for (pid, id) in l.transactions.into_iter().flatten() {
                    if every {
                        every_id.insert(id.clone());
                        if !wanted.contains(&pid) {
                            continue;
                        }
                    }
                    coordinators.insert(id.clone(), broker);
                    listed.insert(pid, id);
                }
            }
            Err(e) => listing_errors.push((broker, e)),
        }
    }
    let ids: BTreeSet<String> = listed.values().cloned().collect();
    let unlisted = wanted.iter().any(|pid| !listed.contains_key(pid));
    let probe = probe_id(now_ms);
    let mut to_describe: Vec<String> = ids.into_iter().collect();
    if unlisted {
        to_describe.push(probe.clone());
    }
    let known = ids_known(&to_describe, &coordinators);
    let mut described = BTreeMap::new();
    describe_transactions_with(
        client,
        to_describe,
        known,
        dopts,
        bound,
        |t| t.into_owned(),
        |batch| {
            for r in batch.results {
                described.insert(
                    r.key,
                    Described {
                        coordinator: r.broker,
                        result: r.result,
                    },
                );
            }
        },
    )
    .await;
    if ran_out(bound.is_past(), described.values().map(|d| &d.result)) {
        // named by the step that stalled: the coordinators' lookup, or the
        // describe itself
        let lookup = described.values().any(|d| {
            d.result
                .as_ref()
                .is_err_and(|e| e.stalled == Some(ApiKey::FIND_COORDINATOR))
        });
        unfinished.push(if lookup {
            JoinPhase::FindCoordinator
        } else {
            JoinPhase::DescribeTransactions
        });
    }
    let mut descriptions = HashMap::new();
    let mut may_describe_any = false;
    let mut probe_failed = None;
    let mut kept = (keep != Keep::Nothing).then(|| TxnRead {
        listed: every.then(|| (every_id, listing_errors.clone())),
        described: BTreeMap::new(),
    });
    for (id, d) in described {
        if let Some(k) = kept.as_mut().filter(|_| id != probe) {
            k.described.insert(id.clone(), d.clone());
        }
        let desc = Description::of(d.result);
        if id == probe {
            may_describe_any = desc == Description::NotFound;
            if let Description::Failed(name) = desc {
                probe_failed = Some(name);
            }
        } else {
            descriptions.insert(id, desc);
        }
    }
    let view = CoordinatorView {
        listed,
        listing_complete: listing_errors.is_empty(),
        may_describe_any,
        probe_failed,
        descriptions,
    };
    (Ok((view, listing_errors)), unfinished, kept)
}

/// The listing broker of each id to describe that has one.
fn ids_known(ids: &[String], coordinators: &BTreeMap<String, i32>) -> Vec<(String, i32)> {
    ids.iter()
        .filter_map(|id| Some((id.clone(), *coordinators.get(id)?)))
        .collect()
}
