//! Each producer's batches judged by the broker's own rule for what it
//! accepts (Kafka's `ProducerAppendInfo` and `ProducerStateEntry`):
//!
//! - within an epoch, a batch's BaseSequence must follow the last one
//!   (`lastSeq + 1`, or 0 after `Int.MAX`): otherwise
//!   **OutOfOrderSequence** (OUT_OF_ORDER_SEQUENCE_NUMBER);
//! - a batch whose epoch and sequence range equal one of the last five
//!   batches kept for the producer (`NUM_BATCHES_TO_RETAIN`) is a
//!   **duplicate**: the broker answers with the first copy's offset and
//!   appends nothing, so a second copy in the log means it was not caught;
//! - an epoch below the last one is **InvalidProducerEpoch**
//!   (INVALID_PRODUCER_EPOCH; a fenced or zombie writer);
//! - a new epoch starts at sequence 0 (an epoch bump resets it; KIP-360,
//!   and under KIP-890's transaction protocol v2 every commit or abort
//!   marker carries the bumped epoch), else OutOfOrderSequence.
//!
//! Every batch in a log was accepted when it was written, so a refusal
//! found here means the producer state the broker held then was not the
//! one this read of the log implies: state lost or expired
//! (`producer.id.expiration.ms`), a log truncated on a leader change, or a
//! stretch removed by compaction or retention. The first batch of a
//! producer in what was read has no predecessor here and is judged by
//! nothing. Pure functions over batch headers.

use std::collections::{BTreeMap, VecDeque};

use kdp_wire::records::header::{increment_sequence, NO_SEQUENCE};
use kdp_wire::records::BatchHeader;

use crate::severity::Severity;

/// How many batches a broker keeps per producer to catch duplicates
/// (`ProducerStateEntry.NUM_BATCHES_TO_RETAIN`).
pub const BATCHES_RETAINED: usize = 5;

/// What the broker would answer for a batch, given the producer's batches
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BrokerRule {
    /// Appended.
    Accept,
    /// Not appended again: the first copy's offsets are the answer.
    Duplicate,
    /// OUT_OF_ORDER_SEQUENCE_NUMBER.
    OutOfOrderSequence,
    /// INVALID_PRODUCER_EPOCH.
    InvalidProducerEpoch,
}

impl BrokerRule {
    /// Kafka's name of the answer: `accept`, `duplicate`,
    /// `OutOfOrderSequence`, `InvalidProducerEpoch`.
    pub fn label(self) -> &'static str {
        match self {
            BrokerRule::Accept => "accept",
            BrokerRule::Duplicate => "duplicate",
            BrokerRule::OutOfOrderSequence => "OutOfOrderSequence",
            BrokerRule::InvalidProducerEpoch => "InvalidProducerEpoch",
        }
    }

    /// Whether the broker would not have appended the batch as it is.
    pub fn is_problem(self) -> bool {
        self != BrokerRule::Accept
    }
}

/// What a batch's sequence says against the producer's batches before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SequenceVerdict {
    /// The first batch of the producer in what was read: nothing to
    /// compare with.
    First,
    /// Follows the last batch of the same epoch (`wrapped`: across
    /// `Int.MAX` to 0).
    InSequence {
        /// Whether the sequence wrapped past `i32::MAX`.
        wrapped: bool,
    },
    /// A new epoch starting at 0 (an epoch bump resets the sequence).
    NewEpoch {
        /// The epoch before.
        previous_epoch: i16,
    },
    /// Sequences were skipped: `expected` was next, `found` came.
    Gap {
        /// The sequence the broker expected.
        expected: i32,
        /// The batch's BaseSequence.
        found: i32,
    },
    /// The same epoch and sequence range as a batch kept among the last
    /// five: the copy at `first_offset`.
    Duplicate {
        /// The first copy's base offset.
        first_offset: i64,
    },
    /// Sequences repeated or going back, not an exact copy of the last
    /// five batches.
    Repeat {
        /// The sequence the broker expected.
        expected: i32,
        /// The batch's BaseSequence.
        found: i32,
    },
    /// A new epoch whose first sequence is not 0.
    NewEpochNotAtZero {
        /// The epoch before.
        previous_epoch: i16,
        /// The batch's BaseSequence.
        found: i32,
    },
    /// The epoch went back: a fenced or zombie writer.
    EpochWentBack {
        /// The epoch the producer had reached.
        last_epoch: i16,
        /// The batch's epoch.
        found: i16,
    },
}

