//! The transaction coordinator's log, `__transaction_state`: one record per
//! state change of a transactional id, keyed by the id (Kafka's
//! `TransactionLogKey` and `TransactionLogValue`, from the transaction
//! coordinator's JSON schemas: `core/src/main/resources/common/message/` up
//! to 3.8, `transaction-coordinator/src/main/resources/common/message/` from
//! 3.9), and the rule that places an id on a partition.
//!
//! Kafka 3.9 writes value version 1 (flexible) once `transaction.version`
//! is finalized at 1 or more, else version 0; Kafka 4.x adds the tagged
//! fields PreviousProducerId (0), NextProducerId (1),
//! ClientTransactionVersion (2) and (4.4) NextProducerEpoch (3) to version
//! 1, which 3.9 reads as unknown tags. A null value is a tombstone: the id
//! expired and was removed. The key's version is what Kafka 4.x's schema
//! calls the record type (`"apiKey": 0` of a `coordinator-key`), 0 either
//! way.

use kdp_derive::kafka;

use super::record::{decode_record, CoordinatorRecord, Versioned};
use crate::error::{Context, DecodeError};
use crate::tagged::TaggedFields;
use crate::txn_state::TxnState;

/// The record key: which transactional id the value describes.
#[kafka(record = "0", flexible = "none")]
pub struct TransactionLogKey {
    /// The transactional id.
    pub transactional_id: String,
    /// Tagged fields kdp does not know (none: no version is flexible).
    pub unknown_tagged_fields: TaggedFields,
}

/// The record value: the id's state after one change.
#[kafka(record = "0-1", flexible = "1+")]
pub struct TransactionLogValue {
    /// The producer id in use by the transactional id.
    pub producer_id: i64,
    /// Tagged (v1+, Kafka 4.x): the producer id of the last committed
    /// transaction, or -1.
    #[kafka(tag = 0, versions = "1+", default = "-1")]
    pub previous_producer_id: i64,
    /// Tagged (v1+, Kafka 4.x): the producer id the coordinator handed out
    /// for the id when the epoch ran out at the end of this transaction
    /// (transaction protocol v2), or -1.
    #[kafka(tag = 1, versions = "1+", default = "-1")]
    pub next_producer_id: i64,
    /// The epoch of the producer id.
    pub producer_epoch: i16,
    /// Tagged (v1+, in Kafka 4.4's schema): the epoch that goes with
    /// NextProducerId, or -1.
    #[kafka(tag = 3, versions = "1+", default = "-1")]
    pub next_producer_epoch: i16,
    /// The transaction timeout in milliseconds.
    pub transaction_timeout_ms: i32,
    /// The state: Kafka's `TransactionState` id (see [`TxnState::from_id`]).
    pub transaction_status: i8,
    /// The partitions in the transaction; null when the state is Empty.
    pub transaction_partitions: Option<Vec<PartitionsSchema>>,
    /// When the coordinator last changed the state (ms since the epoch).
    pub transaction_last_update_timestamp_ms: i64,
    /// When the transaction started, or -1.
    pub transaction_start_timestamp_ms: i64,
    /// Tagged (v1+, Kafka 4.x): the transaction version the client used
    /// (2: transaction protocol v2), or 0.
    #[kafka(tag = 2, versions = "1+", default = "0")]
    pub client_transaction_version: i16,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The partitions of one topic in the transaction.
#[kafka]
pub struct PartitionsSchema {
    /// The topic.
    pub topic: String,
    /// Its partitions.
    pub partition_ids: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

impl TransactionLogValue {
    /// The state, or `None` for an id this version of kdp does not know.
    pub fn state(&self) -> Option<TxnState> {
        TxnState::from_id(self.transaction_status)
    }

    /// Every (topic, partition) of the transaction, in record order.
    pub fn partitions(&self) -> impl Iterator<Item = (&str, i32)> {
        self.transaction_partitions
            .iter()
            .flatten()
            .flat_map(|t| t.partition_ids.iter().map(move |&p| (t.topic.as_str(), p)))
    }
}

/// One record of `__transaction_state`, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnLogEntry {
    /// A state of the id.
    State {
        /// The key's version.
        key_version: i16,
        /// The transactional id.
        transactional_id: String,
        /// The value and its version.
        value: Versioned<TransactionLogValue>,
    },
    /// A null value: the id expired and the coordinator removed it.
    Tombstone {
        /// The key's version.
        key_version: i16,
        /// The transactional id.
        transactional_id: String,
    },
}

impl TxnLogEntry {
    /// The transactional id.
    pub fn transactional_id(&self) -> &str {
        match self {
            TxnLogEntry::State {
                transactional_id, ..
            }
            | TxnLogEntry::Tombstone {
                transactional_id, ..
            } => transactional_id,
        }
    }
}

/// Decodes one record's key and value (`None`: a null value, a tombstone).
/// Errors name the part (`Key`, `Value`), the field and the byte offset
/// within that part.
pub fn decode_entry(key: &[u8], value: Option<&[u8]>) -> Result<TxnLogEntry, DecodeError> {
    let key = decode_record::<TransactionLogKey>(key).field("Key")?;
    let transactional_id = key.record.transactional_id;
    Ok(match value {
        None => TxnLogEntry::Tombstone {
            key_version: key.version,
            transactional_id,
        },
        Some(bytes) => TxnLogEntry::State {
            key_version: key.version,
            transactional_id,
            value: decode_record::<TransactionLogValue>(bytes).field("Value")?,
        },
    })
}

/// Decodes only the transactional id of a key, for skipping the records of
/// other ids without decoding their values.
pub fn key_transactional_id(key: &[u8]) -> Result<String, DecodeError> {
    Ok(decode_record::<TransactionLogKey>(key)
        .field("Key")?
        .record
        .transactional_id)
}

/// Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over the UTF-16
/// code units, in wrapping 32-bit arithmetic.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The `__transaction_state` partition that holds `transactional_id`:
/// Kafka's `Utils.abs(transactionalId.hashCode) % partitionCount`, where
/// `Utils.abs(Integer.MIN_VALUE)` is 0 and the count is the topic's
/// partition count in the cluster's metadata. `None` for a count below 1.
pub fn partition_for(transactional_id: &str, partition_count: i32) -> Option<i32> {
    if partition_count < 1 {
        return None;
    }
    let h = java_string_hash(transactional_id);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    Some(abs % partition_count)
}

/// The internal topic's name.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

impl<R: CoordinatorRecord> Versioned<R> {
    /// The record encoded again, version prefix first.
    pub fn to_bytes(&self) -> Vec<u8> {
        super::record::encode_record(&self.record, self.version)
    }
}
