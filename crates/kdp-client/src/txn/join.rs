//! Producer state joined with what the transaction coordinators know: the
//! data behind `find-hanging` and `describe --with-transactions`.
//!
//! One scan: DescribeProducers of the selected partitions; the cluster's
//! settings (DescribeConfigs) and transaction protocol (ApiVersions);
//! ListTransactions on every broker (filtered by the producer ids seen, when
//! there are few); DescribeTransactions of each listed id at its
//! coordinator; a probe of whether the caller may describe any id; and the
//! high watermark and LSO of each partition with an open transaction.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kdp_wire::error_code;
use kdp_wire::messages::{ProducerState, TransactionState};

use crate::admin::{DriverOptions, KeyError, TopicPartition};
use crate::client::Client;
use crate::describe::{
    describe_producers, DescribeEvent, DescribeOptions, DescribeSummary, PartitionOutcome,
};
use crate::diagnose::flags::Coordinator;
use crate::diagnose::hanging::{CoordinatorView, Description};
use crate::diagnose::TxnProtocol;
use crate::error::Result;
use crate::txn::configs::{self, broker_configs};
use crate::txn::describe::describe_transactions;
use crate::txn::driver_options;
use crate::txn::features::transaction_protocol;
use crate::txn::list::{list_transactions, ListFilters};
use crate::txn::offsets::{offsets, Offsets};

/// Kafka's default `transaction.max.timeout.ms`, used when no broker says.
pub const DEFAULT_MAX_TRANSACTION_TIMEOUT_MS: i64 = 900_000;

/// Producer ids up to this many are sent as a ListTransactions filter;
/// more, and every transaction is listed and filtered here.
const MAX_PRODUCER_ID_FILTERS: usize = 10_000;

/// What the join covers.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    /// The partitions, broker and bounds, as for `describe`.
    pub describe: DescribeOptions,
    /// Only look up producers with an open transaction (find-hanging);
    /// otherwise every transactional producer seen (describe).
    pub open_only: bool,
}

/// Where the maximum transaction timeout came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutSource {
    /// Given by the caller.
    Given,
    /// The brokers' `transaction.max.timeout.ms`.
    Cluster,
    /// Kafka's default; no broker said.
    Default,
}

/// Everything the scan learned.
#[derive(Debug, Clone)]
pub struct Joined {
    /// When the scan started (ms since the epoch).
    pub now_ms: i64,
    /// Each partition's producers, or its error.
    pub partitions: Vec<PartitionOutcome>,
    /// The describe's counts.
    pub summary: DescribeSummary,
    /// The cluster's transaction protocol.
    pub protocol: TxnProtocol,
    /// The largest `transaction.max.timeout.ms` of the brokers, if any said.
    pub cluster_max_timeout_ms: Option<i64>,
    /// The largest `producer.id.expiration.ms`, if any broker said.
    pub producer_id_expiration_ms: Option<i64>,
    /// What the coordinators know.
    pub view: CoordinatorView,
    /// High watermark and LSO of partitions with an open transaction.
    pub offsets: BTreeMap<TopicPartition, std::result::Result<Offsets, KeyError>>,
    /// Brokers that did not answer ListTransactions, with why.
    pub listing_errors: Vec<(i32, KeyError)>,
}

impl Joined {
    /// The coordinator's state for producer `p`, if described.
    pub fn coordinator_state(&self, producer_id: i64) -> Option<&TransactionState> {
        let id = self.view.listed.get(&producer_id)?;
        match self.view.descriptions.get(id)? {
            Description::Described(t) => Some(t),
            _ => None,
        }
    }

