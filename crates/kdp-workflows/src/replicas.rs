//! Every replica of each partition asked for its producer state
//! (DescribeProducers with a chosen broker, one scan per broker side by
//! side): what `kdp compare-replicas` and the exporter's divergence metric
//! compare with [`kdp_domain::diagnose::replicas::compare`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kdp_client::admin::AllBrokers;
use kdp_client::bound::TimeBound;
use kdp_client::client::Client;
use kdp_client::describe::{
    describe_on_framed, describe_producers_framed, each_answer, DescribeOptions, FramedEvent,
    FramedOutcome, Resolved,
};
use kdp_client::error::{Error, Result};
use kdp_client::metadata::ClusterMetadata;
use kdp_domain::diagnose::replicas::{Compared, PartitionReplicas};
use kdp_domain::partition::{ProducerFields, TopicPartition};
use kdp_wire::messages::{ProducerState, ProducerStateView};
use kdp_wire::view::ArrayView;
use kdp_wire::ErrorCode;

pub use kdp_domain::diagnose::replicas::{Comparison, ReplicaError, Replicas};

/// Every replica's producers, and what could not be asked.
pub type EveryReplica = (Replicas, Vec<ReplicaError<Error>>);

/// Every partition compared as soon as its replicas answered, and what
/// could not be asked.
pub type ComparedReplicas = (Compared, Vec<ReplicaError<Error>>);

/// One replica's producers as the scan read them: in place in its
/// broker's response (the scan routed with one metadata), or owned (a
/// selection that took several lookups, described per broker).
#[derive(Clone, Copy)]
pub enum Producers<'a> {
    /// Read through the response's view; nothing copied.
    Viewed(ArrayView<'a, ProducerState>),
    /// Already built.
    Owned(&'a [ProducerState]),
}

impl<'a> Producers<'a> {
    /// The owned producers.
    pub fn to_vec(self) -> Vec<ProducerState> {
        match self {
            Producers::Viewed(v) => v.iter().map(|s| s.into_owned()).collect(),
            Producers::Owned(ps) => ps.to_vec(),
        }
    }

    /// Each producer where it lies.
    pub fn iter(self) -> impl Iterator<Item = ProducerRef<'a>> {
        let (viewed, owned) = match self {
            Producers::Viewed(v) => (Some(v.iter().map(ProducerRef::Viewed)), None),
            Producers::Owned(ps) => (None, Some(ps.iter().map(ProducerRef::Owned))),
        };
        viewed
            .into_iter()
            .flatten()
            .chain(owned.into_iter().flatten())
    }
}

/// One producer of [`Producers`], where it lies.
#[derive(Clone, Copy)]
pub enum ProducerRef<'a> {
    /// In its response.
    Viewed(ProducerStateView<'a>),
    /// Already built.
    Owned(&'a ProducerState),
}

impl ProducerRef<'_> {
    /// The owned producer.
    pub fn to_owned(self) -> ProducerState {
        match self {
            ProducerRef::Viewed(v) => v.into_owned(),
            ProducerRef::Owned(p) => p.clone(),
        }
    }
}

macro_rules! either {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            ProducerRef::Viewed($p) => $e,
            ProducerRef::Owned($p) => $e,
        }
    };
}

impl ProducerFields for ProducerRef<'_> {
    fn producer_id(&self) -> i64 {
        either!(self, p => p.producer_id())
    }
    fn producer_epoch(&self) -> i32 {
        either!(self, p => p.producer_epoch())
    }
    fn last_sequence(&self) -> i32 {
        either!(self, p => ProducerFields::last_sequence(p))
    }
    fn last_timestamp(&self) -> i64 {
        either!(self, p => p.last_timestamp())
    }
    fn coordinator_epoch(&self) -> i32 {
        either!(self, p => p.coordinator_epoch())
    }
    fn current_txn_start_offset(&self) -> i64 {
        either!(self, p => p.current_txn_start_offset())
    }
}

/// Written as the wire's JSON document writes the producer it refers to.
impl kdp_wire::json::PrettyProducer for ProducerRef<'_> {
    #[inline]
    fn fields(&self) -> [i64; 6] {
        either!(self, p => p.fields())
    }
}

/// [`describe_every_replica`], then
/// [`compare`](kdp_domain::diagnose::replicas::compare) on each partition: what
/// `kdp compare-replicas` answers. `Err` as for [`describe_every_replica`].
pub async fn compare_replicas(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
) -> Result<Comparison<Error>> {
    let (compared, failures) = compare_every_replica(client, opts, bound).await?;
    Ok(Comparison::of_compared(compared, failures))
}

