//! The runs of a describe: [`describe_producers`] over a selection (the
//! module's [rules](crate::describe) of routing and retry, within the
//! caller's [`TimeBound`]), and the two pieces the every-replica scans reuse:
//! [`resolve`] (a selection into partitions and their replicas, after
//! metadata) and [`describe_on`] (one broker's answer for given partitions).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use kdp_domain::partition::{DescribeSummary, PartitionError, PartitionOutcome, TopicPartition};
use kdp_wire::messages::{DescribeProducersResponse, ProducerState};
use kdp_wire::view::ArrayView;
use kdp_wire::ErrorCode;

use crate::admin::{drive, Batch, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::Client;
use crate::describe::handler::{self, Frame, Handler};
use crate::describe::options::{DescribeEvent, DescribeOptions, FramedEvent, FramedOutcome};
use crate::describe::report::Report;
use crate::describe::select;
use crate::error::Result;

/// Describes the producers of the selected partitions within `bound`.
/// Results go to `sink` as they arrive, owned; every selected partition is
/// reported exactly once. Fails only when the first metadata lookup fails
/// (the cluster is unreachable). [`describe_producers_framed`] reads the
/// same answers without building the producers.
pub async fn describe_producers<F>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    mut sink: F,
) -> Result<DescribeSummary>
where
    F: FnMut(DescribeEvent),
{
    describe_producers_framed(client, opts, bound, |ev| sink(owned_event(ev))).await
}

/// [`describe_producers`], each answer left in its validated response:
/// `sink` gets the outcomes of one response at a time (sorted by
/// partition), to read through the view with [`answers`] before the next
/// arrives, or to keep (a response's bytes, shared by its partitions).
/// The same requests, routing, retries and `bound` as
/// [`describe_producers`], which is this with the producers built.
pub async fn describe_producers_framed<F>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    sink: F,
) -> Result<DescribeSummary>
where
    F: FnMut(FramedEvent),
{
    let mut report = Report {
        sink,
        summary: DescribeSummary::default(),
    };
    let selected = select::resolve(&client, opts, bound, &mut report).await?;
    let mut strategy = match opts.broker_id {
        Some(b) => PartitionLeader::chosen_broker(b),
        None => PartitionLeader::new(),
    };
    if let Some(md) = selected.metadata {
        strategy = strategy.with_metadata(md);
    }
    let handler = Handler {
        chosen_broker: opts.broker_id,
        explicit: selected.explicit,
        read: handler::framed,
    };
    let stats = drive_partitions(
        &client,
        opts,
        bound,
        &handler,
        &mut strategy,
        selected.partitions,
        &mut report,
    )
    .await;
    let mut summary = report.summary;
    summary.rounds = selected.rounds.max(stats.rounds);
    summary.vanished = stats.dropped;
    Ok(summary)
}

/// The owned event of a framed one: each answer's producers built.
fn owned_event(ev: FramedEvent) -> DescribeEvent {
    match ev {
        FramedEvent::Planned { partitions } => DescribeEvent::Planned { partitions },
        FramedEvent::Results {
            broker_id,
            throttle_time_ms,
            outcomes,
        } => DescribeEvent::Results {
            broker_id,
            throttle_time_ms,
            outcomes: to_outcomes(&outcomes),
        },
    }
}

/// The owned outcomes of framed ones, in the same order.
pub fn to_outcomes(outcomes: &[FramedOutcome]) -> Vec<PartitionOutcome> {
    outcomes
        .iter()
        .zip(answers(outcomes))
        .map(|(o, a)| PartitionOutcome {
            broker_id: o.broker_id,
            topic: o.partition.0.clone(),
            partition: o.partition.1,
            result: a
                .map(|ps| ps.iter().map(|p| p.into_owned()).collect())
                .map_err(Clone::clone),
        })
        .collect()
}

/// A partition's answer read through its response: its producers where
/// they lie, or why there are none.
pub type Answer<'a> = std::result::Result<ArrayView<'a, ProducerState>, &'a PartitionError>;