    /// What the coordinators say about producer `p`, as the flags take it:
    /// described; unknown (the id is not found, or an open transaction's
    /// producer has no description although every id is visible and every
    /// broker answered); or unseen (kdp cannot tell).
    pub fn coordinator(&self, p: &ProducerState) -> Coordinator<'_> {
        let id = self.view.listed.get(&p.producer_id);
        match id.and_then(|id| self.view.descriptions.get(id)) {
            Some(Description::Described(t)) => Coordinator::Known(t),
            Some(Description::NotFound) => Coordinator::Unknown,
            None if p.current_txn_start_offset >= 0
                && self.view.may_describe_any
                && self.view.listing_complete =>
            {
                Coordinator::Unknown
            }
            _ => Coordinator::Unseen,
        }
    }

    /// Every (topic, partition, producer) with an open transaction.
    pub fn open_transactions(&self) -> impl Iterator<Item = (&str, i32, &ProducerState)> {
        self.producers()
            .filter(|(_, _, p)| p.current_txn_start_offset >= 0)
    }

    /// Every (topic, partition, producer) described.
    pub fn producers(&self) -> impl Iterator<Item = (&str, i32, &ProducerState)> {
        self.partitions.iter().flat_map(|o| {
            o.result
                .as_ref()
                .map(|ps| ps.as_slice())
                .unwrap_or(&[])
                .iter()
                .map(move |p| (o.topic.as_str(), o.partition, p))
        })
    }
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A transactional id nobody uses: DescribeTransactions of it answers
/// TRANSACTIONAL_ID_NOT_FOUND to a caller that may describe any id, and an
/// authorization error to one whose ACLs do not cover arbitrary ids.
fn probe_id(now_ms: i64) -> String {
    format!("__kdp-acl-probe-{now_ms}-{}", std::process::id())
}

/// Runs the scan. Fails only if the cluster cannot be reached at all.
pub async fn join(client: &Arc<Client>, opts: &JoinOptions) -> Result<Joined> {
    let now_ms = now_ms();
    let mut partitions = Vec::new();
    let summary = describe_producers(client.clone(), &opts.describe, |ev| {
        if let DescribeEvent::Results { outcomes, .. } = ev {
            partitions.extend(outcomes);
        }
    })
    .await?;
    let dopts = driver_options(&opts.describe);

    let configs = broker_configs(
        client,
        &[
            configs::TRANSACTION_MAX_TIMEOUT_MS,
            configs::PRODUCER_ID_EXPIRATION_MS,
        ],
        &dopts,
    )
    .await
    .unwrap_or_default();
    let protocol = transaction_protocol(client)
        .await
        .unwrap_or(TxnProtocol::V1);

    let mut joined = Joined {
        now_ms,
        partitions,
        summary,
        protocol,
        cluster_max_timeout_ms: configs::max_ms(&configs, configs::TRANSACTION_MAX_TIMEOUT_MS),
        producer_id_expiration_ms: configs::max_ms(&configs, configs::PRODUCER_ID_EXPIRATION_MS),
        view: CoordinatorView::default(),
        offsets: BTreeMap::new(),
        listing_errors: Vec::new(),
    };

    // Producers to look up: with an open transaction, or (describe) every
    // one that has written a transaction marker or has one open.
    let wanted: BTreeSet<i64> = joined
        .producers()
        .filter(|(_, _, p)| {
            p.current_txn_start_offset >= 0 || (!opts.open_only && p.coordinator_epoch >= 0)
        })
        .map(|(_, _, p)| p.producer_id)
        .collect();
    if !wanted.is_empty() {
        look_up(client, &mut joined, &wanted, &dopts).await?;
    }
    let open: BTreeSet<TopicPartition> = joined
        .open_transactions()
        .map(|(t, p, _)| (t.to_string(), p))
        .collect();
    if !open.is_empty() {
        joined.offsets = offsets(client, open.into_iter().collect(), &dopts).await;
    }
    Ok(joined)
}

