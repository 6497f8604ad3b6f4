//! Counting what a read_committed consumer receives from an offset up to
//! the LSO, batch by batch, from Fetch (READ_COMMITTED) answers: sans-IO,
//! the caller feeds each answer's aborted-transaction list and batches.
//! A read_uncommitted count ([`Tally::uncommitted`], from Fetch
//! READ_UNCOMMITTED answers up to the high watermark) delivers every data
//! batch, aborted and open transactions included, and skips only markers.
//!
//! The rules are the consumer's (`CompletedFetch`, docs/LAG.md section
//! 2): each answer starts with no aborted producer; before a batch with a
//! producer id, every aborted transaction of the answer whose first offset
//! is at or before the batch's last offset marks its producer aborted; a
//! control batch is never delivered and an ABORT marker clears its
//! producer; a transactional batch of an aborted producer is skipped
//! whole; every other batch delivers its records (the header's
//! `RecordCount`, exact after compaction too). Only a batch that holds
//! the starting offset needs its records' offsets.

use std::collections::HashSet;

use kdp_wire::records::{BatchHeader, ControlType};

/// How many records a read_committed consumer still receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// Counted from the batches.
    Exact(i64),
    /// Not read in full: the exact figure lies between these (both
    /// inclusive). `at_least` counts what was read; `at_most` adds one
    /// record per offset not read (an offset holds at most one record).
    Between {
        /// Records counted in what was read.
        at_least: i64,
        /// Plus every offset not read.
        at_most: i64,
    },
}

impl Records {
    /// The smallest the figure can be.
    pub fn at_least(&self) -> i64 {
        match *self {
            Records::Exact(n) => n,
            Records::Between { at_least, .. } => at_least,
        }
    }

    /// The largest the figure can be.
    pub fn at_most(&self) -> i64 {
        match *self {
            Records::Exact(n) => n,
            Records::Between { at_most, .. } => at_most,
        }
    }

    /// Whether the figure was counted in full.
    pub fn is_exact(&self) -> bool {
        matches!(self, Records::Exact(_))
    }

    pub(crate) fn of(at_least: i64, at_most: i64) -> Records {
        if at_least == at_most {
            Records::Exact(at_least)
        } else {
            Records::Between { at_least, at_most }
        }
    }
}

/// A delivered batch (or a dense stretch known from an earlier read).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Delivered {
    base: i64,
    last: i64,
    count: i64,
    /// Delivered records of the batches before this one.
    before: i64,
    /// Each record's offset, when the caller read them (a batch holding
    /// a starting offset).
    offsets: Option<Vec<i64>>,
    /// Every offset of the batch is a record (an earlier read found no
    /// gap): a count from inside it is exact without its offsets.
    dense: bool,
    /// Its first record's timestamp (ms), when the header gives it.
    first_timestamp: Option<i64>,
}

/// What one partition's read found, as a read_committed consumer would
/// receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    from: i64,
    end: i64,
    next: i64,
    /// This answer's aborted transactions not yet reached, by first
    /// offset, descending (the next to reach is last).
    pending: Vec<(i64, i64)>,
    aborted: HashSet<i64>,
    delivered: Vec<Delivered>,
    total: i64,
    /// Transactional or control batches seen.
    transactional_batches: u64,
    /// Records skipped as aborted.
    aborted_records: i64,
    /// Control batches (markers) seen.
    markers: u64,
    /// Whether aborted transactions are skipped (read_committed) or
    /// delivered (read_uncommitted).
    read_committed: bool,
    /// Counted from a proof, without a read ([`crate::lag::proof`]).
    proven: bool,
}

impl Tally {
    /// A count of [`from`, `end`) (`end`: the LSO read before the first
    /// Fetch; the count is as of it).
    pub fn new(from: i64, end: i64) -> Tally {
        Tally {
            from,
            end,
            next: from,
            pending: Vec::new(),
            aborted: HashSet::new(),
            delivered: Vec::new(),
            total: 0,
            transactional_batches: 0,
            aborted_records: 0,
            markers: 0,
            read_committed: true,
            proven: false,
        }
    }

    /// A count of [`from`, `end`) that a proof ([`crate::lag::proof`])
    /// showed holds only records, no marker and no transactional batch:
    /// exact and done without a read.
    pub fn proven(from: i64, end: i64) -> Tally {
        let mut t = Tally::with_dense_prefix(from, end, end);
        t.proven = true;
        t
    }

    /// Whether the count comes from a proof, not from a read.
    pub fn is_proven(&self) -> bool {
        self.proven
    }