/// [`describe_every_replica`], each partition compared as soon as all its
/// replicas have answered (or failed) and its producers then dropped, so
/// what is held is the partitions in flight. Compares as
/// [`Comparison::of`] the same answers. `Err` as for [`describe_every_replica`].
pub async fn compare_every_replica(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
) -> Result<ComparedReplicas> {
    let resolved = kdp_client::describe::resolve(client, opts, bound).await?;
    let comparer = Comparer::new(&resolved, &[]);
    let (into, done) = (comparer.clone(), comparer.clone());
    let (_, errors) = each_replica_settling(
        client,
        opts,
        bound,
        &[],
        resolved,
        move |b, t, p, ps| into.add(b, t, p, ps),
        move |b, tp| done.settled(b, tp),
    )
    .await?;
    Ok((comparer.take(), errors))
}

/// Asks every broker of the cluster for the producers of its replicas of
/// the partitions `opts` selects (its `broker_id` is ignored). A broker
/// that does not host a partition named explicitly is not an error.
/// Everything, listing the brokers included, draws on `opts`' one deadline:
/// a replica that does not answer in time is a [`ReplicaError`] naming
/// DescribeProducers. `Err`: the cluster's brokers could not be listed
/// ([`Error::Deadline`] naming Metadata when no broker answered in time).
pub async fn describe_every_replica(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
) -> Result<EveryReplica> {
    let replicas = Collect::default();
    let into = replicas.clone();
    let (_, errors) = each_replica(client, opts, bound, &[], move |b, t, p, ps| {
        into.add(b, t, p, ps)
    })
    .await?;
    Ok((replicas.take(), errors))
}

/// Every replica's producers, collected (owned) as a scan's answers
/// arrive, for a comparison.
#[derive(Clone, Default)]
pub struct Collect(Arc<std::sync::Mutex<Replicas>>);

impl Collect {
    /// Broker `broker`'s producers of a partition.
    pub fn add(&self, broker: i32, topic: &str, partition: i32, ps: Producers<'_>) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry((topic.to_owned(), partition))
            .or_default()
            .insert(broker, ps.to_vec());
    }

