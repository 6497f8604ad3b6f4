//! ListTransactions on every broker, merged: each broker lists the
//! transactions whose coordinator partitions it leads, leaving out ids the
//! caller may not DESCRIBE.

use std::collections::BTreeMap;

use kdp_wire::messages::{
    ListTransactionsRequest, ListTransactionsResponse, ListedTransaction, ListedTransactionView,
};
use kdp_wire::view::Validated;
use kdp_wire::ErrorCode;
use kdp_wire::TxnState;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, AllBrokers, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::error::{Error, Result};
use kdp_domain::key_error::KeyError;

/// What to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilters {
    /// States to keep (empty: all).
    pub states: Vec<TxnState>,
    /// Producer ids to keep (empty: all).
    pub producer_ids: Vec<i64>,
    /// Keep transactions running longer than this (ms); `None`: all.
    pub min_duration_ms: Option<i64>,
    /// Keep transactional ids matching this RE2/J pattern (Kafka 4.1+).
    pub transactional_id_pattern: Option<String>,
}

/// One broker's listing: its transactions as `T`, by default the owned
/// [`ListedTransaction`] ([`list_transactions_with`] folds each entry of
/// the response's view into a `T` of the caller's choosing instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerListing<T = ListedTransaction> {
    /// The transactions it coordinates that passed the filters.
    pub transactions: Vec<T>,
    /// State filters it did not know.
    pub unknown_state_filters: Vec<String>,
}

impl<T> Default for BrokerListing<T> {
    fn default() -> Self {
        BrokerListing {
            transactions: Vec::new(),
            unknown_state_filters: Vec::new(),
        }
    }
}

/// Every broker's listing, or why it has none.
pub type Listings<T = ListedTransaction> =
    BTreeMap<i32, std::result::Result<BrokerListing<T>, KeyError>>;

struct Handler<'a, F> {
    filters: &'a ListFilters,
    fold: F,
}

impl<T, F> AdminHandler for Handler<'_, F>
where
    F: Fn(ListedTransactionView<'_>) -> T,
{
    type Key = i32;
    type Value = BrokerListing<T>;
    type Request = ListTransactionsRequest;
    type Response = Validated<ListTransactionsResponse>;

    fn build_request(&self, _broker: i32, _keys: &[i32]) -> ListTransactionsRequest {
        ListTransactionsRequest {
            state_filters: self
                .filters
                .states
                .iter()
                .map(|s| s.name().to_string())
                .collect(),
            producer_id_filters: self.filters.producer_ids.clone(),
            duration_filter: self.filters.min_duration_ms.unwrap_or(-1),
            transactional_id_pattern: self.filters.transactional_id_pattern.clone(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        broker: i32,
        _keys: &[i32],
        resp: Validated<ListTransactionsResponse>,
    ) -> Vec<(i32, KeyOutcome<BrokerListing<T>>)> {
        let view = resp.view();
        let outcome = KeyOutcome::from_code(view.error_code(), None, || {
            let states = view.transaction_states();
            let mut transactions = Vec::with_capacity(states.len());
            transactions.extend(states.iter().map(&self.fold));
            BrokerListing {
                transactions,
                unknown_state_filters: view
                    .unknown_state_filters()
                    .iter()
                    .map(str::to_owned)
                    .collect(),
            }
        });
        vec![(broker, outcome)]
    }
}

/// The version a filter needs, and the Kafka release that brought it.
fn needed_version(filters: &ListFilters) -> Option<(&'static str, i16, &'static str)> {
    if filters.transactional_id_pattern.is_some() {
        Some(("--transactional-id-pattern", 2, "4.1"))
    } else if filters.min_duration_ms.is_some() {
        Some(("--min-duration", 1, "3.8"))
    } else {
        None
    }
}

/// Lists transactions on every broker. A filter a broker cannot apply (too
/// old for the version that carries it) fails the call with an error naming
/// the feature and the Kafka version that has it, rather than listing
/// unfiltered.
pub async fn list_transactions(
    client: &SharedClient,
    filters: &ListFilters,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Listings> {
    list_transactions_with(client, filters, opts, bound, |t| t.into_owned()).await
}

/// [`list_transactions`], each listed transaction read through the
/// response's view and kept as `fold` makes it: a caller that needs two
/// fields of 300,000 entries keeps those, not the owned messages.
pub async fn list_transactions_with<T, F>(
    client: &SharedClient,
    filters: &ListFilters,
    opts: &DriverOptions,
    bound: &TimeBound,
    fold: F,
) -> Result<Listings<T>>
where
    F: Fn(ListedTransactionView<'_>) -> T,
{
    let brokers = bound
        .run(
            "Metadata",
            AllBrokers::keys_within(client, bound.request_timeout()),
        )
        .await?;
    if let Some((feature, needed, kafka)) = needed_version(filters) {
        for &b in &brokers {
            let conn = bound.run("ApiVersions", client.broker(b)).await?;
            let have = conn.version_for::<ListTransactionsRequest>()?;
            if have < needed {
                return Err(Error::FeatureUnsupported {
                    broker: b,
                    feature,
                    api: "ListTransactions",
                    needed,
                    kafka,
                    broker_max: have,
                });
            }
        }
    }
    let mut results = Vec::new();
    drive(
        client,
        &Handler { filters, fold },
        &mut AllBrokers::default(),
        brokers,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    Ok(results.into_iter().map(|(k, _, r)| (k, r)).collect())
}

/// Whether an error code means the caller may not describe the id.
pub fn is_authorization_error(code: ErrorCode) -> bool {
    code == ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
}