    /// A read_uncommitted count of [`from`, `end`) (`end`: the high
    /// watermark read before the first Fetch): every data batch is
    /// delivered, aborted or not, markers are not (docs/LAG.md section 2).
    pub fn uncommitted(from: i64, end: i64) -> Tally {
        Tally::new(from, end).read_uncommitted()
    }

    /// This count, read_uncommitted (before any batch: a dense prefix
    /// holds under either isolation, as it has no transactional batch).
    pub fn read_uncommitted(mut self) -> Tally {
        self.read_committed = false;
        self
    }

    /// Whether aborted transactions are skipped (a read_committed count).
    pub fn is_read_committed(&self) -> bool {
        self.read_committed
    }

    /// A count that knows from an earlier read that every offset of
    /// [`from`, `dense_to`) is a delivered record (a log only grows at its
    /// end; valid while nothing compacts it and the log start is at or
    /// below `from`): only [`dense_to`, `end`) is left to read.
    pub fn with_dense_prefix(from: i64, dense_to: i64, end: i64) -> Tally {
        let mut t = Tally::new(from, end);
        let to = dense_to.min(end);
        if to > from {
            t.delivered.push(Delivered {
                base: from,
                last: to - 1,
                count: to - from,
                before: 0,
                offsets: None,
                dense: true,
                first_timestamp: None,
            });
            t.total = to - from;
            t.next = to;
        }
        t
    }

    /// The next offset to fetch.
    pub fn next_offset(&self) -> i64 {
        self.next
    }

    /// Where the count started.
    pub fn from(&self) -> i64 {
        self.from
    }

    /// Where the count ends (the LSO it was made against).
    pub fn end(&self) -> i64 {
        self.end
    }

    /// Whether [`from`, `end`) was read in full.
    pub fn is_done(&self) -> bool {
        self.next >= self.end
    }

    /// Whether the batch whose header is `h` holds one of `offsets`
    /// after its first record: its records' offsets are needed to count
    /// from there.
    pub fn needs_offsets(h: &BatchHeader, offsets: &[i64]) -> bool {
        offsets
            .iter()
            .any(|&c| h.base_offset < c && c <= h.last_offset())
    }

    /// A new Fetch answer begins, with its aborted transactions
    /// (producer id, first offset); `None` from a broker that sent none.
    pub fn answer(&mut self, aborted: Option<&[(i64, i64)]>) {
        self.aborted.clear();
        if !self.read_committed {
            // a read_uncommitted consumer skips no aborted batch
            self.pending.clear();
            return;
        }
        self.pending = aborted.map(<[_]>::to_vec).unwrap_or_default();
        self.pending
            .sort_unstable_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    }

    /// One batch of the current answer, in offset order. `control`: the
    /// control record's type for a control batch (`None` when it could
    /// not be read: treated as an ABORT, the only marker that changes
    /// what follows). `offsets`: the records' offsets, when the caller
    /// read them ([`Tally::needs_offsets`]). Batches already counted or at
    /// or past the end are ignored.
    pub fn batch(
        &mut self,
        h: &BatchHeader,
        control: Option<ControlType>,
        offsets: Option<Vec<i64>>,
    ) {
        let last = h.last_offset();
        if last < self.next || h.base_offset >= self.end {
            return;
        }
        if h.has_producer_id() {
            while let Some(&(pid, first)) = self.pending.last() {
                if first > last {
                    break;
                }
                self.aborted.insert(pid);
                self.pending.pop();
            }
        }
        let count = i64::from(h.record_count.max(0));
        if h.is_control() {
            self.markers += 1;
            self.transactional_batches += 1;
            if matches!(control, Some(ControlType::Abort) | None) {
                self.aborted.remove(&h.producer_id);
            }
        } else if self.read_committed
            && h.is_transactional()
            && self.aborted.contains(&h.producer_id)
        {
            self.transactional_batches += 1;
            self.aborted_records = self.aborted_records.saturating_add(count);
        } else {
            if h.is_transactional() {
                self.transactional_batches += 1;
            }
            let first_timestamp = if h.attributes.has_delete_horizon() {
                None
            } else {
                Some(h.base_timestamp).filter(|&t| t >= 0)
            };
            self.delivered.push(Delivered {
                base: h.base_offset,
                last,
                count,
                before: self.total,
                offsets,
                dense: false,
                first_timestamp,
            });
            self.total = self.total.saturating_add(count);
        }
        self.next = h.next_offset().min(self.end.max(self.next));
    }