    /// What was collected.
    pub fn take(&self) -> Replicas {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// Each partition's replicas compared as soon as the scan has heard from
/// all of them (each broker it was routed to: an answer or a failure), its
/// producers then dropped; what was not heard from in full is compared at
/// the end ([`Comparer::take`]). Without one routing metadata, nothing is
/// expected, and every partition is compared at the end.
#[derive(Clone)]
pub struct Comparer(Arc<std::sync::Mutex<Comparing>>);

#[derive(Default)]
struct Comparing {
    pending: HashMap<TopicPartition, Pending>,
    compared: Compared,
}

#[derive(Default)]
struct Pending {
    /// The brokers not heard from yet.
    waiting: Vec<i32>,
    replicas: PartitionReplicas,
}

impl Comparing {
    /// Moves a partition whose replicas have all answered to `compared`
    /// (one no replica answered is not a compared partition).
    fn settle(&mut self, tp: &TopicPartition) {
        if let Some(p) = self.pending.remove(tp) {
            if !p.replicas.is_empty() {
                self.compared.insert(tp.clone(), p.replicas.differences());
            }
        }
    }
}

impl Comparer {
    /// Expects, of each partition of `resolved`, the brokers
    /// [`each_replica_settling`] asks for it (its replicas by the
    /// metadata, among the brokers known there and in `only`, empty: all).
    pub fn new(resolved: &Resolved, only: &[i32]) -> Comparer {
        let mut state = Comparing::default();
        if let Some(md) = &resolved.metadata {
            for tp in &resolved.partitions {
                let waiting: Vec<i32> = md
                    .topics
                    .get(&tp.0)
                    .and_then(|t| t.partitions.get(&tp.1))
                    .map(|p| p.replicas.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .copied()
                    .filter(|b| md.brokers.contains_key(b) && (only.is_empty() || only.contains(b)))
                    .collect();
                let pending = Pending {
                    waiting,
                    replicas: PartitionReplicas::default(),
                };
                state.pending.insert(tp.clone(), pending);
            }
        }
        Comparer(Arc::new(std::sync::Mutex::new(state)))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Comparing> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Broker `broker`'s producers of a partition, folded into its
    /// comparison state.
    pub fn add(&self, broker: i32, topic: &str, partition: i32, ps: Producers<'_>) {
        let mut state = self.state();
        let key = (topic.to_owned(), partition);
        state
            .pending
            .entry(key)
            .or_default()
            .replicas
            .add(broker, ps.iter());
    }

    /// Broker `broker` is done with `tp` (answered or failed): compared
    /// once every expected broker is.
    pub fn settled(&self, broker: i32, tp: &TopicPartition) {
        let mut state = self.state();
        let Some(p) = state.pending.get_mut(tp) else {
            return;
        };
        let before = p.waiting.len();
        p.waiting.retain(|b| *b != broker);
        if before > 0 && p.waiting.is_empty() {
            state.settle(tp);
        }
    }

    /// The partitions held, not compared yet (some replica not heard from).
    pub fn held(&self) -> usize {
        self.state().pending.len()
    }

    /// Every partition compared: those still waiting with the replicas
    /// that answered.
    pub fn take(&self) -> Compared {
        let mut state = self.state();
        let left: Vec<TopicPartition> = state.pending.keys().cloned().collect();
        for tp in &left {
            state.settle(tp);
        }
        std::mem::take(&mut state.compared)
    }
}

/// [`describe_every_replica`], streaming: each replica's producers go to
/// `sink` (broker, topic, partition, producers) as its broker's answer
/// arrives, read where they lie in the response ([`Producers::Viewed`])
/// and not kept, so memory follows the responses in flight,
/// not the cluster: `opts.max_concurrent_brokers` brokers are asked at
/// once (each in chunks of `max_partitions_per_request`). Only the brokers
/// in `only` are asked (empty: all).
/// Returns the brokers asked and what could not be asked.
pub async fn each_replica<F>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    only: &[i32],
    sink: F,
) -> Result<(Vec<i32>, Vec<ReplicaError<Error>>)>
where
    F: Fn(i32, &str, i32, Producers<'_>) + Send + Sync + 'static,
{
    // one metadata lookup for all the brokers, not one each
    let resolved = kdp_client::describe::resolve(client, opts, bound).await?;
    each_replica_of(client, opts, bound, only, resolved, sink).await
}

/// [`each_replica`] of a selection already resolved, for a caller that
/// needs the resolution too (the leaders it names). `Err`: the brokers
/// could not be listed (only when the selection took several lookups).
pub async fn each_replica_of<F>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    only: &[i32],
    resolved: Resolved,
    sink: F,
) -> Result<(Vec<i32>, Vec<ReplicaError<Error>>)>
where
    F: Fn(i32, &str, i32, Producers<'_>) + Send + Sync + 'static,
{
    each_replica_settling(client, opts, bound, only, resolved, sink, |_, _| {}).await
}

/// [`each_replica_of`], and `done(broker, partition)` once the broker
/// routed to by the resolution's metadata is done with the partition (its
/// answer to `sink` first, or its failure), for a caller that acts once
/// every replica of a partition has ([`Comparer`]). A selection that took
/// several lookups settles nothing.
pub async fn each_replica_settling<F, G>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    only: &[i32],
    resolved: Resolved,
    sink: F,
    done: G,
) -> Result<(Vec<i32>, Vec<ReplicaError<Error>>)>
where
    F: Fn(i32, &str, i32, Producers<'_>) + Send + Sync + 'static,
    G: Fn(i32, &TopicPartition) + Send + Sync + 'static,
{
    let done = Arc::new(done);
    let opts = DescribeOptions {
        broker_id: None,
        ..opts.clone()
    };
    let sink = Arc::new(sink);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        opts.max_concurrent_brokers.max(1),
    ));
    let mut scans = tokio::task::JoinSet::new();
    let mut settled = Vec::new();
    let brokers = match resolved.metadata {
        Some(md) => {
            let mut brokers: Vec<i32> = md.brokers.keys().copied().collect();
            if !only.is_empty() {
                brokers.retain(|b| only.contains(b));
            }
            let mut hosted: BTreeMap<i32, Vec<TopicPartition>> = BTreeMap::new();
            for tp in resolved.partitions {
                let replicas = md
                    .topics
                    .get(&tp.0)
                    .and_then(|t| t.partitions.get(&tp.1))
                    .map(|p| p.replicas.as_slice())
                    .unwrap_or_default();
                for b in replicas.iter().filter(|b| brokers.contains(b)) {
                    hosted.entry(*b).or_default().push(tp.clone());
                }
            }
            let md = Arc::new(md);
            for (broker, partitions) in hosted {
                // one bound for every broker's scan, not one each from its start
                let (client, sink, done, permits, opts, md, bound) = (
                    client.clone(),
                    sink.clone(),
                    done.clone(),
                    permits.clone(),
                    opts.clone(),
                    md.clone(),
                    *bound,
                );
                scans.spawn(async move {
                    // never closed: a permit always comes
                    let _permit = permits.acquire_owned().await.ok();
                    // only what routing to this broker needs, made once it is asked
                    let md = hosted_metadata(&md, &partitions);
                    let mut errors = Vec::new();
                    describe_on_framed(&client, &opts, &bound, broker, partitions, md, |os| {
                        framed_results(&os, broker, &*sink, &mut errors);
                        for o in &os {
                            done(broker, &o.partition);
                        }
                    })
                    .await;
                    errors
                });
            }
            // what metadata settled (an unknown topic) each broker would answer alike
            for o in resolved.settled {
                if let Err(e) = o.result {
                    for &broker in &brokers {
                        settled.push(ReplicaError::Partition {
                            partition: (o.topic.clone(), o.partition),
                            broker,
                            error: e.clone(),
                        });
                    }
                }
            }
            brokers
        }
        // the selection took several lookups: each broker resolves it again
        None => {
            let mut brokers = bound
                .run(
                    "Metadata",
                    AllBrokers::keys_within(client, bound.request_limit()),
                )
                .await?;
            if !only.is_empty() {
                brokers.retain(|b| only.contains(b));
            }
            for &broker in &brokers {
                let opts = DescribeOptions {
                    broker_id: Some(broker),
                    ..opts.clone()
                };
                let (client, sink, permits, bound) =
                    (client.clone(), sink.clone(), permits.clone(), *bound);
                scans.spawn(async move {
                    let _permit = permits.acquire_owned().await.ok();
                    let mut errors = Vec::new();
                    let r = describe_producers_framed(client, &opts, &bound, |ev| {
                        if let FramedEvent::Results { outcomes, .. } = ev {
                            framed_results(&outcomes, broker, &*sink, &mut errors);
                        }
                    })
                    .await;
                    match r {
                        Ok(_) => errors,
                        Err(error) => vec![ReplicaError::Broker { broker, error }],
                    }
                });
            }
            brokers
        }
    };
    let mut errors = settled;
    while let Some(joined) = scans.join_next().await {
        match joined {
            Ok(e) => errors.extend(e),
            Err(_) => errors.push(ReplicaError::Lost),
        }
    }
    Ok((brokers, errors))
}

/// `md` with only the topics of `partitions` (the brokers all).
fn hosted_metadata(md: &ClusterMetadata, partitions: &[TopicPartition]) -> ClusterMetadata {
    let mut topics = BTreeMap::new();
    for (t, _) in partitions {
        if !topics.contains_key(t) {
            if let Some(info) = md.topics.get(t) {
                topics.insert(t.clone(), info.clone());
            }
        }
    }
    ClusterMetadata {
        cluster_id: md.cluster_id.clone(),
        controller_id: md.controller_id,
        brokers: md.brokers.clone(),
        topics,
    }
}

/// One response of a broker's framed scan: each answer read through the
/// response's view to `sink`, failures to `errors`.
fn framed_results<S>(
    outcomes: &[FramedOutcome],
    broker: i32,
    sink: &S,
    errors: &mut Vec<ReplicaError<Error>>,
) where
    S: Fn(i32, &str, i32, Producers<'_>) + ?Sized,
{
    each_answer(outcomes, |topic, partition, ps| {
        sink(broker, topic, partition, Producers::Viewed(ps))
    });
    for o in outcomes {
        if let Err(error) = &o.result {
            replica_error(broker, o.partition.clone(), error.clone(), errors);
        }
    }
}

/// A replica's failure, unless it says the broker is not a replica.
fn replica_error(
    broker: i32,
    partition: TopicPartition,
    error: kdp_domain::partition::PartitionError,
    errors: &mut Vec<ReplicaError<Error>>,
) {
    if error.code != ErrorCode::NOT_LEADER_OR_FOLLOWER {
        errors.push(ReplicaError::Partition {
            partition,
            broker,
            error,
        });
    }
}