impl SequenceVerdict {
    /// The broker's answer to a batch with this verdict.
    pub fn rule(self) -> BrokerRule {
        match self {
            SequenceVerdict::First
            | SequenceVerdict::InSequence { .. }
            | SequenceVerdict::NewEpoch { .. } => BrokerRule::Accept,
            SequenceVerdict::Duplicate { .. } => BrokerRule::Duplicate,
            SequenceVerdict::Gap { .. }
            | SequenceVerdict::Repeat { .. }
            | SequenceVerdict::NewEpochNotAtZero { .. } => BrokerRule::OutOfOrderSequence,
            SequenceVerdict::EpochWentBack { .. } => BrokerRule::InvalidProducerEpoch,
        }
    }

    /// A short name: `first`, `in-sequence`, `new-epoch`, `gap`,
    /// `duplicate`, `repeat`, `new-epoch-not-at-0`, `epoch-went-back`.
    pub fn label(self) -> &'static str {
        match self {
            SequenceVerdict::First => "first",
            SequenceVerdict::InSequence { .. } => "in-sequence",
            SequenceVerdict::NewEpoch { .. } => "new-epoch",
            SequenceVerdict::Gap { .. } => "gap",
            SequenceVerdict::Duplicate { .. } => "duplicate",
            SequenceVerdict::Repeat { .. } => "repeat",
            SequenceVerdict::NewEpochNotAtZero { .. } => "new-epoch-not-at-0",
            SequenceVerdict::EpochWentBack { .. } => "epoch-went-back",
        }
    }

    /// What the broker's answer asks of an operator: a batch it would not
    /// have appended as it is needs a look (a duplicate, retried by an
    /// idempotent producer, is only worth one).
    pub fn severity(self) -> Severity {
        match self.rule() {
            BrokerRule::Accept => Severity::Ok,
            BrokerRule::Duplicate => Severity::Warning,
            BrokerRule::OutOfOrderSequence | BrokerRule::InvalidProducerEpoch => Severity::Problem,
        }
    }

    /// Whether the verdict is the ordinary course of a producer (its first
    /// batch read, or the next in sequence): its label says all, where the
    /// others want [`explain`](SequenceVerdict::explain) beside it.
    pub fn is_routine(self) -> bool {
        matches!(
            self,
            SequenceVerdict::First | SequenceVerdict::InSequence { .. }
        )
    }

    /// One line for an operator.
    pub fn explain(self) -> String {
        match self {
            SequenceVerdict::First => "first batch of the producer in what was read".into(),
            SequenceVerdict::InSequence { wrapped: false } => "follows the last batch".into(),
            SequenceVerdict::InSequence { wrapped: true } => {
                "follows the last batch (the sequence wrapped past Int.MAX to 0)".into()
            }
            SequenceVerdict::NewEpoch { previous_epoch } => {
                format!("new epoch after {previous_epoch}, sequence reset to 0")
            }
            SequenceVerdict::Gap { expected, found } => format!(
                "sequence gap: expected {expected}, found {found} ({} missing)",
                i64::from(found) - i64::from(expected)
            ),
            SequenceVerdict::Duplicate { first_offset } => format!(
                "duplicate of the batch at offset {first_offset} (same epoch and sequences, within the last {BATCHES_RETAINED})"
            ),
            SequenceVerdict::Repeat { expected, found } => {
                format!("sequence repeated or went back: expected {expected}, found {found}")
            }
            SequenceVerdict::NewEpochNotAtZero {
                previous_epoch,
                found,
            } => format!("new epoch after {previous_epoch} starts at sequence {found}, not 0"),
            SequenceVerdict::EpochWentBack { last_epoch, found } => {
                format!("epoch {found} is below the producer's epoch {last_epoch}")
            }
        }
    }
}

/// What the broker keeps per producer, as the batches are replayed.
#[derive(Debug, Default)]
struct Entry {
    epoch: Option<i16>,
    last_sequence: Option<i32>,
    /// (base sequence, last sequence, base offset) of the last batches of
    /// the current epoch.
    recent: VecDeque<(i32, i32, i64)>,
}

