//! A repair plan: numbered, typed steps, each with what the plan saw, built
//! from what the cluster answered. Nothing here sends anything.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kdp_wire::messages::{ProducerState, TransactionState};
use kdp_wire::ErrorCode;
use kdp_wire::TxnState;

use crate::coordinator::{includes, Description, Unlisted};
use crate::diagnose::hanging::UnknownReason;
use crate::joined::Joined;
use crate::key_error::KeyError;
use crate::partition::{PartitionOutcome, TopicPartition};
use crate::repair::levers::{advice, marker_coordinator_epoch, AbortSpec};

/// Numbered steps, in the order an operator reads them; a [`Report`]
/// carries the same numbers.
///
/// [`Report`]: crate::repair::report::Report
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The steps, numbered from 1.
    pub steps: Vec<Step>,
}

impl Plan {
    /// Adds a step numbered after the last one.
    pub fn push(&mut self, action: Action, seen: Seen) {
        let number = self.steps.len() + 1;
        self.steps.push(Step {
            number,
            action,
            seen,
        });
    }

    /// Whether any step sends something (an abort or a force-terminate).
    pub fn sends_anything(&self) -> bool {
        self.steps.iter().any(|s| s.action.sends())
    }

    /// Whether the plan has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The partitions of its aborts: what is described again before they
    /// are sent.
    pub fn abort_partitions(&self) -> BTreeSet<TopicPartition> {
        self.steps
            .iter()
            .filter(|s| matches!(s.action, Action::Abort(_)))
            .flat_map(|s| s.seen.partitions.iter().map(PartitionSeen::key))
            .collect()
    }

    /// The transactional ids of its force-terminates, in step order.
    pub fn force_terminate_ids(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::ForceTerminate { transactional_id } => Some(transactional_id.clone()),
                _ => None,
            })
            .collect()
    }
}

/// One step: what it does and what the plan saw when it chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its number in the plan (from 1).
    pub number: usize,
    /// What is done.
    pub action: Action,
    /// What the plan saw.
    pub seen: Seen,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A raw abort (WriteTxnMarkers) of one partition's open transaction.
    Abort(AbortSpec),
    /// InitProducerId for a transactional id at its coordinator.
    ForceTerminate {
        /// The transactional id.
        transactional_id: String,
    },
    /// Nothing is sent: kdp may not safely act.
    Skip(SkipReason),
    /// Nothing is sent: the command an operator would run by hand, once
    /// they know what kdp could not find out.
    Manual(Manual),
}

impl Action {
    /// Whether the step sends a request that changes the cluster.
    pub fn sends(&self) -> bool {
        matches!(self, Action::Abort(_) | Action::ForceTerminate { .. })
    }
}

/// Why a step is skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The coordinator decided the transaction's outcome (PrepareCommit or
    /// PrepareAbort) and never wrote the markers: only it may write them.
    Decided {
        /// The coordinator's state.
        state: TxnState,
    },
    /// The producer epoch the partition reports does not fit a marker.
    EpochOutOfRange {
        /// The epoch.
        epoch: i32,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Decided { state } => write!(
                f,
                "the coordinator decided the outcome ({state}) but never wrote the markers: move \
                 the coordinator (restart its broker) so the new one writes them; a raw abort \
                 could discard a decided commit"
            ),
            SkipReason::EpochOutOfRange { epoch } => {
                write!(f, "producer epoch {epoch} is out of range for a marker")
            }
        }
    }
}

/// A repair kdp leaves to an operator: the command, and why kdp did not
/// run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manual {
    /// The command line, program first (`kdp abort --bootstrap-server ...`).
    pub args: Vec<String>,
    /// Why kdp did not run it.
    pub why: ManualReason,
}

impl Manual {
    /// The command as one shell line (arguments quoted where needed).
    pub fn command_line(&self) -> String {
        self.args
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `a` as a POSIX shell word.
fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// Why a repair is left to an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManualReason {
    /// find-hanging could not tell whether a coordinator still tracks the
    /// transaction.
    Unknown(UnknownReason),
}

impl fmt::Display for ManualReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManualReason::Unknown(r) => {
                let why = match r {
                    UnknownReason::NotAuthorized => {
                        "this principal may not describe every transactional id (ListTransactions \
                         hides the ones it may not describe)"
                            .to_string()
                    }
                    UnknownReason::ListingIncomplete => {
                        "a broker did not answer ListTransactions".to_string()
                    }
                    UnknownReason::DescribeFailed(name) => {
                        format!("DescribeTransactions failed with {name}")
                    }
                    UnknownReason::UnknownTimestamp => {
                        "the producer's LastTimestamp is unknown, so the transaction may have \
                         just begun"
                            .to_string()
                    }
                };
                write!(
                    f,
                    "kdp cannot tell whether a coordinator still tracks this transaction: {why}. \
                     A raw abort behind a live coordinator's back can be undone by a later \
                     commit; check with a principal that may describe every transactional id \
                     (or once every broker answers) before running it"
                )
            }
        }
    }
}

