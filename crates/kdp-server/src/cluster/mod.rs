//! The cluster the mock serves and the JSON file that describes it
//! (brokers, topics, partitions, replica placement, offline logs, and the
//! producer state each replica holds). See `docs/CLUSTER_FILE.md`.
//!
//! - `model`: the in-memory [`Cluster`] and its queries;
//! - `file`: the file's serde schema;
//! - `validate`: turning a file into a model. Parsing is strict: unknown
//!   fields, duplicates and inconsistent placement are errors that name the
//!   JSON path of the offending value.

mod file;
mod generate;
pub mod log;
mod model;
mod txn_log;
mod validate;

pub use generate::{Generator, Kind as GeneratorKind, BLOCK as GENERATOR_BLOCK};
pub use log::{AbortedTxn, AppendError, LogBatch, PartitionLog, SimpleRecord};
pub use model::*;
pub use validate::{validate_topic_name, ClusterError};

#[cfg(test)]
mod tests;
