//! A transactional id's past in the cluster file (`transactions[].log`):
//! the state changes its coordinator wrote to `__transaction_state`, turned
//! into the records Kafka's coordinator appends (TransactionLogKey v0 and
//! TransactionLogValue, encoded by kdp-wire) so that the mock serves them
//! by Fetch like a broker.

use std::collections::{BTreeMap, BTreeSet};

use kdp_wire::coordinator::encode_record;
use kdp_wire::coordinator::txn_log::{PartitionsSchema, TransactionLogKey, TransactionLogValue};
use kdp_wire::TxnState;
use serde::Deserialize;

use super::error::ClusterError;
use super::log::SimpleRecord;
use super::model::Cluster;
use super::timestamp::Timestamp;
use crate::txn::Transaction;

/// One state change in the file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TxnLogFile {
    /// When the coordinator wrote it: the record's timestamp and the value's
    /// TransactionLastUpdateTimestampMs.
    pub(super) time: Timestamp,
    /// A null value: the id expired and the coordinator removed it.
    #[serde(default)]
    pub(super) tombstone: bool,
    /// Kafka's state name; required unless `tombstone`.
    #[serde(default)]
    pub(super) state: Option<String>,
    /// Default: the transaction's.
    #[serde(default)]
    pub(super) producer_id: Option<i64>,
    /// Default: the transaction's.
    #[serde(default)]
    pub(super) producer_epoch: Option<i16>,
    /// Default: the transaction's.
    #[serde(default)]
    pub(super) timeout_ms: Option<i32>,
    /// Topic to partitions; must be empty for Empty.
    #[serde(default)]
    pub(super) partitions: BTreeMap<String, Vec<i32>>,
    /// Default: for Ongoing, PrepareCommit/Abort and CompleteCommit/Abort,
    /// the time of the Ongoing that began the transaction; else -1.
    #[serde(default)]
    pub(super) start_time: Option<Timestamp>,
    #[serde(default = "minus_one")]
    pub(super) previous_producer_id: i64,
    #[serde(default = "minus_one")]
    pub(super) next_producer_id: i64,
    #[serde(default = "minus_one_i16")]
    pub(super) next_producer_epoch: i16,
    #[serde(default)]
    pub(super) client_transaction_version: i16,
    /// TransactionLogValue's version: 1 (flexible, Kafka 3.9 with
    /// `transaction.version` and 4.x) by default, or 0.
    #[serde(default = "one")]
    pub(super) version: i16,
}

fn minus_one() -> i64 {
    -1
}

fn minus_one_i16() -> i16 {
    -1
}

fn one() -> i16 {
    1
}

/// The records of `txn`'s log, validated against the file: states are
/// Kafka's, partitions exist, and the last record is the coordinator's
/// current entry (its producer id, epoch and state), as a coordinator's
/// state is its log's last record.
pub(super) fn records(
    path: &str,
    txn: &Transaction,
    log: Vec<TxnLogFile>,
    cluster: &Cluster,
    now_ms: i64,
) -> Result<Vec<SimpleRecord>, ClusterError> {
    let key = encode_record(
        &TransactionLogKey {
            transactional_id: txn.transactional_id.clone(),
            ..Default::default()
        },
        0,
    );
    let mut out = Vec::with_capacity(log.len());
    let mut start: i64 = -1;
    let mut last: Option<(i64, i16, TxnState)> = None;
    for (i, e) in log.into_iter().enumerate() {
        let at = format!("{path}.log[{i}]");
        let time = e.time.resolve(now_ms);
        if e.tombstone {
            if e.state.is_some() {
                return Err(ClusterError::new(
                    format!("{at}.state"),
                    "a tombstone has no state",
                ));
            }
            out.push(SimpleRecord {
                timestamp_ms: time,
                key: Some(key.clone()),
                value: None,
            });
            last = None;
            start = -1;
            continue;
        }
        let name = e.state.as_deref().ok_or_else(|| {
            ClusterError::new(format!("{at}.state"), "required (or \"tombstone\": true)")
        })?;
        let state = TxnState::from_name(name).ok_or_else(|| {
            ClusterError::new(
                format!("{at}.state"),
                format!(
                    "{name:?} is not a transaction state ({})",
                    TxnState::names()
                ),
            )
        })?;
        if !(0..=1).contains(&e.version) {
            return Err(ClusterError::new(
                format!("{at}.version"),
                "TransactionLogValue has versions 0 and 1",
            ));
        }
        let producer_id = e.producer_id.unwrap_or(txn.producer_id);
        let producer_epoch = e.producer_epoch.unwrap_or(txn.producer_epoch);
        if producer_id < 0 || producer_epoch < 0 {
            return Err(ClusterError::new(
                at,
                "producer_id and producer_epoch must not be negative",
            ));
        }
        let mut topics = Vec::new();
        for (topic, ids) in e.partitions {
            let tpath = format!("{at}.partitions.{topic}");
            let Some(t) = cluster.topic(&topic) else {
                return Err(ClusterError::new(
                    tpath,
                    format!("topic {topic:?} is not in this file"),
                ));
            };
            let mut seen = BTreeSet::new();
            for &p in &ids {
                if usize::try_from(p).map_or(true, |i| i >= t.partitions.len()) || !seen.insert(p) {
                    return Err(ClusterError::new(
                        tpath,
                        format!("partition {p} is not a partition of {topic:?}, or appears twice"),
                    ));
                }
            }
            topics.push(PartitionsSchema {
                topic,
                partition_ids: ids,
                ..Default::default()
            });
        }
        if state == TxnState::Empty && !topics.is_empty() {
            return Err(ClusterError::new(
                format!("{at}.partitions"),
                "an Empty id has no partitions",
            ));
        }
        // Kafka: the start is set when the first partition is added after
        // Empty or a completed transaction, and kept until the next one.
        let begins = state == TxnState::Ongoing && !matches!(last, Some((_, _, TxnState::Ongoing)));
        start = match (e.start_time, state) {
            (Some(t), _) => t.resolve(now_ms),
            (None, TxnState::Empty) => -1,
            (None, _) if begins => time,
            (None, _) => start,
        };
        let value = TransactionLogValue {
            producer_id,
            previous_producer_id: e.previous_producer_id,
            next_producer_id: e.next_producer_id,
            producer_epoch,
            next_producer_epoch: e.next_producer_epoch,
            transaction_timeout_ms: e.timeout_ms.unwrap_or(txn.timeout_ms),
            transaction_status: state.id(),
            // Kafka writes null for Empty, the set (maybe empty) otherwise
            transaction_partitions: (state != TxnState::Empty).then_some(topics),
            transaction_last_update_timestamp_ms: time,
            transaction_start_timestamp_ms: start,
            client_transaction_version: e.client_transaction_version,
            ..Default::default()
        };
        out.push(SimpleRecord {
            timestamp_ms: time,
            key: Some(key.clone()),
            value: Some(encode_record(&value, e.version)),
        });
        last = Some((producer_id, producer_epoch, state));
    }
    if let Some((pid, epoch, state)) = last {
        if (pid, epoch, state) != (txn.producer_id, txn.producer_epoch, txn.state) {
            return Err(ClusterError::new(
                format!("{path}.log"),
                format!(
                    "the last record (producer {pid} epoch {epoch} {state}) must be the \
                     coordinator's entry (producer {} epoch {} {}): a coordinator's state is \
                     its log's last record",
                    txn.producer_id, txn.producer_epoch, txn.state
                ),
            ));
        }
    }
    Ok(out)
}
