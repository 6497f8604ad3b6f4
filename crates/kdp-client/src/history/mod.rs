//! The past of transactional ids, read from the transaction coordinator's
//! own log, `__transaction_state`: every state change with its producer id,
//! epoch, partitions and timeout, what caused each change of epoch (a
//! commit or abort under transaction protocol v2, a new instance's
//! InitProducerId, the coordinator's timeout, an admin fence, an epoch
//! rollover), and how far back the log reaches.
//!
//! - [`changes`]: the records of one id turned into [`StateChange`]s (pure).
//! - [`scan`]: one streaming pass over a partition's records.
//! - [`read`]: the histories of ids over the wire (Metadata, ListOffsets,
//!   Fetch through [`crate::fetch`]).
//!
//! The `fenced` verdict of `describe --with-transactions`, from the log on
//! both protocol generations and from the epochs under v1, is
//! [`crate::diagnose::fence`].
//!
//! The topic is compacted: outside the active segment (100 MB by default)
//! the cleaner keeps only the latest record of each id. So a history says
//! where it starts ([`Reach`], [`Beginning`]) and never takes its first
//! record for the id's creation unless the partition's log starts at
//! offset 0 and no record was removed.

pub mod changes;
pub mod read;
pub mod scan;

use kdp_wire::coordinator::txn_log::TRANSACTION_STATE_TOPIC;
use kdp_wire::ErrorCode;

pub use crate::diagnose::fence::{FenceProof, FenceUnknown, FenceVerdict, LogView};
pub use changes::{
    state_changes, Cause, ChangeState, EpochChange, Hole, InitKind, LogRecord, ProducerEpoch,
    StateChange,
};
pub use read::{read_histories, read_histories_with, ReadOptions, ReadProgress};
pub use scan::PartitionScan;

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

/// A record of the id whose key or value did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecoded {
    /// Its offset.
    pub offset: i64,
    /// Why (field path and byte offset).
    pub error: String,
}

/// One transactional id's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The transactional id.
    pub transactional_id: String,
    /// How much of its partition was read.
    pub reach: Reach,
    /// Its state changes, in log order.
    pub changes: Vec<StateChange>,
    /// Records of the partition that did not decode (a key or value of a
    /// version kdp does not know, or broken bytes); they may belong to the
    /// id.
    pub undecoded: Vec<Undecoded>,
}

impl History {
    /// The id's history among a partition's decoded `records`.
    pub fn build(
        transactional_id: &str,
        records: &[LogRecord],
        reach: Reach,
        undecoded: Vec<Undecoded>,
    ) -> History {
        let changes = state_changes(transactional_id, records, &reach.holes);
        History {
            transactional_id: transactional_id.to_string(),
            reach,
            changes,
            undecoded,
        }
    }

    /// The changes that started another producer instance.
    pub fn instance_changes(&self) -> impl Iterator<Item = &StateChange> {
        self.changes.iter().filter(|c| c.instance_change)
    }
}

/// Why an id's history could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryError {
    /// The broker refused (`code`); `advice` names the missing ACL.
    Denied {
        /// The error code (TOPIC_AUTHORIZATION_FAILED).
        code: ErrorCode,
        /// What to grant, as a `kafka-acls.sh` command.
        advice: String,
    },
    /// The cluster has no `__transaction_state` topic: no transactional
    /// producer ever ran on it.
    NoTransactionLog,
    /// The partition could not be read (the error).
    Failed(String),
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::Denied { code, advice } => write!(f, "{code}: {advice}"),
            HistoryError::NoTransactionLog => write!(
                f,
                "the cluster has no {TRANSACTION_STATE_TOPIC} topic (no transactional producer has run on it)"
            ),
            HistoryError::Failed(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for HistoryError {}

/// One asked-for id: its partition (when the partition count was known)
/// and its history, or why there is none.
#[derive(Debug, Clone)]
pub struct IdHistory {
    /// The transactional id.
    pub transactional_id: String,
    /// Its `__transaction_state` partition, by Kafka's hash rule.
    pub partition: Option<i32>,
    /// The history.
    pub result: Result<History, HistoryError>,
}

/// What to grant when reading `__transaction_state` was refused.
pub fn missing_acl(code: ErrorCode) -> Option<String> {
    match code {
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => Some(format!(
            "reading the transaction log needs READ on topic {TRANSACTION_STATE_TOPIC} (READ \
             includes the DESCRIBE that Metadata and ListOffsets need): kafka-acls.sh \
             --bootstrap-server <broker> --add --allow-principal User:<principal> --operation Read \
             --topic {TRANSACTION_STATE_TOPIC}"
        )),
        _ => None,
    }
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

    #[test]
    fn a_refused_read_names_the_acl() {
        let advice = missing_acl(ErrorCode::TOPIC_AUTHORIZATION_FAILED).unwrap();
        assert!(
            advice.contains("--operation Read --topic __transaction_state"),
            "{advice}"
        );
        assert_eq!(missing_acl(ErrorCode::NOT_LEADER_OR_FOLLOWER), None);
    }
}
