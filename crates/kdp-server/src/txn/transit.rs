//! The coordinator's state changes, as Kafka makes them: each is computed
//! from the current entry first ([`Transit`], Kafka's `TxnTransitMetadata`,
//! by the `TransactionMetadata.prepare*` methods this module mirrors, Java
//! in Kafka 4.x's transaction-coordinator module, Scala in 3.9), appended
//! to `__transaction_state`, then applied ([`Transaction::complete`],
//! `completeTransitionTo`). Every field a record carries comes from here.
//!
//! A transit starts as a copy of the entry (`TransitionData`), with
//! PreviousProducerId the entry's producer id before the change
//! (`prepareTransitionTo` passes `this.producerId`: in Kafka 4.x's records
//! it equals ProducerId except where the id rotates).

use kdp_wire::TxnState;

use super::transaction::Transaction;

/// `TransactionMetadata.isEpochExhausted`: `Short.MaxValue - 1` and above.
pub const EPOCH_EXHAUSTED: i16 = i16::MAX - 1;

/// One state change of a transactional id, before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transit {
    /// ProducerId after the change.
    pub producer_id: i64,
    /// The producer id before the change (PreviousProducerId).
    pub prev_producer_id: i64,
    /// NextProducerId: the id announced at a transaction end whose epoch
    /// ran out (protocol v2), else -1.
    pub next_producer_id: i64,
    /// ProducerEpoch after the change.
    pub producer_epoch: i16,
    /// TransactionTimeoutMs.
    pub timeout_ms: i32,
    /// The state moved to.
    pub state: TxnState,
    /// The partitions of the transaction, by topic (sorted by name).
    pub partitions: Vec<(String, Vec<i32>)>,
    /// TransactionStartTimestampMs (-1: none).
    pub start_time_ms: i64,
    /// TransactionLastUpdateTimestampMs.
    pub last_update_ms: i64,
    /// ClientTransactionVersion.
    pub client_transaction_version: i16,
}

impl Transaction {
    /// `TransitionData`: the entry as it is, moving to `state`.
    fn transit_to(&self, state: TxnState) -> Transit {
        debug_assert!(
            state.follows(self.state),
            "{} -> {state} is not a transition Kafka makes",
            self.state
        );
        Transit {
            producer_id: self.producer_id,
            prev_producer_id: self.producer_id,
            next_producer_id: self.next_producer_id,
            producer_epoch: self.producer_epoch,
            timeout_ms: self.timeout_ms,
            state,
            partitions: self.partitions.clone(),
            start_time_ms: self.start_time_ms,
            last_update_ms: self.last_update_ms,
            client_transaction_version: self.client_transaction_version,
        }
    }

    /// `prepareIncrementProducerEpoch` (InitProducerId of an id at rest):
    /// Empty at the next epoch (0 for an entry just made at -1), with the
    /// request's timeout, no partitions and no start.
    pub fn prepare_increment_epoch(&self, timeout_ms: i32, now_ms: i64) -> Transit {
        Transit {
            producer_epoch: self.producer_epoch.saturating_add(1),
            timeout_ms,
            partitions: Vec::new(),
            start_time_ms: -1,
            last_update_ms: now_ms,
            ..self.transit_to(TxnState::Empty)
        }
    }

    /// `prepareProducerIdRotation` (InitProducerId once the epoch ran
    /// out): Empty at epoch 0 of `producer_id`.
    pub fn prepare_rotation(&self, producer_id: i64, timeout_ms: i32, now_ms: i64) -> Transit {
        Transit {
            producer_id,
            producer_epoch: 0,
            timeout_ms,
            partitions: Vec::new(),
            start_time_ms: -1,
            last_update_ms: now_ms,
            ..self.transit_to(TxnState::Empty)
        }
    }

