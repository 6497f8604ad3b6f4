//! A transactional id's records in `__transaction_state`, turned into state
//! changes with what caused each change of producer id or epoch. Pure: the
//! records come from kdp-workflows' `history` (or a test).
//!
//! Every cause is read off the records the way Kafka's transaction
//! coordinator writes them (`TransactionMetadata`, `TransactionCoordinator`
//! in 3.9 and 4.x), and checked on real brokers (`real_kafka_history.rs`):
//!
//! | cause | what the log shows |
//! | --- | --- |
//! | InitProducerId | `Empty`: only InitProducerId moves an id to Empty (from Empty, CompleteCommit or CompleteAbort), with the epoch bumped or, on a new producer id, epoch 0. A new producer instance calling `initTransactions`, and an admin fence (`kdp force-terminate`, `kafka-transactions.sh forceTerminateTransaction`, `Admin.fenceProducers`), both send producer id and epoch -1: the log cannot tell them apart, except that Kafka's Admin and kdp record their request timeout (30 s by default) as the transaction timeout, and nothing runs at the fencing epoch. |
//! | commit, abort (protocol v2) | `PrepareCommit`/`PrepareAbort` right after `Ongoing` with the epoch one higher and ClientTransactionVersion 2: every transaction end bumps the epoch. |
//! | coordinator timeout | `PrepareAbort` with the epoch bumped, written once the transaction outlived its timeout (last update − start ≥ timeout): the coordinator's abort of a timed-out transaction, which fences the producer. |
//! | fencing abort (protocol v1) | `PrepareAbort` with the epoch bumped before the timeout: under v1 a client's own abort keeps the epoch, so this is the coordinator aborting the open transaction for a new InitProducerId (the `Empty` that follows). |
//! | producer id rollover | `CompleteCommit`/`CompleteAbort` at epoch 0 of the NextProducerId the `Prepare*` record announced: the epoch ran out at a transaction end (protocol v2). An InitProducerId on an exhausted epoch gives `Empty` at epoch 0 of a new producer id. |
//!
//! Records may be missing: the topic is compacted, so the cleaner removes
//! all but the latest record of each id outside the active segment. Two
//! records of an id with a hole in the partition's offsets between them, or
//! whose states do not follow one another in Kafka's state machine, have a
//! gap between them, and a change across a gap is never explained.

use std::collections::BTreeSet;

use kdp_wire::coordinator::txn_log::{TransactionLogValue, TxnLogEntry};
use kdp_wire::TxnState;

use crate::partition::TopicPartition;
use crate::severity::Severity;

/// One record of the partition, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its offset in the `__transaction_state` partition.
    pub offset: i64,
    /// The record's timestamp (the coordinator's clock when it appended).
    pub timestamp: i64,
    /// The key and value.
    pub entry: TxnLogEntry,
}

/// A range of offsets with no record (removed by the log cleaner), `start`
/// inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hole {
    /// The first missing offset.
    pub start: i64,
    /// The offset after the last missing one.
    pub end: i64,
}

/// A producer id and epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProducerEpoch {
    /// The producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub epoch: i16,
}

/// The state a record gives the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeState {
    /// One of Kafka's states.
    State(TxnState),
    /// A TransactionStatus id this version of kdp does not know.
    Unknown(i8),
    /// A tombstone: the id expired and the coordinator removed it.
    Removed,
}

impl ChangeState {
    /// The name printed: Kafka's state name, `Removed`, or `Unknown(N)`.
    pub fn name(&self) -> String {
        match self {
            ChangeState::State(s) => s.name().to_string(),
            ChangeState::Unknown(id) => format!("Unknown({id})"),
            ChangeState::Removed => "Removed".to_string(),
        }
    }
}

/// What InitProducerId did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InitKind {
    /// The epoch was bumped: a new producer instance (or a producer
    /// re-initialising after an error); every earlier epoch is fenced.
    NewInstance,
    /// The epoch was bumped, nothing ran at the new epoch and the recorded
    /// transaction timeout differs from the one before: the signature of an
    /// admin fence (`kdp force-terminate`, `kafka-transactions.sh
    /// forceTerminateTransaction`, `Admin.fenceProducers`), which Kafka
    /// records exactly like a new instance that never began a transaction.
    AdminFence,
    /// A new producer id at epoch 0: a transactional id seen for the first
    /// time, one that expired and came back, or an exhausted epoch.
    NewProducerId,
}