/// What the plan saw for a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The producer.
    pub producer_id: i64,
    /// Its epoch as the plan saw it (the partition's for an abort, the
    /// coordinator's for a force-terminate).
    pub producer_epoch: i32,
    /// The partitions the step is about.
    pub partitions: Vec<PartitionSeen>,
    /// What the coordinators said about the producer.
    pub coordinator: CoordinatorAnswer,
}

impl Seen {
    /// The transactional id, when a coordinator listed one.
    pub fn transactional_id(&self) -> Option<&str> {
        self.coordinator.transactional_id()
    }

    /// Records the step releases to read_committed consumers, summed over
    /// its partitions; `None` if any partition's count is unknown.
    pub fn unblocks(&self) -> Option<i64> {
        self.partitions
            .iter()
            .map(|p| p.unblocks)
            .try_fold(0i64, |sum, u| u.map(|u| sum.saturating_add(u)))
    }
}

/// One partition of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSeen {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// Where the producer's open transaction starts there (-1: unknown).
    pub start_offset: i64,
    /// Records that ending this producer's transaction there releases: from
    /// the LSO to the next open transaction's start (another producer's) or
    /// the high watermark. `None` when the offsets are unknown.
    pub unblocks: Option<i64>,
}

impl PartitionSeen {
    /// `(topic, partition)`.
    pub fn key(&self) -> TopicPartition {
        (self.topic.clone(), self.partition)
    }
}

/// What the coordinators said about a producer, as far as they were asked.
/// Only [`CoordinatorAnswer::Described`] supports a claim about the
/// coordinator's transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorAnswer {
    /// DescribeTransactions answered.
    Described(TransactionState),
    /// The coordinator does not know the listed id (TRANSACTIONAL_ID_NOT_FOUND).
    NotFound {
        /// The id.
        transactional_id: String,
    },
    /// Every broker answered ListTransactions, the caller may describe any
    /// id, and no coordinator lists one for the producer.
    NotListed,
    /// The coordinator could not be asked, or its answer is not known.
    NotAsked(NotAsked),
}

/// Why the coordinator's answer is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAsked {
    /// The id is listed, but DescribeTransactions failed (the coordinator
    /// could not be reached, was loading, moved...).
    DescribeFailed {
        /// The id.
        transactional_id: String,
        /// The Kafka error name.
        error: &'static str,
    },
    /// The id is listed, but the caller may not describe it.
    Denied {
        /// The id.
        transactional_id: String,
    },
    /// The id is listed, but no description came back.
    NoAnswer {
        /// The id.
        transactional_id: String,
    },
    /// Some brokers did not answer ListTransactions: the producer's
    /// coordinator may be one of them.
    ListingIncomplete {
        /// The brokers that did not answer.
        brokers: Vec<i32>,
    },
    /// No id is listed, but ListTransactions hides the ids the caller may
    /// not describe, and it may not describe every id.
    MayBeHidden,
    /// No id is listed, and whether ListTransactions hides ids could not be
    /// checked: DescribeTransactions of an unused id failed with `error`.
    ProbeFailed {
        /// The Kafka error name.
        error: &'static str,
    },
    /// The coordinators were not asked about this producer (it has no open
    /// transaction the scan looked up).
    NotLookedUp,
}