/// Each outcome's [`Answer`], in the order of `outcomes`: each response
/// walked once, nothing copied (only the answers' list is allocated).
/// Reads as [`each_answer`] does: a partition's producers are those of
/// its first error-free entry in the response its outcome names.
pub fn answers(outcomes: &[FramedOutcome]) -> Vec<Answer<'_>> {
    // found by binary search, in the outcomes' order when sorted (as a
    // describe reports them), else through a sorted index
    let sorted = outcomes
        .windows(2)
        .all(|w| w[0].partition <= w[1].partition);
    let order: Vec<usize> = if sorted {
        Vec::new()
    } else {
        let mut order: Vec<usize> = (0..outcomes.len()).collect();
        order.sort_by(|&a, &b| outcomes_key(outcomes, a).cmp(&outcomes_key(outcomes, b)));
        order
    };
    let at = |k: usize| {
        if sorted {
            k
        } else {
            order.get(k).copied().unwrap_or(k)
        }
    };
    // the first of the outcomes at (topic, partition), by position in order
    let first = |topic: &str, partition: i32| {
        let (mut lo, mut hi) = (0, outcomes.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if outcomes_key(outcomes, at(mid)) < (topic, partition) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let mut found: Vec<Option<ArrayView<'_, ProducerState>>> = vec![None; outcomes.len()];
    let mut walked: HashSet<*const kdp_wire::view::Validated<DescribeProducersResponse>> =
        HashSet::new();
    for o in outcomes {
        let Ok(frame) = &o.result else {
            continue;
        };
        if !walked.insert(Arc::as_ptr(frame)) {
            continue;
        }
        for t in frame.view().topics() {
            for p in t.partitions() {
                if p.error_code() != ErrorCode::NONE {
                    continue;
                }
                let key = (t.name(), p.partition_index());
                // a partition reported twice (never, by a describe) is found in each response
                let mut k = first(key.0, key.1);
                while k < outcomes.len() && outcomes_key(outcomes, at(k)) == key {
                    let i = at(k);
                    k += 1;
                    let ours = matches!(outcomes.get(i).map(|o| &o.result), Some(Ok(f)) if Arc::ptr_eq(f, frame));
                    if let (true, Some(slot @ None)) = (ours, found.get_mut(i)) {
                        *slot = Some(p.active_producers());
                        break;
                    }
                }
            }
        }
    }
    outcomes
        .iter()
        .zip(found)
        .map(|(o, f)| match &o.result {
            // a frame answers every partition it is named for: never empty by default
            Ok(frame) => Ok(f.unwrap_or_else(|| no_producers(frame))),
            Err(e) => Err(e),
        })
        .collect()
}

/// The (topic, partition) of outcome `i`.
fn outcomes_key(outcomes: &[FramedOutcome], i: usize) -> (&str, i32) {
    outcomes
        .get(i)
        .map_or(("", i32::MIN), |o| (o.partition.0.as_str(), o.partition.1))
}

/// No producers, at `frame`'s version.
fn no_producers(frame: &Frame) -> ArrayView<'_, ProducerState> {
    ArrayView::empty(kdp_wire::version::Version::of::<DescribeProducersResponse>(
        frame.version(),
    ))
}

/// The admin driver over resolved partitions, results to `report`.
async fn drive_partitions<F: FnMut(FramedEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    handler: &Handler<Frame>,
    strategy: &mut PartitionLeader,
    partitions: Vec<TopicPartition>,
    report: &mut Report<F>,
) -> crate::admin::driver::DriverStats {
    drive(
        client,
        handler,
        strategy,
        partitions,
        &opts.driver_options(),
        bound,
        |batch: Batch<TopicPartition, Frame>| {
            let outcomes = batch
                .results
                .into_iter()
                .map(|r| FramedOutcome {
                    broker_id: r.broker.or(handler.chosen_for(&r.result)),
                    partition: r.key,
                    result: r.result,
                })
                .collect();
            report.results(batch.broker, batch.throttle_time_ms, outcomes);
        },
    )
    .await
}

