//! `kdp-workflows`: what kdp gathers over the wire to judge, and the
//! repairs it carries out. Each workflow sequences kdp-client's requests
//! (one handler per Kafka API, one admin driver) and hands what the
//! brokers answered to kdp-domain, where every verdict is made; the CLI and
//! the exporter then only parse, confirm and render.
//!
//! - [`join`]: producers joined with what the coordinators know
//!   ([`Joined`](kdp_domain::Joined)): DescribeProducers, DescribeConfigs,
//!   ApiVersions, ListTransactions, DescribeTransactions, ListOffsets.
//! - [`groups`]: every group's state, members and committed offsets, once
//!   per run ([`GroupsRead`](kdp_domain::groups::GroupsRead)).
//! - [`lag`]: consumer lag in records: groups, bounds, read_committed
//!   counts and the transactions holding LSOs (`kdp lag`).
//! - [`lag_waves`]: the same read in waves of topics, so that what it
//!   holds follows one wave (`kdp lag -o json|jsonl`, the exporter).
//! - [`replicas`]: every replica of each partition asked for its producers.
//! - [`pressure`]: the producer-id pressure scan of every replica.
//! - [`history`]: transactional ids' histories from `__transaction_state`.
//! - [`owners`]: who writes each transactional id, and whether it is still
//!   there (`kdp owners`).
//! - [`repair`]: plans made by asking the cluster, re-checked and carried
//!   out, then proven.
//! - [`diagnosis`]: what the exporter reads to diagnose each scan.
//! - [`blocked`], [`describe`], [`transactions`]: what one command reads at
//!   once (`kdp blocked`, `describe --with-transactions`, `kdp transactions
//!   list`).
//! - [`clock`]: the one read of the wall clock (a scan's `now_ms`).
//!
//! # Find hanging transactions
//!
//! The join behind `kdp find-hanging`, judged by kdp-domain. Here
//! `kdp-server`'s mock cluster, started in this process on free ports,
//! stands in for a real one: its `ledger-0` holds a transaction its
//! coordinator no longer includes.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use kdp_client::{BrokerAddress, Client, ClientConfig, DescribeOptions, TimeBound, TopicSelection};
//! use kdp_domain::diagnose::findings;
//! use kdp_domain::diagnose::hanging::VerdictKind;
//! use kdp_server::{demo, MockCluster, MockConfig};
//! use kdp_workflows::join::{join, JoinOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = MockConfig { port: 0, ..MockConfig::default() };
//! let mock = MockCluster::start(demo::cluster()?, config).await?;
//!
//! let bound = TimeBound::after(Duration::from_secs(30));
//! let bootstrap = BrokerAddress::parse_list(&mock.bootstrap())?;
//! let client = Arc::new(Client::connect_within(bootstrap, ClientConfig::default(), &bound).await?);
//! let ledger = TopicSelection { name: "ledger".to_string(), partitions: Some(vec![0]) };
//! let describe = DescribeOptions { topics: Some(vec![ledger]), ..DescribeOptions::default() };
//! let joined = join(&client, &JoinOptions::new(describe, true), &bound).await?;
//!
//! let judged = findings(&joined, joined.max_timeout_ms());
//! let hanging: Vec<i32> = judged
//!     .candidates()
//!     .filter(|(_, v)| v.kind() == VerdictKind::Hanging)
//!     .map(|(j, _)| j.partition)
//!     .collect();
//! assert_eq!(hanging, [0]);
//! mock.shutdown().await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

pub mod blocked;
pub mod clock;
pub mod describe;
pub mod diagnosis;
pub mod groups;
pub mod history;
pub mod join;
pub mod lag;
pub mod lag_waves;
pub mod leaders;
pub mod owners;
pub mod pressure;
pub mod prior;
pub mod repair;
pub mod replicas;
pub mod retained;
pub mod transactions;
