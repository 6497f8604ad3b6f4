//! Whether a producer's last writes on a partition are fenced: one typed
//! verdict from the two rules kdp has, which the `fenced` flag of
//! `describe --with-transactions` (and the exporter) is read from.
//!
//! - **The log** (both protocol generations): the partition's producer id
//!   and epoch are placed in the id's history (the first change at or past
//!   that epoch), and any later change that fences (an InitProducerId, a
//!   coordinator's timeout or fencing abort) proves that the instance that
//!   wrote them is gone. Commits and aborts under transaction protocol v2
//!   bump the epoch without fencing anyone: a healthy producer that wrote
//!   p0 in one transaction and p1 in the next is never flagged. A gap in the
//!   history after those writes (compaction) leaves the answer open rather
//!   than "not fenced".
//! - **The epochs** (protocol v1 only): the partition's epoch below the
//!   coordinator's for the same producer id. Under v1 only InitProducerId
//!   and the coordinator's aborts bump an epoch, so this proves a fence
//!   without the log; under v2 it proves nothing.

use kdp_wire::messages::{ProducerState, TransactionState};

use crate::history::changes::{Cause, ProducerEpoch, StateChange};
use crate::history::id::History;
use crate::protocol::TxnProtocol;

/// What proved a fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceProof {
    /// A change in `__transaction_state` after the writes.
    Log {
        /// The record's offset.
        offset: i64,
        /// Its timestamp.
        timestamp: i64,
        /// What it was.
        cause: Cause,
        /// The producer id and epoch it moved to.
        to: ProducerEpoch,
    },
    /// Protocol v1: the partition's epoch is below the coordinator's.
    Epochs {
        /// The coordinator's epoch for the producer id.
        coordinator_epoch: i16,
    },
}

/// Why the verdict is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceUnknown {
    /// `__transaction_state` could not be read (the error), and under
    /// protocol v2 the epochs prove nothing.
    LogUnreadable(String),
    /// No transactional id is known for the producer (the listing hid it
    /// or did not answer).
    NoTransactionalId,
    /// The log read holds no record of this producer id at or past the
    /// partition's epoch.
    NotInLog,
    /// Records of the id are missing after the writes (compaction): an
    /// instance change may have been removed.
    Gap {
        /// The first record after the gap.
        offset: i64,
    },
    /// The log was not read (and under protocol v2 the epochs prove
    /// nothing).
    NotRead,
    /// The log was not read to its end (time ran out): a later instance
    /// change may be in the part not read.
    Unfinished {
        /// Where reading stopped.
        offset: i64,
    },
}

/// The one verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceVerdict {
    /// A later instance (or the coordinator) fenced the writes.
    Fenced(FenceProof),
    /// Checked: nothing fenced them.
    NotFenced {
        /// From the log (else from the epochs, under v1).
        from_log: bool,
    },
    /// Not known.
    Unknown(FenceUnknown),
}

impl FenceVerdict {
    /// Whether the writes are proven fenced.
    pub fn is_fenced(&self) -> bool {
        matches!(self, FenceVerdict::Fenced(_))
    }

    /// `fenced`, `not-fenced` or `unknown`.
    pub fn label(&self) -> &'static str {
        match self {
            FenceVerdict::Fenced(_) => "fenced",
            FenceVerdict::NotFenced { .. } => "not-fenced",
            FenceVerdict::Unknown(_) => "unknown",
        }
    }

    /// Where a known verdict came from; `None` when it is unknown.
    pub fn source(&self) -> Option<FenceSource> {
        match self {
            FenceVerdict::Fenced(FenceProof::Log { .. })
            | FenceVerdict::NotFenced { from_log: true } => Some(FenceSource::Log),
            FenceVerdict::Fenced(FenceProof::Epochs { .. })
            | FenceVerdict::NotFenced { from_log: false } => Some(FenceSource::Epochs),
            FenceVerdict::Unknown(_) => None,
        }
    }

    /// Whether the verdict is one kdp should have been able to give and
    /// could not: the log was unreadable, cut short by compaction or the
    /// deadline, silent about the producer, or not read, where the epochs
    /// prove nothing. A producer with no known transactional id is not one:
    /// there is no log to read. A command whose answer has such a verdict
    /// never exits 0.
    pub fn is_unchecked(&self) -> bool {
        matches!(
            self,
            FenceVerdict::Unknown(
                FenceUnknown::LogUnreadable(_)
                    | FenceUnknown::NotInLog
                    | FenceUnknown::Gap { .. }
                    | FenceUnknown::Unfinished { .. }
                    | FenceUnknown::NotRead
            )
        )
    }
}