    /// `prepareAddPartitions`: Ongoing with `added` joined to the
    /// partitions; a transaction that starts (from Empty or a completed
    /// one) starts now.
    pub fn prepare_add_partitions(
        &self,
        added: &[(String, Vec<i32>)],
        client_transaction_version: i16,
        now_ms: i64,
    ) -> Transit {
        let starts = matches!(
            self.state,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        );
        let mut partitions = if starts {
            Vec::new()
        } else {
            self.partitions.clone()
        };
        for (topic, ids) in added {
            match partitions.iter_mut().find(|(t, _)| t == topic) {
                Some((_, have)) => {
                    for id in ids {
                        if !have.contains(id) {
                            have.push(*id);
                        }
                    }
                }
                None => partitions.push((topic.clone(), ids.clone())),
            }
        }
        partitions.sort_by(|a, b| a.0.cmp(&b.0));
        Transit {
            partitions,
            start_time_ms: if starts { now_ms } else { self.start_time_ms },
            last_update_ms: now_ms,
            client_transaction_version,
            ..self.transit_to(TxnState::Ongoing)
        }
    }

    /// `prepareAbortOrCommit` to PrepareCommit or PrepareAbort: under
    /// transaction protocol v2 (`client_transaction_version` 2, which
    /// `supportsEpochBump`) every end bumps the epoch (kept at
    /// `Short.MaxValue` for an abort that would overflow it), else the
    /// epoch stays; `next_producer_id` is the id announced when the epoch
    /// ran out (-1 otherwise).
    pub fn prepare_end(
        &self,
        commit: bool,
        client_transaction_version: i16,
        next_producer_id: i64,
        now_ms: i64,
    ) -> Transit {
        let state = if commit {
            TxnState::PrepareCommit
        } else {
            TxnState::PrepareAbort
        };
        let producer_epoch = if client_transaction_version >= 2 {
            self.producer_epoch.saturating_add(1)
        } else {
            self.producer_epoch
        };
        Transit {
            producer_epoch,
            next_producer_id,
            last_update_ms: now_ms,
            client_transaction_version,
            ..self.transit_to(state)
        }
    }

    /// `prepareComplete`, once every marker is written: CompleteCommit or
    /// CompleteAbort without partitions; under protocol v2 an announced
    /// NextProducerId becomes the producer id, at epoch 0.
    pub fn prepare_complete(&self, now_ms: i64) -> Transit {
        let state = if self.state == TxnState::PrepareCommit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        let rotates = self.client_transaction_version >= 2 && self.next_producer_id >= 0;
        Transit {
            producer_id: if rotates {
                self.next_producer_id
            } else {
                self.producer_id
            },
            producer_epoch: if rotates { 0 } else { self.producer_epoch },
            next_producer_id: -1,
            partitions: Vec::new(),
            last_update_ms: now_ms,
            ..self.transit_to(state)
        }
    }

    /// `completeTransitionTo`: the entry takes the transit's values.
    pub fn complete(&mut self, t: &Transit) {
        self.producer_id = t.producer_id;
        self.next_producer_id = t.next_producer_id;
        self.producer_epoch = t.producer_epoch;
        self.timeout_ms = t.timeout_ms;
        self.state = t.state;
        self.partitions = t.partitions.clone();
        self.start_time_ms = t.start_time_ms;
        self.last_update_ms = t.last_update_ms;
        self.client_transaction_version = t.client_transaction_version;
    }