impl CoordinatorAnswer {
    /// What the join learned about `producer_id`.
    pub fn of(joined: &Joined, producer_id: i64) -> CoordinatorAnswer {
        let view = &joined.view;
        let Some(id) = view.listed.get(&producer_id) else {
            return match view.unlisted() {
                Unlisted::ListingIncomplete if joined.listing_errors.is_empty() => {
                    CoordinatorAnswer::NotAsked(NotAsked::NotLookedUp)
                }
                Unlisted::ListingIncomplete => {
                    CoordinatorAnswer::NotAsked(NotAsked::ListingIncomplete {
                        brokers: joined.listing_errors.iter().map(|(b, _)| *b).collect(),
                    })
                }
                Unlisted::NoTransaction => CoordinatorAnswer::NotListed,
                Unlisted::ProbeFailed(error) => {
                    CoordinatorAnswer::NotAsked(NotAsked::ProbeFailed { error })
                }
                Unlisted::MayBeHidden => CoordinatorAnswer::NotAsked(NotAsked::MayBeHidden),
            };
        };
        let transactional_id = id.clone();
        match view.descriptions.get(id) {
            Some(Description::Described(t)) => CoordinatorAnswer::Described(t.clone()),
            Some(Description::NotFound) => CoordinatorAnswer::NotFound { transactional_id },
            Some(Description::Denied) => {
                CoordinatorAnswer::NotAsked(NotAsked::Denied { transactional_id })
            }
            Some(Description::Failed(error)) => {
                CoordinatorAnswer::NotAsked(NotAsked::DescribeFailed {
                    transactional_id,
                    error,
                })
            }
            None => CoordinatorAnswer::NotAsked(NotAsked::NoAnswer { transactional_id }),
        }
    }

    /// The transactional id, when one is listed.
    pub fn transactional_id(&self) -> Option<&str> {
        match self {
            CoordinatorAnswer::Described(t) => Some(&t.transactional_id),
            CoordinatorAnswer::NotFound { transactional_id }
            | CoordinatorAnswer::NotAsked(
                NotAsked::DescribeFailed {
                    transactional_id, ..
                }
                | NotAsked::Denied { transactional_id }
                | NotAsked::NoAnswer { transactional_id },
            ) => Some(transactional_id),
            _ => None,
        }
    }

    /// The coordinator's state, when it answered.
    pub fn state(&self) -> Option<TxnState> {
        match self {
            CoordinatorAnswer::Described(t) => t.state(),
            _ => None,
        }
    }

    /// The coordinator's state when it decided the outcome (PrepareCommit
    /// or PrepareAbort): it answers CONCURRENT_TRANSACTIONS to a
    /// force-terminate until its markers are written.
    pub fn decided(&self) -> Option<TxnState> {
        self.state()
            .filter(|s| matches!(s, TxnState::PrepareCommit | TxnState::PrepareAbort))
    }

    /// The state as the coordinator named it, for display (also a name
    /// this version of kdp does not know).
    pub fn state_name(&self) -> Option<&str> {
        match self {
            CoordinatorAnswer::Described(t) => Some(&t.transaction_state),
            _ => None,
        }
    }

    /// Whether the coordinator's transaction holds `topic`/`partition`:
    /// `None` when the coordinator did not describe one.
    pub fn includes(&self, topic: &str, partition: i32) -> Option<bool> {
        match self {
            CoordinatorAnswer::Described(t) => Some(includes(t, topic, partition)),
            _ => None,
        }
    }
}

impl fmt::Display for NotAsked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotAsked::DescribeFailed {
                transactional_id,
                error,
            } => write!(
                f,
                "DescribeTransactions of {transactional_id} at its coordinator failed with {error}"
            ),
            NotAsked::Denied { transactional_id } => write!(
                f,
                "this principal may not describe {transactional_id} \
                 (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)"
            ),
            NotAsked::NoAnswer { transactional_id } => {
                write!(f, "no coordinator answered for {transactional_id}")
            }
            NotAsked::ListingIncomplete { brokers } => {
                let b: Vec<String> = brokers.iter().map(i32::to_string).collect();
                write!(
                    f,
                    "broker{} {} did not answer ListTransactions",
                    if b.len() == 1 { "" } else { "s" },
                    b.join(", ")
                )
            }
            NotAsked::MayBeHidden => write!(
                f,
                "no transactional id is listed for the producer, but ListTransactions hides the \
                 ids this principal may not describe"
            ),
            NotAsked::ProbeFailed { error } => write!(
                f,
                "no transactional id is listed for the producer, and whether ListTransactions \
                 hides ids from this principal could not be checked (DescribeTransactions of an \
                 unused id failed with {error})"
            ),
            NotAsked::NotLookedUp => write!(f, "the coordinators were not asked"),
        }
    }
}

/// The records ending `producer_id`'s open transaction on `topic`/`partition`
/// releases: from the LSO to the earliest other open transaction there, or
/// the high watermark.
pub fn unblocks(joined: &Joined, topic: &str, partition: i32, producer_id: i64) -> Option<i64> {
    let outcome = joined
        .partitions
        .iter()
        .find(|o| o.topic == topic && o.partition == partition);
    unblocks_in(joined, outcome, producer_id)
}

