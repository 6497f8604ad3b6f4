//! Hanging and stuck transactions.
//!
//! Kafka's rule (`TransactionsCommand find-hanging`): an open transaction on
//! a partition (CurrentTxnStartOffset set) whose producer last wrote there
//! longer ago than the maximum transaction timeout is a candidate. It hangs
//! when ListTransactions finds no transactional id for its producer id, when
//! the coordinator does not know that id (TRANSACTIONAL_ID_NOT_FOUND), or
//! when the partition is not among the transaction's partitions.
//!
//! kdp keeps those verdicts and adds two that Kafka's rule gets wrong:
//! - ListTransactions silently leaves out ids the caller may not DESCRIBE,
//!   so "no transactional id found" proves nothing unless the caller may
//!   describe any id: then it is `unknown`, never `hanging`.
//! - A transaction stuck in PrepareCommit or PrepareAbort whose markers
//!   never land (KAFKA-19999) still lists the partition, so Kafka says "not
//!   hanging" while the LSO stays pinned: kdp says `stuck` once the
//!   transaction is older than the timeout.
//!
//! And one Kafka's rule cannot see: a producer whose LastTimestamp is
//! unknown (0 or below, see [`crate::time`]) has no age, so Kafka's age
//! filter cannot clear it and "no coordinator knows it" may be a
//! transaction that has just begun: `unknown`, never `hanging`.
//!
//! Callers judge a whole join with
//! [`findings`](fn@super::findings::findings), which both `kdp find-hanging`
//! and the exporter use.

use kdp_wire::messages::{ProducerState, TransactionState};
use kdp_wire::TxnState;
use serde::Deserialize;

use crate::coordinator::{includes as includes_partition, CoordinatorView, Description, Unlisted};
use crate::severity::Severity;
use crate::time::{age_ms, known_ms};

/// One producer's open transaction on one partition, as its replica
/// reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTxn {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The producer's state there (CurrentTxnStartOffset is set).
    pub producer: ProducerState,
}

impl OpenTxn {
    /// How long ago the producer last wrote to the partition; Kafka's age.
    pub fn idle_ms(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.producer.last_timestamp)
    }
}

/// The verdict on one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The coordinator will still end it.
    NotHanging,
    /// No coordinator will end it.
    Hanging(HangingReason),
    /// The coordinator decided, but the markers were not written in time.
    Stuck {
        /// The coordinator's state (PrepareCommit, PrepareAbort or PrepareEpochFence).
        state: TxnState,
    },
    /// kdp cannot tell; never reported as hanging.
    Unknown(UnknownReason),
}

/// Why a transaction hangs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HangingReason {
    /// No transactional id is listed for the producer id, or the
    /// coordinator does not know the id.
    NoTransaction,
    /// The coordinator's transaction does not include this partition.
    PartitionNotInTransaction,
}

/// Why kdp cannot decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownReason {
    /// The transactional id may be hidden from, or not describable by, the
    /// caller.
    NotAuthorized,
    /// Some broker did not answer ListTransactions.
    ListingIncomplete,
    /// DescribeTransactions failed with this error.
    DescribeFailed(&'static str),
    /// The producer's LastTimestamp is unknown (0 or below): its age, and so
    /// Kafka's candidate rule, cannot be applied, and no coordinator tracks
    /// the transaction (it may have just begun).
    UnknownTimestamp,
}

impl UnknownReason {
    /// The reason without its details: a closed set (a metric label).
    pub fn kind(&self) -> UnknownKind {
        match self {
            UnknownReason::NotAuthorized => UnknownKind::NotAuthorized,
            UnknownReason::ListingIncomplete => UnknownKind::ListingIncomplete,
            UnknownReason::DescribeFailed(_) => UnknownKind::DescribeFailed,
            UnknownReason::UnknownTimestamp => UnknownKind::UnknownTimestamp,
        }
    }
}

/// Why a candidate could not be judged, without the details: the
/// `reason` label of the exporter's `kdp_unknown_transactions`, a closed
/// set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownKind {
    /// The transactional id may be hidden from, or not describable by, the
    /// caller (ACLs).
    NotAuthorized,
    /// Some broker did not answer ListTransactions.
    ListingIncomplete,
    /// DescribeTransactions of the id failed.
    DescribeFailed,
    /// The producer's LastTimestamp is unknown (0 or below).
    UnknownTimestamp,
}

