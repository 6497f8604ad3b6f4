//! The cluster the mock serves and the JSON file that describes it
//! (brokers, topics, partitions, replica placement, offline logs, and the
//! producer state each replica holds). See `docs/CLUSTER_FILE.md`.
//!
//! - `model`: the in-memory [`Cluster`] and its queries;
//! - `log`: a partition's record batches, as Fetch serves them;
//! - [`marker`]: what a transaction marker does to a partition;
//! - `coordinator_log`: the transaction coordinators' own records, appended
//!   to `__transaction_state` as they change an id;
//! - `generator`: what a producer generator makes, from the clock;
//! - [`internal`]: `__consumer_offsets` and `__transaction_state`, made
//!   when a coordinator is first asked for, as a broker makes them;
//! - `file`, `timestamp`: the file's serde schema and its times;
//! - `txn_log`, `generate`: the file's transaction logs and generators,
//!   read and checked;
//! - `validate`: turning a file into a model. Parsing is strict: unknown
//!   fields, duplicates and inconsistent placement are errors
//!   ([`ClusterError`], in `error`) that name the JSON path of the
//!   offending value.
//!
//! Dependencies go one way: `validate` reads `file`, which names the parts
//! `generate` and `txn_log` read; those build on `model`, which builds on
//! `log`, `generator` and the crate's transaction and group types.

pub(crate) mod coordinator_log;
mod error;
mod file;
mod generate;
mod generator;
pub mod internal;
pub mod log;
pub mod marker;
mod model;
mod timestamp;
mod txn_log;
mod validate;

pub use error::ClusterError;
pub use generator::{Generator, Kind as GeneratorKind, BLOCK as GENERATOR_BLOCK};
pub use log::{AbortedTxn, AppendError, LogBatch, PartitionLog, SimpleRecord};
pub use model::*;
pub use validate::validate_topic_name;

#[cfg(test)]
mod tests;
