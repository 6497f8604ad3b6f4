//! Transactions across a cluster, one module per Kafka API, each one user
//! of the [admin driver](crate::admin::driver):
//!
//! - [`list`]: ListTransactions on every broker, merged.
//! - [`coordinator`]: FindCoordinator for transactional ids (batched from v4).
//! - [`describe`]: DescribeTransactions, batched per coordinator.
//! - [`configs`]: DescribeConfigs of each broker (timeouts and expirations).
//! - [`offsets`]: ListOffsets on leaders: high watermark and LSO.
//! - [`features`]: the cluster's finalized `transaction.version`.
//! - [`write_txn_markers`]: a raw abort (WriteTxnMarkers ABORT) at a
//!   partition's leader.
//! - [`init_producer_id`]: a force-terminate (InitProducerId -1/-1) at a
//!   transactional id's coordinator.

pub mod configs;
pub mod coordinator;
pub mod describe;
pub mod features;
pub mod init_producer_id;
pub mod join;
pub mod list;
pub mod offsets;
pub mod pressure;
pub mod repair;
pub mod replicas;
pub mod write_txn_markers;

pub use crate::admin::driver::collect;
pub use crate::client::SharedClient;

use crate::admin::DriverOptions;
use crate::describe::DescribeOptions;

/// Driver bounds taken from a describe's options, so every command shares
/// one `--timeout` and the same retry policy ([`DescribeOptions::driver_options`]).
pub fn driver_options(opts: &DescribeOptions) -> DriverOptions {
    opts.driver_options()
}
