//! How much of a `__transaction_state` partition a read covered, and what
//! that says about where an id's history begins: the topic is compacted,
//! so a history never takes its first record for the id's creation unless
//! the log starts at offset 0 and no record was removed.

use crate::history::changes::Hole;

/// How much of a `__transaction_state` partition was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The partition.
    pub partition: i32,
    /// The partition's log start offset.
    pub log_start_offset: i64,
    /// Where reading started: the log start, or the first offset at or
    /// after `--since`.
    pub start_offset: i64,
    /// Where reading stopped (exclusive): the high watermark, unless time
    /// ran out first.
    pub end_offset: i64,
    /// The partition's high watermark when reading began.
    pub high_watermark: i64,
    /// The first record read: offset and timestamp.
    pub first_record: Option<(i64, i64)>,
    /// Offsets between `start_offset` and `end_offset` with no record
    /// (removed by the log cleaner).
    pub holes: Vec<Hole>,
    /// The `--since` time (ms since the epoch), if one was given.
    pub since_ms: Option<i64>,
    /// How many records were read (every id of the partition).
    pub records: u64,
}

/// Where a history begins, and what that says about its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beginning {
    /// The log starts at offset 0 and no record was removed: every change
    /// of the id since its first record on this partition is here.
    Whole,
    /// Reading started at `--since`: earlier changes were not asked for.
    Since {
        /// The time asked for.
        since_ms: i64,
    },
    /// The log starts later than offset 0, or the cleaner removed records:
    /// earlier changes of the id may be missing, and its first record here
    /// is not proven to be its first.
    Partial {
        /// The partition's log start offset.
        log_start_offset: i64,
        /// The first offsets removed, if records were removed.
        first_hole: Option<Hole>,
    },
}

impl Beginning {
    /// `whole`, `since` or `partial`.
    pub fn label(self) -> &'static str {
        match self {
            Beginning::Whole => "whole",
            Beginning::Since { .. } => "since",
            Beginning::Partial { .. } => "partial",
        }
    }
}

impl Reach {
    /// Where the history begins.
    pub fn beginning(&self) -> Beginning {
        if let Some(since_ms) = self.since_ms {
            return Beginning::Since { since_ms };
        }
        if self.log_start_offset == 0 && self.start_offset == 0 && self.holes.is_empty() {
            Beginning::Whole
        } else {
            Beginning::Partial {
                log_start_offset: self.log_start_offset,
                first_hole: self.holes.first().copied(),
            }
        }
    }

    /// Whether the partition was read up to its high watermark.
    pub fn complete(&self) -> bool {
        self.end_offset >= self.high_watermark
    }

    /// How many offsets the holes cover.
    pub fn removed(&self) -> i64 {
        self.holes
            .iter()
            .map(|h| h.end.saturating_sub(h.start))
            .sum()
    }
}

/// The offset ranges of `start..end` that `offsets` (ascending) leave out.
pub fn holes(offsets: impl IntoIterator<Item = i64>, start: i64, end: i64) -> Vec<Hole> {
    let mut out = Vec::new();
    let mut next = start;
    for o in offsets {
        if o > next {
            out.push(Hole {
                start: next,
                end: o.min(end),
            });
        }
        next = next.max(o.saturating_add(1));
        if next >= end {
            break;
        }
    }
    if next < end {
        out.push(Hole { start: next, end });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_the_offsets_left_out() {
        assert_eq!(holes([0, 1, 2], 0, 3), []);
        assert_eq!(
            holes([1, 2, 5], 0, 8),
            [
                Hole { start: 0, end: 1 },
                Hole { start: 3, end: 5 },
                Hole { start: 6, end: 8 }
            ]
        );
        assert_eq!(holes([], 4, 6), [Hole { start: 4, end: 6 }]);
        assert_eq!(holes([], 4, 4), []);
    }

    fn reach(log_start: i64, start: i64, holes: Vec<Hole>, since: Option<i64>) -> Reach {
        Reach {
            partition: 3,
            log_start_offset: log_start,
            start_offset: start,
            end_offset: 10,
            high_watermark: 10,
            first_record: None,
            holes,
            since_ms: since,
            records: 0,
        }
    }

    #[test]
    fn only_an_unremoved_log_from_offset_zero_is_whole() {
        assert_eq!(reach(0, 0, vec![], None).beginning(), Beginning::Whole);
        let hole = Hole { start: 2, end: 4 };
        assert_eq!(
            reach(0, 0, vec![hole], None).beginning(),
            Beginning::Partial {
                log_start_offset: 0,
                first_hole: Some(hole)
            }
        );
        assert_eq!(
            reach(5, 5, vec![], None).beginning(),
            Beginning::Partial {
                log_start_offset: 5,
                first_hole: None
            }
        );
        assert_eq!(
            reach(0, 6, vec![], Some(9)).beginning(),
            Beginning::Since { since_ms: 9 }
        );
        assert_eq!(reach(0, 0, vec![hole], None).removed(), 2);
    }
}