/// The verdict on each batch, in order: `None` for a batch without a
/// producer id or a sequence (a non-idempotent producer's, or a control
/// batch, whose epoch still counts).
pub fn check_sequences<'a>(
    batches: impl IntoIterator<Item = &'a BatchHeader>,
) -> Vec<Option<SequenceVerdict>> {
    let mut producers: BTreeMap<i64, Entry> = BTreeMap::new();
    let mut out = Vec::new();
    for h in batches {
        if !h.has_producer_id() {
            out.push(None);
            continue;
        }
        let entry = producers.entry(h.producer_id).or_default();
        let epoch = h.producer_epoch;
        if h.is_control() || h.base_sequence == NO_SEQUENCE {
            // A marker (or a batch without sequence) moves the epoch on;
            // a bump resets what the broker keeps.
            let verdict = match entry.epoch {
                Some(last) if epoch < last => Some(SequenceVerdict::EpochWentBack {
                    last_epoch: last,
                    found: epoch,
                }),
                _ => None,
            };
            if entry.epoch.is_none_or(|last| epoch > last) {
                entry.epoch = Some(epoch);
                entry.last_sequence = None;
                entry.recent.clear();
            }
            out.push(verdict);
            continue;
        }
        let (first, last) = (h.base_sequence, h.last_sequence());
        let verdict = match (entry.epoch, entry.last_sequence) {
            (None, _) => SequenceVerdict::First,
            (Some(last_epoch), _) if epoch < last_epoch => SequenceVerdict::EpochWentBack {
                last_epoch,
                found: epoch,
            },
            (Some(last_epoch), _) if epoch > last_epoch => {
                if first == 0 {
                    SequenceVerdict::NewEpoch {
                        previous_epoch: last_epoch,
                    }
                } else {
                    SequenceVerdict::NewEpochNotAtZero {
                        previous_epoch: last_epoch,
                        found: first,
                    }
                }
            }
            // Same epoch, after a marker reset: the broker expects 0.
            (Some(_), None) if first == 0 => SequenceVerdict::InSequence { wrapped: false },
            (Some(_), None) => SequenceVerdict::Gap {
                expected: 0,
                found: first,
            },
            (Some(_), Some(last_seq)) => {
                let expected = increment_sequence(last_seq, 1);
                if let Some(&(_, _, at)) = entry
                    .recent
                    .iter()
                    .find(|(b, l, _)| *b == first && *l == last)
                {
                    SequenceVerdict::Duplicate { first_offset: at }
                } else if first == expected {
                    SequenceVerdict::InSequence {
                        wrapped: last_seq == i32::MAX,
                    }
                } else if first > expected {
                    SequenceVerdict::Gap {
                        expected,
                        found: first,
                    }
                } else {
                    SequenceVerdict::Repeat {
                        expected,
                        found: first,
                    }
                }
            }
        };
        // What the broker would keep after this batch: a refused or
        // duplicate batch changes nothing, except that the log has it, and
        // the replay follows the log.
        match verdict {
            SequenceVerdict::Duplicate { .. } => {}
            SequenceVerdict::EpochWentBack { .. } => {}
            _ => {
                if entry.epoch != Some(epoch) {
                    entry.recent.clear();
                }
                entry.epoch = Some(epoch);
                entry.last_sequence = Some(last);
                entry.recent.push_back((first, last, h.base_offset));
                while entry.recent.len() > BATCHES_RETAINED {
                    entry.recent.pop_front();
                }
            }
        }
        out.push(Some(verdict));
    }
    out
}

/// One producer's batches in what was read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProducerSequences {
    /// The producer id.
    pub producer_id: i64,
    /// Data batches with a sequence.
    pub batches: usize,
    /// Epochs seen, in order of first appearance.
    pub epochs: Vec<i16>,
    /// The last sequence of the last data batch.
    pub last_sequence: Option<i32>,
    /// Batches with each problem, by verdict name.
    pub gaps: usize,
    /// Exact copies within the last five.
    pub duplicates: usize,
    /// Repeated or backwards sequences, and new epochs not at 0.
    pub repeats: usize,
    /// Batches with an epoch below the producer's.
    pub epochs_back: usize,
}

impl ProducerSequences {
    /// Whether the broker would have refused or deduplicated any batch.
    pub fn has_problem(&self) -> bool {
        self.gaps + self.duplicates + self.repeats + self.epochs_back > 0
    }
}

