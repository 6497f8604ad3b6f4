//! A transaction's state at its coordinator, by the names Kafka puts on the
//! wire: the `TransactionState` strings of ListTransactions (its state
//! filters and answers) and DescribeTransactions. Declared once, here; the
//! client, the mock coordinator and the CLI decide on this type, never on
//! the strings.

use std::fmt;
use std::str::FromStr;

/// The coordinator's state of a transactional id (Kafka's
/// `TransactionState`, whose `name()` is what the wire carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TxnState {
    /// A producer id is assigned but no transaction is open.
    Empty,
    /// Partitions have been added and records may be written.
    Ongoing,
    /// Commit decided (EndTxn); commit markers are being written.
    PrepareCommit,
    /// Abort decided (EndTxn or a timeout); abort markers are being written.
    PrepareAbort,
    /// Every commit marker is written; the id can start a new transaction.
    CompleteCommit,
    /// Every abort marker is written; the id can start a new transaction.
    CompleteAbort,
    /// The id expired and is being removed; never listed nor described.
    Dead,
    /// A newer producer is fencing the old epoch by aborting its transaction.
    PrepareEpochFence,
}

impl TxnState {
    /// Every state, in Kafka's order.
    pub const ALL: [TxnState; 8] = [
        TxnState::Empty,
        TxnState::Ongoing,
        TxnState::PrepareCommit,
        TxnState::PrepareAbort,
        TxnState::CompleteCommit,
        TxnState::CompleteAbort,
        TxnState::Dead,
        TxnState::PrepareEpochFence,
    ];

    /// Kafka's id of the state (`TransactionState.id`), the int8 that
    /// `__transaction_state` records carry.
    pub fn id(self) -> i8 {
        match self {
            TxnState::Empty => 0,
            TxnState::Ongoing => 1,
            TxnState::PrepareCommit => 2,
            TxnState::PrepareAbort => 3,
            TxnState::CompleteCommit => 4,
            TxnState::CompleteAbort => 5,
            TxnState::Dead => 6,
            TxnState::PrepareEpochFence => 7,
        }
    }

    /// Kafka's `TransactionState.fromId`; `None` for an id it does not have.
    pub fn from_id(id: i8) -> Option<TxnState> {
        TxnState::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Kafka's `TransactionState.validPreviousStates` (4.x, which adds
    /// Empty, CompleteCommit and CompleteAbort before PrepareAbort for
    /// transaction protocol v2): whether the coordinator moves from `from`
    /// to `self` in one step.
    pub fn follows(self, from: TxnState) -> bool {
        use TxnState::*;
        match self {
            Empty => matches!(from, Empty | CompleteCommit | CompleteAbort),
            Ongoing => matches!(from, Ongoing | Empty | CompleteCommit | CompleteAbort),
            PrepareCommit => from == Ongoing,
            PrepareAbort => matches!(
                from,
                Ongoing | PrepareEpochFence | Empty | CompleteCommit | CompleteAbort
            ),
            CompleteCommit => from == PrepareCommit,
            CompleteAbort => from == PrepareAbort,
            Dead => matches!(from, Empty | CompleteAbort | CompleteCommit),
            PrepareEpochFence => from == Ongoing,
        }
    }

    /// The wire name, e.g. `PrepareCommit`.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// Kafka's `TransactionState.fromName`: exact and case-sensitive, as
    /// the broker matches a ListTransactions state filter.
    pub fn from_name(name: &str) -> Option<TxnState> {
        TxnState::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The outcome is decided and markers are still to be written: only the
    /// coordinator may finish it.
    pub fn is_prepare(self) -> bool {
        matches!(
            self,
            TxnState::PrepareCommit | TxnState::PrepareAbort | TxnState::PrepareEpochFence
        )
    }

    /// Kafka's `TransactionState.isExpirationAllowed`: a transactional id
    /// in this state may expire (no transaction is open or being completed).
    pub fn is_expiration_allowed(self) -> bool {
        matches!(
            self,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        )
    }

    /// The names of every state, comma-separated, for error messages.
    pub fn names() -> String {
        TxnState::ALL.map(TxnState::name).join(", ")
    }
}

impl fmt::Display for TxnState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of Kafka's transaction states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTxnState(pub String);

impl fmt::Display for UnknownTxnState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown transaction state {:?} (Kafka's states, case-sensitive: {})",
            self.0,
            TxnState::names()
        )
    }
}

impl std::error::Error for UnknownTxnState {}

impl FromStr for TxnState {
    type Err = UnknownTxnState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TxnState::from_name(s).ok_or_else(|| UnknownTxnState(s.to_string()))
    }
}

impl crate::messages::TransactionState {
    /// The described state, or `None` for a name this version of kdp does
    /// not know (a newer broker's state is never guessed at).
    pub fn state(&self) -> Option<TxnState> {
        TxnState::from_name(&self.transaction_state)
    }
}

impl crate::messages::ListedTransaction {
    /// The listed state, or `None` for a name kdp does not know.
    pub fn state(&self) -> Option<TxnState> {
        TxnState::from_name(&self.transaction_state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_case_sensitive() {
        for s in TxnState::ALL {
            assert_eq!(TxnState::from_name(s.name()), Some(s));
            assert_eq!(s.to_string().parse::<TxnState>(), Ok(s));
        }
        assert_eq!(TxnState::from_name("ongoing"), None);
        let err = "bogus".parse::<TxnState>().unwrap_err();
        assert!(err.to_string().contains("\"bogus\""), "{err}");
        assert!(err.to_string().contains("PrepareEpochFence"), "{err}");
    }

    #[test]
    fn ids_are_kafkas() {
        // TransactionState.java / TransactionMetadata.scala: 0..=7 in this order.
        for (i, s) in TxnState::ALL.into_iter().enumerate() {
            assert_eq!(i64::from(s.id()), i as i64);
            assert_eq!(TxnState::from_id(s.id()), Some(s));
        }
        assert_eq!(TxnState::from_id(8), None);
        assert_eq!(TxnState::from_id(-1), None);
    }

    #[test]
    fn transitions_follow_kafkas_valid_previous_states() {
        use TxnState::*;
        assert!(PrepareCommit.follows(Ongoing));
        assert!(!PrepareCommit.follows(Empty));
        assert!(PrepareAbort.follows(Empty), "v2 aborts without partitions");
        assert!(!CompleteCommit.follows(Ongoing));
        assert!(Empty.follows(CompleteAbort));
        assert!(
            !Empty.follows(Ongoing),
            "an open transaction is aborted first"
        );
    }

    #[test]
    fn only_the_prepare_states_wait_for_markers() {
        let prepare: Vec<TxnState> = TxnState::ALL
            .into_iter()
            .filter(|s| s.is_prepare())
            .collect();
        assert_eq!(
            prepare,
            [
                TxnState::PrepareCommit,
                TxnState::PrepareAbort,
                TxnState::PrepareEpochFence
            ]
        );
    }
}