impl UnknownKind {
    /// Every kind, in label order.
    pub const ALL: [UnknownKind; 4] = [
        UnknownKind::NotAuthorized,
        UnknownKind::ListingIncomplete,
        UnknownKind::DescribeFailed,
        UnknownKind::UnknownTimestamp,
    ];

    /// The label: `not_authorized`, `listing_incomplete`,
    /// `describe_failed`, `unknown_timestamp`.
    pub fn label(self) -> &'static str {
        match self {
            UnknownKind::NotAuthorized => "not_authorized",
            UnknownKind::ListingIncomplete => "listing_incomplete",
            UnknownKind::DescribeFailed => "describe_failed",
            UnknownKind::UnknownTimestamp => "unknown_timestamp",
        }
    }
}

/// The four verdicts without their reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VerdictKind {
    /// The coordinator still tracks it.
    Ok,
    /// No coordinator will end it.
    Hanging,
    /// Decided, its markers never written.
    Stuck,
    /// kdp cannot tell.
    Unknown,
}

impl VerdictKind {
    /// `ok`, `hanging`, `stuck` or `unknown`.
    pub fn label(self) -> &'static str {
        match self {
            VerdictKind::Ok => "ok",
            VerdictKind::Hanging => "hanging",
            VerdictKind::Stuck => "stuck",
            VerdictKind::Unknown => "unknown",
        }
    }

    /// Hanging needs action; stuck is worth a look (only its coordinator
    /// may end it); unknown is undecided.
    pub fn severity(self) -> Severity {
        match self {
            VerdictKind::Ok => Severity::Ok,
            VerdictKind::Hanging => Severity::Problem,
            VerdictKind::Stuck => Severity::Warning,
            VerdictKind::Unknown => Severity::Unknown,
        }
    }
}

/// Why a transaction is reported (hanging or stuck), a closed set: the
/// `reason` label of the exporter's hanging and stuck series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// Hanging: the coordinator has no transaction for this producer.
    NoTransaction,
    /// Hanging: the partition is not in the coordinator's transaction.
    PartitionNotInTransaction,
    /// Stuck: PrepareCommit for longer than the timeout, markers not written.
    PrepareCommit,
    /// Stuck: PrepareAbort (or PrepareEpochFence) for longer than the
    /// timeout, markers not written.
    PrepareAbort,
}

impl Problem {
    /// Every problem, in label order.
    pub const ALL: [Problem; 4] = [
        Problem::NoTransaction,
        Problem::PartitionNotInTransaction,
        Problem::PrepareCommit,
        Problem::PrepareAbort,
    ];

    /// The label: `no_transaction`, `partition_not_in_transaction`,
    /// `prepare_commit`, `prepare_abort`.
    pub fn label(self) -> &'static str {
        match self {
            Problem::NoTransaction => "no_transaction",
            Problem::PartitionNotInTransaction => "partition_not_in_transaction",
            Problem::PrepareCommit => "prepare_commit",
            Problem::PrepareAbort => "prepare_abort",
        }
    }

    /// Stuck (the coordinator still has it, its markers never landed)
    /// rather than hanging (the coordinator does not know it).
    pub fn is_stuck(self) -> bool {
        matches!(self, Problem::PrepareCommit | Problem::PrepareAbort)
    }
}

impl Verdict {
    /// The verdict without its reason.
    pub fn kind(&self) -> VerdictKind {
        match self {
            Verdict::NotHanging => VerdictKind::Ok,
            Verdict::Hanging(_) => VerdictKind::Hanging,
            Verdict::Stuck { .. } => VerdictKind::Stuck,
            Verdict::Unknown(_) => VerdictKind::Unknown,
        }
    }

    /// The verdict with its reason, as printed: `hanging: ...`.
    pub fn explain(&self) -> String {
        let why = match self {
            Verdict::NotHanging => "the coordinator still tracks this transaction".into(),
            Verdict::Hanging(HangingReason::NoTransaction) => {
                "the coordinator has no transaction for this producer".into()
            }
            Verdict::Hanging(HangingReason::PartitionNotInTransaction) => {
                "the partition is not in the coordinator's transaction".into()
            }
            Verdict::Stuck { state } => {
                format!("{state} for longer than the timeout, markers not written")
            }
            Verdict::Unknown(UnknownReason::NotAuthorized) => {
                "not authorized to describe the transactional id".into()
            }
            Verdict::Unknown(UnknownReason::ListingIncomplete) => {
                "a broker did not answer ListTransactions".into()
            }
            Verdict::Unknown(UnknownReason::DescribeFailed(name)) => {
                format!("DescribeTransactions failed with {name}")
            }
            Verdict::Unknown(UnknownReason::UnknownTimestamp) => {
                "the producer's LastTimestamp is unknown, so its age cannot be told".to_string()
            }
        };
        format!("{}: {why}", self.kind().label())
    }

