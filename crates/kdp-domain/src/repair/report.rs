//! What carrying a plan out did: one typed [`Outcome`] per step, numbered
//! as in the plan, and how the cluster had changed for a step that was not
//! sent ([`Changed`]). Sending is kdp-workflows' (`repair::execute`).

use std::fmt;

use kdp_wire::messages::ProducerState;
use kdp_wire::ErrorCode;

use crate::key_error::KeyError;
use crate::repair::levers::{advice, Terminated};
use crate::repair::plan::Step;

/// How the cluster no longer matches what a step's plan saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// The partition (or id) could not be described again.
    NotDescribed {
        /// What (`topic-partition` or the transactional id).
        what: String,
        /// Why.
        error: String,
    },
    /// The producer's open transaction ended.
    TransactionEnded {
        /// `topic-partition`.
        partition: String,
        /// The producer.
        producer_id: i64,
    },
    /// The producer's open transaction, epoch or coordinator epoch is not
    /// the planned one.
    ProducerMoved {
        /// `topic-partition`.
        partition: String,
        /// The producer as the partition reports it now.
        now: ProducerState,
    },
    /// The transactional id's producer or state is not the planned one.
    CoordinatorMoved {
        /// The transactional id.
        transactional_id: String,
        /// Its producer now.
        producer_id: i64,
        /// Its epoch now.
        producer_epoch: i16,
        /// Its state now.
        state: String,
    },
}

impl fmt::Display for Changed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Changed::NotDescribed { what, error } => write!(f, "cannot describe {what}: {error}"),
            Changed::TransactionEnded {
                partition,
                producer_id,
            } => write!(
                f,
                "{partition}: producer {producer_id} has no open transaction any more"
            ),
            Changed::ProducerMoved { partition, now } => write!(
                f,
                "{partition}: producer {} is now at epoch {} (coordinator epoch {}) with a \
                 transaction from offset {}",
                now.producer_id,
                now.producer_epoch,
                now.coordinator_epoch,
                now.current_txn_start_offset
            ),
            Changed::CoordinatorMoved {
                transactional_id,
                producer_id,
                producer_epoch,
                state,
            } => write!(
                f,
                "{transactional_id}: now producer {producer_id} epoch {producer_epoch} in {state}"
            ),
        }
    }
}

/// A key's error as a line: its Kafka name, and its message in brackets.
pub fn key_error_text(e: &KeyError) -> String {
    let mut s = e.name().to_string();
    if let Some(m) = &e.message {
        s.push_str(&format!(" ({m})"));
    }
    s
}

/// What a step that was sent did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// The leader wrote the ABORT marker.
    Aborted,
    /// The coordinator bumped the epoch (and aborted the transaction).
    Terminated(Terminated),
}

/// Why a step that was sent failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error (a broker's, or kdp's own as the closest Kafka code).
    pub error: KeyError,
    /// What to do about it, when there is something to do.
    pub advice: Option<&'static str>,
}

impl Failure {
    /// A failed step's error, with the advice there is for it.
    pub fn of(error: KeyError) -> Self {
        let advice = advice(error.code);
        Failure { error, advice }
    }

    /// No answer came before the deadline.
    pub fn no_answer() -> Self {
        Failure::of(KeyError::client(
            ErrorCode::REQUEST_TIMED_OUT,
            "no answer within the timeout",
        ))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", key_error_text(&self.error))?;
        if let Some(a) = self.advice {
            write!(f, ": {a}")?;
        }
        Ok(())
    }
}

/// What became of one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Sent, and done.
    Done(Done),
    /// Not sent, as planned: a skip or a manual step (the step says why).
    Skipped,
    /// Not sent: the cluster changed since the plan.
    Refused(Changed),
    /// Sent, and it failed.
    Failed(Failure),
}

/// One step and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    /// The step, with its plan number.
    pub step: Step,
    /// What became of it.
    pub outcome: Outcome,
}

/// What became of every step of a plan, in the plan's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// One per step, in step-number order.
    pub outcomes: Vec<StepOutcome>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| f(&o.outcome)).count()
    }

    /// Steps sent and done.
    pub fn done(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Done(_)))
    }

    /// Steps sent that failed.
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    /// Steps not sent because the cluster changed.
    pub fn refused(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Refused(_)))
    }

    /// Steps left, as planned, to an operator (skip and manual).
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped))
    }

    /// Whether every step that was to be sent was sent and done.
    pub fn all_sent_done(&self) -> bool {
        self.failed() == 0 && self.refused() == 0
    }
}
