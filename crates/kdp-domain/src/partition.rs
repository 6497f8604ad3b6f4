//! Partitions and what DescribeProducers answered for each: the vocabulary
//! every layer shares (the client fills it in, the diagnosis reads it).

use kdp_wire::messages::ProducerState;

use crate::key_error::KeyError;

/// A topic partition, the key of most partition-level admin requests.
pub type TopicPartition = (String, i32);

/// A partition that could not be described: a broker's error code, or a
/// client-side failure expressed as the closest Kafka error code.
pub type PartitionError = KeyError;

/// The answer for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionOutcome {
    /// The topic name.
    pub topic: String,
    /// `-1` for an error about a whole topic whose partitions are unknown
    /// (e.g. the topic does not exist and no partition was named).
    pub partition: i32,
    /// The broker that answered (or was asked last); `None` when no broker
    /// was asked (metadata settled it).
    pub broker_id: Option<i32>,
    /// The partition's `ActiveProducers`, or why they are unknown.
    pub result: Result<Vec<ProducerState>, PartitionError>,
}

impl PartitionOutcome {
    /// `topic`/`partition` as broker `broker_id` answered it: these
    /// producers.
    pub fn answered(
        topic: impl Into<String>,
        partition: i32,
        broker_id: i32,
        producers: Vec<ProducerState>,
    ) -> Self {
        PartitionOutcome {
            topic: topic.into(),
            partition,
            broker_id: Some(broker_id),
            result: Ok(producers),
        }
    }
}

/// Counts over a finished describe.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DescribeSummary {
    /// Partitions reported (with producers, without, or with an error).
    pub partitions: usize,
    /// Partitions reported with an error.
    pub failed: usize,
    /// The largest `ThrottleTimeMs` any broker answered.
    pub max_throttle_time_ms: i32,
    /// Rounds taken: of requests, or of metadata lookups resolving the
    /// topics if those took more.
    pub rounds: u32,
    /// Partitions picked as part of a topic or the cluster whose topic was
    /// deleted during the scan (not reported).
    pub vanished: usize,
}

/// The fields of one producer's state that the folds read, from an owned
/// [`ProducerState`] or through a response's view
/// ([`ProducerStateView`](kdp_wire::messages::ProducerStateView)), so a
/// scan can fold what it reads without building the owned producers.
pub trait ProducerFields {
    /// `ProducerId`.
    fn producer_id(&self) -> i64;
    /// `ProducerEpoch`.
    fn producer_epoch(&self) -> i32;
    /// `LastSequence`.
    fn last_sequence(&self) -> i32;
    /// `LastTimestamp`.
    fn last_timestamp(&self) -> i64;
    /// `CoordinatorEpoch`.
    fn coordinator_epoch(&self) -> i32;
    /// `CurrentTxnStartOffset`.
    fn current_txn_start_offset(&self) -> i64;
}

impl ProducerFields for ProducerState {
    fn producer_id(&self) -> i64 {
        self.producer_id
    }
    fn producer_epoch(&self) -> i32 {
        self.producer_epoch
    }
    fn last_sequence(&self) -> i32 {
        self.last_sequence
    }
    fn last_timestamp(&self) -> i64 {
        self.last_timestamp
    }
    fn coordinator_epoch(&self) -> i32 {
        self.coordinator_epoch
    }
    fn current_txn_start_offset(&self) -> i64 {
        self.current_txn_start_offset
    }
}

impl ProducerFields for kdp_wire::messages::ProducerStateView<'_> {
    fn producer_id(&self) -> i64 {
        kdp_wire::messages::ProducerStateView::producer_id(self)
    }
    fn producer_epoch(&self) -> i32 {
        kdp_wire::messages::ProducerStateView::producer_epoch(self)
    }
    fn last_sequence(&self) -> i32 {
        kdp_wire::messages::ProducerStateView::last_sequence(self)
    }
    fn last_timestamp(&self) -> i64 {
        kdp_wire::messages::ProducerStateView::last_timestamp(self)
    }
    fn coordinator_epoch(&self) -> i32 {
        kdp_wire::messages::ProducerStateView::coordinator_epoch(self)
    }
    fn current_txn_start_offset(&self) -> i64 {
        kdp_wire::messages::ProducerStateView::current_txn_start_offset(self)
    }
}

impl<T: ProducerFields + ?Sized> ProducerFields for &T {
    fn producer_id(&self) -> i64 {
        (**self).producer_id()
    }
    fn producer_epoch(&self) -> i32 {
        (**self).producer_epoch()
    }
    fn last_sequence(&self) -> i32 {
        (**self).last_sequence()
    }
    fn last_timestamp(&self) -> i64 {
        (**self).last_timestamp()
    }
    fn coordinator_epoch(&self) -> i32 {
        (**self).coordinator_epoch()
    }
    fn current_txn_start_offset(&self) -> i64 {
        (**self).current_txn_start_offset()
    }
}

/// Whether a producer is transactional, as far as its partition state
/// shows: it has an open transaction (`CurrentTxnStartOffset` ≥ 0) or has
/// seen a transaction marker (`CoordinatorEpoch` ≥ 0).
///
/// Limit: a transactional producer that has not yet finished a transaction
/// on this partition and has none open there looks idempotent; nothing in
/// DescribeProducers tells them apart.
pub fn is_transactional<P: ProducerFields + ?Sized>(p: &P) -> bool {
    p.coordinator_epoch() >= 0 || p.current_txn_start_offset() >= 0
}

/// Whether the producer has a transaction open on the partition
/// (`CurrentTxnStartOffset` set).
pub fn has_open_transaction<P: ProducerFields + ?Sized>(p: &P) -> bool {
    p.current_txn_start_offset() >= 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_or_an_open_transaction_makes_a_producer_transactional() {
        let p = |coordinator_epoch, start| ProducerState {
            coordinator_epoch,
            current_txn_start_offset: start,
            ..Default::default()
        };
        assert!(is_transactional(&p(0, -1)));
        assert!(is_transactional(&p(-1, 7)) && has_open_transaction(&p(-1, 7)));
        assert!(!is_transactional(&p(-1, -1)));
        assert!(!has_open_transaction(&p(3, -1)));
    }
}
