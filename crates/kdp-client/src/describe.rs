//! DescribeProducers across a cluster.
//!
//! The partitions asked for are resolved against metadata, grouped by the
//! broker to ask (each partition's leader, or one broker given by id: a
//! follower answers from its own producer state), and sent as one request per
//! broker (split into chunks of at most `max_partitions_per_request`), brokers
//! in parallel with bounded concurrency. Results are handed to a sink as each
//! response arrives, so a caller can stream them.
//!
//! Retries follow Kafka's Admin client (DescribeProducersHandler): after a
//! metadata refresh, NOT_LEADER_OR_FOLLOWER is retried (unless a broker id was
//! given: then it is the answer) and so is UNKNOWN_TOPIC_OR_PARTITION; every
//! other partition error, authorization errors included, is the answer. A
//! broker that cannot be reached or stops answering gets its partitions
//! re-routed after a metadata refresh (or, with a broker id, reported with a
//! client-side NETWORK_EXCEPTION / REQUEST_TIMED_OUT). Unlike the Admin
//! client, a topic or partition that metadata says does not exist is reported
//! as UNKNOWN_TOPIC_OR_PARTITION instead of being retried until the timeout.
//! Retries back off exponentially and are bounded in number and by the
//! overall timeout, so nothing waits past it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kdp_wire::error_code;
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, ProducerState, TopicRequest,
};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::client::Client;
use crate::error::{fmt_duration, Error, Result};
use crate::metadata::ClusterMetadata;

/// Some partitions of one topic, or all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSelection {
    pub name: String,
    /// `None`: every partition of the topic.
    pub partitions: Option<Vec<i32>>,
}

/// What to describe, where, and how patiently.
#[derive(Debug, Clone)]
pub struct DescribeOptions {
    /// `None`: every partition of every topic, internal topics included.
    pub topics: Option<Vec<TopicSelection>>,
    /// Ask this broker instead of each partition's leader. Partitions picked
    /// implicitly (a whole topic, the whole cluster) are then only those with
    /// a replica on it; partitions named explicitly are all asked.
    pub broker_id: Option<i32>,
    /// The whole operation's bound, from the call on.
    pub timeout: Duration,
    /// Bound on one request (further bounded by what is left of `timeout`).
    pub request_timeout: Duration,
    pub max_partitions_per_request: usize,
    pub max_concurrent_brokers: usize,
    /// Rounds of requests at most (the first included).
    pub max_attempts: u32,
    pub retry_backoff: Duration,
    pub retry_backoff_max: Duration,
    /// How many metadata lookups may say a topic does not exist before it is
    /// reported as unknown (a topic just created may not be known everywhere yet).
    pub unknown_topic_attempts: u32,
}

impl Default for DescribeOptions {
    fn default() -> Self {
        DescribeOptions {
            topics: None,
            broker_id: None,
            timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            max_partitions_per_request: 10_000,
            max_concurrent_brokers: 8,
            max_attempts: 10,
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(2),
            unknown_topic_attempts: 2,
        }
    }
}

/// A partition that could not be described: a broker's error code, or a
/// client-side failure expressed as the closest Kafka error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionError {
    pub code: i16,
    pub message: Option<String>,
    /// True when kdp, not a broker, produced this error (connection failure,
    /// timeout, metadata says the partition does not exist, ...).
    pub client_side: bool,
}

impl PartitionError {
    fn client(code: i16, message: impl Into<String>) -> Self {
        PartitionError {
            code,
            message: Some(message.into()),
            client_side: true,
        }
    }

    fn from_error(e: &Error) -> Self {
        PartitionError::client(e.kafka_code(), e.to_string())
    }

    /// Kafka's name of the code, e.g. `NOT_LEADER_OR_FOLLOWER`.
    pub fn name(&self) -> &'static str {
        error_code::name(self.code).unwrap_or("UNKNOWN_ERROR_CODE")
    }
}

/// The answer for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionOutcome {
    pub topic: String,
    /// `-1` for an error about a whole topic whose partitions are unknown
    /// (e.g. the topic does not exist and no partition was named).
    pub partition: i32,
    /// The broker that answered (or was asked last); `None` when no broker
    /// was asked (metadata settled it).
    pub broker_id: Option<i32>,
    pub result: std::result::Result<Vec<ProducerState>, PartitionError>,
}