/// What a known fence verdict was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceSource {
    /// The transaction log (`__transaction_state`).
    Log,
    /// The epochs (transaction protocol v1 only).
    Epochs,
}

impl FenceSource {
    /// `log` or `epochs`.
    pub fn label(self) -> &'static str {
        match self {
            FenceSource::Log => "log",
            FenceSource::Epochs => "epochs",
        }
    }
}

/// The log rule alone: `changes` is the id's history (read to the end of
/// the partition), `at` the producer id and epoch a partition shows.
pub fn from_log(changes: &[StateChange], at: ProducerEpoch) -> FenceVerdict {
    // The change that made the partition's epoch current: the first record
    // of that producer id at or past it.
    let Some(anchor) = changes.iter().position(|c| {
        c.producer()
            .is_some_and(|p| p.producer_id == at.producer_id && p.epoch >= at.epoch)
    }) else {
        return FenceVerdict::Unknown(FenceUnknown::NotInLog);
    };
    let mut gap = None;
    for (i, c) in changes.iter().enumerate().skip(anchor) {
        let jumped = c.producer().is_some_and(|p| p.epoch > at.epoch);
        // A gap before the anchor matters only when the epoch moved past
        // the writes' inside it.
        if c.gap_before && gap.is_none() && (i != anchor || jumped) {
            gap = Some(c.offset);
        }
        let Some(change) = c.epoch_change else {
            continue;
        };
        // The anchor fences the writes when it jumped past their epoch, or
        // (an abort by the coordinator) wrote the marker they show.
        let fences_here = if i == anchor {
            change.cause.fences()
                && (jumped
                    || matches!(
                        change.cause,
                        Cause::CoordinatorTimeout | Cause::FencingAbort
                    ))
        } else {
            change.cause.fences()
        };
        if fences_here {
            if let Some(to) = c.producer() {
                return FenceVerdict::Fenced(FenceProof::Log {
                    offset: c.offset,
                    timestamp: c.timestamp,
                    cause: change.cause,
                    to,
                });
            }
        }
    }
    match gap {
        Some(offset) => FenceVerdict::Unknown(FenceUnknown::Gap { offset }),
        None => FenceVerdict::NotFenced { from_log: true },
    }
}

/// The v1 rule alone: a closed producer's epoch below the coordinator's
/// for the same producer id. `None` where it proves nothing.
pub fn from_epochs(
    p: &ProducerState,
    coordinator: Option<&TransactionState>,
    protocol: TxnProtocol,
) -> Option<FenceVerdict> {
    if protocol != TxnProtocol::V1 {
        return None;
    }
    let t = coordinator?;
    if t.producer_id != p.producer_id {
        return None;
    }
    if i32::from(t.producer_epoch) > p.producer_epoch && p.current_txn_start_offset < 0 {
        Some(FenceVerdict::Fenced(FenceProof::Epochs {
            coordinator_epoch: t.producer_epoch,
        }))
    } else {
        Some(FenceVerdict::NotFenced { from_log: false })
    }
}