/// Why the producer id or epoch changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// InitProducerId (the record is `Empty`).
    InitProducerId(InitKind),
    /// A transaction's end under transaction protocol v2 (EndTxn bumps the
    /// epoch): the same producer instance goes on.
    EndTransaction {
        /// Commit (else abort).
        commit: bool,
    },
    /// The coordinator aborted a transaction that outlived its timeout,
    /// fencing the producer's epoch.
    CoordinatorTimeout,
    /// Protocol v1: the coordinator aborted the open transaction, before
    /// its timeout, for a new InitProducerId of the id (fencing).
    FencingAbort,
    /// The epoch ran out at a transaction end: the coordinator moved the id
    /// to the producer id it had announced (NextProducerId), epoch 0.
    ProducerIdRollover,
    /// Records of the id are missing before this one (compaction, or a
    /// transition Kafka never makes in one step): the change is not
    /// explained.
    Unexplained,
    /// The first record read, not an InitProducerId: what led here is
    /// before the part of the log that was read.
    BeforeHistory,
}

impl Cause {
    /// The short name printed in tables and JSON.
    pub fn label(self) -> &'static str {
        match self {
            Cause::InitProducerId(InitKind::NewInstance) => "init-producer-id",
            Cause::InitProducerId(InitKind::AdminFence) => "admin-fence",
            Cause::InitProducerId(InitKind::NewProducerId) => "new-producer-id",
            Cause::EndTransaction { commit: true } => "commit",
            Cause::EndTransaction { commit: false } => "abort",
            Cause::CoordinatorTimeout => "timeout",
            Cause::FencingAbort => "fencing-abort",
            Cause::ProducerIdRollover => "rollover",
            Cause::Unexplained => "unexplained",
            Cause::BeforeHistory => "before-history",
        }
    }

    /// Whether the change fences the epoch before it: a writer that still
    /// holds that epoch is refused from then on.
    pub fn fences(self) -> bool {
        matches!(
            self,
            Cause::InitProducerId(_) | Cause::CoordinatorTimeout | Cause::FencingAbort
        )
    }

    /// Whether the change starts another producer instance (an
    /// InitProducerId).
    pub fn is_instance_change(self) -> bool {
        matches!(self, Cause::InitProducerId(_))
    }

    /// What the change asks of an operator: a fence is a problem for the
    /// writer it fenced, a change the log read cannot explain is unknown;
    /// `None` for a routine one (a transaction end under protocol v2, a
    /// producer id rollover), which grades nothing.
    pub fn severity(self) -> Option<Severity> {
        if self.fences() {
            return Some(Severity::Problem);
        }
        match self {
            Cause::Unexplained | Cause::BeforeHistory => Some(Severity::Unknown),
            _ => None,
        }
    }
}

/// A change of producer id or epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochChange {
    /// The producer id and epoch before, when a record before was read.
    pub from: Option<ProducerEpoch>,
    /// Why.
    pub cause: Cause,
}

/// One record of the id: the state it moved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    /// The record's offset.
    pub offset: i64,
    /// The record's timestamp.
    pub timestamp: i64,
    /// The state after the change.
    pub state: ChangeState,
    /// The value's version (`None` for a tombstone).
    pub value_version: Option<i16>,
    /// The value (`None` for a tombstone).
    pub value: Option<TransactionLogValue>,
    /// The partitions in the transaction.
    pub partitions: Vec<TopicPartition>,
    /// The partitions this change added (Ongoing only).
    pub partitions_added: Vec<TopicPartition>,
    /// Set when the producer id or epoch changed (or on the first record).
    pub epoch_change: Option<EpochChange>,
    /// The producer instance, counted from 1 at the first record read; an
    /// InitProducerId that bumps the epoch starts the next one.
    pub instance: u32,
    /// This change started another instance than the one before it.
    pub instance_change: bool,
    /// Records of this id may be missing between the one before and this
    /// one (see the module docs).
    pub gap_before: bool,
}

