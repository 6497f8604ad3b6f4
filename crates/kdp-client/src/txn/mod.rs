//! Transactions across a cluster, each API one user of the [admin
//! driver](crate::admin::driver):
//!
//! - [`list`]: ListTransactions on every broker, merged.
//! - [`coordinator`]: FindCoordinator for transactional ids (batched from v4).
//! - [`describe`]: DescribeTransactions, batched per coordinator.
//! - [`configs`]: DescribeConfigs of each broker (timeouts and expirations).
//! - [`pressure`]: the scan behind producer-id pressure.
//! - [`offsets`]: ListOffsets on leaders: high watermark and LSO.
//! - [`features`]: the cluster's finalized `transaction.version`.
//! - [`repair`]: plans, re-checks and reports around abort (WriteTxnMarkers)
//!   and force-terminate (InitProducerId).

pub mod configs;
pub mod coordinator;
pub mod describe;
pub mod features;
pub mod join;
pub mod list;
pub mod offsets;
pub mod pressure;
pub mod repair;
pub mod replicas;

use std::sync::Arc;

use crate::admin::{Batch, DriverOptions, KeyError};
use crate::client::Client;
use crate::describe::DescribeOptions;

/// Driver bounds taken from a describe's options, so every command shares
/// one `--timeout` and the same retry policy ([`DescribeOptions::driver_options`]).
pub fn driver_options(opts: &DescribeOptions) -> DriverOptions {
    opts.driver_options()
}

/// Collects every key's result of a driver run.
pub(crate) fn collect<K, V>(
    into: &mut Vec<(K, Option<i32>, Result<V, KeyError>)>,
) -> impl FnMut(Batch<K, V>) + '_ {
    move |batch| {
        for r in batch.results {
            into.push((r.key, r.broker, r.result));
        }
    }
}

/// A shared client, as the driver takes it.
pub type SharedClient = Arc<Client>;