/// The selection of `opts` resolved as [`describe_producers`] resolves it
/// (its `broker_id` ignored).
#[derive(Debug)]
pub struct Resolved {
    /// The partitions, in the order found; each once.
    pub partitions: Vec<TopicPartition>,
    /// The metadata one lookup found them all in (`None`: it took several).
    pub metadata: Option<crate::metadata::ClusterMetadata>,
    /// What was settled without a broker (a topic that does not exist, a
    /// partition it does not have).
    pub settled: Vec<PartitionOutcome>,
    /// The partitions the selection named one by one: deleted during the
    /// scan, they are reported (UNKNOWN_TOPIC_OR_PARTITION), where those
    /// picked as part of a topic or the cluster are dropped.
    pub explicit: BTreeSet<TopicPartition>,
}

/// Resolves the selection once, for callers that then ask several brokers
/// ([`describe_on`]) without a metadata lookup each.
pub async fn resolve(
    client: &Client,
    opts: &DescribeOptions,
    bound: &TimeBound,
) -> Result<Resolved> {
    let opts = DescribeOptions {
        broker_id: None,
        ..opts.clone()
    };
    let mut settled = Vec::new();
    let mut report = Report {
        sink: |ev| {
            if let FramedEvent::Results { outcomes, .. } = ev {
                settled.extend(to_outcomes(&outcomes));
            }
        },
        summary: DescribeSummary::default(),
    };
    let selected = select::resolve(client, &opts, bound, &mut report).await?;
    Ok(Resolved {
        partitions: selected.partitions,
        metadata: selected.metadata,
        settled,
        explicit: selected.explicit,
    })
}

/// DescribeProducers of `partitions` already resolved ([`resolve`]), each
/// routed to its leader after a fresh metadata lookup, with
/// [`describe_producers`]' retries: for a caller that asked the replicas
/// itself and still lacks some leader's answer (a leader that moved, did
/// not answer, or has none). `explicit` as in [`Resolved::explicit`].
/// Results to `sink` as they arrive, read through the view as
/// [`describe_producers_framed`]'s; draws on `bound`.
pub async fn describe_leaders<F: FnMut(FramedEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    partitions: Vec<TopicPartition>,
    explicit: BTreeSet<TopicPartition>,
    sink: F,
) -> DescribeSummary {
    let handler = Handler {
        chosen_broker: None,
        explicit,
        read: handler::framed,
    };
    let strategy = PartitionLeader::new();
    drive_resolved(client, opts, bound, &handler, strategy, partitions, sink).await
}

/// DescribeProducers of `partitions` on `broker` (a follower answers from
/// its own state), routed from `metadata` without a lookup of its own;
/// results to `sink` as they arrive. Draws on `bound`.
pub async fn describe_on<F: FnMut(DescribeEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    broker: i32,
    partitions: Vec<TopicPartition>,
    metadata: crate::metadata::ClusterMetadata,
    mut sink: F,
) -> DescribeSummary {
    if !partitions.is_empty() {
        sink(DescribeEvent::Planned {
            partitions: partitions.len(),
        });
    }
    let (handler, strategy) = on_broker(broker, metadata, handler::framed);
    let sink = |ev| sink(owned_event(ev));
    drive_resolved(client, opts, bound, &handler, strategy, partitions, sink).await
}

/// The handler and routing of a describe on one chosen broker, with
/// `metadata` for the routes and `read` for what each answer becomes.
fn on_broker<V>(
    broker: i32,
    metadata: crate::metadata::ClusterMetadata,
    read: handler::Read<V>,
) -> (Handler<V>, PartitionLeader) {
    let handler = Handler {
        chosen_broker: Some(broker),
        explicit: BTreeSet::new(),
        read,
    };
    (
        handler,
        PartitionLeader::chosen_broker(broker).with_metadata(metadata),
    )
}