    /// The broker returned nothing from the next offset below the end: no
    /// batch lies in [next, end) (compacted away), nothing more to read.
    pub fn nothing_more(&mut self) {
        self.next = self.next.max(self.end);
    }

    /// The records a read_committed consumer at `committed` receives up to
    /// the end: exact where read, bounded by one record per offset where
    /// not.
    pub fn records_from(&self, committed: i64) -> Records {
        if committed >= self.end {
            return Records::Exact(0);
        }
        let start = committed.max(self.from);
        // the head [committed, from) was not read
        let mut at_most = self.from.saturating_sub(committed).max(0);
        let mut at_least = 0i64;
        let k = self.delivered.partition_point(|d| d.last < start);
        if let Some(d) = self.delivered.get(k) {
            let after = self.total.saturating_sub(d.before);
            if d.base >= start {
                at_least += after;
                at_most += after;
            } else {
                let rest = after.saturating_sub(d.count);
                at_least += rest;
                at_most += rest;
                let span = d.last.saturating_sub(start).saturating_add(1);
                match (&d.offsets, d.dense) {
                    (_, true) => {
                        at_least += span;
                        at_most += span;
                    }
                    (Some(o), _) => {
                        let n = o.iter().filter(|&&x| x >= start).count() as i64;
                        at_least += n;
                        at_most += n;
                    }
                    (None, false) => at_most += d.count.min(span),
                }
            }
        }
        // the tail [next, end) was not read
        at_most += self.end.saturating_sub(self.next.max(start)).max(0);
        Records::of(at_least, at_most)
    }

    /// The first timestamp (ms) of the first batch a consumer at
    /// `committed` would receive, when that batch was read: the age of
    /// the oldest record it has not received (the batch's first record; a
    /// batch holding `committed` gives the time of a record before it).
    pub fn oldest_undelivered_ms(&self, committed: i64) -> Option<i64> {
        let start = committed.max(self.from);
        if committed < self.from || committed >= self.end {
            return None;
        }
        let k = self.delivered.partition_point(|d| d.last < start);
        self.delivered.get(k).and_then(|d| d.first_timestamp)
    }

    /// Whether the read saw any transactional or control batch: `false`
    /// proves that records equal offsets in what was read (save
    /// compaction gaps, see [`Tally::dense_to`]).
    pub fn saw_transactions(&self) -> bool {
        self.transactional_batches > 0
    }

    /// Markers (control batches) read.
    pub fn markers(&self) -> u64 {
        self.markers
    }

    /// Records skipped as aborted.
    pub fn aborted_records(&self) -> i64 {
        self.aborted_records
    }

    /// The end of the stretch from [`Tally::from`] where every offset was a
    /// delivered record (no marker, no aborted record, no compaction gap):
    /// what a later count may take as read ([`Tally::with_dense_prefix`]).
    /// `None` when the first offset is not one.
    pub fn dense_to(&self) -> Option<i64> {
        if self.transactional_batches > 0 {
            // a skipped or control batch breaks the stretch where it lies;
            // kept simple: any such batch ends the claim
            return None;
        }
        let mut to = self.from;
        for d in &self.delivered {
            let dense = d.dense || d.count == d.last.saturating_sub(d.base).saturating_add(1);
            if d.base > to || !dense {
                break;
            }
            to = d.last.saturating_add(1);
        }
        (to > self.from).then_some(to)
    }
}

#[cfg(test)]
mod tests {
    use kdp_wire::records::Attributes;

    use super::*;

    const TXN: i16 = 0x10;
    const CONTROL: i16 = 0x20;

    /// A batch header: offsets [base, base+len), `count` records.
    fn header(base: i64, len: i32, count: i32, pid: i64, attrs: i16) -> BatchHeader {
        BatchHeader {
            base_offset: base,
            batch_length: 0,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes: Attributes(attrs),
            last_offset_delta: len - 1,
            base_timestamp: 1_000 + base,
            max_timestamp: 1_000 + base,
            producer_id: pid,
            producer_epoch: if pid >= 0 { 0 } else { -1 },
            base_sequence: if pid >= 0 { 0 } else { -1 },
            record_count: count,
        }
    }

    fn data(base: i64, n: i32, pid: i64) -> BatchHeader {
        header(base, n, n, pid, 0)
    }
    fn txn(base: i64, n: i32, pid: i64) -> BatchHeader {
        header(base, n, n, pid, TXN)
    }
    fn marker(at: i64, pid: i64) -> BatchHeader {
        header(at, 1, 1, pid, TXN | CONTROL)
    }

