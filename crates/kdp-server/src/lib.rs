//! `kdp-server`: the broker side of DescribeProducers.
//!
//! * [`responder`]: builds a DescribeProducers response exactly as a Kafka
//!   broker does, from a request, one broker's view of the cluster and an
//!   authorizer. No sockets.
//! * [`cluster`]: the cluster file (brokers, topics, replicas, offline logs,
//!   producer state per replica), strictly parsed.
//! * [`mock`]: a tokio server that runs every broker of a cluster file, each
//!   on its own listener, serving ApiVersions, Metadata and DescribeProducers
//!   well enough for Kafka's own Admin client and tools.

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
