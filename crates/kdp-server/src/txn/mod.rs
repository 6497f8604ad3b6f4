//! What a transaction coordinator holds: one entry per transactional id
//! (Kafka's `TransactionMetadata`), and the rule that places a
//! transactional id on a coordinator.
//!
//! - [`transit`]: the state changes the coordinator makes, each computed
//!   before it is applied (Kafka's `TxnTransitMetadata` and
//!   `TransactionMetadata.prepare*`);
//! - [`record`]: a change as the record the coordinator appends to
//!   `__transaction_state`, in the format of the cluster's generation.

pub mod record;
mod transaction;
pub mod transit;

/// A transaction's state: declared once, in kdp-wire.
pub use kdp_wire::TxnState;
pub use transaction::Transaction;

/// Java's `String.hashCode`, declared once in kdp-wire.
pub use kdp_wire::coordinator::txn_log::java_string_hash;

/// `Utils.abs(key.hashCode) % partitionCount`, the partition of
/// `__transaction_state` (or `__consumer_offsets`) that owns `key`
/// (kdp-wire's [`partition_for`](kdp_wire::coordinator::txn_log::partition_for)).
/// `None` without partitions.
pub fn coordinator_partition(key: &str, partition_count: usize) -> Option<i32> {
    let count = i32::try_from(partition_count).ok()?;
    kdp_wire::coordinator::txn_log::partition_for(key, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_known_values() {
        // Values of "...".hashCode() in Java.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        // Overflows (wraps to MIN_VALUE: `Utils.abs` gives 0), and goes negative.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(java_string_hash("transactional-id-1"), 1_051_133_891);
        assert_eq!(java_string_hash("payments-txn"), -480_581_686);
        // UTF-16 units, not bytes: U+00E9 is one unit (233).
        assert_eq!(java_string_hash("\u{e9}"), 233);
    }

    #[test]
    fn partition_rule_is_kafkas() {
        assert_eq!(coordinator_partition("hello", 50), Some(99_162_322 % 50));
        assert_eq!(coordinator_partition("polygenelubricants", 50), Some(0));
        assert_eq!(
            coordinator_partition("transactional-id-1", 50),
            Some(1_051_133_891 % 50)
        );
        assert_eq!(
            coordinator_partition("payments-txn", 50),
            Some(480_581_686 % 50)
        );
        assert_eq!(coordinator_partition("x", 0), None);
    }

    #[test]
    fn only_idle_settled_ids_expire() {
        let t = |state| Transaction {
            transactional_id: "t".into(),
            producer_id: 1,
            producer_epoch: 0,
            state,
            timeout_ms: 60_000,
            start_time_ms: -1,
            partitions: Vec::new(),
            coordinator_override: None,
            last_update_ms: 1_000,
            client_transaction_version: 0,
            next_producer_id: -1,
        };
        // Idle exactly the expiration: expired (Kafka's `<=`).
        assert!(t(TxnState::Empty).should_expire(1_500, 500));
        assert!(!t(TxnState::Empty).should_expire(1_499, 500));
        assert!(t(TxnState::CompleteAbort).should_expire(9_000, 500));
        assert!(t(TxnState::CompleteCommit).should_expire(9_000, 500));
        for open in [
            TxnState::Ongoing,
            TxnState::PrepareCommit,
            TxnState::PrepareAbort,
            TxnState::PrepareEpochFence,
            TxnState::Dead,
        ] {
            assert!(!t(open).should_expire(9_000, 500), "{open}");
        }
    }

    #[test]
    fn state_names_round_trip() {
        for s in TxnState::ALL {
            assert_eq!(TxnState::from_name(s.name()), Some(s));
        }
        assert_eq!(TxnState::from_name("ongoing"), None);
    }
}
