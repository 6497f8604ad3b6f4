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
pub mod list;
pub mod offsets;
pub mod write_txn_markers;
