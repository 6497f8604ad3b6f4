//! Producer state joined with what the transaction coordinators know: the
//! snapshot behind `find-hanging`, `describe --with-transactions`, `kdp
//! blocked`, the repair plans and the exporter's diagnosis.
//!
//! One scan (kdp-workflows' `join`) fills it: DescribeProducers of the
//! selected partitions; the cluster's settings (DescribeConfigs) and
//! transaction protocol (ApiVersions); ListTransactions on every broker;
//! DescribeTransactions of each listed id at its coordinator; a probe of
//! whether the caller may describe any id; and the high watermark and LSO of
//! each partition with an open transaction. A scan that ran out of time
//! says which phases did not finish ([`Joined::unfinished`]).

use std::collections::{BTreeMap, HashMap};

use kdp_wire::messages::{ProducerState, TransactionState};

use crate::coordinator::{includes, CoordinatorView, Description, Unlisted};
use crate::diagnose::fence::{self, FenceVerdict, LogView};
use crate::diagnose::flags::{Context, Coordinator};
use crate::diagnose::hanging::is_candidate;
use crate::history::id::IdHistory;
use crate::key_error::KeyError;
use crate::offsets::Offsets;
use crate::partition::{is_transactional, DescribeSummary, PartitionOutcome, TopicPartition};
use crate::protocol::TxnProtocol;
use crate::retained::LastWrites;

/// Kafka's default `transaction.max.timeout.ms`, used when no broker says.
pub const DEFAULT_MAX_TRANSACTION_TIMEOUT_MS: i64 = 900_000;

/// One step of the join, named by the Kafka API it waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JoinPhase {
    /// The producers of each partition.
    DescribeProducers,
    /// The brokers' `transaction.max.timeout.ms` and `producer.id.expiration.ms`.
    DescribeConfigs,
    /// The cluster's transaction protocol (`transaction.version`, from ApiVersions).
    ApiVersions,
    /// Every broker's transactions.
    ListTransactions,
    /// The coordinator of each listed transactional id: when it did not
    /// answer, DescribeTransactions was never sent.
    FindCoordinator,
    /// The coordinators' state of each listed transactional id.
    DescribeTransactions,
    /// The high watermark and LSO of partitions with an open transaction.
    ListOffsets,
}

impl JoinPhase {
    /// The Kafka API's name.
    pub fn api(self) -> &'static str {
        match self {
            JoinPhase::DescribeProducers => "DescribeProducers",
            JoinPhase::DescribeConfigs => "DescribeConfigs",
            JoinPhase::ApiVersions => "ApiVersions",
            JoinPhase::ListTransactions => "ListTransactions",
            JoinPhase::FindCoordinator => "FindCoordinator",
            JoinPhase::DescribeTransactions => "DescribeTransactions",
            JoinPhase::ListOffsets => "ListOffsets",
        }
    }
}

impl std::fmt::Display for JoinPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.api())
    }
}

/// Where the maximum transaction timeout came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutSource {
    /// Given by the caller.
    Given,
    /// The brokers' `transaction.max.timeout.ms`.
    Cluster,
    /// Kafka's default; no broker said.
    Default,
}

impl TimeoutSource {
    /// Where the threshold came from, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            TimeoutSource::Given => "--max-transaction-timeout",
            TimeoutSource::Cluster => "the brokers' transaction.max.timeout.ms",
            TimeoutSource::Default => "Kafka's default (no broker said)",
        }
    }
}

/// The candidate threshold: `given`, else the brokers' largest
/// `transaction.max.timeout.ms`, else Kafka's default.
pub fn max_timeout(given: Option<i64>, cluster: Option<i64>) -> (i64, TimeoutSource) {
    match (given, cluster) {
        (Some(ms), _) => (ms, TimeoutSource::Given),
        (None, Some(ms)) => (ms, TimeoutSource::Cluster),
        (None, None) => (DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, TimeoutSource::Default),
    }
}