async fn look_up(
    client: &Arc<Client>,
    joined: &mut Joined,
    wanted: &BTreeSet<i64>,
    dopts: &DriverOptions,
) -> Result<()> {
    let filters = ListFilters {
        producer_ids: if wanted.len() <= MAX_PRODUCER_ID_FILTERS {
            wanted.iter().copied().collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    let listings = list_transactions(client, &filters, dopts).await?;
    let mut listed: HashMap<i64, String> = HashMap::new();
    let mut complete = true;
    for (broker, l) in listings {
        match l {
            Ok(l) => {
                for t in l.transactions {
                    if wanted.contains(&t.producer_id) {
                        listed.insert(t.producer_id, t.transactional_id);
                    }
                }
            }
            Err(e) => {
                complete = false;
                joined.listing_errors.push((broker, e));
            }
        }
    }
    let ids: BTreeSet<String> = listed.values().cloned().collect();
    let unlisted = wanted.iter().any(|pid| !listed.contains_key(pid));
    let probe = probe_id(joined.now_ms);
    let mut to_describe: Vec<String> = ids.into_iter().collect();
    if unlisted {
        to_describe.push(probe.clone());
    }
    let described = describe_transactions(client, to_describe, dopts).await;
    let mut descriptions = HashMap::new();
    let mut may_describe_any = false;
    for (id, d) in described {
        let desc = match d.result {
            Ok(t) => Description::Described(t),
            Err(e) if e.code == error_code::TRANSACTIONAL_ID_NOT_FOUND => Description::NotFound,
            Err(e) if e.code == error_code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => {
                Description::Denied
            }
            Err(e) => Description::Failed(error_code::name(e.code).unwrap_or("UNKNOWN_ERROR_CODE")),
        };
        if id == probe {
            may_describe_any = desc == Description::NotFound;
        } else {
            descriptions.insert(id, desc);
        }
    }
    joined.view = CoordinatorView {
        listed,
        listing_complete: complete,
        may_describe_any,
        descriptions,
    };
    Ok(())
}

/// [`join`] of partitions the caller has already described (the exporter's
/// scan): the same lookups, without a second DescribeProducers, all done by
/// `deadline`. `partitions` may hold only the producers the caller wants
/// looked up (those with an open transaction, and with `open_only` false
/// the transactional ones); the others are not needed by any lookup.
/// `now_ms` is when the describe started.
///
/// The phases that do not depend on each other run at once (the brokers'
/// configs, the protocol, the offsets, the coordinators' view); the view's
/// two steps (ListTransactions, then DescribeTransactions) get half of what
/// is left each, so a broker that never answers the first leaves time for
/// the second and its errors come back, as `listing_errors`, before
/// `deadline`.
pub async fn join_described(
    client: &Arc<Client>,
    opts: &JoinOptions,
    now_ms: i64,
    partitions: Vec<PartitionOutcome>,
    summary: DescribeSummary,
    deadline: tokio::time::Instant,
) -> Result<Joined> {
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    let whole = DriverOptions {
        timeout: left,
        ..driver_options(&opts.describe)
    };
    let half = DriverOptions {
        timeout: left / 2,
        ..whole.clone()
    };
    let mut joined = Joined {
        now_ms,
        partitions,
        summary,
        protocol: TxnProtocol::V1,
        cluster_max_timeout_ms: None,
        producer_id_expiration_ms: None,
        view: CoordinatorView::default(),
        offsets: BTreeMap::new(),
        listing_errors: Vec::new(),
    };
    let wanted: BTreeSet<i64> = joined
        .producers()
        .filter(|(_, _, p)| {
            p.current_txn_start_offset >= 0 || (!opts.open_only && p.coordinator_epoch >= 0)
        })
        .map(|(_, _, p)| p.producer_id)
        .collect();
    let open: Vec<TopicPartition> = joined
        .open_transactions()
        .map(|(t, p, _)| (t.to_string(), p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let names = [
        configs::TRANSACTION_MAX_TIMEOUT_MS,
        configs::PRODUCER_ID_EXPIRATION_MS,
    ];
    let (configs, protocol, read, looked) = tokio::join!(
        broker_configs(client, &names, &whole),
        transaction_protocol(client),
        async {
            if open.is_empty() {
                BTreeMap::new()
            } else {
                offsets(client, open, &whole).await
            }
        },
        async {
            if wanted.is_empty() {
                Ok(())
            } else {
                look_up(client, &mut joined, &wanted, &half).await
            }
        },
    );
    looked?;
    let configs = configs.unwrap_or_default();
    joined.protocol = protocol.unwrap_or(TxnProtocol::V1);
    joined.cluster_max_timeout_ms = configs::max_ms(&configs, configs::TRANSACTION_MAX_TIMEOUT_MS);
    joined.producer_id_expiration_ms =
        configs::max_ms(&configs, configs::PRODUCER_ID_EXPIRATION_MS);
    joined.offsets = read;
    Ok(joined)
}