    /// docs/LAG.md's mixed partition below its LSO 27, as one Fetch
    /// answer: idem 0-4 | commit 5-8 (p1), marker 9 | abort 10-12 (p2),
    /// marker 13 | idem 14-15 | x 16 18 20 (p3), y 17 19 21 (p4), commit
    /// 22, abort 23 | commit 24-25 (p1), marker 26.
    fn mixed() -> Tally {
        let mut t = Tally::new(0, 27);
        feed_mixed(&mut t);
        t
    }

    /// The batches of [`mixed`] below the LSO, as one answer listing the
    /// aborted transactions.
    fn feed_mixed(t: &mut Tally) {
        t.answer(Some(&[(2, 10), (4, 17)]));
        t.batch(&data(0, 5, 9), None, None);
        t.batch(&txn(5, 4, 1), None, None);
        t.batch(&marker(9, 1), Some(ControlType::Commit), None);
        t.batch(&txn(10, 3, 2), None, None);
        t.batch(&marker(13, 2), Some(ControlType::Abort), None);
        t.batch(&data(14, 2, 9), None, None);
        for o in 16..22 {
            let pid = if o % 2 == 0 { 3 } else { 4 };
            t.batch(&txn(o, 1, pid), None, None);
        }
        t.batch(&marker(22, 3), Some(ControlType::Commit), None);
        t.batch(&marker(23, 4), Some(ControlType::Abort), None);
        t.batch(&txn(24, 2, 1), None, None);
        t.batch(&marker(26, 1), Some(ControlType::Commit), None);
    }

    #[test]
    fn the_mixed_partition_counts_as_the_real_consumer_received() {
        let t = mixed();
        assert!(t.is_done());
        // LAG.md section 9, read_committed gets: C=0 16, 9 7, 14 7, 17 4,
        // 26 0, 27 0
        for (c, n) in [(0, 16), (9, 7), (14, 7), (17, 4), (26, 0), (27, 0), (36, 0)] {
            assert_eq!(t.records_from(c), Records::Exact(n), "from {c}");
        }
        assert_eq!(t.aborted_records(), 6);
        assert_eq!(t.markers(), 5);
        assert!(t.saw_transactions());
        assert_eq!(t.oldest_undelivered_ms(14), Some(1_014));
    }

    #[test]
    fn read_uncommitted_delivers_aborted_and_open_records_never_markers() {
        // the mixed partition up to its HWM 36: [27, 36) holds the open
        // transaction 27-29 (p5), idem 30-32, commit 33-34 (p6), marker 35
        let mut t = Tally::uncommitted(0, 36);
        // a READ_UNCOMMITTED answer lists no aborted transaction; a list
        // handed in anyway is not applied
        feed_mixed(&mut t);
        t.batch(&txn(27, 3, 5), None, None);
        t.batch(&data(30, 3, 9), None, None);
        t.batch(&txn(33, 2, 6), None, None);
        t.batch(&marker(35, 6), Some(ControlType::Commit), None);
        assert!(t.is_done() && !t.is_read_committed());
        // LAG.md section 9, read_uncommitted gets: C=0 30, 9 21, 14 18,
        // 17 15, 26 8, 27 8, 36 0
        for (c, n) in [
            (0, 30),
            (9, 21),
            (14, 18),
            (17, 15),
            (26, 8),
            (27, 8),
            (36, 0),
        ] {
            assert_eq!(t.records_from(c), Records::Exact(n), "from {c}");
        }
        assert_eq!(t.aborted_records(), 0);
        assert_eq!(t.markers(), 6);
        // the same batches read_committed up to the LSO skip the aborted
        assert_eq!(mixed().records_from(0), Records::Exact(16));
    }

    #[test]
    fn only_markers_after_the_committed_offset_is_caught_up() {
        // idle: idem 0-2, commit 3-6, marker 7; the group committed 7
        let mut t = Tally::new(7, 8);
        t.answer(Some(&[]));
        t.batch(&marker(7, 1), Some(ControlType::Commit), None);
        assert_eq!(t.records_from(7), Records::Exact(0));
        assert_eq!(t.oldest_undelivered_ms(7), None);
    }

    #[test]
    fn aborted_records_are_excluded_and_idempotent_batches_never_are() {
        let mut t = Tally::new(0, 9);
        // the aborted list names producer 5 from offset 0; its
        // idempotent (non-transactional) batch is delivered all the same
        t.answer(Some(&[(5, 3)]));
        t.batch(&data(0, 3, 5), None, None);
        t.batch(&txn(3, 4, 5), None, None);
        t.batch(&marker(7, 5), Some(ControlType::Abort), None);
        t.batch(&data(8, 1, 5), None, None);
        assert_eq!(t.records_from(0), Records::Exact(4));
        assert_eq!(t.aborted_records(), 4);
    }

