//! The runs of a describe: [`describe_producers`] over a selection (the
//! module's [rules](crate::describe) of routing and retry, within the
//! caller's [`TimeBound`]), and the two pieces the every-replica scans reuse:
//! [`resolve`] (a selection into partitions and their replicas, after
//! metadata) and [`describe_on`] (one broker's answer for given partitions).

use std::collections::BTreeSet;
use std::sync::Arc;

use kdp_domain::partition::{DescribeSummary, PartitionOutcome, TopicPartition};
use kdp_wire::messages::ProducerState;

use crate::admin::{drive, Batch, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::Client;
use crate::describe::handler::Handler;
use crate::describe::options::{DescribeEvent, DescribeOptions};
use crate::describe::report::Report;
use crate::describe::select;
use crate::error::Result;

/// Describes the producers of the selected partitions within `bound`.
/// Results go to `sink` as they arrive; every selected partition is
/// reported exactly once. Fails only when the first metadata lookup fails
/// (the cluster is unreachable).
pub async fn describe_producers<F>(
    client: Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    sink: F,
) -> Result<DescribeSummary>
where
    F: FnMut(DescribeEvent),
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

/// The admin driver over resolved partitions, results to `report`.
async fn drive_partitions<F: FnMut(DescribeEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    handler: &Handler,
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
        |batch: Batch<TopicPartition, Vec<ProducerState>>| {
            let outcomes = batch
                .results
                .into_iter()
                .map(|r| PartitionOutcome {
                    broker_id: r.broker.or(handler.chosen_for(&r.result)),
                    topic: r.key.0,
                    partition: r.key.1,
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
            if let DescribeEvent::Results { outcomes, .. } = ev {
                settled.extend(outcomes);
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
/// Results to `sink` as they arrive; draws on `bound`.
pub async fn describe_leaders<F: FnMut(DescribeEvent)>(
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
    let handler = Handler {
        chosen_broker: Some(broker),
        explicit: BTreeSet::new(),
    };
    let strategy = PartitionLeader::chosen_broker(broker).with_metadata(metadata);
    drive_resolved(client, opts, bound, &handler, strategy, partitions, sink).await
}

/// The driver over partitions already resolved, routed by `strategy`;
/// results to `sink`, and the counts of what it reported.
async fn drive_resolved<F: FnMut(DescribeEvent)>(
    client: &Arc<Client>,
    opts: &DescribeOptions,
    bound: &TimeBound,
    handler: &Handler,
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
