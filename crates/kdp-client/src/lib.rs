//! `kdp-client`: the async Kafka client under `kdp describe`.
//!
//! - [`Connection`]: one broker, any `AsyncRead + AsyncWrite` stream, size
//!   framing with a maximum response size, correlation ids, many requests in
//!   flight (a writer task and a reader task that routes responses by id),
//!   request timeouts, ApiVersions negotiation, throttling.
//! - [`Client`]: bootstrap from a list of `host:port`, metadata
//!   ([`ClusterMetadata`]), a lazy connection per broker.
//! - [`admin::drive`]: the admin-request driver: keys routed by a lookup
//!   strategy (partition leader, chosen broker, every broker, coordinator),
//!   batched per broker, sent with bounded concurrency, retried with backoff
//!   and re-lookup under one deadline, results streamed.
//! - [`describe::describe_producers`]: DescribeProducers across a cluster,
//!   one user of the driver.
//!
//! - [`security`]: Kafka client security properties, TLS (a [`Connector`])
//!   and SASL (a [`ConnectionSetup`] run on each [`Connection`] after
//!   ApiVersions).

pub mod admin;
pub mod client;
pub mod connection;
pub mod describe;
pub mod diagnose;
pub mod error;
pub mod metadata;
pub mod security;
pub mod setup;
pub mod transport;
pub mod versions;

pub use client::{Client, ClientConfig, ThrottleTime};
pub use connection::{Connection, ConnectionConfig};
pub use describe::{
    describe_producers, DescribeEvent, DescribeOptions, DescribeSummary, PartitionError,
    PartitionOutcome, TopicSelection,
};
pub use error::{Error, Result};
pub use metadata::{BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo};
pub use setup::{ConnectionSetup, NoSetup, SetupFuture};
pub use transport::{
    AsyncStream, BoxStream, BrokerAddress, ConnectFuture, Connector, TcpConnector,
};
pub use versions::ApiVersionsTable;