    /// Whether the epoch ran out (`isProducerEpochExhausted`).
    pub fn is_epoch_exhausted(&self) -> bool {
        self.producer_epoch >= EPOCH_EXHAUSTED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(state: TxnState, epoch: i16, tv: i16) -> Transaction {
        Transaction {
            transactional_id: "t".into(),
            producer_id: 40,
            producer_epoch: epoch,
            state,
            timeout_ms: 60_000,
            start_time_ms: if state == TxnState::Empty { -1 } else { 500 },
            partitions: if matches!(
                state,
                TxnState::Ongoing | TxnState::PrepareAbort | TxnState::PrepareCommit
            ) {
                vec![("a".into(), vec![1, 0])]
            } else {
                Vec::new()
            },
            coordinator_override: None,
            last_update_ms: 700,
            client_transaction_version: tv,
            next_producer_id: -1,
        }
    }

    #[test]
    fn init_producer_id_bumps_or_rotates_and_clears_the_transaction() {
        let t = entry(TxnState::CompleteCommit, 7, 2);
        let b = t.prepare_increment_epoch(30_000, 900);
        assert_eq!(
            (b.state, b.producer_id, b.prev_producer_id, b.producer_epoch),
            (TxnState::Empty, 40, 40, 8)
        );
        assert_eq!(
            (b.timeout_ms, b.start_time_ms, b.last_update_ms),
            (30_000, -1, 900)
        );
        assert!(b.partitions.is_empty());
        // The client's version of the last transaction stays.
        assert_eq!(b.client_transaction_version, 2);
        let r = entry(TxnState::Empty, EPOCH_EXHAUSTED, 0).prepare_rotation(41, 5_000, 900);
        assert_eq!(
            (
                r.producer_id,
                r.prev_producer_id,
                r.producer_epoch,
                r.next_producer_id
            ),
            (41, 40, 0, -1)
        );
        // A new entry is made at epoch -1: its first epoch is 0.
        let fresh = entry(TxnState::Empty, -1, 0).prepare_increment_epoch(1_000, 900);
        assert_eq!(fresh.producer_epoch, 0);
    }

    #[test]
    fn a_transaction_starts_when_its_first_partition_is_added() {
        let t = entry(TxnState::Empty, 3, 0);
        let o = t.prepare_add_partitions(&[("b".into(), vec![2]), ("a".into(), vec![0])], 2, 900);
        assert_eq!(o.state, TxnState::Ongoing);
        assert_eq!(o.start_time_ms, 900);
        assert_eq!(
            o.partitions,
            [("a".to_string(), vec![0]), ("b".to_string(), vec![2])]
        );
        let mut t = t;
        t.complete(&o);
        let more = t.prepare_add_partitions(&[("a".into(), vec![0, 3])], 2, 950);
        assert_eq!(more.start_time_ms, 900, "kept while it runs");
        assert_eq!(
            more.partitions,
            [("a".to_string(), vec![0, 3]), ("b".to_string(), vec![2])]
        );
    }

    #[test]
    fn ends_bump_the_epoch_only_under_protocol_v2() {
        let t = entry(TxnState::Ongoing, 5, 0);
        let v1 = t.prepare_end(false, 0, -1, 900);
        assert_eq!(
            (v1.state, v1.producer_epoch, v1.client_transaction_version),
            (TxnState::PrepareAbort, 5, 0)
        );
        assert_eq!(v1.partitions, t.partitions, "the partitions stay");
        assert_eq!(v1.start_time_ms, 500);
        let v2 = t.prepare_end(true, 2, -1, 900);
        assert_eq!(
            (v2.state, v2.producer_epoch, v2.client_transaction_version),
            (TxnState::PrepareCommit, 6, 2)
        );
        // At the end of its epochs, the id announced takes over at 0.
        let mut last = entry(TxnState::Ongoing, EPOCH_EXHAUSTED, 2);
        let end = last.prepare_end(true, 2, 99, 900);
        assert_eq!((end.producer_epoch, end.next_producer_id), (i16::MAX, 99));
        last.complete(&end);
        let done = last.prepare_complete(950);
        assert_eq!(
            (
                done.state,
                done.producer_id,
                done.prev_producer_id,
                done.producer_epoch
            ),
            (TxnState::CompleteCommit, 99, 40, 0)
        );
        assert_eq!(done.next_producer_id, -1);
        assert!(done.partitions.is_empty());
        assert_eq!(done.start_time_ms, 500, "the start stays");
    }
}