/// [`unblocks`] with the partition's outcome already found (`None`: not
/// described).
pub fn unblocks_in(
    joined: &Joined,
    outcome: Option<&PartitionOutcome>,
    producer_id: i64,
) -> Option<i64> {
    let o = outcome?;
    let offsets = joined
        .offsets
        .get(&(o.topic.clone(), o.partition))?
        .as_ref()
        .ok()?;
    let next = o
        .result
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|ps| ps.current_txn_start_offset >= 0 && ps.producer_id != producer_id)
        .map(|ps| ps.current_txn_start_offset)
        .min()
        .unwrap_or(offsets.high_watermark)
        .min(offsets.high_watermark);
    Some(next.saturating_sub(offsets.last_stable_offset).max(0))
}

/// Which open transaction an abort is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbortTarget {
    /// The one that starts at this offset (its producer and epochs are taken
    /// from the partition, as `kafka-transactions.sh abort --start-offset`).
    StartOffset {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The offset its open transaction starts at.
        start_offset: i64,
    },
    /// This producer's, with the epochs given; they must be the
    /// partition's.
    Producer {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The producer id.
        producer_id: i64,
        /// Its epoch on the partition.
        producer_epoch: i16,
        /// The coordinator epoch on the partition (a negative one may be
        /// given as 0, as Kafka's tool sends it).
        coordinator_epoch: i32,
    },
}

impl AbortTarget {
    /// The partition.
    pub fn partition(&self) -> TopicPartition {
        match self {
            AbortTarget::StartOffset {
                topic, partition, ..
            }
            | AbortTarget::Producer {
                topic, partition, ..
            } => (topic.clone(), *partition),
        }
    }
}

/// Why no plan was made: nothing could be right. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The partition's producers are not known.
    NotDescribed {
        /// The partition.
        partition: TopicPartition,
        /// Why, when a broker said.
        error: Option<KeyError>,
    },
    /// No open transaction starts at the offset.
    NoTransactionAt {
        /// The partition.
        partition: TopicPartition,
        /// The offset given.
        start_offset: i64,
        /// The partition's producers.
        found: Vec<ProducerState>,
    },
    /// The producer has no open transaction on the partition (or is not
    /// there at all).
    NoOpenTransaction {
        /// The partition.
        partition: TopicPartition,
        /// The producer given.
        producer_id: i64,
        /// The partition's producers.
        found: Vec<ProducerState>,
    },
    /// The epochs given are not the partition's.
    EpochsDisagree {
        /// The partition.
        partition: TopicPartition,
        /// The producer epoch given.
        producer_epoch: i16,
        /// The coordinator epoch given.
        coordinator_epoch: i32,
        /// The producer as the partition reports it.
        producer: ProducerState,
        /// The partition's producers.
        found: Vec<ProducerState>,
    },
    /// The partition reports an epoch no marker can carry.
    EpochOutOfRange {
        /// The partition.
        partition: TopicPartition,
        /// The producer as the partition reports it.
        producer: ProducerState,
    },
}