/// What the sink receives, in order.
#[derive(Debug, Clone)]
pub enum DescribeEvent {
    /// This many more partitions will be reported (sent once after the first
    /// metadata lookup, again if a topic resolves later).
    Planned { partitions: usize },
    /// Final answers for some partitions: one broker response, or errors
    /// settled without a broker (`broker_id: None`).
    Results {
        broker_id: Option<i32>,
        throttle_time_ms: i32,
        outcomes: Vec<PartitionOutcome>,
    },
}

/// Counts over a finished describe.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DescribeSummary {
    /// Partitions reported (with producers, without, or with an error).
    pub partitions: usize,
    pub failed: usize,
    pub max_throttle_time_ms: i32,
    /// Rounds of requests sent.
    pub rounds: u32,
    /// Partitions picked as part of a topic or the cluster whose topic was
    /// deleted during the scan (not reported).
    pub vanished: usize,
}

type Tp = (String, i32);

struct Pending {
    last_error: Option<PartitionError>,
    broker: Option<i32>,
    /// Named by the caller (not picked as part of a topic or the cluster).
    explicit: bool,
}

struct Unresolved {
    sel: TopicSelection,
    last_error: PartitionError,
    misses: u32,
}

struct ChunkResult {
    broker: i32,
    partitions: Vec<Tp>,
    result: Result<DescribeProducersResponse>,
}

/// Describes the producers of the selected partitions. Results go to `sink`
/// as they arrive; every selected partition is reported exactly once. Fails
/// only when the first metadata lookup fails (the cluster is unreachable).
pub async fn describe_producers<F>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    sink: F,
) -> Result<DescribeSummary>
where
    F: FnMut(DescribeEvent),
{
    let deadline = Instant::now() + opts.timeout;
    let mut run = Run {
        client,
        opts,
        deadline,
        sink,
        summary: DescribeSummary::default(),
        pending: BTreeMap::new(),
        unresolved: Vec::new(),
    };
    run.go().await?;
    Ok(run.summary)
}

struct Run<'a, F> {
    client: Arc<Client>,
    opts: &'a DescribeOptions,
    deadline: Instant,
    sink: F,
    summary: DescribeSummary,
    pending: BTreeMap<Tp, Pending>,
    unresolved: Vec<Unresolved>,
}

