//! The leaders' view of an every-replica scan. A DescribeProducers answer
//! from a partition's leader (by the metadata the scan was routed with) is
//! what a leaders-only describe routed with the same metadata gets from it,
//! so a caller that asks every replica anyway (the exporter's
//! `--producer-ids`) needs no describe of its own: [`LeaderTap`] passes
//! those answers on as the leaders' [`PartitionOutcome`]s, and whatever a
//! leader did not answer for (it moved, its broker failed, there is none)
//! is then described the leaders' way, with their retries
//! ([`describe_leaders`]), so every selected partition is still reported
//! once, as [`describe_producers`](kdp_client::describe::describe_producers)
//! reports it.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use kdp_client::bound::TimeBound;
use kdp_client::client::Client;
use kdp_client::describe::{
    answers, describe_leaders, describe_producers_framed, resolve, DescribeOptions, FramedEvent,
    FramedOutcome, Resolved,
};
use kdp_client::error::{Error, Result};
use kdp_domain::diagnose::replicas::ReplicaError;
use kdp_domain::partition::{DescribeSummary, PartitionError, PartitionOutcome, TopicPartition};
use kdp_wire::ErrorCode;

use crate::replicas::{each_replica_settling, ComparedReplicas, Comparer, ProducerRef, Producers};

/// A leader's answer for a partition as the leaders' describe reports it
/// ([`PartitionOutcome`]), its producers left where they lie: a sink that
/// keeps some builds only those ([`LeaderAnswer::to_outcome`] builds all).
#[derive(Clone, Copy)]
pub struct LeaderAnswer<'a> {
    /// The broker that answered.
    pub broker_id: Option<i32>,
    /// The topic.
    pub topic: &'a str,
    /// The partition.
    pub partition: i32,
    /// Its producers, or why there are none.
    pub result: std::result::Result<Producers<'a>, &'a PartitionError>,
}

