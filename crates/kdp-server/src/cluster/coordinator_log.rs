//! The transaction coordinators' own records in `__transaction_state`
//! (`TransactionStateManager.appendTransactionToLog` and
//! `removeExpiredTransactionalIds`): each state change is one record, in a
//! batch of its own, appended to the partition Kafka's hash rule gives the
//! transactional id, after whatever the log holds (the cluster file's
//! `transactions[].log` first), at increasing offsets, the high watermark
//! moving past it. Expired ids get a tombstone each, one batch per
//! partition. Without the topic (a file that names the coordinators
//! instead) there is nowhere to write, and nothing is written.

use super::log::SimpleRecord;
use super::model::{Cluster, TRANSACTION_STATE_TOPIC};
use crate::txn::record;
use crate::txn::transit::Transit;

impl Cluster {
    /// Appends `t`, the state change of `transactional_id` made at
    /// `now_ms`, to its `__transaction_state` partition, in the format of
    /// the cluster's `transaction.version`. Returns the record's offset, or
    /// `None` without the topic.
    pub fn append_transit(
        &mut self,
        transactional_id: &str,
        t: &Transit,
        now_ms: i64,
    ) -> Option<i64> {
        let partition = self.transaction_state_partition(transactional_id)?.index;
        let record = SimpleRecord {
            key: Some(record::key(transactional_id)),
            value: Some(record::value_bytes(t, self.transaction_version)),
            timestamp_ms: now_ms,
        };
        self.append_records(TRANSACTION_STATE_TOPIC, partition, &[record])
            .ok()
            .map(|(first, _)| first)
    }

    /// Appends `t` to the log, then applies it to the entry
    /// (`completeTransitionTo` after the append): what every change the
    /// coordinator makes goes through. Nothing happens to an id the
    /// cluster does not have.
    pub fn commit_transit(&mut self, transactional_id: &str, t: &Transit, now_ms: i64) {
        if self.transaction(transactional_id).is_none() {
            return;
        }
        self.append_transit(transactional_id, t, now_ms);
        if let Some(entry) = self.transaction_mut(transactional_id) {
            entry.complete(t);
        }
    }

    /// Appends a tombstone for each of `ids` (expired and removed at
    /// `now_ms`), one batch per `__transaction_state` partition, in the
    /// order given.
    pub fn append_tombstones(&mut self, ids: &[String], now_ms: i64) {
        let mut by_partition: std::collections::BTreeMap<i32, Vec<SimpleRecord>> =
            Default::default();
        for id in ids {
            if let Some(p) = self.transaction_state_partition(id) {
                by_partition.entry(p.index).or_default().push(SimpleRecord {
                    key: Some(record::key(id)),
                    value: None,
                    timestamp_ms: now_ms,
                });
            }
        }
        for (partition, records) in by_partition {
            // The partition was just looked up: it is there.
            let _ = self.append_records(TRANSACTION_STATE_TOPIC, partition, &records);
        }
    }
}

/// Reading the records back, for the tests of what the coordinators write.
#[cfg(test)]
pub(crate) mod testing {
    use kdp_wire::coordinator::txn_log::{decode_entry, TxnLogEntry};
    use kdp_wire::records::{Batches, DEFAULT_MAX_DECOMPRESSED};

    use super::super::model::{Cluster, TRANSACTION_STATE_TOPIC};

    /// One record: offset, timestamp, the batch's leader epoch, the entry.
    pub(crate) type Read = (i64, i64, i32, TxnLogEntry);

    /// Every record of `__transaction_state` partition `partition`, decoded.
    pub(crate) fn txn_log(c: &Cluster, partition: i32) -> Vec<Read> {
        let p = c
            .partition(TRANSACTION_STATE_TOPIC, partition)
            .expect("the partition");
        let mut out = Vec::new();
        for b in p.log.batches() {
            let batch = Batches::new(&b.bytes).next().unwrap().unwrap();
            let h = *batch.header();
            assert_eq!((h.producer_id, h.magic), (-1, 2), "{h:?}");
            for r in batch.records(DEFAULT_MAX_DECOMPRESSED).unwrap() {
                let entry = decode_entry(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap();
                out.push((
                    h.base_offset + i64::from(r.offset_delta),
                    h.base_timestamp + r.timestamp_delta,
                    h.partition_leader_epoch,
                    entry,
                ));
            }
        }
        out
    }

    /// The values of `txn_log`, tombstones left out.
    pub(crate) fn values(
        c: &Cluster,
        partition: i32,
    ) -> Vec<kdp_wire::coordinator::Versioned<kdp_wire::coordinator::txn_log::TransactionLogValue>>
    {
        txn_log(c, partition)
            .into_iter()
            .filter_map(|(_, _, _, e)| match e {
                TxnLogEntry::State { value, .. } => Some(value),
                TxnLogEntry::Tombstone { .. } => None,
            })
            .collect()
    }
}
