//! Reasoning over producer and transaction state: which open transaction
//! hangs or is stuck, which producer is fenced, orphaned or idle, and where
//! replicas disagree. Pure functions over what the brokers answered, so that
//! every verdict can be tested without a cluster and explained in a row.
//!
//! - [`blocked`]: pinned partitions, what pins them and the consumer
//!   groups they hold back.
//! - [`hanging`]: Kafka's `find-hanging` rule, and kdp's verdicts around it.
//! - [`findings`](mod@findings): every open transaction of a join judged by
//!   that rule, with each partition's LSO holder: the one classification
//!   `kdp find-hanging`, its `--repair` and the exporter all call.
//! - [`fence`]: the one `fenced` verdict: the transaction log's instance
//!   changes (both protocol generations) or the v1 epochs.
//! - [`flags`]: per-producer flags for `describe --with-transactions`.
//! - [`pressure`]: producer ids held per broker and topic, expiry, epochs.
//! - [`replicas`]: field-by-field differences between a partition's replicas.
//! - [`sequence`]: each producer's batches against the broker's sequence and
//!   epoch rules (gaps, duplicates, epochs going back).

pub mod blocked;
pub mod fence;
pub mod findings;
pub mod flags;
pub mod hanging;
pub mod pressure;
pub mod replicas;
pub mod sequence;

pub use findings::{findings, Findings};

/// The transaction protocol generation a cluster runs (KIP-890).
///
/// Under v1 a producer epoch changes only when an instance starts (and
/// fences the previous one); under v2 every transaction end bumps it too.
/// Which epoch comparisons prove anything depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TxnProtocol {
    /// `transaction.version` 0 or 1: epochs stay across transactions.
    V1,
    /// `transaction.version` 2: each commit or abort bumps the epoch.
    V2,
}

impl TxnProtocol {
    /// From the cluster's finalized `transaction.version` feature level
    /// (absent: 0).
    pub fn from_feature_level(level: i16) -> Self {
        if level >= 2 {
            TxnProtocol::V2
        } else {
            TxnProtocol::V1
        }
    }

    /// "v1" or "v2".
    pub fn as_str(self) -> &'static str {
        match self {
            TxnProtocol::V1 => "v1",
            TxnProtocol::V2 => "v2",
        }
    }
}

/// Whether the coordinator's transaction `t` holds `topic`/`partition`: it
/// will write that partition's marker (Ongoing: all its partitions;
/// Prepare*: those still waiting for a marker).
pub fn includes(t: &kdp_wire::messages::TransactionState, topic: &str, partition: i32) -> bool {
    t.topics
        .iter()
        .any(|td| td.topic == topic && td.partitions.contains(&partition))
}
