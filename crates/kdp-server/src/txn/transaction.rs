//! [`Transaction`]: one transactional id as its coordinator holds it
//! (Kafka's `TransactionMetadata`).

use kdp_wire::TxnState;

/// One transactional id as its coordinator holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// The key the coordinator is found by (FindCoordinator KeyType TRANSACTION).
    pub transactional_id: String,
    /// The producer id InitProducerId handed out for this transactional id.
    pub producer_id: i64,
    /// The current epoch of that producer id; older epochs are fenced.
    pub producer_epoch: i16,
    /// Where the transaction stands in Kafka's state machine (Empty, Ongoing, PrepareCommit, ...).
    pub state: TxnState,
    /// TransactionTimeoutMs: how long the transaction may stay open before the coordinator aborts it.
    pub timeout_ms: i32,
    /// Milliseconds since the epoch; -1 when no transaction was started.
    pub start_time_ms: i64,
    /// The partitions of the transaction, by topic (sorted by name).
    pub partitions: Vec<(String, Vec<i32>)>,
    /// The broker the file names as coordinator, instead of the hash rule.
    pub coordinator_override: Option<i32>,
    /// When the coordinator last changed this entry (`txnLastUpdateTimestamp`),
    /// milliseconds since the epoch: what expiry counts idleness from.
    pub last_update_ms: i64,
    /// The transaction version the client used at the last change
    /// (`clientTransactionVersion`: 2 under transaction protocol v2, else 0).
    pub client_transaction_version: i16,
    /// The producer id announced for the end of the transaction when the
    /// epoch ran out (`nextProducerId`, protocol v2), or -1.
    pub next_producer_id: i64,
}

impl Transaction {
    /// Whether the transaction includes `topic`-`partition`.
    pub fn has_partition(&self, topic: &str, partition: i32) -> bool {
        self.partitions
            .iter()
            .any(|(t, ps)| t == topic && ps.contains(&partition))
    }
}

impl Transaction {
    /// `TransactionStateManager.shouldExpire`: no transaction is open or
    /// completing, and the entry has not changed for `expiration_ms`.
    pub fn should_expire(&self, now_ms: i64, expiration_ms: i64) -> bool {
        self.state.is_expiration_allowed()
            && self.last_update_ms <= now_ms.saturating_sub(expiration_ms)
    }
}