    /// Whether this needs an operator (hanging or stuck).
    pub fn is_problem(&self) -> bool {
        matches!(self, Verdict::Hanging(_) | Verdict::Stuck { .. })
    }

    /// Why it is reported, when hanging or stuck.
    pub fn problem(&self) -> Option<Problem> {
        match self {
            Verdict::Hanging(HangingReason::NoTransaction) => Some(Problem::NoTransaction),
            Verdict::Hanging(HangingReason::PartitionNotInTransaction) => {
                Some(Problem::PartitionNotInTransaction)
            }
            Verdict::Stuck {
                state: TxnState::PrepareCommit,
            } => Some(Problem::PrepareCommit),
            Verdict::Stuck { .. } => Some(Problem::PrepareAbort),
            Verdict::NotHanging | Verdict::Unknown(_) => None,
        }
    }
}

/// Kafka's candidate filter: an open transaction whose producer has not
/// written to the partition for longer than `max_timeout_ms`. A producer
/// whose LastTimestamp is unknown cannot be shown to be recent, so its open
/// transaction is a candidate too ([`decide`] never calls it hanging).
pub fn is_candidate(p: &ProducerState, now_ms: i64, max_timeout_ms: i64) -> bool {
    p.current_txn_start_offset >= 0
        && age_ms(p.last_timestamp, now_ms).is_none_or(|age| age > max_timeout_ms)
}

/// When an open transaction started, as far as kdp can tell: the
/// coordinator's TransactionStartTimeMs when its transaction (`tracked`:
/// the coordinator's state, when it holds the partition) says so, else the
/// producer's LastTimestamp on the partition (which may be unknown: 0 or
/// below; see [`crate::time::known_ms`]).
pub fn transaction_start_ms(tracked: Option<&TransactionState>, p: &ProducerState) -> i64 {
    tracked
        .and_then(|t| known_ms(t.transaction_start_time_ms))
        .unwrap_or(p.last_timestamp)
}

/// The transactional id listed for the candidate's producer, if any.
pub fn transactional_id<'a>(view: &'a CoordinatorView, txn: &OpenTxn) -> Option<&'a str> {
    view.listed
        .get(&txn.producer.producer_id)
        .map(String::as_str)
}

/// kdp's verdict on one candidate (see the module docs).
pub fn decide(txn: &OpenTxn, view: &CoordinatorView, now_ms: i64, max_timeout_ms: i64) -> Verdict {
    let verdict = coordinator_verdict(txn, view, now_ms, max_timeout_ms);
    let timed = known_ms(txn.producer.last_timestamp).is_some();
    match verdict {
        // without an age, "no coordinator knows it" may be a transaction
        // that has just begun: Kafka's age filter cannot be applied
        Verdict::Hanging(_) if !timed => Verdict::Unknown(UnknownReason::UnknownTimestamp),
        v => v,
    }
}

/// The verdict from what the coordinators said alone.
fn coordinator_verdict(
    txn: &OpenTxn,
    view: &CoordinatorView,
    now_ms: i64,
    max_timeout_ms: i64,
) -> Verdict {
    let Some(id) = transactional_id(view, txn) else {
        return match view.unlisted() {
            Unlisted::ListingIncomplete => Verdict::Unknown(UnknownReason::ListingIncomplete),
            Unlisted::NoTransaction => Verdict::Hanging(HangingReason::NoTransaction),
            Unlisted::ProbeFailed(name) => Verdict::Unknown(UnknownReason::DescribeFailed(name)),
            Unlisted::MayBeHidden => Verdict::Unknown(UnknownReason::NotAuthorized),
        };
    };
    match view.descriptions.get(id) {
        None | Some(Description::NotFound) => Verdict::Hanging(HangingReason::NoTransaction),
        Some(Description::Denied) => Verdict::Unknown(UnknownReason::NotAuthorized),
        Some(Description::Failed(name)) => Verdict::Unknown(UnknownReason::DescribeFailed(name)),
        Some(Description::Described(t)) => {
            if !includes_partition(t, &txn.topic, txn.partition) {
                Verdict::Hanging(HangingReason::PartitionNotInTransaction)
            } else {
                let decided = t.state().filter(|s| s.is_prepare());
                let overdue = t.transaction_start_time_ms >= 0
                    && now_ms.saturating_sub(t.transaction_start_time_ms) > max_timeout_ms;
                match decided {
                    Some(state) if overdue => Verdict::Stuck { state },
                    _ => Verdict::NotHanging,
                }
            }
        }
    }
}

