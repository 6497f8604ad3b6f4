//! Consumer lag in records, not offsets (issue 30; the facts behind every
//! rule are in docs/LAG.md): for each group's committed offset on a
//! partition, what a read_committed consumer would still receive up to
//! the last stable offset (markers and aborted records excluded), what an
//! open transaction holds back above the LSO and which one, and Kafka's
//! own offset lag beside them for comparison. Groups whose consumers read
//! read_uncommitted ([`LagOptions::isolation`]) are counted up to the high
//! watermark instead, aborted and open transactions' records included; a
//! share group between bounds, the lower one from Kafka's own Lag.
//!
//! - [`position`]: a committed offset against the partition's bounds (the
//!   model `kdp blocked` judges from too).
//! - [`tally`]: the count from Fetch answers, exact or bounded.
//! - [`verdict`]: each position's verdict.
//! - [`model`]: the rows, judged ([`lag`]).
//! - [`found`]: the rows summed per group and topic (the exporter's series).
//! - [`known`]: what earlier reads proved, so a later one reads only what
//!   the log added (the exporter's scans).
//! - [`proof`]: when a partition needs no read at all (no marker can lie
//!   in its range, by the broker's producer state and the log's times).
//! - [`waves`]: a whole-cluster read cut into waves of topics, so that
//!   what it holds follows one wave.
//!
//! [`lag`] joins the groups, each partition's bounds and count, and the
//! transactions `kdp blocked` finds holding an LSO.

pub mod found;
pub mod known;
pub mod model;
pub mod position;
pub mod proof;
pub mod tally;
pub mod verdict;
pub mod waves;

pub use known::Known;
pub use model::{
    each_start, lag, lag_each, partitions_to_read, read_starts, uncommitted_starts, Lag, LagGap,
    LagOptions, LagRow, PartitionLag, ShareFacts, Stop,
};
pub use position::{At, Bounds, Position};
pub use proof::{prove, ProducersSeen, Proof, ProofFacts, TimestampType, Unproven};
pub use tally::{Records, Tally};
pub use verdict::LagVerdict;
pub use waves::{TopicWaves, WaveGaps, WavePlan};
