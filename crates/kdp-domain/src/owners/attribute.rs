//! Each transactional id attributed to the framework, application,
//! instance and task that wrote it, with a verdict and its evidence
//! (docs/OWNERS.md). The checks run in the order that keeps a weak shape
//! from claiming a strong one's id: Streams (a UUID and its application's
//! group), Connect (a Connect group that prefixes the id), Flink (several
//! ids of one prefix and subtask; two jobs on one prefix, see
//! [`super::collide`], leave every id of it unknown), else unattributed.

use std::collections::BTreeMap;

use kdp_wire::messages::TransactionState;
use kdp_wire::{ErrorCode, TxnState};

use crate::diagnose::blocked::HeldGroups;
use crate::groups::state::{GroupState, GroupType};
use crate::key_error::KeyError;
use crate::owners::collide::{collision, Started};
use crate::owners::input::{GroupMembers, GroupProtocol, GroupSeen, Member, OwnersInput, TxnEntry};
use crate::owners::members::{connect_tasks, streams_process_id};
use crate::owners::scheme::{self, FlinkShape, ProcessId};
use crate::owners::verdict::{Evidence, Verdict};
use crate::partition::TopicPartition;
use crate::severity::Severity;
use crate::time::{age_ms, known_ms};

/// The framework that made an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Framework {
    /// Kafka Streams, exactly_once_v2.
    KafkaStreams,
    /// Kafka Connect, exactly-once source tasks (and its leader).
    KafkaConnect,
    /// Flink's KafkaSink.
    FlinkKafkaSink,
}

impl Framework {
    /// Its name in output.
    pub fn label(self) -> &'static str {
        match self {
            Framework::KafkaStreams => "kafka-streams",
            Framework::KafkaConnect => "kafka-connect",
            Framework::FlinkKafkaSink => "flink-kafka-sink",
        }
    }
}

/// Which unit of the application writes with the id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Task {
    /// A Streams thread, by its index (from 1).
    StreamThread(u32),
    /// A Connect source task.
    ConnectTask(u32),
    /// The Connect cluster's leader (it writes the config topic).
    ConnectLeader,
    /// A Flink sink subtask's transaction of one checkpoint.
    FlinkCheckpoint {
        /// The subtask index.
        subtask: u32,
        /// The checkpoint (or pool) counter.
        counter: u64,
    },
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Task::StreamThread(n) => write!(f, "thread {n}"),
            Task::ConnectTask(n) => write!(f, "task {n}"),
            Task::ConnectLeader => f.write_str("leader"),
            Task::FlinkCheckpoint { subtask, counter } => {
                write!(f, "subtask {subtask} checkpoint {counter}")
            }
        }
    }
}

/// Who wrote an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// The framework.
    pub framework: Framework,
    /// The application: Streams' application id, Connect's
    /// `<group>/<connector>` (the group alone for its leader), Flink's
    /// prefix.
    pub application: String,
    /// The instance: Streams' process id, the Connect worker (member client
    /// id) running the task, Flink's subtask; `None` when unknown.
    pub instance: Option<String>,
    /// The task.
    pub task: Task,
}

/// An id's transaction as its coordinator described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnFacts {
    /// Its state (`None`: a name this kdp does not know).
    pub state: Option<TxnState>,
    /// The state's name as the coordinator sent it.
    pub state_name: String,
    /// The producer id.
    pub producer_id: i64,
    /// The producer epoch.
    pub producer_epoch: i16,
    /// The transaction timeout.
    pub timeout_ms: i32,
    /// When the current transaction started, when known.
    pub start_ms: Option<i64>,
    /// The partitions in it (those an open one pins).
    pub partitions: Vec<TopicPartition>,
    /// Its coordinator.
    pub coordinator: Option<i32>,
}

impl TxnFacts {
    pub(crate) fn of(t: &TransactionState, coordinator: Option<i32>) -> TxnFacts {
        TxnFacts {
            state: TxnState::from_name(&t.transaction_state),
            state_name: t.transaction_state.clone(),
            producer_id: t.producer_id,
            producer_epoch: t.producer_epoch,
            timeout_ms: t.transaction_timeout_ms,
            start_ms: known_ms(t.transaction_start_time_ms),
            partitions: t
                .topics
                .iter()
                .flat_map(|tp| tp.partitions.iter().map(|p| (tp.topic.clone(), *p)))
                .collect(),
            coordinator,
        }
    }

