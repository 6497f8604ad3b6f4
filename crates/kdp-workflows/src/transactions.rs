//! `kdp transactions list`'s reads: every broker's transactions
//! (ListTransactions), then the start time of each listed id at its
//! coordinator (DescribeTransactions), which the listing does not carry.

use std::collections::BTreeMap;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::txn::describe::{describe_transactions, Described};
use kdp_client::txn::list::{list_transactions, ListFilters, Listings};

/// Every broker's listing, and each listed id's description.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Each broker's transactions, or why it has none.
    pub listings: Listings,
    /// Each listed transactional id at its coordinator.
    pub described: BTreeMap<String, Described>,
}

/// Lists the transactions `filters` keeps on every broker and describes
/// each listed id. `Err` as [`list_transactions`]: a filter no broker can
/// apply, or the brokers could not be listed.
pub async fn list(
    client: &SharedClient,
    filters: &ListFilters,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Listed> {
    let listings = list_transactions(client, filters, opts, bound).await?;
    let ids: Vec<String> = listings
        .values()
        .flat_map(|l| l.iter().flat_map(|l| &l.transactions))
        .map(|t| t.transactional_id.clone())
        .collect();
    let described = if ids.is_empty() {
        BTreeMap::new()
    } else {
        describe_transactions(client, ids, opts, bound).await
    };
    Ok(Listed {
        listings,
        described,
    })
}