/// [`describe_on`], each answer left in its validated response instead of
/// built into owned producers: `sink` gets the outcomes of one response at
/// a time, to read with [`each_answer`] before the next arrives, so what is
/// held is the responses in flight. Draws on `bound`.
pub async fn describe_on_framed<F: FnMut(Vec<FramedOutcome>)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    broker: i32,
    partitions: Vec<TopicPartition>,
    metadata: crate::metadata::ClusterMetadata,
    mut sink: F,
) {
    let (handler, mut strategy) = on_broker(broker, metadata, handler::framed);
    drive(
        client,
        &handler,
        &mut strategy,
        partitions,
        &opts.driver_options(),
        bound,
        |batch: Batch<TopicPartition, Frame>| {
            let mut outcomes: Vec<FramedOutcome> = batch
                .results
                .into_iter()
                .map(|r| FramedOutcome {
                    broker_id: r.broker.or(handler.chosen_for(&r.result)),
                    partition: r.key,
                    result: r.result,
                })
                .collect();
            // in the order describe_on reports them
            outcomes.sort_by(|a, b| a.partition.cmp(&b.partition));
            sink(outcomes);
        },
    )
    .await;
}

/// Each partition `outcomes` has an answer for, with its producers read
/// where they lie in its response: `f(topic, partition, producers)`, each
/// partition once, each response walked once, nothing copied.
pub fn each_answer(
    outcomes: &[FramedOutcome],
    mut f: impl FnMut(&str, i32, ArrayView<'_, ProducerState>),
) {
    let mut wanted: HashSet<(&str, i32)> = outcomes
        .iter()
        .filter(|o| o.result.is_ok())
        .map(|o| (o.partition.0.as_str(), o.partition.1))
        .collect();
    let mut walked: Vec<&Frame> = Vec::new();
    for o in outcomes {
        let Ok(frame) = &o.result else {
            continue;
        };
        if wanted.is_empty() {
            return;
        }
        if walked.iter().any(|w| Arc::ptr_eq(w, frame)) {
            continue;
        }
        walked.push(frame);
        for t in frame.view().topics() {
            for p in t.partitions() {
                // the handler's one answer of a partition: the first, and only without an error
                if p.error_code() == ErrorCode::NONE
                    && wanted.remove(&(t.name(), p.partition_index()))
                {
                    f(t.name(), p.partition_index(), p.active_producers());
                }
            }
        }
    }
}

/// The driver over partitions already resolved, routed by `strategy`;
/// results to `sink`, and the counts of what it reported.
async fn drive_resolved<F: FnMut(FramedEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    handler: &Handler<Frame>,
    mut strategy: PartitionLeader,
    partitions: Vec<TopicPartition>,
    sink: F,
) -> DescribeSummary {
    let mut report = Report {
        sink,
        summary: DescribeSummary::default(),
    };
    let stats = drive_partitions(
        client,
        opts,
        bound,
        handler,
        &mut strategy,
        partitions,
        &mut report,
    )
    .await;
    let mut summary = report.summary;
    summary.rounds = stats.rounds;
    summary.vanished = stats.dropped;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::messages::{DescribeProducersResponse, PartitionResponse, TopicResponse};
    use kdp_wire::view::Validated;

    fn partition(index: i32, code: ErrorCode, ids: &[i64]) -> PartitionResponse {
        PartitionResponse {
            partition_index: index,
            error_code: code,
            active_producers: ids
                .iter()
                .map(|&producer_id| ProducerState {
                    producer_id,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn frame(topics: Vec<TopicResponse>) -> Frame {
        let resp = DescribeProducersResponse {
            topics,
            ..Default::default()
        };
        let body = bytes::Bytes::from(kdp_wire::encode_to_vec(&resp, 0));
        Arc::new(Validated::new(body, 0).expect("valid"))
    }

    fn outcome(frame: &Frame, topic: &str, p: i32) -> FramedOutcome {
        FramedOutcome {
            broker_id: Some(1),
            partition: (topic.to_owned(), p),
            result: Ok(frame.clone()),
        }
    }

    /// Each partition answered once with the producers of its first
    /// error-free entry, whichever response holds it; a partition whose
    /// outcome is an error, or that the outcomes do not name, is not read.
    #[test]
    fn each_answer_reads_each_answered_partition_once_where_it_lies() {
        let a = frame(vec![
            TopicResponse {
                name: "t".into(),
                partitions: vec![
                    partition(0, ErrorCode::NONE, &[1, 2]),
                    partition(1, ErrorCode::NOT_LEADER_OR_FOLLOWER, &[]),
                    partition(0, ErrorCode::NONE, &[9]),
                    partition(2, ErrorCode::NONE, &[3]),
                ],
                ..Default::default()
            },
            TopicResponse {
                name: "u".into(),
                partitions: vec![partition(0, ErrorCode::NONE, &[])],
                ..Default::default()
            },
        ]);
        let b = frame(vec![TopicResponse {
            name: "v".into(),
            partitions: vec![partition(4, ErrorCode::NONE, &[7])],
            ..Default::default()
        }]);
        let failed = FramedOutcome {
            broker_id: Some(1),
            partition: ("t".into(), 1),
            result: Err(PartitionError::broker(
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
                None,
            )),
        };
        let outcomes = vec![
            outcome(&a, "t", 0),
            failed,
            outcome(&a, "u", 0),
            outcome(&b, "v", 4),
            outcome(&a, "t", 0),
        ];
        let mut seen = Vec::new();
        each_answer(&outcomes, |t, p, ps| {
            seen.push((
                t.to_owned(),
                p,
                ps.iter().map(|s| s.producer_id()).collect::<Vec<_>>(),
            ))
        });
        let want = vec![
            ("t".to_owned(), 0, vec![1, 2]),
            ("u".to_owned(), 0, vec![]),
            ("v".to_owned(), 4, vec![7]),
        ];
        assert_eq!(seen, want);
    }

    /// Each outcome's answer in the outcomes' order, sorted or not, as
    /// `each_answer` reads it; an error outcome is its error, and the
    /// owned outcomes are those producers built.
    #[test]
    fn answers_are_each_outcomes_in_its_order() {
        let a = frame(vec![TopicResponse {
            name: "t".into(),
            partitions: vec![
                partition(2, ErrorCode::NONE, &[3]),
                partition(0, ErrorCode::NONE, &[1, 2]),
                partition(0, ErrorCode::NONE, &[9]),
            ],
            ..Default::default()
        }]);
        let b = frame(vec![TopicResponse {
            name: "s".into(),
            partitions: vec![partition(4, ErrorCode::NONE, &[7])],
            ..Default::default()
        }]);
        let failed = FramedOutcome {
            broker_id: None,
            partition: ("u".into(), -1),
            result: Err(PartitionError::broker(
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                None,
            )),
        };
        let ids = |os: &[FramedOutcome]| -> Vec<std::result::Result<Vec<i64>, ErrorCode>> {
            answers(os)
                .into_iter()
                .map(|a| {
                    a.map(|ps| ps.iter().map(|p| p.producer_id()).collect())
                        .map_err(|e| e.code)
                })
                .collect()
        };
        let unsorted = vec![
            outcome(&a, "t", 2),
            failed.clone(),
            outcome(&b, "s", 4),
            outcome(&a, "t", 0),
        ];
        let want = vec![
            Ok(vec![3]),
            Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
            Ok(vec![7]),
            Ok(vec![1, 2]),
        ];
        assert_eq!(ids(&unsorted), want);
        let mut sorted = unsorted.clone();
        sorted.sort_by(|x, y| x.partition.cmp(&y.partition));
        let want_sorted = vec![
            Ok(vec![7]),
            Ok(vec![1, 2]),
            Ok(vec![3]),
            Err(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
        ];
        assert_eq!(ids(&sorted), want_sorted);
        let owned = to_outcomes(&sorted);
        let built: Vec<_> = owned
            .iter()
            .map(|o| {
                o.result
                    .as_ref()
                    .map(|ps| ps.iter().map(|p| p.producer_id).collect::<Vec<_>>())
                    .map_err(|e| e.code)
            })
            .collect();
        assert_eq!(built, want_sorted);
    }
}