impl<F: FnMut(DescribeEvent)> Run<'_, F> {
    async fn go(&mut self) -> Result<()> {
        let whole_cluster = self.opts.topics.is_none();
        if let Some(topics) = &self.opts.topics {
            for sel in topics {
                self.unresolved.push(Unresolved {
                    sel: sel.clone(),
                    last_error: unknown_topic(&sel.name),
                    misses: 0,
                });
            }
        }
        let max_attempts = self.opts.max_attempts.max(1);
        let mut backoff = self.opts.retry_backoff;
        for attempt in 0..max_attempts {
            if attempt > 0 {
                if self.pending.is_empty() && self.unresolved.is_empty() {
                    break;
                }
                if Instant::now() + backoff >= self.deadline {
                    break;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(self.opts.retry_backoff_max);
            }
            self.summary.rounds = attempt + 1;

            // 1. metadata
            let topics: Option<Vec<String>> = if whole_cluster && attempt == 0 {
                None
            } else {
                let mut names: Vec<String> = self.pending.keys().map(|(t, _)| t.clone()).collect();
                names.extend(self.unresolved.iter().map(|u| u.sel.name.clone()));
                names.sort();
                names.dedup();
                Some(names)
            };
            let md = match tokio::time::timeout_at(
                self.deadline,
                self.client.metadata(topics.as_deref()),
            )
            .await
            {
                Ok(Ok(md)) => md,
                Ok(Err(e)) if attempt == 0 => return Err(e),
                Err(_) if attempt == 0 => {
                    return Err(Error::Deadline {
                        what: "the first metadata request",
                        timeout: self.opts.timeout,
                    })
                }
                Ok(Err(e)) => {
                    self.note_all(PartitionError::from_error(&e));
                    continue;
                }
                Err(_) => break,
            };

            // 2. resolve the selection
            let before = self.pending.len();
            let mut settled = Vec::new();
            if whole_cluster && attempt == 0 {
                self.resolve_cluster(&md, &mut settled);
            } else {
                self.resolve_topics(&md, &mut settled);
            }
            let planned = self.pending.len() - before + settled.len();
            if planned > 0 {
                (self.sink)(DescribeEvent::Planned {
                    partitions: planned,
                });
            }
            self.emit(None, 0, settled);

            // 3. route and send
            let routes = self.route(&md);
            if routes.is_empty() {
                continue;
            }
            self.dispatch(routes).await;
            if Instant::now() >= self.deadline {
                break;
            }
        }
        self.give_up();
        Ok(())
    }

    fn emit(
        &mut self,
        broker_id: Option<i32>,
        throttle_time_ms: i32,
        mut outcomes: Vec<PartitionOutcome>,
    ) {
        if outcomes.is_empty() {
            return;
        }
        outcomes.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        self.summary.partitions += outcomes.len();
        self.summary.failed += outcomes.iter().filter(|o| o.result.is_err()).count();
        self.summary.max_throttle_time_ms = self.summary.max_throttle_time_ms.max(throttle_time_ms);
        (self.sink)(DescribeEvent::Results {
            broker_id,
            throttle_time_ms,
            outcomes,
        });
    }

    fn note_all(&mut self, err: PartitionError) {
        for p in self.pending.values_mut() {
            p.last_error = Some(err.clone());
        }
    }

    /// Every partition of every topic; with a broker id, those it hosts.
    fn resolve_cluster(&mut self, md: &ClusterMetadata, settled: &mut Vec<PartitionOutcome>) {
        for t in md.topics.values() {
            if t.error_code != error_code::NONE {
                settled.push(PartitionOutcome {
                    topic: t.name.clone(),
                    partition: -1,
                    broker_id: None,
                    result: Err(PartitionError::client(
                        t.error_code,
                        "metadata lookup failed for this topic",
                    )),
                });
                continue;
            }
            for p in t.partitions.values() {
                if self
                    .opts
                    .broker_id
                    .is_some_and(|b| !p.replicas.contains(&b))
                {
                    continue;
                }
                self.pending.insert(
                    (t.name.clone(), p.partition),
                    Pending {
                        last_error: None,
                        broker: None,
                        explicit: false,
                    },
                );
            }
        }
    }

    fn resolve_topics(&mut self, md: &ClusterMetadata, settled: &mut Vec<PartitionOutcome>) {
        let unresolved = std::mem::take(&mut self.unresolved);
        for mut u in unresolved {
            let settle_all =
                |settled: &mut Vec<PartitionOutcome>, err: PartitionError, sel: &TopicSelection| {
                    let parts = sel.partitions.clone().unwrap_or_else(|| vec![-1]);
                    for p in parts {
                        settled.push(PartitionOutcome {
                            topic: sel.name.clone(),
                            partition: p,
                            broker_id: None,
                            result: Err(err.clone()),
                        });
                    }
                };
            let topic = md.topic(&u.sel.name);
            let code = topic.map_or(error_code::UNKNOWN_TOPIC_OR_PARTITION, |t| t.error_code);
            match (topic, code) {
                (Some(t), error_code::NONE) => {
                    let explicit = u.sel.partitions.is_some();
                    let wanted: Vec<i32> = match &u.sel.partitions {
                        Some(ps) => ps.clone(),
                        None => t
                            .partitions
                            .values()
                            .filter(|p| self.opts.broker_id.is_none_or(|b| p.replicas.contains(&b)))
                            .map(|p| p.partition)
                            .collect(),
                    };
                    for p in wanted {
                        if explicit && !t.partitions.contains_key(&p) {
                            settled.push(PartitionOutcome {
                                topic: t.name.clone(),
                                partition: p,
                                broker_id: None,
                                result: Err(missing_partition(&t.name, p, t.partitions.len())),
                            });
                            continue;
                        }
                        self.pending.entry((t.name.clone(), p)).or_insert(Pending {
                            last_error: None,
                            broker: None,
                            explicit,
                        });
                    }
                }
                (_, error_code::UNKNOWN_TOPIC_OR_PARTITION) => {
                    u.misses += 1;
                    u.last_error = unknown_topic(&u.sel.name);
                    if u.misses >= self.opts.unknown_topic_attempts.max(1) {
                        settle_all(settled, u.last_error.clone(), &u.sel);
                    } else {
                        self.unresolved.push(u);
                    }
                }
                (_, error_code::LEADER_NOT_AVAILABLE) => {
                    // a topic being created: ask again
                    u.last_error =
                        PartitionError::client(code, "metadata: the topic has no leaders yet");
                    self.unresolved.push(u);
                }
                (_, code) => {
                    settle_all(
                        settled,
                        PartitionError::client(
                            code,
                            format!("metadata lookup failed for topic {:?}", u.sel.name),
                        ),
                        &u.sel,
                    );
                }
            }
        }
    }

    /// Groups pending partitions by the broker to ask; settles those that
    /// metadata says do not exist, and leaves leaderless ones for later.
    fn route(&mut self, md: &ClusterMetadata) -> BTreeMap<i32, Vec<Tp>> {
        let mut routes: BTreeMap<i32, Vec<Tp>> = BTreeMap::new();
        let mut settled = Vec::new();
        let mut gone = Vec::new();
        for (tp, pend) in self.pending.iter_mut() {
            let (topic, partition) = (&tp.0, tp.1);
            let info = md.partition(topic, partition);
            if let Some(b) = self.opts.broker_id {
                if !md.brokers.contains_key(&b) {
                    let ids: Vec<String> = md.brokers.keys().map(ToString::to_string).collect();
                    settled.push(PartitionOutcome {
                        topic: topic.clone(),
                        partition,
                        broker_id: Some(b),
                        result: Err(PartitionError::client(
                            error_code::BROKER_NOT_AVAILABLE,
                            format!(
                                "broker {b} is not in the cluster metadata (brokers: {})",
                                ids.join(", ")
                            ),
                        )),
                    });
                    gone.push(tp.clone());
                    continue;
                }
            }
            let Some(info) = info else {
                let topic_md = md.topic(topic);
                let deleted = topic_md.is_none_or(|t| {
                    t.error_code == error_code::NONE
                        || t.error_code == error_code::UNKNOWN_TOPIC_OR_PARTITION
                });
                if deleted && !pend.explicit {
                    // picked as part of a topic or the cluster, deleted since:
                    // nothing to report
                    tracing::debug!(topic, partition, "partition deleted during the scan");
                    self.summary.vanished += 1;
                    gone.push(tp.clone());
                    continue;
                }
                let err = match topic_md {
                    Some(t) if t.error_code == error_code::NONE => {
                        missing_partition(topic, partition, t.partitions.len())
                    }
                    Some(t) if t.error_code != error_code::UNKNOWN_TOPIC_OR_PARTITION => {
                        PartitionError::client(
                            t.error_code,
                            format!("metadata lookup failed for topic {topic:?}"),
                        )
                    }
                    _ => unknown_topic(topic),
                };
                settled.push(PartitionOutcome {
                    topic: topic.clone(),
                    partition,
                    broker_id: pend.broker,
                    result: Err(err),
                });
                gone.push(tp.clone());
                continue;
            };
            if let Some(b) = self.opts.broker_id {
                pend.broker = Some(b);
                routes.entry(b).or_default().push(tp.clone());
                continue;
            }
            if info.leader < 0 || !md.brokers.contains_key(&info.leader) {
                let code = if info.error_code != error_code::NONE {
                    info.error_code
                } else {
                    error_code::LEADER_NOT_AVAILABLE
                };
                pend.last_error = Some(PartitionError::client(
                    code,
                    "metadata: the partition has no available leader",
                ));
                continue;
            }
            pend.broker = Some(info.leader);
            routes.entry(info.leader).or_default().push(tp.clone());
        }
        for tp in gone {
            self.pending.remove(&tp);
        }
        self.emit(None, 0, settled);
        routes
    }

    async fn dispatch(&mut self, routes: BTreeMap<i32, Vec<Tp>>) {
        let sem = Arc::new(Semaphore::new(self.opts.max_concurrent_brokers.max(1)));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut tasks = JoinSet::new();
        let chunk_size = self.opts.max_partitions_per_request.max(1);
        for (broker, tps) in routes {
            let chunks: Vec<Vec<Tp>> = tps.chunks(chunk_size).map(<[Tp]>::to_vec).collect();
            tasks.spawn(broker_task(
                self.client.clone(),
                broker,
                chunks,
                sem.clone(),
                tx.clone(),
                self.deadline,
                per_request_timeout(self.opts),
                self.opts.timeout,
            ));
        }
        drop(tx);
        while let Some(chunk) = rx.recv().await {
            self.absorb(chunk);
        }
        while tasks.join_next().await.is_some() {}
    }

    fn absorb(&mut self, chunk: ChunkResult) {
        let broker = chunk.broker;
        let fixed = self.opts.broker_id.is_some();
        let mut done = Vec::new();
        match chunk.result {
            Ok(resp) => {
                let asked: std::collections::HashSet<&Tp> = chunk.partitions.iter().collect();
                let mut answered = std::collections::HashSet::new();
                for t in resp.topics {
                    for p in t.partitions {
                        let tp = (t.name.clone(), p.partition_index);
                        let pend = asked
                            .contains(&tp)
                            .then(|| self.pending.get_mut(&tp))
                            .flatten();
                        let Some(pend) = pend else {
                            tracing::debug!(broker, topic = %tp.0, partition = tp.1, "answer for a partition not asked for; ignored");
                            continue;
                        };
                        if !answered.insert(tp.clone()) {
                            continue;
                        }
                        let code = p.error_code;
                        let retry = (code == error_code::NOT_LEADER_OR_FOLLOWER && !fixed)
                            || code == error_code::UNKNOWN_TOPIC_OR_PARTITION;
                        if retry {
                            pend.last_error = Some(PartitionError {
                                code,
                                message: p.error_message,
                                client_side: false,
                            });
                            continue;
                        }
                        let result = if code == error_code::NONE {
                            Ok(p.active_producers)
                        } else {
                            Err(PartitionError {
                                code,
                                message: p.error_message,
                                client_side: false,
                            })
                        };
                        self.pending.remove(&tp);
                        done.push(PartitionOutcome {
                            topic: tp.0,
                            partition: tp.1,
                            broker_id: Some(broker),
                            result,
                        });
                    }
                }
                for tp in &chunk.partitions {
                    if !answered.contains(tp) {
                        if let Some(pend) = self.pending.get_mut(tp) {
                            pend.last_error = Some(PartitionError::client(
                                error_code::UNKNOWN_SERVER_ERROR,
                                format!("broker {broker} did not answer for this partition"),
                            ));
                        }
                    }
                }
                self.emit(Some(broker), resp.throttle_time_ms, done);
            }
            Err(e) => {
                let err = PartitionError::from_error(&e);
                let retry =
                    !fixed && (e.is_connection_error() || matches!(e, Error::UnknownBroker(_)));
                tracing::debug!(broker, error = %e, retry, "DescribeProducers failed");
                for tp in chunk.partitions {
                    if retry {
                        if let Some(pend) = self.pending.get_mut(&tp) {
                            pend.last_error = Some(err.clone());
                        }
                    } else if self.pending.remove(&tp).is_some() {
                        done.push(PartitionOutcome {
                            topic: tp.0,
                            partition: tp.1,
                            broker_id: Some(broker),
                            result: Err(err.clone()),
                        });
                    }
                }
                self.emit(Some(broker), 0, done);
            }
        }
    }

    /// Out of attempts or time: report what is left with its last error.
    fn give_up(&mut self) {
        let mut settled = Vec::new();
        let timeout = self.opts.timeout;
        let no_answer = || {
            PartitionError::client(
                error_code::REQUEST_TIMED_OUT,
                format!("no answer within the timeout ({})", fmt_duration(timeout)),
            )
        };
        for ((topic, partition), pend) in std::mem::take(&mut self.pending) {
            settled.push(PartitionOutcome {
                topic,
                partition,
                broker_id: pend.broker,
                result: Err(pend.last_error.unwrap_or_else(no_answer)),
            });
        }
        let mut unplanned = 0;
        for u in std::mem::take(&mut self.unresolved) {
            for p in u.sel.partitions.clone().unwrap_or_else(|| vec![-1]) {
                unplanned += 1;
                settled.push(PartitionOutcome {
                    topic: u.sel.name.clone(),
                    partition: p,
                    broker_id: None,
                    result: Err(u.last_error.clone()),
                });
            }
        }
        if unplanned > 0 {
            // topics that never resolved were not planned yet
            (self.sink)(DescribeEvent::Planned {
                partitions: unplanned,
            });
        }
        self.emit(None, 0, settled);
    }
}

