//! What the transaction coordinators know, as one scan gathered it:
//! ListTransactions merged over every broker, DescribeTransactions of each
//! listed id, and whether the caller could have seen every id. The
//! verdicts ([`crate::diagnose::hanging`]), the flags and the repair plans
//! all read it through the one rule for an unlisted producer,
//! [`CoordinatorView::unlisted`].

use std::collections::HashMap;

use kdp_wire::messages::TransactionState;
use kdp_wire::ErrorCode;

use crate::key_error::KeyError;

/// What the coordinators said about one transactional id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Description {
    /// DescribeTransactions described it.
    Described(TransactionState),
    /// TRANSACTIONAL_ID_NOT_FOUND: the coordinator does not know it.
    NotFound,
    /// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    Denied,
    /// Any other failure (the Kafka error name).
    Failed(&'static str),
}

/// What the coordinators know, gathered before deciding.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorView {
    /// ListTransactions (filtered by the candidates' producer ids), merged
    /// over every broker: producer id to transactional id.
    pub listed: HashMap<i64, String>,
    /// Whether every broker answered ListTransactions; if not, an unlisted
    /// producer id may sit on a coordinator that did not answer.
    pub listing_complete: bool,
    /// Whether the caller may DESCRIBE any transactional id (a probe with an
    /// id nobody uses answered TRANSACTIONAL_ID_NOT_FOUND rather than an
    /// authorization error). Only then does an unlisted producer id mean the
    /// coordinator has no transaction for it.
    pub may_describe_any: bool,
    /// The error of that probe when it failed for another reason than
    /// authorization (e.g. COORDINATOR_NOT_AVAILABLE): an unlisted producer
    /// is then unknown for that reason, not for a missing ACL.
    pub probe_failed: Option<&'static str>,
    /// DescribeTransactions of each listed id.
    pub descriptions: HashMap<String, Description>,
}

/// What it means that no transactional id is listed for a producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlisted {
    /// A broker did not answer ListTransactions: its coordinator may track it.
    ListingIncomplete,
    /// Every broker answered and the caller may describe any id: no
    /// coordinator has a transaction for it.
    NoTransaction,
    /// Whether ListTransactions hides ids could not be checked: the probe
    /// failed with this error.
    ProbeFailed(&'static str),
    /// ListTransactions may hide the id from this caller.
    MayBeHidden,
}

impl CoordinatorView {
    /// What an unlisted producer id means here: the one rule for the
    /// verdicts and the repair plans.
    pub fn unlisted(&self) -> Unlisted {
        if !self.listing_complete {
            Unlisted::ListingIncomplete
        } else if self.may_describe_any {
            Unlisted::NoTransaction
        } else if let Some(name) = self.probe_failed {
            Unlisted::ProbeFailed(name)
        } else {
            Unlisted::MayBeHidden
        }
    }
}

impl Description {
    /// What a DescribeTransactions answer for one id means: described, not
    /// found (the coordinator does not know it), denied, or failed with
    /// another error.
    pub fn of(answer: Result<TransactionState, KeyError>) -> Description {
        match answer {
            Ok(t) => Description::Described(t),
            Err(e) if e.code == ErrorCode::TRANSACTIONAL_ID_NOT_FOUND => Description::NotFound,
            Err(e) if e.code == ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => {
                Description::Denied
            }
            Err(e) => Description::Failed(e.code.label()),
        }
    }
}

/// Whether the coordinator's transaction `t` holds `topic`/`partition`: it
/// will write that partition's marker (Ongoing: all its partitions;
/// Prepare*: those still waiting for a marker).
pub fn includes(t: &TransactionState, topic: &str, partition: i32) -> bool {
    t.topics
        .iter()
        .any(|td| td.topic == topic && td.partitions.contains(&partition))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlisted_producer_means_what_the_listing_and_the_probe_allow() {
        let mut v = CoordinatorView::default();
        assert_eq!(v.unlisted(), Unlisted::ListingIncomplete);
        v.listing_complete = true;
        assert_eq!(v.unlisted(), Unlisted::MayBeHidden);
        v.probe_failed = Some("COORDINATOR_NOT_AVAILABLE");
        assert_eq!(
            v.unlisted(),
            Unlisted::ProbeFailed("COORDINATOR_NOT_AVAILABLE")
        );
        v.may_describe_any = true;
        assert_eq!(v.unlisted(), Unlisted::NoTransaction);
    }

    #[test]
    fn a_describe_answer_is_typed_by_its_error_code() {
        let err = |code| Err(KeyError::broker(code, None));
        assert_eq!(
            Description::of(err(ErrorCode::TRANSACTIONAL_ID_NOT_FOUND)),
            Description::NotFound
        );
        assert_eq!(
            Description::of(err(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)),
            Description::Denied
        );
        assert_eq!(
            Description::of(err(ErrorCode::COORDINATOR_LOAD_IN_PROGRESS)),
            Description::Failed("COORDINATOR_LOAD_IN_PROGRESS")
        );
        let t = TransactionState::default();
        assert_eq!(Description::of(Ok(t.clone())), Description::Described(t));
    }
}
