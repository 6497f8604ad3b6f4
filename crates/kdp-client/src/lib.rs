//! `kdp-client`: kdp's transport to Kafka, and nothing else: connections,
//! negotiation, metadata, the one admin driver, and one handler per Kafka
//! API. It speaks kdp-domain's vocabulary ([`KeyError`](kdp_domain::KeyError),
//! [`PartitionOutcome`](kdp_domain::PartitionOutcome), ...), so what it
//! answers goes straight to the domain's verdicts; the workflows that
//! sequence its requests are kdp-workflows'.
//!
//! - [`Connection`]: one broker, any `AsyncRead + AsyncWrite` stream, size
//!   framing with a maximum response size, correlation ids, many requests in
//!   flight (a writer task and a reader task that routes responses by id),
//!   request timeouts, ApiVersions negotiation, throttling, and a
//!   [`ConnectionSetup`] run after ApiVersions (SASL).
//! - [`Client`]: bootstrap from a list of `host:port`, metadata
//!   ([`ClusterMetadata`]), a lazy connection per broker.
//! - [`TimeBound`]: a command's one bound on time, passed by reference
//!   through every run: its [`Deadline`], the request timeout (a third of
//!   the budget at most, never past the deadline) and the [`RetryPolicy`].
//!   Errors no retry can fix end a run at once ([`Error::is_retriable`]),
//!   and what is retried is told once ([`Retrying`]).
//! - [`admin::drive`]: the admin-request driver: keys routed by a lookup
//!   strategy (partition leader, chosen broker, every broker, coordinator),
//!   batched per broker, sent with bounded concurrency, retried with backoff
//!   and re-lookup within the bound, results streamed.
//! - One handler per Kafka API, each one user of the driver:
//!   [`describe`] (DescribeProducers), [`txn`] (ListTransactions,
//!   FindCoordinator, DescribeTransactions, DescribeConfigs, ListOffsets,
//!   the ApiVersions features, WriteTxnMarkers, InitProducerId), [`groups`]
//!   (ListGroups, DescribeGroups, ConsumerGroupDescribe, OffsetFetch),
//!   [`fetch`] (Fetch, and reading the batches of one partition).
//! - [`security`]: Kafka client security properties, TLS (a [`Connector`])
//!   and SASL (a [`ConnectionSetup`] run on each [`Connection`] after
//!   ApiVersions).
//!
//! # Describe a cluster
//!
//! Which producers write to `payments-0`, and which of them holds a
//! transaction open? Here `kdp-server`'s mock cluster, started in this
//! process on free ports, stands in for a real one.
//!
//! ```
//! use std::sync::Arc;
//!
//! use std::time::Duration;
//!
//! use kdp_client::{describe_producers, BrokerAddress, Client, ClientConfig};
//! use kdp_client::{DescribeEvent, DescribeOptions, TimeBound, TopicSelection};
//! use kdp_server::{demo, MockCluster, MockConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = MockConfig { port: 0, ..MockConfig::default() };
//! let mock = MockCluster::start(demo::cluster()?, config).await?;
//!
//! // one bound on time for everything below: connecting, retries included
//! let bound = TimeBound::after(Duration::from_secs(30));
//! let bootstrap = BrokerAddress::parse_list(&mock.bootstrap())?;
//! let config = ClientConfig::default();
//! let client = Arc::new(Client::connect_within(bootstrap, config, &bound).await?);
//! let payments = TopicSelection { name: "payments".to_string(), partitions: Some(vec![0]) };
//! let opts = DescribeOptions { topics: Some(vec![payments]), ..DescribeOptions::default() };
//! let mut open_transactions = Vec::new();
//! let summary = describe_producers(client, &opts, &bound, |event| {
//!     if let DescribeEvent::Results { outcomes, .. } = event {
//!         for outcome in outcomes {
//!             let producers = outcome.result.unwrap_or_default();
//!             let open = producers.into_iter().filter(|p| p.current_txn_start_offset >= 0);
//!             open_transactions.extend(open.map(|p| (outcome.partition, p.producer_id)));
//!         }
//!     }
//! })
//! .await?;
//!
//! assert_eq!((summary.partitions, summary.failed), (1, 0));
//! assert_eq!(open_transactions, [(0, 7003)]);
//! mock.shutdown().await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

pub mod admin;
pub mod bound;
pub mod client;
pub mod connection;
pub mod deadline;
pub mod describe;
pub mod error;
pub mod fetch;
pub mod groups;
pub mod metadata;
pub mod retry;
pub mod security;
pub mod transport;
pub mod txn;
pub mod versions;

pub use bound::{RetryPolicy, TimeBound};
pub use client::{Client, ClientConfig, ThrottleTime};
pub use connection::{Connection, ConnectionConfig};
pub use connection::{ConnectionSetup, NoSetup, SetupFuture};
pub use deadline::Deadline;
pub use describe::{describe_producers, DescribeEvent, DescribeOptions, TopicSelection};
pub use error::{Error, Result};
pub use metadata::{BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo};
pub use retry::{OnRetry, Retrying};
pub use transport::{
    AsyncStream, BoxStream, BrokerAddress, ConnectFuture, Connector, TcpConnector,
};
pub use versions::ApiVersionsTable;
