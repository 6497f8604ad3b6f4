//! Reasoning over producer and transaction state: which open transaction
//! hangs or is stuck, which producer is fenced, orphaned or idle, which
//! consumer groups an open transaction holds back, and where replicas
//! disagree. Pure functions over what the brokers answered, so that every
//! verdict can be tested without a cluster and explained in a row.
//!
//! - [`hanging`]: Kafka's `find-hanging` rule, and kdp's verdicts around it.
//! - [`findings`](mod@findings): every open transaction of a join judged by
//!   that rule, with each partition's LSO holder: the one classification
//!   `kdp find-hanging`, its `--repair` and the exporter all call.
//! - [`blocked`]: pinned partitions, what pins them and the consumer
//!   groups they hold back.
//! - [`fence`]: the one `fenced` verdict: the transaction log's instance
//!   changes (both protocol generations) or the v1 epochs.
//! - [`flags`]: per-producer flags for `describe --with-transactions`.
//! - [`pressure`]: producer ids held per broker and topic, expiry, epochs.
//! - [`id_set`]: producer ids kept between scans in a few bytes each.
//! - [`replicas`]: field-by-field differences between a partition's
//!   replicas, and what a scan of every replica found.
//! - [`summary`]: one scan's diagnosis summed up per partition and group
//!   (what the exporter publishes).
//! - [`sequence`]: each producer's batches against the broker's sequence and
//!   epoch rules (gaps, duplicates, epochs going back).

pub mod blocked;
pub mod fence;
pub mod findings;
pub mod flags;
pub mod hanging;
pub mod id_set;
pub mod pressure;
pub mod replicas;
pub mod sequence;
pub mod summary;

pub use findings::{findings, Findings};