/// What Kafka's own `find-hanging` concludes for the same candidate: true
/// for hanging. kdp's verdict differs from it exactly where kdp says
/// `stuck` (Kafka: not hanging) or `unknown` (Kafka: hanging when nothing is
/// listed).
pub fn kafka_says_hanging(txn: &OpenTxn, view: &CoordinatorView) -> bool {
    match transactional_id(view, txn) {
        None => true,
        Some(id) => match view.descriptions.get(id) {
            Some(Description::Described(t)) => !includes_partition(t, &txn.topic, txn.partition),
            _ => true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::messages::TopicData;

    const NOW: i64 = 10_000_000;
    const TIMEOUT: i64 = 900_000;

    fn open(pid: i64, topic: &str, partition: i32, idle_ms: i64) -> OpenTxn {
        OpenTxn {
            topic: topic.into(),
            partition,
            producer: ProducerState {
                producer_id: pid,
                producer_epoch: 3,
                last_sequence: 9,
                last_timestamp: NOW - idle_ms,
                coordinator_epoch: 1,
                current_txn_start_offset: 42,
                ..Default::default()
            },
        }
    }

    fn txn(state: &str, started_ago: i64, partitions: &[(&str, i32)]) -> TransactionState {
        TransactionState {
            transactional_id: "tx".into(),
            transaction_state: state.into(),
            transaction_timeout_ms: 60_000,
            transaction_start_time_ms: NOW - started_ago,
            producer_id: 7,
            producer_epoch: 3,
            topics: partitions
                .iter()
                .map(|(t, p)| TopicData {
                    topic: (*t).into(),
                    partitions: vec![*p],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn view(listed: bool, desc: Option<Description>) -> CoordinatorView {
        let mut v = CoordinatorView {
            listing_complete: true,
            may_describe_any: true,
            ..Default::default()
        };
        if listed {
            v.listed.insert(7, "tx".into());
        }
        if let Some(d) = desc {
            v.descriptions.insert("tx".into(), d);
        }
        v
    }

    #[test]
    fn candidates_are_open_and_idle_longer_than_the_timeout() {
        let t = open(7, "a", 0, TIMEOUT + 1);
        assert!(is_candidate(&t.producer, NOW, TIMEOUT));
        let t = open(7, "a", 0, TIMEOUT);
        assert!(!is_candidate(&t.producer, NOW, TIMEOUT), "not longer");
        let mut t = open(7, "a", 0, TIMEOUT * 10);
        t.producer.current_txn_start_offset = -1;
        assert!(
            !is_candidate(&t.producer, NOW, TIMEOUT),
            "no open transaction"
        );
        // A live producer's open transaction with a zero timeout is a
        // candidate; the coordinator lookup is what clears it.
        let t = open(7, "a", 0, 1);
        assert!(is_candidate(&t.producer, NOW, 0));
    }

    #[test]
    fn a_tracked_ongoing_transaction_is_not_hanging() {
        let t = open(7, "a", 0, TIMEOUT * 2);
        let v = view(
            true,
            Some(Description::Described(txn(
                "Ongoing",
                TIMEOUT * 2,
                &[("a", 0)],
            ))),
        );
        assert_eq!(decide(&t, &v, NOW, TIMEOUT), Verdict::NotHanging);
        assert!(!kafka_says_hanging(&t, &v));
    }

    #[test]
    fn unlisted_producer_hangs_only_if_the_caller_could_see_it() {
        let t = open(7, "a", 0, TIMEOUT * 2);
        let v = view(false, None);
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Hanging(HangingReason::NoTransaction)
        );
        assert!(kafka_says_hanging(&t, &v));
        let hidden = CoordinatorView {
            may_describe_any: false,
            ..v.clone()
        };
        assert_eq!(
            decide(&t, &hidden, NOW, TIMEOUT),
            Verdict::Unknown(UnknownReason::NotAuthorized)
        );
        assert!(kafka_says_hanging(&t, &hidden), "Kafka's false positive");
        // a probe that failed for another reason says so, not "not authorized"
        let unprobed = CoordinatorView {
            may_describe_any: false,
            probe_failed: Some("COORDINATOR_NOT_AVAILABLE"),
            ..v.clone()
        };
        assert_eq!(
            decide(&t, &unprobed, NOW, TIMEOUT),
            Verdict::Unknown(UnknownReason::DescribeFailed("COORDINATOR_NOT_AVAILABLE"))
        );
        let incomplete = CoordinatorView {
            listing_complete: false,
            ..v
        };
        assert_eq!(
            decide(&t, &incomplete, NOW, TIMEOUT),
            Verdict::Unknown(UnknownReason::ListingIncomplete)
        );
    }

    #[test]
    fn forgotten_id_and_missing_partition_hang() {
        let t = open(7, "a", 0, TIMEOUT * 2);
        let v = view(true, Some(Description::NotFound));
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Hanging(HangingReason::NoTransaction)
        );
        let v = view(
            true,
            Some(Description::Described(txn(
                "Ongoing",
                1000,
                &[("a", 1), ("b", 0)],
            ))),
        );
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Hanging(HangingReason::PartitionNotInTransaction)
        );
        assert!(kafka_says_hanging(&t, &v));
        // Completed: no partitions left.
        let v = view(
            true,
            Some(Description::Described(txn("CompleteCommit", 1000, &[]))),
        );
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Hanging(HangingReason::PartitionNotInTransaction)
        );
    }

    #[test]
    fn prepare_state_past_the_timeout_is_stuck_where_kafka_sees_nothing() {
        let t = open(7, "a", 0, TIMEOUT * 2);
        let v = view(
            true,
            Some(Description::Described(txn(
                "PrepareCommit",
                TIMEOUT * 3,
                &[("a", 0)],
            ))),
        );
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Stuck {
                state: TxnState::PrepareCommit
            }
        );
        assert!(!kafka_says_hanging(&t, &v), "Kafka's rule misses it");
        // A prepare that just started is markers in flight, not stuck.
        let v = view(
            true,
            Some(Description::Described(txn("PrepareAbort", 10, &[("a", 0)]))),
        );
        assert_eq!(decide(&t, &v, NOW, TIMEOUT), Verdict::NotHanging);
    }

    #[test]
    fn an_unknown_timestamp_is_a_candidate_never_hanging() {
        for unknown in [0, -1] {
            let mut t = open(7, "a", 0, 0);
            t.producer.last_timestamp = unknown;
            assert!(is_candidate(&t.producer, NOW, TIMEOUT), "{unknown}");
            // nothing listed, every id visible: hanging if it had an age
            let v = view(false, None);
            assert_eq!(
                decide(&t, &v, NOW, TIMEOUT),
                Verdict::Unknown(UnknownReason::UnknownTimestamp)
            );
            assert!(!decide(&t, &v, NOW, TIMEOUT).is_problem());
            let v = view(true, Some(Description::NotFound));
            assert_eq!(
                decide(&t, &v, NOW, TIMEOUT),
                Verdict::Unknown(UnknownReason::UnknownTimestamp)
            );
            // the coordinator's own clock still proves a stuck prepare
            let v = view(
                true,
                Some(Description::Described(txn(
                    "PrepareAbort",
                    TIMEOUT * 3,
                    &[("a", 0)],
                ))),
            );
            assert_eq!(
                decide(&t, &v, NOW, TIMEOUT),
                Verdict::Stuck {
                    state: TxnState::PrepareAbort
                }
            );
            // other unknowns keep their reason
            let hidden = CoordinatorView {
                may_describe_any: false,
                ..view(false, None)
            };
            assert_eq!(
                decide(&t, &hidden, NOW, TIMEOUT),
                Verdict::Unknown(UnknownReason::NotAuthorized)
            );
        }
    }

    #[test]
    fn describe_denied_is_unknown_never_hanging() {
        let t = open(7, "a", 0, TIMEOUT * 2);
        let v = view(true, Some(Description::Denied));
        assert_eq!(
            decide(&t, &v, NOW, TIMEOUT),
            Verdict::Unknown(UnknownReason::NotAuthorized)
        );
        assert!(!decide(&t, &v, NOW, TIMEOUT).is_problem());
    }

    #[test]
    fn explanations_name_the_reason() {
        assert_eq!(
            Verdict::Hanging(HangingReason::PartitionNotInTransaction).explain(),
            "hanging: the partition is not in the coordinator's transaction"
        );
        assert_eq!(
            Verdict::Stuck {
                state: TxnState::PrepareAbort
            }
            .explain(),
            "stuck: PrepareAbort for longer than the timeout, markers not written"
        );
        assert_eq!(
            Verdict::Unknown(UnknownReason::NotAuthorized).explain(),
            "unknown: not authorized to describe the transactional id"
        );
    }
}
