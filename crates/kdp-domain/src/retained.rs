//! What a join keeps of the producers it describes. `describe
//! --with-transactions` shows every producer; `find-hanging` judges the
//! open transactions alone; `blocked` judges them too and shows, for the
//! producer pinning a partition, its latest write on any partition. A join
//! for one of the last two keeps only what it reads, so a big cluster's
//! producers are never all built ([`Retain`]), and folds each other
//! producer's write into [`LastWrites`] when that is read.

use std::collections::HashMap;

use crate::partition::{has_open_transaction, ProducerFields};
use crate::time::known_ms;

/// Which producers of each partition a join keeps in
/// [`Joined::partitions`](crate::joined::Joined::partitions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retain {
    /// Every producer (`describe --with-transactions` shows each one).
    #[default]
    Every,
    /// The producers the join looks up ([`Retain::keeps`]) and no other:
    /// every partition is still there, with its error or its kept
    /// producers (`find-hanging`).
    Selected,
    /// [`Retain::Selected`], and the latest write of every producer id
    /// with an open transaction among those not kept
    /// ([`Joined::unkept_writes`](crate::joined::Joined::unkept_writes)):
    /// `blocked` shows when a pinning producer last wrote anywhere.
    SelectedAndWrites,
}

impl Retain {
    /// Whether `p` is kept by a join that looks up only producers with an
    /// open transaction (`open_only`), or also those that have written a
    /// transaction marker: the producers its lookups select, a superset
    /// of Kafka's find-hanging candidates.
    pub fn keeps<P: ProducerFields + ?Sized>(self, p: &P, open_only: bool) -> bool {
        match self {
            Retain::Every => true,
            Retain::Selected | Retain::SelectedAndWrites => {
                has_open_transaction(p) || (!open_only && p.coordinator_epoch() >= 0)
            }
        }
    }

    /// Whether the producers not kept are folded into [`LastWrites`].
    pub fn folds_writes(self) -> bool {
        self == Retain::SelectedAndWrites
    }
}

/// Each producer id's latest known write (`LastTimestamp` > 0) among
/// producers a join described but did not keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastWrites(HashMap<i64, i64>);

impl LastWrites {
    /// Folds in `p`'s write, when its `LastTimestamp` is known.
    pub fn add<P: ProducerFields + ?Sized>(&mut self, p: &P) {
        if let Some(ts) = known_ms(p.last_timestamp()) {
            let w = self.0.entry(p.producer_id()).or_insert(ts);
            *w = (*w).max(ts);
        }
    }

    /// The latest known write of `producer_id`.
    pub fn get(&self, producer_id: i64) -> Option<i64> {
        self.0.get(&producer_id).copied()
    }

    /// Keeps only the ids `keep` wants (after the describe: those with an
    /// open transaction, the only ones read).
    pub fn retain_ids(&mut self, mut keep: impl FnMut(i64) -> bool) {
        self.0.retain(|&pid, _| keep(pid));
        self.0.shrink_to_fit();
    }

    /// How many ids have a write.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no id has a write.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use kdp_wire::messages::ProducerState;

    use super::*;

    fn p(producer_id: i64, coordinator_epoch: i32, start: i64, ts: i64) -> ProducerState {
        ProducerState {
            producer_id,
            coordinator_epoch,
            current_txn_start_offset: start,
            last_timestamp: ts,
            ..Default::default()
        }
    }

    #[test]
    fn selected_keeps_open_transactions_and_without_open_only_the_marked_ones() {
        let open = p(1, -1, 7, 5);
        let marked = p(2, 3, -1, 5);
        let idempotent = p(3, -1, -1, 5);
        for r in [Retain::Selected, Retain::SelectedAndWrites] {
            assert!(r.keeps(&open, true) && r.keeps(&open, false));
            assert!(!r.keeps(&marked, true) && r.keeps(&marked, false));
            assert!(!r.keeps(&idempotent, true) && !r.keeps(&idempotent, false));
        }
        assert!(Retain::Every.keeps(&idempotent, true));
        assert!(Retain::SelectedAndWrites.folds_writes() && !Retain::Selected.folds_writes());
    }

    #[test]
    fn the_latest_known_write_of_each_id_is_kept() {
        let mut w = LastWrites::default();
        for s in [p(1, -1, -1, 30), p(1, -1, -1, 50), p(1, -1, -1, 40)] {
            w.add(&s);
        }
        // 0 and -1 are unknown: no write
        w.add(&p(2, -1, -1, 0));
        w.add(&p(3, -1, -1, -1));
        w.add(&p(4, -1, -1, 9));
        assert_eq!(
            (w.get(1), w.get(2), w.get(3), w.get(4)),
            (Some(50), None, None, Some(9))
        );
        w.retain_ids(|pid| pid != 4);
        assert_eq!((w.len(), w.get(4)), (1, None));
    }
}
