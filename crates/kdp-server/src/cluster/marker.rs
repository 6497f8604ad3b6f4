//! What a transaction marker does to a partition
//! (`ProducerAppendInfo.appendEndTxnMarker`, `ProducerStateManager`): the
//! producer's entry on every replica takes the marker's epoch and
//! coordinator epoch, its open transaction ends (CurrentTxnStartOffset -1,
//! so the last stable offset moves), its LastTimestamp is the marker's
//! time, a changed epoch forgets the sequence; the marker is one record,
//! so the high watermark moves by one. The checks before a marker is
//! accepted are WriteTxnMarkers' (`crate::apis::write_txn_markers`).

use kdp_wire::messages::ProducerState;

use super::model::Partition;

/// What a marker leaves in a producer's entry.
pub struct MarkerState {
    /// The producer the marker is for.
    pub producer_id: i64,
    /// The marker's producer epoch.
    pub epoch: i32,
    /// The marker's coordinator epoch.
    pub coordinator_epoch: i32,
    /// When it is written.
    pub now_ms: i64,
}

impl MarkerState {
    /// Updates the entry at `at` (if it is this producer's) or appends one.
    pub fn write(&self, list: &mut Vec<ProducerState>, at: Option<usize>) {
        match at
            .and_then(|i| list.get_mut(i))
            .filter(|s| s.producer_id == self.producer_id)
        {
            Some(s) => {
                if s.producer_epoch != self.epoch {
                    s.last_sequence = -1;
                }
                s.producer_epoch = self.epoch;
                s.coordinator_epoch = self.coordinator_epoch;
                s.current_txn_start_offset = -1;
                s.last_timestamp = self.now_ms;
            }
            None => list.push(ProducerState {
                producer_id: self.producer_id,
                producer_epoch: self.epoch,
                last_sequence: -1,
                last_timestamp: self.now_ms,
                coordinator_epoch: self.coordinator_epoch,
                current_txn_start_offset: -1,
                unknown_tagged_fields: Default::default(),
            }),
        }
    }
}

/// A marker appended to `p` for `producer_id`, on every replica alike:
/// what the coordinator's marker does to a partition it ends a transaction
/// on (the mock writes it at once, where Kafka's marker channel sends it).
pub fn end_transaction(
    p: &mut Partition,
    producer_id: i64,
    epoch: i32,
    coordinator_epoch: i32,
    now_ms: i64,
) {
    let state = MarkerState {
        producer_id,
        epoch,
        coordinator_epoch,
        now_ms,
    };
    for list in p.all_producer_lists_mut() {
        let at = list.iter().position(|s| s.producer_id == producer_id);
        state.write(list, at);
    }
    p.high_watermark = p.high_watermark.saturating_add(1);
    p.explicit_last_stable_offset = None;
}
