//! What earlier reads proved, carried to the next (the exporter's scans):
//! per partition, a stretch of offsets where every offset was a delivered
//! record (no marker, no aborted record, no gap; [`Tally::dense_to`]). A
//! log only grows at its end, so a later count of a partition never
//! written transactionally reads only what was added since, and nothing
//! at all when nothing was. Compaction can remove records from a stretch
//! after it was read: the caller keeps stretches only for topics whose
//! `cleanup.policy` it knows has no `compact`.

use std::collections::HashMap;

use crate::lag::tally::Tally;
use crate::partition::TopicPartition;

/// Dense stretches `[from, to)` by partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    dense: HashMap<TopicPartition, (i64, i64)>,
}

impl Known {
    /// Nothing known.
    pub fn new() -> Known {
        Known::default()
    }

    /// Partitions with a stretch.
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    /// Whether no partition has one.
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    /// The stretch known for `tp`, if any.
    pub fn stretch(&self, tp: &TopicPartition) -> Option<(i64, i64)> {
        self.dense.get(tp).copied()
    }

    /// The count of [`from`, `end`) of `tp`, starting after what is known
    /// of it. A stretch reaching past `end` means the log was truncated
    /// (an unclean election) since it was read: it is dropped and the
    /// partition read again.
    pub fn tally(&mut self, tp: &TopicPartition, from: i64, end: i64) -> Tally {
        match self.dense.get(tp).copied() {
            Some((_, to)) if to > end => {
                self.dense.remove(tp);
                Tally::new(from, end)
            }
            Some((start, to)) if start <= from && from < to => {
                Tally::with_dense_prefix(from, to, end)
            }
            _ => Tally::new(from, end),
        }
    }

    /// Keeps what `tally` (a read of `tp`) proved dense, joined to the
    /// stretch already known when they meet; a read that found a
    /// transactional or control batch, or a gap, at its start drops it.
    pub fn learn(&mut self, tp: &TopicPartition, tally: &Tally) {
        match tally.dense_to() {
            Some(to) => {
                let from = tally.from();
                let joined = match self.dense.get(tp) {
                    Some(&(start, end)) if start <= from && from <= end => (start, to.max(end)),
                    _ => (from, to),
                };
                self.dense.insert(tp.clone(), joined);
            }
            None => {
                self.dense.remove(tp);
            }
        }
    }

    /// Forgets `tp` (its topic may be compacted, or was not described).
    pub fn forget(&mut self, tp: &TopicPartition) {
        self.dense.remove(tp);
    }

    /// Keeps only the partitions `keep` names (those still read: memory
    /// follows the cluster as it is, not as it was).
    pub fn retain(&mut self, mut keep: impl FnMut(&TopicPartition) -> bool) {
        self.dense.retain(|tp, _| keep(tp));
    }
}

#[cfg(test)]
mod tests {
    use kdp_wire::records::{Attributes, BatchHeader};

    use super::*;
    use crate::lag::tally::Records;

    fn tp() -> TopicPartition {
        ("orders".to_string(), 0)
    }

    fn header(base: i64, count: i32, attrs: i16) -> BatchHeader {
        BatchHeader {
            base_offset: base,
            batch_length: 100,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes: Attributes(attrs),
            last_offset_delta: count - 1,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: 0,
            record_count: count,
        }
    }

    fn read(t: &mut Tally, batches: &[BatchHeader]) {
        t.answer(Some(&[]));
        for h in batches {
            t.batch(h, None, None);
        }
    }

    #[test]
    fn a_partition_never_written_transactionally_is_read_once_then_only_its_growth() {
        let mut known = Known::new();
        let mut first = known.tally(&tp(), 0, 10);
        assert_eq!(first.next_offset(), 0);
        read(&mut first, &[header(0, 6, 0), header(6, 4, 0)]);
        known.learn(&tp(), &first);
        assert_eq!(known.stretch(&tp()), Some((0, 10)));
        // nothing new: nothing to read, the same count
        let idle = known.tally(&tp(), 3, 10);
        assert!(idle.is_done());
        assert_eq!(idle.records_from(3), Records::Exact(7));
        // grown by 5: only [10, 15) is read, and the stretch follows it
        let mut grown = known.tally(&tp(), 3, 15);
        assert_eq!(grown.next_offset(), 10);
        read(&mut grown, &[header(10, 5, 0)]);
        assert_eq!(grown.records_from(3), Records::Exact(12));
        known.learn(&tp(), &grown);
        assert_eq!(known.stretch(&tp()), Some((0, 15)));
    }

    #[test]
    fn a_transactional_batch_a_truncation_or_a_start_before_the_stretch_reads_again() {
        let mut known = Known::new();
        let mut t = known.tally(&tp(), 5, 10);
        read(&mut t, &[header(5, 5, 0)]);
        known.learn(&tp(), &t);
        // a group further back than what was read
        assert_eq!(known.tally(&tp(), 2, 10).next_offset(), 2);
        // the log grew with a transaction: the stretch is dropped
        let mut txn = known.tally(&tp(), 5, 12);
        assert_eq!(txn.next_offset(), 10);
        read(&mut txn, &[header(10, 1, 0x10), header(11, 1, 0x30)]);
        assert_eq!(txn.records_from(5), Records::Exact(6));
        known.learn(&tp(), &txn);
        assert_eq!(known.stretch(&tp()), None);
        // truncated below the stretch's end: dropped, read from the start
        let mut again = known.tally(&tp(), 5, 10);
        read(&mut again, &[header(5, 5, 0)]);
        known.learn(&tp(), &again);
        assert_eq!(known.tally(&tp(), 5, 8).next_offset(), 5);
        assert_eq!(known.stretch(&tp()), None);
    }
}