    #[test]
    fn each_answer_brings_its_own_aborted_list() {
        let mut t = Tally::new(0, 6);
        t.answer(Some(&[(5, 0)]));
        t.batch(&txn(0, 2, 5), None, None);
        // the marker comes in the next answer, whose list names the
        // transaction again (its last offset is at or past the fetch offset)
        t.answer(Some(&[(5, 0)]));
        t.batch(&marker(2, 5), Some(ControlType::Abort), None);
        t.batch(&txn(3, 2, 5), None, None);
        t.batch(&marker(5, 5), Some(ControlType::Commit), None);
        assert_eq!(t.records_from(0), Records::Exact(2));
    }

    #[test]
    fn a_read_cut_short_gives_bounds_never_a_guess() {
        let mut t = Tally::new(0, 27);
        t.answer(Some(&[(2, 10)]));
        t.batch(&data(0, 5, 9), None, None);
        t.batch(&txn(5, 4, 1), None, None);
        // the budget ran out at 9
        assert!(!t.is_done());
        assert_eq!(
            t.records_from(0),
            Records::Between {
                at_least: 9,
                at_most: 9 + 18
            }
        );
        let r = t.records_from(20);
        assert_eq!((r.at_least(), r.at_most()), (0, 7));
        // nothing read: at most one record per offset
        let none = Tally::new(0, 27);
        assert_eq!(
            none.records_from(3),
            Records::Between {
                at_least: 0,
                at_most: 24
            }
        );
    }

    #[test]
    fn a_start_inside_a_batch_needs_its_offsets_else_it_is_bounded() {
        let h = data(0, 5, 9);
        assert!(Tally::needs_offsets(&h, &[2]));
        assert!(!Tally::needs_offsets(&h, &[0, 5]));
        let mut with = Tally::new(2, 5);
        with.answer(Some(&[]));
        with.batch(&h, None, Some(vec![0, 1, 2, 3, 4]));
        assert_eq!(with.records_from(2), Records::Exact(3));
        let mut without = Tally::new(2, 5);
        without.answer(Some(&[]));
        without.batch(&h, None, None);
        assert_eq!(
            without.records_from(2),
            Records::Between {
                at_least: 0,
                at_most: 3
            }
        );
    }

    #[test]
    fn a_compacted_partition_counts_the_records_that_remain() {
        // 22 offsets; after cleaning: batches with gaps, an empty header
        let mut t = Tally::new(0, 22);
        t.answer(Some(&[]));
        t.batch(&header(0, 10, 2, 9, 0), None, None);
        t.batch(&header(10, 5, 5, 9, 0), None, None);
        t.batch(&header(15, 3, 0, 9, 0), None, None);
        t.batch(&header(18, 4, 1, 9, 0), None, None);
        assert_eq!(t.records_from(0), Records::Exact(8));
        // a gap is no dense stretch
        assert_eq!(t.dense_to(), None);
        // from inside a cleaned batch with its remaining offsets
        let mut inside = Tally::new(5, 22);
        inside.answer(Some(&[]));
        inside.batch(&header(0, 10, 2, 9, 0), None, Some(vec![3, 9]));
        inside.nothing_more();
        assert_eq!(inside.records_from(5), Records::Exact(1));
    }

    #[test]
    fn a_never_transactional_stretch_is_not_read_again() {
        let mut first = Tally::new(0, 10);
        first.answer(Some(&[]));
        first.batch(&data(0, 6, -1), None, None);
        first.batch(&data(6, 4, -1), None, None);
        assert!(!first.saw_transactions());
        assert_eq!(first.dense_to(), Some(10));
        // the next scan: the log grew to 14; only [10, 14) is read
        let mut next = Tally::with_dense_prefix(0, 10, 14);
        assert_eq!(next.next_offset(), 10);
        next.answer(Some(&[]));
        next.batch(&data(10, 4, -1), None, None);
        assert_eq!(next.records_from(0), Records::Exact(14));
        assert_eq!(next.records_from(7), Records::Exact(7));
        // and with nothing new, no read at all: C at the end
        let idle = Tally::with_dense_prefix(0, 10, 10);
        assert!(idle.is_done());
        assert_eq!(idle.records_from(4), Records::Exact(6));
    }
}
