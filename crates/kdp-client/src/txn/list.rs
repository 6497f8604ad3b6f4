//! ListTransactions on every broker, merged: each broker lists the
//! transactions whose coordinator partitions it leads, leaving out ids the
//! caller may not DESCRIBE.

use std::collections::BTreeMap;

use kdp_wire::messages::{ListTransactionsRequest, ListTransactionsResponse, ListedTransaction};
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

/// One broker's listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerListing {
    /// The transactions it coordinates that passed the filters.
    pub transactions: Vec<ListedTransaction>,
    /// State filters it did not know.
    pub unknown_state_filters: Vec<String>,
}

/// Every broker's listing, or why it has none.
pub type Listings = BTreeMap<i32, std::result::Result<BrokerListing, KeyError>>;

struct Handler<'a> {
    filters: &'a ListFilters,
}

impl AdminHandler for Handler<'_> {
    type Key = i32;
    type Value = BrokerListing;
    type Request = ListTransactionsRequest;

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
        resp: ListTransactionsResponse,
    ) -> Vec<(i32, KeyOutcome<BrokerListing>)> {
        let outcome = KeyOutcome::from_code(resp.error_code, None, || BrokerListing {
            transactions: resp.transaction_states,
            unknown_state_filters: resp.unknown_state_filters,
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
        &Handler { filters },
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