/// Each producer's counts, from the batches and their verdicts.
pub fn summarize<'a>(
    batches: impl IntoIterator<Item = &'a BatchHeader>,
    verdicts: &[Option<SequenceVerdict>],
) -> Vec<ProducerSequences> {
    let mut by: BTreeMap<i64, ProducerSequences> = BTreeMap::new();
    for (h, v) in batches.into_iter().zip(verdicts) {
        if !h.has_producer_id() {
            continue;
        }
        let p = by
            .entry(h.producer_id)
            .or_insert_with(|| ProducerSequences {
                producer_id: h.producer_id,
                ..Default::default()
            });
        if !p.epochs.contains(&h.producer_epoch) {
            p.epochs.push(h.producer_epoch);
        }
        if !h.is_control() && h.base_sequence != NO_SEQUENCE {
            p.batches += 1;
            p.last_sequence = Some(h.last_sequence());
        }
        match v {
            Some(SequenceVerdict::Gap { .. }) => p.gaps += 1,
            Some(SequenceVerdict::Duplicate { .. }) => p.duplicates += 1,
            Some(SequenceVerdict::Repeat { .. } | SequenceVerdict::NewEpochNotAtZero { .. }) => {
                p.repeats += 1
            }
            Some(SequenceVerdict::EpochWentBack { .. }) => p.epochs_back += 1,
            _ => {}
        }
    }
    by.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::records::Attributes;

    #[test]
    fn only_a_first_or_next_batch_is_routine() {
        assert!(SequenceVerdict::First.is_routine());
        assert!(SequenceVerdict::InSequence { wrapped: true }.is_routine());
        assert!(!SequenceVerdict::NewEpoch { previous_epoch: 1 }.is_routine());
        assert!(!SequenceVerdict::Duplicate { first_offset: 0 }.is_routine());
        assert!(!SequenceVerdict::Gap {
            expected: 1,
            found: 3
        }
        .is_routine());
    }

    fn batch(offset: i64, pid: i64, epoch: i16, base: i32, count: i32) -> BatchHeader {
        BatchHeader {
            base_offset: offset,
            batch_length: 100,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes: Attributes::default(),
            last_offset_delta: count - 1,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: base,
            record_count: count,
        }
    }

    fn marker(offset: i64, pid: i64, epoch: i16) -> BatchHeader {
        BatchHeader {
            attributes: Attributes(0x30),
            base_sequence: -1,
            ..batch(offset, pid, epoch, -1, 1)
        }
    }

    fn names(headers: &[BatchHeader]) -> Vec<&'static str> {
        check_sequences(headers)
            .into_iter()
            .map(|v| v.map_or("-", SequenceVerdict::label))
            .collect()
    }

    #[test]
    fn in_sequence_gaps_repeats_and_duplicates() {
        let log = [
            batch(0, 7, 0, 0, 5),     // first
            batch(5, 7, 0, 5, 5),     // in sequence
            batch(10, 7, 0, 12, 3),   // gap: expected 10
            batch(13, 7, 0, 12, 3),   // duplicate of 10
            batch(16, 7, 0, 13, 1),   // repeat: expected 15
            batch(17, -1, -1, -1, 4), // no producer
        ];
        assert_eq!(
            names(&log),
            ["first", "in-sequence", "gap", "duplicate", "repeat", "-"]
        );
        let v = check_sequences(&log);
        assert_eq!(
            v[2],
            Some(SequenceVerdict::Gap {
                expected: 10,
                found: 12
            })
        );
        assert_eq!(v[3], Some(SequenceVerdict::Duplicate { first_offset: 10 }));
        assert_eq!(v[2].unwrap().rule(), BrokerRule::OutOfOrderSequence);
        assert_eq!(v[3].unwrap().rule(), BrokerRule::Duplicate);
        let s = summarize(&log, &v);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].gaps, s[0].duplicates, s[0].repeats), (1, 1, 1));
        assert!(s[0].has_problem());
    }

    /// A copy older than the last five batches is no duplicate: the broker
    /// no longer remembers it, and the sequence is out of order.
    #[test]
    fn only_the_last_five_batches_catch_a_duplicate() {
        let seven: Vec<BatchHeader> = (0..7).map(|i| batch(i, 7, 0, i as i32, 1)).collect();
        let mut log = seven.clone();
        log.push(batch(7, 7, 0, 1, 1)); // copy of offset 1: six batches back
        assert_eq!(
            check_sequences(&log)[7],
            Some(SequenceVerdict::Repeat {
                expected: 7,
                found: 1
            })
        );
        let mut log = seven;
        log.push(batch(7, 7, 0, 2, 1)); // copy of offset 2: five back
        assert_eq!(
            check_sequences(&log)[7],
            Some(SequenceVerdict::Duplicate { first_offset: 2 })
        );
    }

    #[test]
    fn epochs_reset_and_go_back() {
        let log = [
            batch(0, 7, 3, 40, 2),
            batch(2, 7, 4, 0, 2), // bump: reset to 0
            batch(4, 7, 5, 9, 1), // bump not at 0
            batch(5, 7, 4, 2, 1), // epoch went back
            marker(6, 7, 6),      // TV2 marker with the bumped epoch
            batch(7, 7, 6, 0, 1), // after the marker: 0
            marker(8, 7, 5),      // a marker going back
        ];
        assert_eq!(
            names(&log),
            [
                "first",
                "new-epoch",
                "new-epoch-not-at-0",
                "epoch-went-back",
                "-",
                "in-sequence",
                "epoch-went-back"
            ]
        );
        assert_eq!(
            check_sequences(&log)[3].unwrap().rule(),
            BrokerRule::InvalidProducerEpoch
        );
    }

    #[test]
    fn sequences_wrap_at_int_max() {
        let log = [batch(0, 7, 0, i32::MAX - 1, 2), batch(2, 7, 0, 0, 1)];
        assert_eq!(
            check_sequences(&log)[1],
            Some(SequenceVerdict::InSequence { wrapped: true })
        );
        let log = [batch(0, 7, 0, i32::MAX - 1, 2), batch(2, 7, 0, 1, 1)];
        assert_eq!(check_sequences(&log)[1].unwrap().label(), "gap");
    }
}
