//! `kdp transactions list`'s reads: every broker's transactions
//! (ListTransactions), then the start time of each listed id at its
//! coordinator (DescribeTransactions), which the listing does not carry.
//!
//! Both answers are read through their views and only what the listing
//! shows is kept: an entry is an id shared between the listing and the
//! describe's keys (`Arc<str>`), a producer id, a state and a start time.
//! A listing of 300,000 ids holds that much, not the owned messages.

use std::sync::Arc;

use kdp_client::admin::{Batch, DriverOptions};
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::txn::describe::describe_transactions_with;
use kdp_client::txn::list::{list_transactions_with, ListFilters};
use kdp_domain::key_error::KeyError;
use kdp_wire::TxnState;

/// A transaction state as a coordinator named it: one Kafka knows, or
/// another name, kept as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateName {
    /// A state of Kafka's.
    Known(TxnState),
    /// A name kdp does not know.
    Other(Box<str>),
}

impl StateName {
    fn of(name: &str) -> StateName {
        match TxnState::from_name(name) {
            Some(s) => StateName::Known(s),
            None => StateName::Other(name.into()),
        }
    }

    /// The name as the coordinator sent it.
    pub fn as_str(&self) -> &str {
        match self {
            StateName::Known(s) => s.name(),
            StateName::Other(s) => s,
        }
    }
}

/// One listed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The transactional id.
    pub transactional_id: Arc<str>,
    /// The broker that listed it (its coordinator).
    pub coordinator: i32,
    /// Its producer id.
    pub producer_id: i64,
    /// Its state in the listing.
    pub state: StateName,
    /// Its coordinator's TransactionStartTimeMs, raw (-1 for none); -1 too
    /// when not asked (an `Empty` id, which has no transaction) or when the
    /// describe failed ([`Listed::start_failures`]).
    pub start_time_ms: i64,
}

/// Every broker's listing, sorted by transactional id, with start times.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// Every listed transaction, sorted by id (then coordinator).
    pub entries: Vec<Entry>,
    /// Brokers whose listing failed, and why.
    pub failed: Vec<(i32, KeyError)>,
    /// State filters a broker did not know: (broker, the filter).
    pub unknown_state_filters: Vec<(i32, String)>,
    /// Listed ids whose describe failed (no answer, an error): why.
    pub start_failures: Vec<(Arc<str>, KeyError)>,
}

/// Lists the transactions `filters` keeps on every broker and describes
/// each listed id not `Empty` for its start time, at the broker that
/// listed it. `Err` as
/// [`list_transactions_with`]: a filter no broker can apply, or the brokers
/// could not be listed.
pub async fn list(
    client: &SharedClient,
    filters: &ListFilters,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Listed> {
    let listings = list_transactions_with(client, filters, opts, bound, |t| {
        (
            Arc::<str>::from(t.transactional_id()),
            t.producer_id(),
            StateName::of(t.transaction_state()),
        )
    })
    .await?;
    let mut listed = Listed::default();
    let count = listings
        .values()
        .map(|l| l.as_ref().map_or(0, |l| l.transactions.len()))
        .sum();
    listed.entries.reserve_exact(count);
    for (broker, l) in listings {
        match l {
            Ok(l) => {
                listed
                    .unknown_state_filters
                    .extend(l.unknown_state_filters.into_iter().map(|s| (broker, s)));
                listed.entries.extend(l.transactions.into_iter().map(
                    |(transactional_id, producer_id, state)| Entry {
                        transactional_id,
                        coordinator: broker,
                        producer_id,
                        state,
                        start_time_ms: -1,
                    },
                ));
            }
            Err(e) => listed.failed.push((broker, e)),
        }
    }
    listed.entries.sort_unstable_by(|a, b| {
        (&a.transactional_id, a.coordinator).cmp(&(&b.transactional_id, b.coordinator))
    });
    // the broker that listed an id coordinates it: no FindCoordinator
    let known: Vec<(Arc<str>, i32)> = listed
        .entries
        .iter()
        .filter(|e| e.state != StateName::Known(TxnState::Empty))
        .map(|e| (e.transactional_id.clone(), e.coordinator))
        .collect();
    if known.is_empty() {
        return Ok(listed);
    }
    let ids = known.iter().map(|(id, _)| id.clone()).collect();
    let Listed {
        entries,
        start_failures,
        ..
    } = &mut listed;
    describe_transactions_with(
        client,
        ids,
        known,
        opts,
        bound,
        |t| t.transaction_start_time_ms(),
        |batch: Batch<Arc<str>, i64>| {
            for r in batch.results {
                let ms = match r.result {
                    Ok(ms) => ms,
                    Err(err) => {
                        start_failures.push((r.key.clone(), err));
                        continue;
                    }
                };
                let from = entries.partition_point(|e| e.transactional_id < r.key);
                let same = entries
                    .get_mut(from..)
                    .into_iter()
                    .flatten()
                    .take_while(|e| e.transactional_id == r.key);
                for e in same {
                    e.start_time_ms = ms;
                }
            }
        },
    )
    .await;
    listed.start_failures.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(listed)
}