#[allow(clippy::too_many_arguments)]
async fn broker_task(
    client: Arc<Client>,
    broker: i32,
    chunks: Vec<Vec<Tp>>,
    sem: Arc<Semaphore>,
    tx: mpsc::UnboundedSender<ChunkResult>,
    deadline: Instant,
    request_timeout: Duration,
    overall: Duration,
) {
    let Ok(_permit) = sem.acquire_owned().await else {
        return;
    };
    let mut broken: Option<Error> = None;
    for partitions in chunks {
        let result = match &broken {
            // the connection failed on an earlier chunk: don't wait again
            Some(e) => Err(e.clone()),
            None => {
                let req = build_request(&partitions);
                let timeout =
                    request_timeout.min(deadline.saturating_duration_since(Instant::now()));
                let r =
                    match tokio::time::timeout_at(deadline, client.send_to(broker, &req, timeout))
                        .await
                    {
                        Ok(r) => r,
                        Err(_) => Err(Error::Deadline {
                            what: "DescribeProducers",
                            timeout: overall,
                        }),
                    };
                if let Err(e) = &r {
                    if e.is_connection_error() {
                        broken = Some(e.clone());
                    }
                }
                r
            }
        };
        if tx
            .send(ChunkResult {
                broker,
                partitions,
                result,
            })
            .is_err()
        {
            return;
        }
    }
}

