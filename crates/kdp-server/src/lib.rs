//! `kdp-server`: the broker side of the APIs kdp speaks, DescribeProducers first.
//!
//! * [`responder`]: builds a DescribeProducers response exactly as a Kafka
//!   broker does, from a request, one broker's view of the cluster and an
//!   authorizer. No sockets.
//! * [`apis`]: one handler per API of kdp-wire's registry, over a cluster,
//!   with Kafka's semantics: the transaction APIs (FindCoordinator, which
//!   creates the internal topics as a broker does, ListTransactions,
//!   DescribeTransactions, WriteTxnMarkers, InitProducerId), the group APIs
//!   (ListGroups, DescribeGroups, OffsetFetch, ConsumerGroupDescribe,
//!   DescribeShareGroupOffsets),
//!   Metadata, DescribeConfigs, ListOffsets and Fetch. No sockets.
//! * [`cluster`]: the cluster file (brokers and their configuration, topics,
//!   replicas, offline logs, producer state per replica, record batches,
//!   offsets, transactions and their logs, groups, producer generators,
//!   ACLs per principal, SASL users), strictly parsed; [`txn`], [`group`]
//!   and [`acls`] hold the transaction, group and ACL model.
//! * [`broker`]: one broker's request handling, frame in, frame out, over
//!   the state every broker of a cluster [`shared`]; [`budget`] bounds each
//!   answer before it is built.
//! * [`mock`]: a tokio server that runs every broker of a cluster file, each
//!   on its own listener, serving ApiVersions, Metadata, DescribeProducers
//!   and the transaction APIs well enough for Kafka's own Admin client and
//!   tools.
//! * [`sasl`] and [`tls`]: the mock's secured listeners: SASL PLAIN and
//!   SCRAM-SHA-256/512 for the cluster file's users (SaslHandshake and
//!   SaslAuthenticate as Kafka's authenticator runs them), and rustls TLS
//!   with optional client certificates.
//!
//! # Answer from your own producer state
//!
//! A broker, or a test double of one, implements [`BrokerView`]: which
//! topics exist and where each partition stands on this broker. The
//! responder does the rest, with Kafka's error semantics.
//!
//! ```
//! use kdp_server::responder::{describe_producers, BrokerView, Hosted, RequestContext};
//! use kdp_server::AllowAll;
//! use kdp_wire::ErrorCode;
//! use kdp_wire::messages::{DescribeProducersRequest, ProducerState, TopicRequest};
//!
//! /// Holds a replica of `orders-0`; `orders-1` lives on other brokers.
//! struct ThisBroker {
//!     orders_0: Vec<ProducerState>,
//! }
//!
//! impl BrokerView for ThisBroker {
//!     fn contains_topic(&self, topic: &str) -> bool {
//!         topic == "orders"
//!     }
//!     fn hosted(&self, topic: &str, partition: i32) -> Hosted<'_> {
//!         match (topic, partition) {
//!             ("orders", 0) => Hosted::Online(&self.orders_0),
//!             ("orders", 1) => Hosted::NotHosted,
//!             _ => Hosted::Unknown,
//!         }
//!     }
//! }
//!
//! let producer = ProducerState { producer_id: 4001, producer_epoch: 3, ..Default::default() };
//! let broker = ThisBroker { orders_0: vec![producer] };
//! let request = DescribeProducersRequest {
//!     topics: vec![TopicRequest {
//!         name: "orders".to_string(),
//!         partition_indexes: vec![0, 1, 9],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//!
//! let ctx = RequestContext::default();
//! let response = describe_producers(&request, &broker, &AllowAll, &ctx);
//! let answers: Vec<_> = response.topics[0]
//!     .partitions
//!     .iter()
//!     .map(|p| (p.partition_index, p.error_code, p.active_producers.len()))
//!     .collect();
//! assert_eq!(
//!     answers,
//!     [
//!         (0, ErrorCode::NONE, 1),
//!         (1, ErrorCode::NOT_LEADER_OR_FOLLOWER, 0),
//!         (9, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, 0),
//!     ]
//! );
//!
//! // An authorizer is any `Fn(&RequestContext, &str) -> bool`; denied
//! // topics answer TOPIC_AUTHORIZATION_FAILED before anything else.
//! let deny_all = |_: &RequestContext, _: &str| false;
//! let denied = describe_producers(&request, &broker, &deny_all, &ctx);
//! assert!(denied.topics[0]
//!     .partitions
//!     .iter()
//!     .all(|p| p.error_code == ErrorCode::TOPIC_AUTHORIZATION_FAILED));
//!
//! // The bytes to send back for the request with correlation id 7.
//! let frame = kdp_wire::frame::response_frame_to_vec(7, &response, 0);
//! assert_eq!(frame.len(), 4 + 4 + 1 + kdp_wire::encode_to_vec(&response, 0).len());
//! ```
//!
//! # Answer from a cluster file
//!
//! [`ClusterBroker`] is the [`BrokerView`] of one broker of a [`Cluster`]
//! (here `kdp demo`'s): a follower answers from its own replica's state.
//!
//! ```
//! use kdp_server::{demo, describe_producers, AllowAll, ClusterBroker, RequestContext};
//! use kdp_wire::messages::{DescribeProducersRequest, TopicRequest};
//!
//! let cluster = demo::cluster()?;
//! let follower = ClusterBroker { cluster: &cluster, broker_id: 3 };
//! let request = DescribeProducersRequest {
//!     topics: vec![TopicRequest {
//!         name: "orders".to_string(),
//!         partition_indexes: vec![3],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//! let response = describe_producers(&request, &follower, &AllowAll, &RequestContext::default());
//! let producer = &response.topics[0].partitions[0].active_producers[0];
//! assert_eq!(producer.current_txn_start_offset, 150382);
//! # Ok::<(), kdp_server::ClusterError>(())
//! ```

#![forbid(unsafe_code)]

pub mod acls;
pub mod apis;
pub mod broker;
pub mod budget;
pub mod cert_principal;
pub mod clock;
pub mod cluster;
pub mod coordinator;
pub mod demo;
pub mod group;
pub mod mock;
pub mod responder;
pub mod sasl;
pub mod shared;
pub mod tls;
pub mod txn;

pub use cluster::{AppendError, Cluster, ClusterError, PartitionLog, SimpleRecord};
pub use mock::{MockCluster, MockConfig};
pub use responder::{
    describe_producers, AllowAll, Authorizer, BrokerView, ClusterBroker, RequestContext,
};