impl<'a> LeaderAnswer<'a> {
    /// The answer of an outcome already built.
    pub fn of(o: &'a PartitionOutcome) -> LeaderAnswer<'a> {
        LeaderAnswer {
            broker_id: o.broker_id,
            topic: &o.topic,
            partition: o.partition,
            result: o.result.as_deref().map(Producers::Owned),
        }
    }

    /// The owned outcome.
    pub fn to_outcome(&self) -> PartitionOutcome {
        PartitionOutcome {
            broker_id: self.broker_id,
            topic: self.topic.to_owned(),
            partition: self.partition,
            result: self.result.map(Producers::to_vec).map_err(Clone::clone),
        }
    }

    /// The outcome with only the producers `keeps` wants, built from where
    /// they lie (the others never are), each other producer handed to
    /// `unkept` on the way. The kept producers get an allocation of their
    /// own size, nothing of the answer's.
    pub fn keeping(
        &self,
        keeps: impl Fn(&ProducerRef<'a>) -> bool,
        mut unkept: impl FnMut(ProducerRef<'a>),
    ) -> PartitionOutcome {
        PartitionOutcome {
            broker_id: self.broker_id,
            topic: self.topic.to_owned(),
            partition: self.partition,
            result: self.result.map_err(Clone::clone).map(|ps| {
                let n = ps.iter().filter(|p| keeps(p)).count();
                let mut kept = Vec::with_capacity(n);
                for p in ps.iter() {
                    if keeps(&p) {
                        kept.push(p.to_owned());
                    } else {
                        unkept(p);
                    }
                }
                kept
            }),
        }
    }
}

/// The outcomes of one response of a describe read through the view, as
/// [`LeaderAnswer`]s in their order: producers where they lie.
pub fn leader_answers(outcomes: &[FramedOutcome]) -> impl Iterator<Item = LeaderAnswer<'_>> {
    outcomes
        .iter()
        .zip(answers(outcomes))
        .map(|(o, a)| LeaderAnswer {
            broker_id: o.broker_id,
            topic: &o.partition.0,
            partition: o.partition.1,
            result: a.map(Producers::Viewed),
        })
}

/// The leaders' describe of `opts`' selection
/// ([`describe_producers_framed`]: its routing, retries and `bound`), each
/// answer to `sink` as it arrives, read through its response's view:
/// nothing is built that the sink does not build. Returns the counts.
/// `Err`: the cluster could not be reached (the first metadata lookup).
pub async fn describe_viewed<S: FnMut(LeaderAnswer<'_>)>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    mut sink: S,
) -> Result<DescribeSummary> {
    describe_producers_framed(client, opts, bound, |ev| {
        if let FramedEvent::Results { outcomes, .. } = ev {
            leader_answers(&outcomes).for_each(&mut sink);
        }
    })
    .await
}

/// A partition's leader by the scan's metadata (`None`: it has none), and
/// whether its answer has been passed on.
struct Leader {
    broker: Option<i32>,
    reported: bool,
}

struct Tapped<S> {
    sink: S,
    leaders: HashMap<TopicPartition, Leader>,
    summary: DescribeSummary,
}

impl<S: FnMut(LeaderAnswer<'_>)> Tapped<S> {
    /// Whether `broker` is `partition`'s leader and has not been passed on
    /// yet; if so, it now counts as passed on.
    fn claim(&mut self, partition: &TopicPartition, broker: i32) -> bool {
        match self.leaders.get_mut(partition) {
            Some(l) if l.broker == Some(broker) && !l.reported => {
                l.reported = true;
                true
            }
            _ => false,
        }
    }

    fn report(&mut self, o: LeaderAnswer<'_>) {
        self.summary.partitions += 1;
        self.summary.failed += usize::from(o.result.is_err());
        (self.sink)(o);
    }
}

/// Takes the leaders' answers out of an every-replica scan, for `sink`.
pub struct LeaderTap<S> {
    /// Whether the scan was routed with one metadata (else it names no
    /// leader, and [`LeaderTap::finish`] describes the whole selection).
    routed: bool,
    explicit: BTreeSet<TopicPartition>,
    state: Mutex<Tapped<S>>,
}

impl<S: FnMut(LeaderAnswer<'_>)> LeaderTap<S> {
    /// The leaders of `resolved`'s partitions; what the resolution settled
    /// (a topic that does not exist) goes to `sink` at once, as the
    /// leaders' describe reports it (when the scan is routed with one
    /// metadata; otherwise [`LeaderTap::finish`]'s describe does).
    pub fn new(resolved: &Resolved, sink: S) -> LeaderTap<S> {
        let mut leaders = HashMap::new();
        if let Some(md) = &resolved.metadata {
            for tp in &resolved.partitions {
                let leader = Leader {
                    broker: md.leader(&tp.0, tp.1),
                    reported: false,
                };
                leaders.insert(tp.clone(), leader);
            }
        }
        let mut state = Tapped {
            sink,
            leaders,
            summary: DescribeSummary::default(),
        };
        // unrouted, the leaders' describe of the whole selection reports them
        if resolved.metadata.is_some() {
            for o in &resolved.settled {
                state.report(LeaderAnswer::of(o));
            }
        }
        LeaderTap {
            routed: resolved.metadata.is_some(),
            explicit: resolved.explicit.clone(),
            state: Mutex::new(state),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Tapped<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Broker `broker`'s producers of a partition: passed on (where they
    /// lie) when it is the partition's leader.
    pub fn answer(&self, broker: i32, topic: &str, partition: i32, ps: Producers<'_>) {
        let mut state = self.state();
        let key = (topic.to_owned(), partition);
        if !state.claim(&key, broker) {
            return;
        }
        state.report(LeaderAnswer {
            broker_id: Some(broker),
            topic,
            partition,
            result: Ok(ps),
        });
    }

    /// After the scan: a leader's error that its describe would take as
    /// the answer is passed on; what no leader answered is described the
    /// leaders' way (a fresh metadata lookup, their retries) within
    /// `bound`, results to the sink. Returns the leaders' counts (the
    /// partitions reported and failed; rounds, throttle and vanished
    /// partitions of that last describe only). `Err`: the scan was not
    /// routed with one metadata, and the leaders' describe could not look
    /// the selection up.
    pub async fn finish(
        &self,
        client: &Arc<Client>,
        opts: &DescribeOptions,
        bound: &TimeBound,
        errors: &[ReplicaError<Error>],
    ) -> Result<DescribeSummary> {
        let rest = {
            let mut state = self.state();
            for e in errors {
                let ReplicaError::Partition {
                    partition,
                    broker,
                    error,
                } = e
                else {
                    continue;
                };
                if !is_the_answer(error) || !state.claim(partition, *broker) {
                    continue;
                }
                state.report(LeaderAnswer {
                    broker_id: Some(*broker),
                    topic: &partition.0,
                    partition: partition.1,
                    result: Err(error),
                });
            }
            let mut rest: Vec<TopicPartition> = state
                .leaders
                .iter()
                .filter(|(_, l)| !l.reported)
                .map(|(tp, _)| tp.clone())
                .collect();
            rest.sort();
            rest
        };
        let opts = DescribeOptions {
            broker_id: None,
            ..opts.clone()
        };
        // the lock is taken per answer, never held across a request
        let forward = |ev| forward(&mut self.state(), ev);
        let mut summary = if !self.routed {
            // no leader known: the leaders' describe of the whole selection
            describe_producers_framed(client.clone(), &opts, bound, forward).await?
        } else if rest.is_empty() {
            DescribeSummary::default()
        } else {
            let explicit = rest
                .iter()
                .filter(|tp| self.explicit.contains(*tp))
                .cloned()
                .collect();
            describe_leaders(client, &opts, bound, rest, explicit, forward).await
        };
        let state = self.state();
        summary.partitions = state.summary.partitions;
        summary.failed = state.summary.failed;
        summary.rounds = summary.rounds.max(1);
        Ok(summary)
    }
}

/// Every replica of the partitions `opts` selects, asked once for both a
/// comparison and the leaders' describe: each leader's answer goes to
/// `leaders` as the leaders' describe reports it ([`LeaderTap`]; what no
/// leader answered is described after, the leaders' way), and each
/// partition is compared as soon as its replicas have answered
/// ([`Comparer`]), as
/// [`compare_every_replica`](crate::replicas::compare_every_replica)
/// compares. Returns the comparison and the leaders' counts. `Err`: the
/// selection could not be looked up, or its brokers listed: the scan failed.
pub async fn every_replica_sharing_leaders<S>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    leaders: S,
) -> Result<(ComparedReplicas, DescribeSummary)>
where
    S: FnMut(LeaderAnswer<'_>) + Send + 'static,
{
    let resolved = resolve(client, opts, bound).await?;
    let tap = Arc::new(LeaderTap::new(&resolved, leaders));
    let comparer = Comparer::new(&resolved, &[]);
    let (into, kept, done) = (tap.clone(), comparer.clone(), comparer.clone());
    let sink = move |b, topic: &str, partition, ps: Producers<'_>| {
        kept.add(b, topic, partition, ps);
        into.answer(b, topic, partition, ps);
    };
    let done = move |b, tp: &TopicPartition| done.settled(b, tp);
    let (_, errors) = each_replica_settling(client, opts, bound, &[], resolved, sink, done).await?;
    let summary = tap.finish(client, opts, bound, &errors).await?;
    Ok(((comparer.take(), errors), summary))
}

fn forward<S: FnMut(LeaderAnswer<'_>)>(state: &mut Tapped<S>, ev: FramedEvent) {
    if let FramedEvent::Results { outcomes, .. } = ev {
        for a in leader_answers(&outcomes) {
            state.report(a);
        }
    }
}

/// Whether a leader's error for a partition is what its describe reports
/// (the broker said so, and its describe would not retry it), not a reason
/// to ask the leader again.
fn is_the_answer(e: &PartitionError) -> bool {
    !e.client_side
        && e.code != ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        && e.code != ErrorCode::NOT_LEADER_OR_FOLLOWER
}