impl StateChange {
    /// The producer id and epoch after the change (`None` for a tombstone).
    pub fn producer(&self) -> Option<ProducerEpoch> {
        self.value.as_ref().map(|v| ProducerEpoch {
            producer_id: v.producer_id,
            epoch: v.producer_epoch,
        })
    }

    /// The cause, when the producer id or epoch changed.
    pub fn cause(&self) -> Option<Cause> {
        self.epoch_change.map(|c| c.cause)
    }
}

fn txn_state(v: &TransactionLogValue) -> ChangeState {
    match v.state() {
        Some(s) => ChangeState::State(s),
        None => ChangeState::Unknown(v.transaction_status),
    }
}

/// Whether a hole lies strictly between offsets `a` and `b`.
fn hole_between(holes: &[Hole], a: i64, b: i64) -> bool {
    holes
        .iter()
        .any(|h| h.start < b && h.end > a.saturating_add(1))
}

/// Whether Kafka makes the step from `prev` to `cur` in one record.
fn one_step(prev: &ChangeState, cur: &ChangeState) -> bool {
    match (prev, cur) {
        // an expired id comes back through InitProducerId
        (ChangeState::Removed, ChangeState::State(TxnState::Empty)) => true,
        (ChangeState::State(p), ChangeState::Removed) => TxnState::Dead.follows(*p),
        (ChangeState::State(p), ChangeState::State(c)) => c.follows(*p),
        _ => false,
    }
}

/// The transaction outlived its timeout when this record was written.
fn timed_out(v: &TransactionLogValue) -> bool {
    v.transaction_start_timestamp_ms >= 0
        && v.transaction_last_update_timestamp_ms
            .saturating_sub(v.transaction_start_timestamp_ms)
            >= i64::from(v.transaction_timeout_ms)
}

/// The cause of the move from `prev` to `cur` (both values of the id;
/// `next` is the id's record after `cur`, if any), when producer id or
/// epoch changed.
fn cause(
    prev: Option<&TransactionLogValue>,
    cur: &TransactionLogValue,
    next: Option<&ChangeState>,
    gap: bool,
) -> Cause {
    let state = cur.state();
    if state == Some(TxnState::Empty) {
        // Only InitProducerId moves an id to Empty.
        let Some(prev) = prev else {
            return Cause::InitProducerId(if cur.producer_epoch == 0 {
                InitKind::NewProducerId
            } else {
                InitKind::NewInstance
            });
        };
        if cur.producer_id != prev.producer_id {
            return Cause::InitProducerId(InitKind::NewProducerId);
        }
        let nothing_ran = !matches!(
            next,
            Some(ChangeState::State(
                TxnState::Ongoing | TxnState::PrepareAbort | TxnState::PrepareCommit
            ))
        );
        let timeout_changed = prev.transaction_timeout_ms != cur.transaction_timeout_ms;
        return Cause::InitProducerId(if nothing_ran && timeout_changed && !gap {
            InitKind::AdminFence
        } else {
            InitKind::NewInstance
        });
    }
    let Some(prev) = prev else {
        return Cause::BeforeHistory;
    };
    if gap {
        return Cause::Unexplained;
    }
    let same_id = cur.producer_id == prev.producer_id;
    let bump = i32::from(cur.producer_epoch) - i32::from(prev.producer_epoch);
    match state {
        Some(s @ (TxnState::PrepareCommit | TxnState::PrepareAbort)) if same_id && bump == 1 => {
            let abort = s == TxnState::PrepareAbort;
            if abort && timed_out(cur) {
                Cause::CoordinatorTimeout
            } else if cur.client_transaction_version >= 2 {
                Cause::EndTransaction { commit: !abort }
            } else if abort {
                // v1: a client's abort keeps the epoch.
                Cause::FencingAbort
            } else {
                Cause::Unexplained
            }
        }
        Some(TxnState::CompleteCommit | TxnState::CompleteAbort)
            if prev.next_producer_id >= 0
                && cur.producer_id == prev.next_producer_id
                && cur.producer_epoch == 0 =>
        {
            Cause::ProducerIdRollover
        }
        _ => Cause::Unexplained,
    }
}