    /// The groups this transaction holds back on its partitions, from
    /// `held` (`kdp blocked`'s model): empty when it is not open, `None`
    /// when `held` was not read or cannot tell for one of its partitions.
    pub fn groups_blocked(&self, held: Option<&HeldGroups>) -> Option<Vec<String>> {
        if !self.is_open() {
            return Some(Vec::new());
        }
        let held = held?;
        let mut out: Vec<String> = Vec::new();
        for (topic, partition) in &self.partitions {
            out.extend(
                held.of(topic, *partition, self.producer_id)?
                    .iter()
                    .cloned(),
            );
        }
        out.sort();
        out.dedup();
        Some(out)
    }

    /// The topics its open transaction writes (none when it is closed).
    pub fn open_topics(&self) -> std::collections::BTreeSet<String> {
        if !self.is_open() {
            return Default::default();
        }
        self.partitions.iter().map(|(t, _)| t.clone()).collect()
    }

    /// A transaction is open (it holds its partitions' LSO): Ongoing, or
    /// its end decided and markers not yet written.
    pub fn is_open(&self) -> bool {
        matches!(
            self.state,
            Some(
                TxnState::Ongoing
                    | TxnState::PrepareCommit
                    | TxnState::PrepareAbort
                    | TxnState::PrepareEpochFence
            )
        )
    }
}

impl TxnEntry {
    /// The partitions its transaction pins: those of an open one, none
    /// when it is closed or was not described.
    pub fn pinned(&self) -> Vec<TopicPartition> {
        match &self.described {
            Ok(d) => {
                let facts = TxnFacts::of(d, self.coordinator);
                if facts.is_open() {
                    facts.partitions
                } else {
                    Vec::new()
                }
            }
            Err(_) => Vec::new(),
        }
    }
}

/// What `force-terminate` would do to an id's open transaction, by its
/// verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// Nothing open: nothing to end.
    Nothing,
    /// Its writer is gone (orphaned) or moved past it (lingering): ending
    /// it releases what it pins.
    ForceTerminate,
    /// Its writer is live: never suggested (the writer ends it itself).
    LeaveToWriter,
    /// Flink's newest transactions: one is the checkpoint pre-committed and
    /// awaiting its commit; aborting it discards data Flink checkpointed.
    NewestCheckpoint,
    /// Not decided: kdp suggests nothing.
    Undecided,
}

/// One id, attributed and judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The transactional id.
    pub transactional_id: String,
    /// Who wrote it, when a scheme was confirmed (also for `Unknown`: the
    /// scheme matched, its evidence could not be read).
    pub attribution: Option<Attribution>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why.
    pub evidence: Evidence,
    /// Its transaction, or why the coordinator did not describe it.
    pub txn: Result<TxnFacts, KeyError>,
    /// Flink: one of its subtask's two newest open transactions (aborting
    /// the pre-committed one discards checkpointed data).
    pub newest_checkpoint: bool,
    /// The consumer groups its open transaction holds back: those at the
    /// LSO it holds on any of its partitions (`kdp blocked`'s verdicts
    /// blocked and waiting), by group id; empty when it holds none (or is
    /// not open); `None` when kdp could not tell.
    pub groups_blocked: Option<Vec<String>>,
}

impl Owner {
    /// Whether it holds a transaction open.
    pub fn is_open(&self) -> bool {
        matches!(&self.txn, Ok(t) if t.is_open())
    }

    /// How old its open transaction is at `now_ms`, when known.
    pub fn open_age_ms(&self, now_ms: i64) -> Option<i64> {
        match &self.txn {
            Ok(t) if t.is_open() => t.start_ms.and_then(|s| age_ms(s, now_ms)),
            _ => None,
        }
    }

    /// How much it asks of an operator: its verdict's severity while it
    /// holds a transaction open; a closed id needs nothing, unless the
    /// verdict is undecided.
    pub fn severity(&self) -> Severity {
        match (self.is_open(), self.verdict) {
            (true, v) => v.severity(),
            (false, Verdict::Unknown) => Severity::Unknown,
            (false, _) => Severity::Ok,
        }
    }

    /// What to do about its open transaction.
    pub fn advice(&self) -> Advice {
        if self.txn.is_err() {
            return Advice::Undecided;
        }
        if !self.is_open() {
            return Advice::Nothing;
        }
        match self.verdict {
            Verdict::Orphaned | Verdict::Lingering => Advice::ForceTerminate,
            Verdict::Live if self.newest_checkpoint => Advice::NewestCheckpoint,
            Verdict::Live => Advice::LeaveToWriter,
            Verdict::Unknown | Verdict::Unattributed => Advice::Undecided,
        }
    }
}