impl Refusal {
    /// The error the leader would answer the abort with, when it would
    /// refuse it.
    pub fn leader_would_answer(&self) -> Option<ErrorCode> {
        match self {
            Refusal::EpochsDisagree {
                producer_epoch,
                coordinator_epoch,
                producer,
                ..
            } => {
                if i32::from(*producer_epoch) < producer.producer_epoch {
                    Some(ErrorCode::INVALID_PRODUCER_EPOCH)
                } else if *coordinator_epoch < producer.coordinator_epoch {
                    Some(ErrorCode::TRANSACTION_COORDINATOR_FENCED)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

fn producer_line(p: &ProducerState) -> String {
    let open = if p.current_txn_start_offset >= 0 {
        format!(
            "open transaction from offset {}",
            p.current_txn_start_offset
        )
    } else {
        "no open transaction".to_string()
    };
    format!(
        "producer {} epoch {} coordinator epoch {}, {open}",
        p.producer_id, p.producer_epoch, p.coordinator_epoch
    )
}

/// "the partition's producers: ..." or "the partition has no producers".
fn found_line(found: &[ProducerState]) -> String {
    if found.is_empty() {
        "the partition has no active producers".to_string()
    } else {
        let all: Vec<String> = found.iter().map(producer_line).collect();
        format!("the partition's producers: {}", all.join("; "))
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotDescribed {
                partition: (t, p),
                error,
            } => match error {
                Some(e) => write!(
                    f,
                    "{t}-{p}: its producers could not be described ({}{})",
                    e.name(),
                    e.message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
                None => write!(f, "{t}-{p}: its producers were not described"),
            },
            Refusal::NoTransactionAt {
                partition: (t, p),
                start_offset,
                found,
            } => {
                let starts: Vec<String> = found
                    .iter()
                    .filter(|s| s.current_txn_start_offset >= 0)
                    .map(|s| {
                        format!(
                            "{} (producer {})",
                            s.current_txn_start_offset, s.producer_id
                        )
                    })
                    .collect();
                write!(
                    f,
                    "no open transaction starts at offset {start_offset} on {t}-{p} (open \
                     transactions start at: {}); {}",
                    if starts.is_empty() {
                        "none".to_string()
                    } else {
                        starts.join(", ")
                    },
                    found_line(found)
                )
            }
            Refusal::NoOpenTransaction {
                partition: (t, p),
                producer_id,
                found,
            } => {
                let there = found.iter().find(|s| s.producer_id == *producer_id);
                write!(
                    f,
                    "producer {producer_id} has no open transaction on {t}-{p}{}: an abort would \
                     end nothing there; {}",
                    if there.is_none() {
                        " (the partition does not know it)"
                    } else {
                        ""
                    },
                    found_line(found)
                )
            }
            Refusal::EpochsDisagree {
                partition: (t, p),
                producer_epoch,
                coordinator_epoch,
                producer,
                found,
            } => {
                write!(
                    f,
                    "{t}-{p}: producer {} is at epoch {} with coordinator epoch {} on the \
                     partition, not epoch {producer_epoch} with coordinator epoch \
                     {coordinator_epoch}",
                    producer.producer_id, producer.producer_epoch, producer.coordinator_epoch
                )?;
                match self.leader_would_answer() {
                    Some(code) => write!(
                        f,
                        " (the leader would answer {}: {})",
                        code.label(),
                        advice(code).unwrap_or("describe the partition again")
                    )?,
                    None => write!(
                        f,
                        " (a marker with newer epochs would move the producer's epochs on the \
                         partition, which no coordinator chose: describe the partition again and \
                         use its epochs, or --start-offset)"
                    )?,
                }
                write!(f, "; {}", found_line(found))
            }
            Refusal::EpochOutOfRange {
                partition: (t, p),
                producer,
            } => write!(
                f,
                "{t}-{p}: producer {} epoch {} is out of range for a marker",
                producer.producer_id, producer.producer_epoch
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// The plan for one raw abort, from a join over the partition (open
/// transactions looked up): refused unless the partition has the open
/// transaction and, for [`AbortTarget::Producer`], its producer has exactly
/// the epochs given.
pub fn plan_abort_from(joined: &Joined, target: &AbortTarget) -> Result<Plan, Refusal> {
    let (topic, partition) = target.partition();
    let key = (topic.clone(), partition);
    let outcome = joined
        .partitions
        .iter()
        .find(|o| o.topic == topic && o.partition == partition);
    let found: Vec<ProducerState> = match outcome.map(|o| &o.result) {
        Some(Ok(ps)) => ps.clone(),
        Some(Err(e)) => {
            return Err(Refusal::NotDescribed {
                partition: key,
                error: Some(e.clone()),
            })
        }
        None => {
            return Err(Refusal::NotDescribed {
                partition: key,
                error: None,
            })
        }
    };
    let open = |p: &&ProducerState| p.current_txn_start_offset >= 0;
    let (producer, spec) = match target {
        AbortTarget::StartOffset { start_offset, .. } => {
            let Some(p) = found
                .iter()
                .filter(open)
                .find(|p| p.current_txn_start_offset == *start_offset)
            else {
                return Err(Refusal::NoTransactionAt {
                    partition: key,
                    start_offset: *start_offset,
                    found,
                });
            };
            let Ok(epoch) = i16::try_from(p.producer_epoch) else {
                return Err(Refusal::EpochOutOfRange {
                    partition: key,
                    producer: p.clone(),
                });
            };
            (
                p.clone(),
                AbortSpec {
                    topic: topic.clone(),
                    partition,
                    producer_id: p.producer_id,
                    producer_epoch: epoch,
                    coordinator_epoch: marker_coordinator_epoch(p.coordinator_epoch),
                },
            )
        }
        AbortTarget::Producer {
            producer_id,
            producer_epoch,
            coordinator_epoch,
            ..
        } => {
            let Some(p) = found
                .iter()
                .filter(open)
                .find(|p| p.producer_id == *producer_id)
            else {
                return Err(Refusal::NoOpenTransaction {
                    partition: key,
                    producer_id: *producer_id,
                    found,
                });
            };
            let coordinator_epoch_matches = *coordinator_epoch == p.coordinator_epoch
                || *coordinator_epoch == marker_coordinator_epoch(p.coordinator_epoch);
            if i32::from(*producer_epoch) != p.producer_epoch || !coordinator_epoch_matches {
                return Err(Refusal::EpochsDisagree {
                    partition: key,
                    producer_epoch: *producer_epoch,
                    coordinator_epoch: *coordinator_epoch,
                    producer: p.clone(),
                    found,
                });
            }
            (
                p.clone(),
                AbortSpec {
                    topic: topic.clone(),
                    partition,
                    producer_id: *producer_id,
                    producer_epoch: *producer_epoch,
                    coordinator_epoch: marker_coordinator_epoch(*coordinator_epoch),
                },
            )
        }
    };
    let seen = Seen {
        producer_id: producer.producer_id,
        producer_epoch: producer.producer_epoch,
        partitions: vec![PartitionSeen {
            topic: topic.clone(),
            partition,
            start_offset: producer.current_txn_start_offset,
            unblocks: unblocks(joined, &topic, partition, producer.producer_id),
        }],
        coordinator: CoordinatorAnswer::of(joined, producer.producer_id),
    };
    let mut plan = Plan::default();
    plan.push(Action::Abort(spec), seen);
    Ok(plan)
}

/// A force-terminate plan, and the ids left out of it.
#[derive(Debug, Clone)]
pub struct ForceTerminatePlan {
    /// One step per id its coordinator described.
    pub plan: Plan,
    /// The ids no coordinator described, with the error when there is one:
    /// nothing is planned (or sent) for them.
    pub left_alone: Vec<(String, Option<KeyError>)>,
}

/// One force-terminate per id of `ids` (sorted, each once) its coordinator
/// described (`described`: each id's DescribeTransactions answer), with the
/// partitions of its transaction (their start offsets and what ending it
/// releases unknown until [`place_partitions`]); the rest left alone.
pub fn force_terminate_plan(
    ids: &[String],
    described: &BTreeMap<String, Result<TransactionState, KeyError>>,
) -> ForceTerminatePlan {
    let mut plan = Plan::default();
    let mut left_alone = Vec::new();
    for id in ids {
        match described.get(id) {
            Some(Ok(t)) => {
                let partitions = t
                    .topics
                    .iter()
                    .flat_map(|td| {
                        td.partitions.iter().map(|p| PartitionSeen {
                            topic: td.topic.clone(),
                            partition: *p,
                            start_offset: -1,
                            unblocks: None,
                        })
                    })
                    .collect();
                plan.push(
                    Action::ForceTerminate {
                        transactional_id: id.clone(),
                    },
                    Seen {
                        producer_id: t.producer_id,
                        producer_epoch: i32::from(t.producer_epoch),
                        partitions,
                        coordinator: CoordinatorAnswer::Described(t.clone()),
                    },
                );
            }
            Some(Err(e)) => left_alone.push((id.clone(), Some(e.clone()))),
            None => left_alone.push((id.clone(), None)),
        }
    }
    ForceTerminatePlan { plan, left_alone }
}

/// Each step's partitions placed in `joined` (a join over them): where the
/// producer's open transaction starts there and what ending it releases;
/// a partition described without an open transaction of the producer
/// releases nothing, one not described stays unknown.
pub fn place_partitions(plan: &mut Plan, joined: &Joined) {
    let by_partition = joined.by_partition();
    for step in &mut plan.steps {
        let pid = step.seen.producer_id;
        for part in &mut step.seen.partitions {
            let outcome = by_partition
                .get(&(part.topic.as_str(), part.partition))
                .copied();
            let open = outcome
                .and_then(|o| o.result.as_deref().ok())
                .unwrap_or_default()
                .iter()
                .find(|ps| ps.producer_id == pid && ps.current_txn_start_offset >= 0);
            if let Some(ps) = open {
                part.start_offset = ps.current_txn_start_offset;
                part.unblocks = unblocks_in(joined, outcome, pid);
            } else if outcome.is_some_and(|o| o.result.is_ok()) {
                // described, and no open transaction of the producer there
                part.unblocks = Some(0);
            }
        }
    }
}