/// Everything the scan learned.
#[derive(Debug, Clone)]
pub struct Joined {
    /// When the scan started (ms since the epoch).
    pub now_ms: i64,
    /// Each partition's producers, or its error: every producer, or only
    /// those the join retained ([`Retain`](crate::retained::Retain)).
    pub partitions: Vec<PartitionOutcome>,
    /// The latest write of each producer id with an open transaction among
    /// the producers described but not kept in `partitions` (a join that
    /// keeps them all leaves it empty): with `partitions`, when each such
    /// producer last wrote anywhere.
    pub unkept_writes: LastWrites,
    /// The describe's counts.
    pub summary: DescribeSummary,
    /// The cluster's transaction protocol.
    pub protocol: TxnProtocol,
    /// The largest `transaction.max.timeout.ms` of the brokers, if any said.
    pub cluster_max_timeout_ms: Option<i64>,
    /// The largest `producer.id.expiration.ms`, if any broker said.
    pub producer_id_expiration_ms: Option<i64>,
    /// What the coordinators know.
    pub view: CoordinatorView,
    /// High watermark and LSO of partitions with an open transaction.
    pub offsets: BTreeMap<TopicPartition, std::result::Result<Offsets, KeyError>>,
    /// Brokers that did not answer ListTransactions, with why.
    pub listing_errors: Vec<(i32, KeyError)>,
    /// Phases that ran out of time (some of their requests unanswered when
    /// the deadline passed), in the order of [`JoinPhase`]; empty when the
    /// scan finished.
    pub unfinished: Vec<JoinPhase>,
    /// When only Kafka's find-hanging candidates were looked up, the
    /// threshold that chose them: producers that are no candidate by it
    /// were not.
    pub candidates_only: Option<i64>,
}

impl Joined {
    /// A scan at `now_ms` under `protocol` that has learned nothing yet: no
    /// partition, no coordinator's answer, no offsets, no broker's config.
    /// Callers that build a snapshot from their own reads fill in the rest
    /// with struct update syntax (`Joined { partitions, ..Joined::new(..) }`).
    pub fn new(now_ms: i64, protocol: TxnProtocol) -> Self {
        Joined {
            now_ms,
            partitions: Vec::new(),
            unkept_writes: LastWrites::default(),
            summary: DescribeSummary::default(),
            protocol,
            cluster_max_timeout_ms: None,
            producer_id_expiration_ms: None,
            view: CoordinatorView::default(),
            offsets: BTreeMap::new(),
            listing_errors: Vec::new(),
            unfinished: Vec::new(),
            candidates_only: None,
        }
    }

    /// The coordinator's state for producer `p`, if described.
    pub fn coordinator_state(&self, producer_id: i64) -> Option<&TransactionState> {
        let id = self.view.listed.get(&producer_id)?;
        match self.view.descriptions.get(id)? {
            Description::Described(t) => Some(t),
            _ => None,
        }
    }