/// A group's answer for the id's scheme: its description, or the evidence
/// of why there is none.
fn group<'a>(input: &'a OwnersInput, group_id: &str) -> Result<&'a GroupMembers, Evidence> {
    match input.groups.get(group_id) {
        None => Err(Evidence::GroupNotFound {
            group_id: group_id.to_string(),
            may_be_hidden: input.groups_may_hide(),
        }),
        Some(GroupSeen {
            described: Ok(g), ..
        }) if g.state == GroupState::Dead => Err(Evidence::GroupNotFound {
            group_id: group_id.to_string(),
            may_be_hidden: false,
        }),
        Some(GroupSeen {
            described: Ok(g), ..
        }) => Ok(g),
        Some(GroupSeen {
            described: Err(e), ..
        }) if e.code == ErrorCode::GROUP_ID_NOT_FOUND => Err(Evidence::GroupNotFound {
            group_id: group_id.to_string(),
            may_be_hidden: false,
        }),
        Some(GroupSeen {
            described: Err(e), ..
        }) => Err(Evidence::GroupUnreadable {
            group_id: group_id.to_string(),
            error: e.clone(),
        }),
    }
}

/// Settled enough that a missing member is gone: Stable or Empty.
fn settled(state: &GroupState) -> bool {
    matches!(state, GroupState::Stable | GroupState::Empty)
}

/// The verdict of an id whose owner is the member `owns` picks, in a group
/// read as `g`; the members `first` picks are tried first (the member of
/// the very thread, when several share a process).
fn by_members<E>(
    group_id: &str,
    g: &GroupMembers,
    first: impl Fn(&Member) -> bool,
    owns: impl Fn(&Member) -> Result<bool, E>,
    unreadable: impl Fn(&str, E) -> Evidence,
) -> (Verdict, Evidence, Option<String>) {
    let mut undecodable = None;
    let (preferred, rest): (Vec<&Member>, Vec<&Member>) = g.members.iter().partition(|m| first(m));
    for m in preferred.into_iter().chain(rest) {
        match owns(m) {
            Ok(true) => {
                return (
                    Verdict::Live,
                    Evidence::Member {
                        group_id: group_id.to_string(),
                        member_id: m.member_id.clone(),
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                    },
                    Some(m.client_id.clone()),
                )
            }
            Ok(false) => {}
            Err(e) => {
                undecodable.get_or_insert_with(|| unreadable(&m.member_id, e));
            }
        }
    }
    if let Some(e) = undecodable {
        return (Verdict::Unknown, e, None);
    }
    if !settled(&g.state) {
        let e = Evidence::Rebalancing {
            group_id: group_id.to_string(),
            state: g.state.clone(),
        };
        return (Verdict::Unknown, e, None);
    }
    let e = Evidence::NoMember {
        group_id: group_id.to_string(),
        state: g.state.clone(),
        members: g.members.len(),
    };
    (Verdict::Orphaned, e, None)
}

struct Judged {
    attribution: Option<Attribution>,
    verdict: Verdict,
    evidence: Evidence,
    newest_checkpoint: bool,
}

fn judged(attribution: Option<Attribution>, verdict: Verdict, evidence: Evidence) -> Judged {
    Judged {
        attribution,
        verdict,
        evidence,
        newest_checkpoint: false,
    }
}

fn streams(input: &OwnersInput, s: &scheme::StreamsShape) -> Option<Judged> {
    let app = &s.application_id;
    let attribution = Attribution {
        framework: Framework::KafkaStreams,
        application: app.clone(),
        instance: Some(s.process_id.to_string()),
        task: Task::StreamThread(s.thread),
    };
    let g = match group(input, app) {
        Ok(g) => g,
        Err(e) => return Some(judged(Some(attribution), Verdict::Unknown, e)),
    };
    match (&g.group_type, &g.protocol) {
        // a KIP-1071 streams group: each member lists its process id
        (GroupType::Streams, _)
        | (_, GroupProtocol::KafkaStreams)
        | (GroupType::Classic, GroupProtocol::Consumer { named: false }) => {}
        (_, protocol) => {
            // a group by that name that is not a Streams application's:
            // the shape alone names no framework
            let e = Evidence::NotStreamsGroup {
                group_id: app.clone(),
                protocol_type: protocol.type_name().to_string(),
            };
            return Some(judged(None, Verdict::Unattributed, e));
        }
    }
    let want = s.process_id;
    let thread = format!("-StreamThread-{}-consumer", s.thread);
    let (verdict, evidence, _) = by_members(
        app,
        g,
        |m| m.client_id.ends_with(&thread),
        |m| -> Result<bool, kdp_wire::DecodeError> {
            let p: ProcessId = match m.process_id {
                Some(p) => p,
                None => streams_process_id(&m.metadata)?,
            };
            Ok(p == want)
        },
        |member, error| Evidence::MemberUnreadable {
            group_id: app.clone(),
            member_id: member.to_string(),
            error,
        },
    );
    Some(judged(Some(attribution), verdict, evidence))
}