/// The state changes of `transactional_id` among `records` (the
/// partition's records in offset order; other ids are skipped), with
/// `holes` the offset ranges of the partition that hold no record.
pub fn state_changes(
    transactional_id: &str,
    records: &[LogRecord],
    holes: &[Hole],
) -> Vec<StateChange> {
    let mine: Vec<&LogRecord> = records
        .iter()
        .filter(|r| r.entry.transactional_id() == transactional_id)
        .collect();
    let states: Vec<ChangeState> = mine
        .iter()
        .map(|r| match &r.entry {
            TxnLogEntry::State { value, .. } => txn_state(&value.record),
            TxnLogEntry::Tombstone { .. } => ChangeState::Removed,
        })
        .collect();
    let mut out: Vec<StateChange> = Vec::with_capacity(mine.len());
    let mut instance = 1u32;
    for (i, r) in mine.iter().enumerate() {
        let state = states[i];
        let prev = i.checked_sub(1).and_then(|p| out.get(p));
        let gap_before = prev.is_some_and(|p| {
            hole_between(holes, p.offset, r.offset) || !one_step(&p.state, &state)
        });
        let (value_version, value) = match &r.entry {
            TxnLogEntry::State { value, .. } => (Some(value.version), Some(value.record.clone())),
            TxnLogEntry::Tombstone { .. } => (None, None),
        };
        let partitions: Vec<TopicPartition> = value
            .iter()
            .flat_map(|v| v.partitions().map(|(t, p)| (t.to_string(), p)))
            .collect();
        let prev_value = prev.and_then(|p| p.value.as_ref());
        let before = prev.and_then(StateChange::producer);
        let now = value.as_ref().map(|v| ProducerEpoch {
            producer_id: v.producer_id,
            epoch: v.producer_epoch,
        });
        let epoch_change = match (&value, now) {
            (Some(v), Some(now)) if before != Some(now) => Some(EpochChange {
                from: before,
                cause: cause(prev_value, v, states.get(i + 1), gap_before),
            }),
            _ => None,
        };
        let instance_change =
            prev.is_some() && epoch_change.is_some_and(|c| c.cause.is_instance_change());
        if instance_change {
            instance += 1;
        }
        let partitions_added = if state == ChangeState::State(TxnState::Ongoing) {
            let had: BTreeSet<&TopicPartition> = match prev {
                Some(p)
                    if p.state == ChangeState::State(TxnState::Ongoing) && p.producer() == now =>
                {
                    p.partitions.iter().collect()
                }
                _ => BTreeSet::new(),
            };
            partitions
                .iter()
                .filter(|tp| !had.contains(tp))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        out.push(StateChange {
            offset: r.offset,
            timestamp: r.timestamp,
            state,
            value_version,
            value,
            partitions,
            partitions_added,
            epoch_change,
            instance,
            instance_change,
            gap_before,
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use kdp_wire::coordinator::txn_log::PartitionsSchema;
    use kdp_wire::coordinator::Versioned;

    const T0: i64 = 1_796_287_460_000;

    #[test]
    fn a_fence_is_a_problem_an_unexplained_change_unknown_a_routine_one_ungraded() {
        let all = [
            Cause::InitProducerId(InitKind::NewInstance),
            Cause::InitProducerId(InitKind::AdminFence),
            Cause::InitProducerId(InitKind::NewProducerId),
            Cause::EndTransaction { commit: true },
            Cause::EndTransaction { commit: false },
            Cause::CoordinatorTimeout,
            Cause::FencingAbort,
            Cause::ProducerIdRollover,
            Cause::Unexplained,
            Cause::BeforeHistory,
        ];
        let graded: Vec<(&str, Option<Severity>)> =
            all.iter().map(|c| (c.label(), c.severity())).collect();
        let (p, u) = (Some(Severity::Problem), Some(Severity::Unknown));
        assert_eq!(
            graded,
            [
                ("init-producer-id", p),
                ("admin-fence", p),
                ("new-producer-id", p),
                ("commit", None),
                ("abort", None),
                ("timeout", p),
                ("fencing-abort", p),
                ("rollover", None),
                ("unexplained", u),
                ("before-history", u),
            ]
        );
    }

    /// A record of id `tx` in the shape Kafka 4.4 wrote it in the runs
    /// `real_kafka_history.rs` checks (value v1, previous id = id).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rec(
        offset: i64,
        state: TxnState,
        pid: i64,
        epoch: i16,
        parts: &[(&str, i32)],
        timeout: i32,
        start: i64,
        at: i64,
        tv: i16,
    ) -> LogRecord {
        let mut topics: Vec<PartitionsSchema> = Vec::new();
        for (t, p) in parts {
            match topics.iter_mut().find(|x| x.topic == *t) {
                Some(x) => x.partition_ids.push(*p),
                None => topics.push(PartitionsSchema {
                    topic: (*t).to_string(),
                    partition_ids: vec![*p],
                    ..Default::default()
                }),
            }
        }
        LogRecord {
            offset,
            timestamp: at,
            entry: TxnLogEntry::State {
                key_version: 0,
                transactional_id: "tx".into(),
                value: Versioned {
                    version: 1,
                    record: TransactionLogValue {
                        producer_id: pid,
                        previous_producer_id: pid,
                        producer_epoch: epoch,
                        transaction_timeout_ms: timeout,
                        transaction_status: state.id(),
                        transaction_partitions: if state == TxnState::Empty {
                            None
                        } else {
                            Some(topics)
                        },
                        transaction_last_update_timestamp_ms: at,
                        transaction_start_timestamp_ms: start,
                        client_transaction_version: tv,
                        ..Default::default()
                    },
                },
            },
        }
    }

    fn causes(changes: &[StateChange]) -> Vec<Option<&'static str>> {
        changes
            .iter()
            .map(|c| c.cause().map(Cause::label))
            .collect()
    }

    use TxnState::*;
    const H: i32 = 3_600_000;

    /// fence-after-write on Kafka 4.4.0 (transaction protocol v2), as the
    /// formatter printed it: instance 1 commits to t-0, instance 2 starts
    /// and commits to t-1.
    pub(crate) fn fenced_v2() -> Vec<LogRecord> {
        vec![
            rec(0, Empty, 0, 0, &[], H, -1, T0 + 449, 0),
            rec(1, Ongoing, 0, 0, &[("t", 0)], H, T0 + 1078, T0 + 1078, 2),
            rec(
                2,
                PrepareCommit,
                0,
                1,
                &[("t", 0)],
                H,
                T0 + 1078,
                T0 + 1360,
                2,
            ),
            rec(3, CompleteCommit, 0, 1, &[], H, T0 + 1078, T0 + 1395, 2),
            rec(4, Empty, 0, 2, &[], H, -1, T0 + 2091, 2),
            rec(5, Ongoing, 0, 2, &[("t", 1)], H, T0 + 2196, T0 + 2196, 2),
            rec(
                6,
                PrepareCommit,
                0,
                3,
                &[("t", 1)],
                H,
                T0 + 2196,
                T0 + 2368,
                2,
            ),
            rec(7, CompleteCommit, 0, 3, &[], H, T0 + 2196, T0 + 2383, 2),
        ]
    }

    #[test]
    fn a_new_instance_is_an_instance_change_and_commits_are_not() {
        let c = state_changes("tx", &fenced_v2(), &[]);
        assert_eq!(
            causes(&c),
            [
                Some("new-producer-id"),
                None,
                Some("commit"),
                None,
                Some("init-producer-id"),
                None,
                Some("commit"),
                None
            ]
        );
        assert_eq!(
            c.iter().map(|c| c.instance).collect::<Vec<_>>(),
            [1, 1, 1, 1, 2, 2, 2, 2]
        );
        assert_eq!(
            c.iter().map(|c| c.instance_change).collect::<Vec<_>>(),
            [false, false, false, false, true, false, false, false]
        );
        assert!(c.iter().all(|c| !c.gap_before));
        assert_eq!(c[5].partitions_added, [("t".to_string(), 1)]);
        assert_eq!(
            c[4].epoch_change.unwrap().from,
            Some(ProducerEpoch {
                producer_id: 0,
                epoch: 1
            })
        );
    }

    #[test]
    fn a_healthy_producer_moving_between_partitions_never_changes_instance() {
        // txn-two-partitions on 4.4.0: two commits, no InitProducerId between.
        let records = vec![
            rec(0, Empty, 1000, 0, &[], H, -1, T0, 0),
            rec(1, Ongoing, 1000, 0, &[("t", 0)], H, T0 + 1, T0 + 1, 2),
            rec(2, PrepareCommit, 1000, 1, &[("t", 0)], H, T0 + 1, T0 + 2, 2),
            rec(3, CompleteCommit, 1000, 1, &[], H, T0 + 1, T0 + 3, 2),
            rec(4, Ongoing, 1000, 1, &[("t", 1)], H, T0 + 4, T0 + 4, 2),
            rec(5, PrepareCommit, 1000, 2, &[("t", 1)], H, T0 + 4, T0 + 5, 2),
            rec(6, CompleteCommit, 1000, 2, &[], H, T0 + 4, T0 + 6, 2),
        ];
        let c = state_changes("tx", &records, &[]);
        assert!(c.iter().all(|c| c.instance == 1 && !c.instance_change));
        assert_eq!(causes(&c)[5], Some("commit"));
    }

    #[test]
    fn timeouts_and_admin_fences_are_told_apart() {
        // tt on 4.4.0: a 2 s transaction aborted by the coordinator 9 s later.
        let records = vec![
            rec(0, Empty, 2, 0, &[], 2000, -1, T0, 0),
            rec(1, Ongoing, 2, 0, &[("t", 2)], 2000, T0 + 100, T0 + 100, 2),
            rec(
                2,
                PrepareAbort,
                2,
                1,
                &[("t", 2)],
                2000,
                T0 + 100,
                T0 + 9100,
                2,
            ),
            rec(3, CompleteAbort, 2, 1, &[], 2000, T0 + 100, T0 + 9300, 2),
        ];
        let c = state_changes("tx", &records, &[]);
        assert_eq!(causes(&c)[2], Some("timeout"));
        assert!(c[2].cause().unwrap().fences());
        // tf on 4.4.0: kafka-transactions.sh forceTerminateTransaction of an
        // open transaction: abort, then InitProducerId recording the Admin's
        // 30 s request timeout, and nothing after it.
        let records = vec![
            rec(0, Empty, 1001, 0, &[], H, -1, T0, 0),
            rec(1, Ongoing, 1001, 0, &[("t", 2)], H, T0 + 1, T0 + 1, 2),
            rec(
                2,
                PrepareAbort,
                1001,
                1,
                &[("t", 2)],
                H,
                T0 + 1,
                T0 + 30_000,
                2,
            ),
            rec(3, CompleteAbort, 1001, 1, &[], H, T0 + 1, T0 + 30_010, 2),
            rec(4, Empty, 1001, 2, &[], 30_000, -1, T0 + 30_300, 2),
        ];
        let c = state_changes("tx", &records, &[]);
        assert_eq!(causes(&c)[2], Some("abort"));
        assert_eq!(causes(&c)[4], Some("admin-fence"));
        assert!(c[4].instance_change);
        // The same InitProducerId followed by a transaction is a new instance.
        let mut more = records.clone();
        more.push(rec(
            5,
            Ongoing,
            1001,
            2,
            &[("t", 0)],
            30_000,
            T0 + 31_000,
            T0 + 31_000,
            2,
        ));
        assert_eq!(
            causes(&state_changes("tx", &more, &[]))[4],
            Some("init-producer-id")
        );
    }

    #[test]
    fn protocol_v1_fencing_aborts_bump_the_epoch_and_client_aborts_do_not() {
        // 3.9 (value v0, no ClientTransactionVersion): a client abort keeps
        // the epoch; the coordinator's abort for a new InitProducerId bumps it.
        let records = vec![
            rec(0, Empty, 5, 0, &[], H, -1, T0, 0),
            rec(1, Ongoing, 5, 0, &[("t", 0)], H, T0 + 1, T0 + 1, 0),
            rec(2, PrepareAbort, 5, 0, &[("t", 0)], H, T0 + 1, T0 + 2, 0),
            rec(3, CompleteAbort, 5, 0, &[], H, T0 + 1, T0 + 3, 0),
            rec(4, Ongoing, 5, 0, &[("t", 1)], H, T0 + 4, T0 + 4, 0),
            rec(5, PrepareAbort, 5, 1, &[("t", 1)], H, T0 + 4, T0 + 5, 0),
            rec(6, CompleteAbort, 5, 1, &[], H, T0 + 4, T0 + 6, 0),
            rec(7, Empty, 5, 2, &[], H, -1, T0 + 7, 0),
        ];
        let c = state_changes("tx", &records, &[]);
        assert_eq!(
            causes(&c),
            [
                Some("new-producer-id"),
                None,
                None,
                None,
                None,
                Some("fencing-abort"),
                None,
                Some("init-producer-id")
            ]
        );
        assert_eq!(c[7].instance, 2);
    }

    #[test]
    fn gaps_are_never_explained() {
        // Offsets 2..=5 removed by the cleaner: Ongoing(0) then CompleteCommit(3).
        let all = fenced_v2();
        let kept: Vec<LogRecord> = all
            .iter()
            .filter(|r| !(2..=5).contains(&r.offset))
            .cloned()
            .collect();
        let c = state_changes("tx", &kept, &[Hole { start: 2, end: 6 }]);
        assert_eq!(
            causes(&c),
            [Some("new-producer-id"), None, Some("unexplained"), None]
        );
        assert!(c[2].gap_before);
        // Without a hole in the offsets, a step Kafka never makes is a gap too.
        let two = vec![all[1].clone(), all[3].clone()];
        let c = state_changes("tx", &two, &[]);
        assert!(c[1].gap_before);
        assert_eq!(c[1].cause(), Some(Cause::Unexplained));
        // A first record that is not Empty is not the id's beginning.
        let c = state_changes("tx", &all[5..], &[]);
        assert_eq!(c[0].cause(), Some(Cause::BeforeHistory));
    }

    #[test]
    fn rollover_at_a_transaction_end_keeps_the_instance() {
        let mut prepare = rec(
            1,
            PrepareCommit,
            40,
            i16::MAX,
            &[("t", 0)],
            H,
            T0,
            T0 + 1,
            2,
        );
        let mut ongoing = rec(0, Ongoing, 40, i16::MAX - 1, &[("t", 0)], H, T0, T0, 2);
        if let TxnLogEntry::State { value, .. } = &mut prepare.entry {
            value.record.next_producer_id = 41;
        }
        if let TxnLogEntry::State { value, .. } = &mut ongoing.entry {
            value.record.producer_epoch = i16::MAX - 1;
        }
        let complete = rec(2, CompleteCommit, 41, 0, &[], H, T0, T0 + 2, 2);
        let c = state_changes("tx", &[ongoing, prepare, complete], &[]);
        assert_eq!(c[2].cause(), Some(Cause::ProducerIdRollover));
        assert!(!c[2].instance_change);
    }

    #[test]
    fn tombstones_end_an_id_and_a_new_producer_id_starts_the_next() {
        let mut records = fenced_v2();
        records.push(LogRecord {
            offset: 8,
            timestamp: T0 + 10_000,
            entry: TxnLogEntry::Tombstone {
                key_version: 0,
                transactional_id: "tx".into(),
            },
        });
        records.push(rec(9, Empty, 77, 0, &[], H, -1, T0 + 20_000, 0));
        let c = state_changes("tx", &records, &[]);
        assert_eq!(c[8].state, ChangeState::Removed);
        assert!(!c[8].gap_before);
        assert_eq!(
            c[9].cause(),
            Some(Cause::InitProducerId(InitKind::NewProducerId))
        );
        assert!(c[9].instance_change);
        assert_eq!(c[9].instance, 3);
    }

    #[test]
    fn other_ids_are_skipped_and_holes_outside_do_not_count() {
        let mut records = fenced_v2();
        for r in &mut records {
            r.offset *= 2;
        }
        let other = |offset| LogRecord {
            offset,
            timestamp: T0,
            entry: TxnLogEntry::Tombstone {
                key_version: 0,
                transactional_id: "other".into(),
            },
        };
        let mut all: Vec<LogRecord> = Vec::new();
        for r in records {
            let o = r.offset;
            all.push(r);
            all.push(other(o + 1));
        }
        let c = state_changes(
            "tx",
            &all,
            &[Hole {
                start: 100,
                end: 200,
            }],
        );
        assert_eq!(c.len(), 8);
        assert!(c.iter().all(|c| !c.gap_before));
    }
}