/// What kdp knows of the transaction log of a producer's transactional id.
#[derive(Debug, Clone, Copy)]
pub enum LogView<'a> {
    /// The id's history, read.
    Read(&'a History),
    /// The log could not be read: why.
    Unreadable(&'a str),
    /// No transactional id is known for the producer.
    NoTransactionalId,
    /// The caller did not read the log (the exporter's scan): the epochs
    /// decide under v1, nothing under v2.
    NotRead,
}

/// The verdict for producer `p` on a partition: the log when it answers,
/// else (protocol v1) the epochs, else unknown with the reason.
pub fn verdict(
    p: &ProducerState,
    coordinator: Option<&TransactionState>,
    protocol: TxnProtocol,
    log: LogView<'_>,
) -> FenceVerdict {
    let at = ProducerEpoch {
        producer_id: p.producer_id,
        epoch: i16::try_from(p.producer_epoch).unwrap_or(i16::MAX),
    };
    let logged = match log {
        LogView::Read(h) => match from_log(&h.changes, at) {
            FenceVerdict::NotFenced { .. } if !h.reach.complete() => {
                FenceVerdict::Unknown(FenceUnknown::Unfinished {
                    offset: h.reach.end_offset,
                })
            }
            v => v,
        },
        LogView::Unreadable(why) => {
            FenceVerdict::Unknown(FenceUnknown::LogUnreadable(why.to_string()))
        }
        LogView::NoTransactionalId => FenceVerdict::Unknown(FenceUnknown::NoTransactionalId),
        LogView::NotRead => FenceVerdict::Unknown(FenceUnknown::NotRead),
    };
    match logged {
        FenceVerdict::Unknown(why) => {
            from_epochs(p, coordinator, protocol).unwrap_or(FenceVerdict::Unknown(why))
        }
        known => known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::changes::tests::{fenced_v2, rec};
    use crate::history::changes::{state_changes, Hole};
    use kdp_wire::TxnState::*;

    fn at(pid: i64, epoch: i16) -> ProducerEpoch {
        ProducerEpoch {
            producer_id: pid,
            epoch,
        }
    }

    #[test]
    fn the_fenced_instances_partition_is_fenced_and_the_new_ones_is_not() {
        let c = state_changes("tx", &fenced_v2(), &[]);
        // t-0 shows epoch 1 (instance 1's commit marker): instance 2's
        // InitProducerId at offset 4 came after it.
        match from_log(&c, at(0, 1)) {
            FenceVerdict::Fenced(FenceProof::Log {
                offset, cause, to, ..
            }) => {
                assert_eq!(offset, 4);
                assert_eq!(
                    cause,
                    Cause::InitProducerId(crate::history::changes::InitKind::NewInstance)
                );
                assert_eq!(to, at(0, 2));
            }
            other => panic!("{other:?}"),
        }
        // t-1 shows epoch 3 (instance 2's commit marker): nothing after.
        assert_eq!(
            from_log(&c, at(0, 3)),
            FenceVerdict::NotFenced { from_log: true }
        );
        // Data written by instance 2 at its InitProducerId epoch (open).
        assert_eq!(
            from_log(&c, at(0, 2)),
            FenceVerdict::NotFenced { from_log: true }
        );
        // Another producer id is not in this history.
        assert_eq!(
            from_log(&c, at(9, 0)),
            FenceVerdict::Unknown(FenceUnknown::NotInLog)
        );
    }

    #[test]
    fn a_healthy_producer_is_never_fenced_by_its_own_commits() {
        const H: i32 = 3_600_000;
        let records = vec![
            rec(0, Empty, 1000, 0, &[], H, -1, 10, 0),
            rec(1, Ongoing, 1000, 0, &[("t", 0)], H, 11, 11, 2),
            rec(2, PrepareCommit, 1000, 1, &[("t", 0)], H, 11, 12, 2),
            rec(3, CompleteCommit, 1000, 1, &[], H, 11, 13, 2),
            rec(4, Ongoing, 1000, 1, &[("t", 1)], H, 14, 14, 2),
            rec(5, PrepareCommit, 1000, 2, &[("t", 1)], H, 14, 15, 2),
            rec(6, CompleteCommit, 1000, 2, &[], H, 14, 16, 2),
        ];
        let c = state_changes("tx", &records, &[]);
        for epoch in [1, 2] {
            assert_eq!(
                from_log(&c, at(1000, epoch)),
                FenceVerdict::NotFenced { from_log: true }
            );
        }
    }

    #[test]
    fn a_timeout_abort_fences_the_partitions_it_marked() {
        let records = vec![
            rec(0, Empty, 2, 0, &[], 2000, -1, 0, 0),
            rec(1, Ongoing, 2, 0, &[("t", 2)], 2000, 100, 100, 2),
            rec(2, PrepareAbort, 2, 1, &[("t", 2)], 2000, 100, 9100, 2),
            rec(3, CompleteAbort, 2, 1, &[], 2000, 100, 9300, 2),
        ];
        let c = state_changes("tx", &records, &[]);
        // The abort marker on t-2 carries epoch 1, the timeout's.
        assert!(from_log(&c, at(2, 1)).is_fenced());
        // Still open at epoch 0 (the marker not yet there): fenced too.
        assert!(from_log(&c, at(2, 0)).is_fenced());
    }

    #[test]
    fn a_gap_after_the_writes_leaves_it_unknown_but_a_fence_before_it_counts() {
        let all = fenced_v2();
        let kept: Vec<_> = all.iter().filter(|r| r.offset != 6).cloned().collect();
        let c = state_changes("tx", &kept, &[Hole { start: 6, end: 7 }]);
        // Writes at epoch 2 (instance 2's data): the epoch moved to 3 inside
        // the gap, which might have held an InitProducerId.
        assert_eq!(
            from_log(&c, at(0, 2)),
            FenceVerdict::Unknown(FenceUnknown::Gap { offset: 7 })
        );
        // Epoch 3 is the record after the gap itself: nothing between the
        // writes and it could fence without moving the epoch further.
        assert_eq!(
            from_log(&c, at(0, 3)),
            FenceVerdict::NotFenced { from_log: true }
        );
        // t-0's fence (offset 4) is before the gap: proven.
        assert!(from_log(&c, at(0, 1)).is_fenced());
    }

    fn producer(epoch: i32) -> ProducerState {
        ProducerState {
            producer_id: 7,
            producer_epoch: epoch,
            current_txn_start_offset: -1,
            ..Default::default()
        }
    }

    fn coordinator(epoch: i16) -> TransactionState {
        TransactionState {
            producer_id: 7,
            producer_epoch: epoch,
            ..Default::default()
        }
    }

    #[test]
    fn epochs_decide_under_v1_only_and_the_log_wins_when_read() {
        let t = coordinator(4);
        // v1, log unreadable: the epochs prove it.
        assert_eq!(
            verdict(
                &producer(3),
                Some(&t),
                TxnProtocol::V1,
                LogView::Unreadable("denied")
            ),
            FenceVerdict::Fenced(FenceProof::Epochs {
                coordinator_epoch: 4
            })
        );
        assert_eq!(
            verdict(
                &producer(4),
                Some(&t),
                TxnProtocol::V1,
                LogView::Unreadable("denied")
            ),
            FenceVerdict::NotFenced { from_log: false }
        );
        // v2, log unreadable: unknown, with why.
        assert_eq!(
            verdict(
                &producer(3),
                Some(&t),
                TxnProtocol::V2,
                LogView::Unreadable("denied")
            ),
            FenceVerdict::Unknown(FenceUnknown::LogUnreadable("denied".into()))
        );
        assert_eq!(
            verdict(
                &producer(3),
                None,
                TxnProtocol::V2,
                LogView::NoTransactionalId
            ),
            FenceVerdict::Unknown(FenceUnknown::NoTransactionalId)
        );
    }
}