fn connect(input: &OwnersInput, id: &str, connect_groups: &[&str]) -> Option<Judged> {
    if let Some(group_id) = scheme::connect_leader(id, connect_groups.iter().copied()) {
        let attribution = Attribution {
            framework: Framework::KafkaConnect,
            application: group_id.clone(),
            instance: None,
            task: Task::ConnectLeader,
        };
        let (verdict, evidence) = match group(input, &group_id) {
            Err(e) => (Verdict::Unknown, e),
            Ok(g) => match g.members.first() {
                // the leader is one of the members; any member shows the cluster runs
                Some(m) => (
                    Verdict::Live,
                    Evidence::Member {
                        group_id: group_id.clone(),
                        member_id: m.member_id.clone(),
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                    },
                ),
                None if settled(&g.state) => (
                    Verdict::Orphaned,
                    Evidence::NoMember {
                        group_id: group_id.clone(),
                        state: g.state.clone(),
                        members: 0,
                    },
                ),
                None => (
                    Verdict::Unknown,
                    Evidence::Rebalancing {
                        group_id: group_id.clone(),
                        state: g.state.clone(),
                    },
                ),
            },
        };
        return Some(judged(Some(attribution), verdict, evidence));
    }
    let c = scheme::connect(id, connect_groups.iter().copied())?;
    let mut attribution = Attribution {
        framework: Framework::KafkaConnect,
        application: format!("{}/{}", c.group_id, c.connector),
        instance: None,
        task: Task::ConnectTask(c.task),
    };
    let g = match group(input, &c.group_id) {
        Ok(g) => g,
        Err(e) => return Some(judged(Some(attribution), Verdict::Unknown, e)),
    };
    let want = (
        c.connector.clone(),
        i32::try_from(c.task).unwrap_or(i32::MAX),
    );
    let (verdict, evidence, worker) = by_members(
        &c.group_id,
        g,
        |_| false,
        |m| connect_tasks(&m.metadata, &m.assignment).map(|t| t.contains(&want)),
        |member, error| Evidence::MemberUnreadable {
            group_id: c.group_id.clone(),
            member_id: member.to_string(),
            error,
        },
    );
    attribution.instance = worker;
    Some(judged(Some(attribution), verdict, evidence))
}