    /// What the coordinators say about producer `p`, as the flags take it:
    /// described; unknown (the id is not found, or an open transaction's
    /// producer has no description although every id is visible and every
    /// broker answered); or unseen (kdp cannot tell).
    pub fn coordinator(&self, p: &ProducerState) -> Coordinator<'_> {
        if let Some(t) = self.candidates_only {
            if !is_candidate(p, self.now_ms, t) {
                return Coordinator::Unseen;
            }
        }
        let id = self.view.listed.get(&p.producer_id);
        match id.and_then(|id| self.view.descriptions.get(id)) {
            Some(Description::Described(t)) => Coordinator::Known(t),
            Some(Description::NotFound) => Coordinator::Unknown,
            None if p.current_txn_start_offset >= 0
                && self.view.unlisted() == Unlisted::NoTransaction =>
            {
                Coordinator::Unknown
            }
            _ => Coordinator::Unseen,
        }
    }

    /// The fence verdict of producer `p`: `log` is what kdp knows of its
    /// transactional id's transaction log (see [`crate::diagnose::fence`]).
    pub fn fence_verdict(&self, p: &ProducerState, log: LogView<'_>) -> FenceVerdict {
        fence::verdict(p, self.coordinator_state(p.producer_id), self.protocol, log)
    }

    /// The coordinator's state for producer `producer_id` when its
    /// transaction holds `topic`/`partition` (it will write that
    /// partition's marker).
    pub fn tracked(
        &self,
        topic: &str,
        partition: i32,
        producer_id: i64,
    ) -> Option<&TransactionState> {
        self.coordinator_state(producer_id)
            .filter(|t| includes(t, topic, partition))
    }

    /// The candidate threshold when the caller gives none: the brokers'
    /// largest `transaction.max.timeout.ms`, else Kafka's default.
    pub fn max_timeout_ms(&self) -> i64 {
        max_timeout(None, self.cluster_max_timeout_ms).0
    }

    /// The cluster facts the flags of `describe --with-transactions` (and
    /// the exporter's fenced count) are judged against.
    pub fn flags_context(&self) -> Context {
        Context {
            now_ms: self.now_ms,
            protocol: self.protocol,
            max_transaction_timeout_ms: self.max_timeout_ms(),
            producer_id_expiration_ms: self.producer_id_expiration_ms,
        }
    }

    /// The fence verdict of producer `p` from the transaction logs read
    /// (`logs`: by transactional id, each id's history or why it could not
    /// be read), found by the producer's listed id: the log when it was
    /// read, else (protocol v1) the epochs, else unknown with the reason.
    /// `None` for a producer with no listed id that does not look
    /// transactional ([`is_transactional`]): there is nothing to judge.
    pub fn fence_from_logs(
        &self,
        p: &ProducerState,
        logs: &BTreeMap<&str, &IdHistory>,
    ) -> Option<FenceVerdict> {
        let id = self.view.listed.get(&p.producer_id);
        let unreadable;
        let log = match id.and_then(|id| logs.get(id.as_str())) {
            Some(IdHistory { result: Ok(h), .. }) => LogView::Read(h),
            Some(IdHistory { result: Err(e), .. }) => {
                unreadable = e.to_string();
                LogView::Unreadable(&unreadable)
            }
            None if id.is_some() => LogView::NotRead,
            None if is_transactional(p) => LogView::NoTransactionalId,
            None => return None,
        };
        Some(self.fence_verdict(p, log))
    }

    /// The transactional ids the coordinators listed for the producers
    /// described, each once, sorted: whose transaction logs say more.
    pub fn listed_ids(&self) -> Vec<String> {
        let ids: std::collections::BTreeSet<&String> = self
            .producers()
            .filter_map(|(_, _, p)| self.view.listed.get(&p.producer_id))
            .collect();
        ids.into_iter().cloned().collect()
    }

    /// Each partition's outcome by topic and partition, for lookups in a
    /// loop (a scan of [`Joined::partitions`] per lookup is quadratic on a
    /// big cluster).
    pub fn by_partition(&self) -> HashMap<(&str, i32), &PartitionOutcome> {
        self.partitions
            .iter()
            .map(|o| ((o.topic.as_str(), o.partition), o))
            .collect()
    }

    /// Every (topic, partition, producer) with an open transaction.
    pub fn open_transactions(&self) -> impl Iterator<Item = (&str, i32, &ProducerState)> {
        self.producers()
            .filter(|(_, _, p)| p.current_txn_start_offset >= 0)
    }

    /// Every (topic, partition, producer) described.
    pub fn producers(&self) -> impl Iterator<Item = (&str, i32, &ProducerState)> {
        self.partitions.iter().flat_map(|o| {
            o.result
                .as_ref()
                .map(|ps| ps.as_slice())
                .unwrap_or(&[])
                .iter()
                .map(move |p| (o.topic.as_str(), o.partition, p))
        })
    }
}