/// One request's bound: `request_timeout`, but at most a third of the whole
/// timeout, so that a broker that stops answering leaves time to refresh
/// metadata and ask the new leader.
fn per_request_timeout(opts: &DescribeOptions) -> Duration {
    opts.request_timeout.min(opts.timeout / 3)
}

fn build_request(partitions: &[Tp]) -> DescribeProducersRequest {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        by_topic.entry(t.as_str()).or_default().push(*p);
    }
    DescribeProducersRequest {
        topics: by_topic
            .into_iter()
            .map(|(name, partition_indexes)| TopicRequest {
                name: name.to_string(),
                partition_indexes,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn unknown_topic(topic: &str) -> PartitionError {
    PartitionError::client(
        error_code::UNKNOWN_TOPIC_OR_PARTITION,
        format!("topic {topic:?} does not exist (metadata)"),
    )
}

fn missing_partition(topic: &str, partition: i32, count: usize) -> PartitionError {
    let have = match count {
        0 => "no partitions".to_string(),
        1 => "1 partition (0)".to_string(),
        n => format!("{n} partitions (0-{})", n - 1),
    };
    PartitionError::client(
        error_code::UNKNOWN_TOPIC_OR_PARTITION,
        format!("partition {partition} does not exist: topic {topic:?} has {have}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_group_partitions_by_topic() {
        let req = build_request(&[("b".into(), 1), ("a".into(), 2), ("b".into(), 0)]);
        let names: Vec<_> = req
            .topics
            .iter()
            .map(|t| (t.name.as_str(), t.partition_indexes.clone()))
            .collect();
        assert_eq!(names, vec![("a", vec![2]), ("b", vec![1, 0])]);
    }

    #[test]
    fn missing_partition_message() {
        let e = missing_partition("t", 7, 3);
        assert_eq!(e.code, error_code::UNKNOWN_TOPIC_OR_PARTITION);
        assert_eq!(e.name(), "UNKNOWN_TOPIC_OR_PARTITION");
        assert!(e.message.unwrap().contains("has 3 partitions (0-2)"));
    }
}
