//! A state change as the record the transaction coordinator appends to
//! `__transaction_state` (`TransactionLog.keyToBytes` / `valueToBytes`):
//! the key is TransactionLogKey version 0; the value's version follows the
//! cluster's finalized `transaction.version`
//! (`TransactionVersion.transactionLogValueVersion`: 0 below level 1, the
//! flexible 1 from it). Version 1 carries what Kafka 4.x sets on it:
//! PreviousProducerId and NextProducerId (tags 0 and 1) and
//! ClientTransactionVersion (tag 2), each written only when it is not its
//! default; NextProducerEpoch (tag 3) stays unset, as Kafka 4.4 leaves it.
//! Kafka 3.9 writes version 0 (it has no `transaction.version`). Partitions
//! are null for Empty, a list (maybe empty) otherwise, one entry per topic.
//! An expired id's record is a tombstone: the key and a null value.

use kdp_wire::coordinator::encode_record;
use kdp_wire::coordinator::txn_log::{PartitionsSchema, TransactionLogKey, TransactionLogValue};
use kdp_wire::TxnState;

use super::transit::Transit;

/// The key of `transactional_id`'s records.
pub fn key(transactional_id: &str) -> Vec<u8> {
    encode_record(
        &TransactionLogKey {
            transactional_id: transactional_id.to_string(),
            ..Default::default()
        },
        0,
    )
}

/// The value version a cluster at `transaction_version` writes.
pub fn value_version(transaction_version: i16) -> i16 {
    if transaction_version >= 1 {
        1
    } else {
        0
    }
}

/// The value of `t` as a cluster at `transaction_version` writes it (the
/// fields version 0 lacks left at their defaults), and its version.
pub fn value(t: &Transit, transaction_version: i16) -> (TransactionLogValue, i16) {
    let version = value_version(transaction_version);
    let flexible = version >= 1;
    let value = TransactionLogValue {
        producer_id: t.producer_id,
        previous_producer_id: if flexible { t.prev_producer_id } else { -1 },
        next_producer_id: if flexible { t.next_producer_id } else { -1 },
        producer_epoch: t.producer_epoch,
        next_producer_epoch: -1,
        transaction_timeout_ms: t.timeout_ms,
        transaction_status: t.state.id(),
        transaction_partitions: (t.state != TxnState::Empty).then(|| {
            t.partitions
                .iter()
                .map(|(topic, ids)| PartitionsSchema {
                    topic: topic.clone(),
                    partition_ids: ids.clone(),
                    ..Default::default()
                })
                .collect()
        }),
        transaction_last_update_timestamp_ms: t.last_update_ms,
        transaction_start_timestamp_ms: t.start_time_ms,
        client_transaction_version: if flexible {
            t.client_transaction_version
        } else {
            0
        },
        ..Default::default()
    };
    (value, version)
}

/// The value of `t`, encoded, version prefix first.
pub fn value_bytes(t: &Transit, transaction_version: i16) -> Vec<u8> {
    let (v, version) = value(t, transaction_version);
    encode_record(&v, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::coordinator::txn_log::{decode_entry, TxnLogEntry};

    fn transit(state: TxnState) -> Transit {
        Transit {
            producer_id: 4001,
            prev_producer_id: 4001,
            next_producer_id: -1,
            producer_epoch: 7,
            timeout_ms: 60_000,
            state,
            partitions: vec![("orders".into(), vec![1, 2]), ("payments".into(), vec![0])],
            start_time_ms: 1_000,
            last_update_ms: 2_000,
            client_transaction_version: 2,
        }
    }

    #[test]
    fn each_generation_writes_its_version() {
        let t = transit(TxnState::PrepareAbort);
        for (tv, version) in [(0i16, 0i16), (1, 1), (2, 1)] {
            let bytes = value_bytes(&t, tv);
            assert_eq!(bytes[..2], version.to_be_bytes(), "level {tv}");
            let TxnLogEntry::State {
                key_version,
                transactional_id,
                value,
            } = decode_entry(&key("app"), Some(&bytes)).unwrap()
            else {
                panic!("a state")
            };
            assert_eq!((key_version, transactional_id.as_str()), (0, "app"));
            assert_eq!(value.version, version);
            let v = value.record;
            assert_eq!((v.producer_id, v.producer_epoch), (4001, 7));
            assert_eq!(v.state(), Some(TxnState::PrepareAbort));
            assert_eq!(
                v.partitions().collect::<Vec<_>>(),
                [("orders", 1), ("orders", 2), ("payments", 0)]
            );
            assert_eq!(
                (
                    v.transaction_timeout_ms,
                    v.transaction_start_timestamp_ms,
                    v.transaction_last_update_timestamp_ms
                ),
                (60_000, 1_000, 2_000)
            );
            // Version 0 has no tagged fields: they read as their defaults.
            let (prev, client) = if version == 0 { (-1, 0) } else { (4001, 2) };
            assert_eq!(
                (
                    v.previous_producer_id,
                    v.next_producer_id,
                    v.next_producer_epoch
                ),
                (prev, -1, -1)
            );
            assert_eq!(v.client_transaction_version, client);
            assert!(v.unknown_tagged_fields.is_empty());
        }
    }

    #[test]
    fn empty_has_null_partitions_and_defaults_are_not_written() {
        let mut t = transit(TxnState::Empty);
        t.partitions.clear();
        t.client_transaction_version = 0;
        t.prev_producer_id = -1;
        let (v, _) = value(&t, 2);
        assert_eq!(v.transaction_partitions, None);
        // v1 with every tag at its default: no tag is written, so the value
        // is its fixed fields and an empty tag section.
        let bytes = value_bytes(&t, 2);
        // version, producer id, epoch, timeout, status, null array (-1 as
        // compact length 0), two timestamps, tag count.
        assert_eq!(bytes.len(), 2 + 8 + 2 + 4 + 1 + 1 + 8 + 8 + 1);
        // CompleteCommit has an empty list, not null.
        let mut c = transit(TxnState::CompleteCommit);
        c.partitions.clear();
        assert_eq!(value(&c, 0).0.transaction_partitions, Some(Vec::new()));
    }
}
