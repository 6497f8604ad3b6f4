//! `kdp-server`: the broker side of DescribeProducers.
//!
//! * [`responder`]: builds a DescribeProducers response exactly as a Kafka
//!   broker does, from a request, one broker's view of the cluster and an
//!   authorizer. No sockets.
//! * [`apis`]: the transaction APIs (FindCoordinator, ListTransactions,
//!   DescribeTransactions, DescribeConfigs, ListOffsets, WriteTxnMarkers,
//!   InitProducerId) over a cluster, with Kafka's semantics. No sockets.
//! * [`cluster`]: the cluster file (brokers and their configuration, topics,
//!   replicas, offline logs, producer state per replica, offsets,
//!   transactions, ACLs), strictly parsed; [`txn`] and [`acls`] hold the
//!   transaction and ACL model.
//! * [`mock`]: a tokio server that runs every broker of a cluster file, each
//!   on its own listener, serving ApiVersions, Metadata, DescribeProducers
//!   and the transaction APIs well enough for Kafka's own Admin client and
//!   tools.

pub mod acls;
pub mod apis;
pub mod broker;
pub mod cluster;
pub mod demo;
pub mod mock;
pub mod responder;
pub mod txn;

pub use cluster::{Cluster, ClusterError};
pub use mock::{MockCluster, MockConfig};
pub use responder::{
    describe_producers, AllowAll, Authorizer, BrokerView, ClusterBroker, RequestContext,
};