/// The ids of one Flink (prefix, subtask), judged together.
fn flink_line(
    input: &OwnersInput,
    line: &[(usize, FlinkShape)],
    facts: &[Result<TxnFacts, KeyError>],
    ids: &[&str],
) -> Vec<(usize, Judged)> {
    let attribution = |f: &FlinkShape| Attribution {
        framework: Framework::FlinkKafkaSink,
        application: f.prefix.clone(),
        instance: Some(format!("subtask {}", f.subtask)),
        task: Task::FlinkCheckpoint {
            subtask: f.subtask,
            counter: f.counter,
        },
    };
    if line.len() < 2 {
        return line
            .iter()
            .map(|(i, _)| (*i, judged(None, Verdict::Unattributed, Evidence::Alone)))
            .collect();
    }
    if input.groups_may_hide() {
        return line
            .iter()
            .map(|(i, f)| {
                let j = judged(
                    Some(attribution(f)),
                    Verdict::Unknown,
                    Evidence::GroupsMayBeHidden,
                );
                (*i, j)
            })
            .collect();
    }
    let fact = |i: usize| facts.get(i).and_then(|f| f.as_ref().ok());
    let start = |i: usize| fact(i).and_then(|f| f.start_ms);
    let open = |i: usize| fact(i).is_some_and(TxnFacts::is_open);
    // two jobs on one prefix: which transactions are whose is unknown, so
    // nothing is lingering, nor the newest checkpoint
    let started: Vec<Started<'_>> = line
        .iter()
        .filter_map(|(i, f)| {
            Some(Started {
                transactional_id: ids.get(*i)?,
                counter: f.counter,
                start_ms: start(*i)?,
                topics: fact(*i).map(TxnFacts::open_topics).unwrap_or_default(),
            })
        })
        .collect();
    if let Some(c) = collision(&started) {
        return line
            .iter()
            .map(|(i, f)| {
                let e = Evidence::TwoJobs {
                    collision: Box::new(c.clone()),
                };
                (*i, judged(Some(attribution(f)), Verdict::Unknown, e))
            })
            .collect();
    }
    // newest first; an unknown start sorts last, then by counter
    let mut order: Vec<&(usize, FlinkShape)> = line.iter().collect();
    order.sort_by_key(|l| std::cmp::Reverse((start(l.0), l.1.counter)));
    let committed_after = |i: usize| -> Option<usize> {
        let s = start(i)?;
        line.iter()
            .filter(|(j, _)| *j != i)
            .filter(|(j, _)| fact(*j).is_some_and(|f| f.state == Some(TxnState::CompleteCommit)))
            .filter(|(j, _)| start(*j).is_some_and(|sj| sj > s))
            .map(|(j, _)| *j)
            .max_by_key(|j| start(*j))
    };
    let newest_open: Vec<usize> = order
        .iter()
        .map(|(i, _)| *i)
        .filter(|i| open(*i) && committed_after(*i).is_none())
        .take(2)
        .collect();
    let newest_two: Vec<usize> = order.iter().map(|(i, _)| *i).take(2).collect();
    let name = |i: usize| ids.get(i).map(|s| s.to_string()).unwrap_or_default();
    line.iter()
        .map(|(i, f)| {
            let i = *i;
            let a = Some(attribution(f));
            let j = if let (true, Some(c)) = (open(i), committed_after(i)) {
                judged(
                    a,
                    Verdict::Lingering,
                    Evidence::CommittedAfter { sibling: name(c) },
                )
            } else if newest_open.contains(&i) {
                Judged {
                    newest_checkpoint: true,
                    ..judged(
                        a,
                        Verdict::Live,
                        Evidence::Newest {
                            siblings: line.len(),
                        },
                    )
                }
            } else if !open(i) && newest_two.contains(&i) && committed_after(i).is_none() {
                judged(
                    a,
                    Verdict::Live,
                    Evidence::Newest {
                        siblings: line.len(),
                    },
                )
            } else {
                let newest = order.first().map(|(n, _)| name(*n)).unwrap_or_default();
                judged(a, Verdict::Unknown, Evidence::Superseded { newest })
            };
            (i, j)
        })
        .collect()
}

/// Attributes and judges every id of `input` (in its order).
pub fn attribute(input: &OwnersInput) -> Vec<Owner> {
    let connect_groups: Vec<&str> = input
        .groups
        .iter()
        .filter(|(_, g)| g.is_connect())
        .map(|(id, _)| id.as_str())
        .collect();
    let facts: Vec<Result<TxnFacts, KeyError>> = input
        .transactions
        .iter()
        .map(|t: &TxnEntry| {
            t.described
                .as_ref()
                .map(|d| TxnFacts::of(d, t.coordinator))
                .map_err(Clone::clone)
        })
        .collect();
    let ids: Vec<&str> = input
        .transactions
        .iter()
        .map(|t| t.transactional_id.as_str())
        .collect();
    let mut out: Vec<Option<Judged>> = Vec::with_capacity(ids.len());
    let mut lines: BTreeMap<(String, u32), Vec<(usize, FlinkShape)>> = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        let j = scheme::streams(id)
            .and_then(|s| streams(input, &s))
            .or_else(|| connect(input, id, &connect_groups));
        if j.is_none() {
            if let Some(f) = scheme::flink(id) {
                lines
                    .entry((f.prefix.clone(), f.subtask))
                    .or_default()
                    .push((i, f));
            }
        }
        out.push(j);
    }
    for line in lines.values() {
        for (i, j) in flink_line(input, line, &facts, &ids) {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(j);
            }
        }
    }
    out.into_iter()
        .zip(ids)
        .zip(facts)
        .map(|((j, id), txn)| {
            let j = j.unwrap_or_else(|| {
                let counter_tail = scheme::counter_tail(id).map(|(p, n)| (p.to_string(), n));
                judged(
                    None,
                    Verdict::Unattributed,
                    Evidence::NoScheme { counter_tail },
                )
            });
            let groups_blocked = match &txn {
                Ok(t) => t.groups_blocked(input.held.as_ref()),
                Err(_) => None,
            };
            Owner {
                groups_blocked,
                transactional_id: id.to_string(),
                attribution: j.attribution,
                verdict: j.verdict,
                evidence: j.evidence,
                txn,
                newest_checkpoint: j.newest_checkpoint,
            }
        })
        .collect()
}
