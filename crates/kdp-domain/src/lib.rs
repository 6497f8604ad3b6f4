//! `kdp-domain`: kdp's domain without I/O. What the brokers answered, as
//! typed snapshots, and every verdict kdp draws from them, as pure
//! functions: no async runtime, no sockets, no TLS, no clock (the time a
//! scan started is an input, `now_ms`). Another program gets kdp's verdicts
//! from its own data by depending on this crate alone; kdp-client fills the
//! vocabulary in over the wire, kdp-workflows gathers the snapshots.
//!
//! The vocabulary every layer shares:
//!
//! - [`key_error`]: why one key of an admin request has no answer
//!   ([`KeyError`]: a Kafka error code, a message, who produced it, the
//!   request that stalled), and the keys that failed grouped by cause
//!   ([`Failures`]), so a report says each cause once, counted.
//! - [`partition`]: [`TopicPartition`], a partition's DescribeProducers
//!   outcome ([`PartitionOutcome`]) and a describe's counts.
//! - [`offsets`]: a partition's high watermark and LSO ([`Offsets`]).
//! - [`protocol`]: the cluster's transaction protocol ([`TxnProtocol`]).
//! - [`time`]: Kafka's timestamps: a time at or before the epoch is
//!   unknown, and so is its age.
//! - [`severity`]: how much a verdict asks of an operator.
//!
//! The snapshots the diagnosis reads:
//!
//! - [`joined`]: producers joined with their coordinators ([`Joined`]).
//! - [`coordinator`]: what the coordinators know ([`CoordinatorView`]).
//! - [`groups`]: consumer groups, their state and committed offsets.
//! - [`history`]: transactional ids' state changes from
//!   `__transaction_state`.
//!
//! The verdicts and the repairs:
//!
//! - [`diagnose`]: hanging, stuck and unknown transactions, flags, fences,
//!   blocked groups, replicas, sequences, producer-id pressure.
//! - [`owners`]: who writes each transactional id (Kafka Streams, Connect,
//!   Flink's KafkaSink) and whether it is still there.
//! - [`repair`]: plans, their re-checks, reports and proofs.
//! - [`lag`]: consumer lag in records under transactions (`kdp lag`).
//!
//! # Judge a snapshot
//!
//! A partition whose producer 7 has held a transaction open for an hour,
//! on a cluster where every broker answered ListTransactions, the caller
//! may describe any id, and no coordinator lists one for producer 7: by
//! Kafka's rule it hangs, and the plan aborts it at the leader.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use kdp_domain::coordinator::CoordinatorView;
//! use kdp_domain::diagnose::findings;
//! use kdp_domain::diagnose::hanging::VerdictKind;
//! use kdp_domain::repair::{plan_findings, Action};
//! use kdp_domain::{Joined, PartitionOutcome, TxnProtocol};
//! use kdp_wire::messages::ProducerState;
//!
//! let now_ms = 1_800_000_000_000;
//! let producer = ProducerState {
//!     producer_id: 7,
//!     producer_epoch: 2,
//!     last_timestamp: now_ms - 3_600_000,
//!     coordinator_epoch: 5,
//!     current_txn_start_offset: 40,
//!     ..Default::default()
//! };
//! let joined = Joined {
//!     partitions: vec![PartitionOutcome::answered("payments", 0, 1, vec![producer])],
//!     cluster_max_timeout_ms: Some(900_000),
//!     view: CoordinatorView {
//!         listing_complete: true,
//!         may_describe_any: true,
//!         ..Default::default()
//!     },
//!     ..Joined::new(now_ms, TxnProtocol::V2)
//! };
//! let judged = findings(&joined, joined.max_timeout_ms());
//! let kinds: Vec<VerdictKind> = judged.candidates().map(|(_, v)| v.kind()).collect();
//! assert_eq!(kinds, [VerdictKind::Hanging]);
//!
//! let connection = ["--bootstrap-server".to_string(), "b1:9092".to_string()];
//! let plan = plan_findings(&kdp_domain::repair::findings(&joined, 900_000), &connection);
//! assert!(matches!(&plan.steps[0].action, Action::Abort(spec) if spec.producer_id == 7));
//! ```

#![forbid(unsafe_code)]

pub mod coordinator;
pub mod diagnose;
pub mod groups;
pub mod history;
pub mod joined;
pub mod key_error;
pub mod lag;
pub mod offsets;
pub mod owners;
pub mod partition;
pub mod protocol;
pub mod repair;
pub mod retained;
pub mod severity;
pub mod time;

pub use coordinator::CoordinatorView;
pub use joined::Joined;
pub use key_error::{Failure, Failures, KeyError};
pub use offsets::Offsets;
pub use partition::{DescribeSummary, PartitionOutcome, TopicPartition};
pub use protocol::TxnProtocol;
pub use severity::Severity;
