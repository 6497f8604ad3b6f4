//! What `kdp lag` and the exporter's lag series read: every group's
//! committed offsets, each partition's log start, LSO and high watermark,
//! a read_committed count of [smallest committed offset, LSO) where one
//! is needed, and the transactions holding an LSO, as `kdp blocked` finds
//! them. One [`TimeBound`] for all of it; every request through the
//! driver.
//!
//! A partition is read only when some committed offset lies below its
//! LSO: at or past it, the records to deliver are 0 without a read. Each
//! partition is read once for all its groups, from the smallest of their
//! offsets (at least the log start), in Fetch requests of
//! [`LagReadOptions::fetch_bytes`], until the LSO read before the first
//! Fetch or [`LagReadOptions::max_bytes_per_partition`]; past that
//! budget the figures are bounds ([`Stop::Budget`]). A read the deadline
//! or an error cuts short gives bounds too, and makes the answer partial
//! ([`Stop::Failed`]).
//!
//! With a [`Known`] carried from one gather to the next (the exporter's
//! scans), a partition a read found without any transactional or control
//! batch is read only from where that read ended: a partition never
//! written transactionally needs no Fetch while its log does not grow.
//! Only topics whose `cleanup.policy` (DescribeConfigs) has no `compact`
//! are kept there, as compaction can remove records already counted.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::fetch::{fetch_once, FetchSettings};
use kdp_client::metadata::{ClusterMetadata, TopicInfo};
use kdp_client::txn::configs::{topic_configs, CLEANUP_POLICY};
use kdp_client::txn::offsets::list_offsets;
use kdp_client::{DescribeOptions, TopicSelection};
use kdp_domain::diagnose::blocked::{blocked, Blocked, BlockedOptions};
use kdp_domain::groups::read::GroupsRead;
use kdp_domain::key_error::KeyError;
use kdp_domain::lag::{
    lag, partitions_to_read, read_starts, Bounds, Known, Lag, LagOptions, PartitionLag, Stop, Tally,
};
use kdp_domain::partition::TopicPartition;
use kdp_wire::messages::list_offsets::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP};
use kdp_wire::messages::{READ_COMMITTED, READ_UNCOMMITTED};
use kdp_wire::records::{Batch, Batches, DEFAULT_MAX_DECOMPRESSED};
use kdp_wire::ErrorCode;

use crate::groups::{read_groups, read_shares, ReadOptions};
use crate::join::{join, JoinOptions};

/// `kdp lag`'s default for [`LagReadOptions::max_bytes_per_partition`]:
/// 64 MiB, a few seconds of Fetch on a loaded broker.
pub const DEFAULT_MAX_BYTES_PER_PARTITION: u64 = 64 << 20;

/// How much to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagReadOptions {
    /// Which groups and topics.
    pub lag: LagOptions,
    /// Stop reading a partition after this many bytes of batches: its
    /// figures are bounds from there.
    pub max_bytes_per_partition: u64,
    /// `PartitionMaxBytes` of each Fetch.
    pub fetch_bytes: i32,
    /// Partitions read at once.
    pub concurrency: usize,
    /// Also describe each group (its state and members).
    pub members: bool,
}

impl Default for LagReadOptions {
    fn default() -> Self {
        LagReadOptions {
            lag: LagOptions::default(),
            max_bytes_per_partition: DEFAULT_MAX_BYTES_PER_PARTITION,
            fetch_bytes: 4 << 20,
            concurrency: 16,
            members: true,
        }
    }
}

/// What was read, and the lag judged from it.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The groups.
    pub groups: GroupsRead,
    /// Each partition read.
    pub partitions: BTreeMap<TopicPartition, PartitionLag>,
    /// The transactions holding LSOs (the diagnosis `kdp blocked` makes
    /// over the pinned partitions).
    pub blocked: Blocked,
    /// Why the pinned partitions' producers could not be read, if so.
    pub join_error: Option<String>,
    /// The judgement.
    pub lag: Lag,
    /// Bytes of batches read in all.
    pub bytes_read: u64,
    /// Fetch requests sent in all.
    pub fetches: u64,
    /// Fetch requests sent per partition (partitions sent none are left
    /// out).
    pub fetched: BTreeMap<TopicPartition, u64>,
}

/// Reads and judges the lag `opts` asks for. `Err` only when the groups
/// cannot be listed at all (the cluster is unreachable).
pub async fn gather(
    client: &SharedClient,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
) -> Result<Gathered> {
    let read = ReadOptions {
        only: opts.lag.groups.clone(),
        members: opts.members,
    };
    let groups = read_groups(client, &read, driver, bound).await?;
    Ok(gather_from(client, groups, opts, driver, bound, None).await)
}

/// [`gather`] from groups already read (the exporter's scan reads them
/// once for its blocked series and its lag series). `known`: what earlier
/// gathers proved, updated with what this one reads (see the module's
/// documentation); it keeps only the partitions asked for now.
pub async fn gather_from(
    client: &SharedClient,
    mut groups: GroupsRead,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
    mut known: Option<&mut Known>,
) -> Gathered {
    read_shares(client, &mut groups, driver, bound).await;
    let starts = partitions_to_read(&groups, &opts.lag);
    let keys: Vec<TopicPartition> = starts.keys().cloned().collect();
    let (earliest, hwm, lso) = tokio::join!(
        list_offsets(
            client,
            keys.clone(),
            EARLIEST_TIMESTAMP,
            READ_UNCOMMITTED,
            driver,
            bound
        ),
        list_offsets(
            client,
            keys.clone(),
            LATEST_TIMESTAMP,
            READ_UNCOMMITTED,
            driver,
            bound
        ),
        list_offsets(
            client,
            keys.clone(),
            LATEST_TIMESTAMP,
            READ_COMMITTED,
            driver,
            bound
        ),
    );
    let missing = || KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, "no ListOffsets answer");
    let mut bounds: BTreeMap<TopicPartition, std::result::Result<Bounds, KeyError>> =
        BTreeMap::new();
    for tp in &keys {
        let get = |m: &BTreeMap<TopicPartition, std::result::Result<i64, KeyError>>| {
            m.get(tp).cloned().unwrap_or_else(|| Err(missing()))
        };
        let b = (|| {
            Ok(Bounds {
                log_start: Some(get(&earliest)?),
                high_watermark: get(&hwm)?,
                last_stable_offset: get(&lso)?,
            })
        })();
        bounds.insert(tp.clone(), b);
    }

    // the transactions holding LSOs: the pinned partitions' producers
    let pinned: Vec<&TopicPartition> = bounds
        .iter()
        .filter(|(_, b)| matches!(b, Ok(b) if b.held_back() > 0))
        .map(|(tp, _)| tp)
        .collect();
    let (blocked_diagnosis, join_error) = if pinned.is_empty() {
        (Blocked::default(), None)
    } else {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in &pinned {
            by_topic.entry(tp.0.as_str()).or_default().push(tp.1);
        }
        let describe = DescribeOptions {
            topics: Some(
                by_topic
                    .into_iter()
                    .map(|(name, partitions)| TopicSelection {
                        name: name.to_string(),
                        partitions: Some(partitions),
                    })
                    .collect(),
            ),
            ..DescribeOptions::default()
        };
        match join(client, &JoinOptions::new(describe, true), bound).await {
            Ok(joined) => {
                let b = blocked(
                    &joined,
                    &groups.answers,
                    &BlockedOptions {
                        max_timeout_ms: joined.max_timeout_ms(),
                        ..BlockedOptions::default()
                    },
                );
                (b, None)
            }
            Err(e) => (Blocked::default(), Some(e.to_string())),
        }
    };

    // the reads: each partition once, from its smallest offset
    let mut committed_on: BTreeMap<TopicPartition, BTreeSet<i64>> = BTreeMap::new();
    for (tp, start) in read_starts(&groups, &opts.lag) {
        if let Some(o) = start {
            committed_on.entry(tp).or_default().insert(o);
        }
    }
    // the topics whose counts may be kept: known not to be compacted
    let mut uncompacted: BTreeSet<String> = BTreeSet::new();
    if let Some(known) = known.as_deref_mut() {
        known.retain(|tp| starts.contains_key(tp));
        let topics: BTreeSet<String> = keys.iter().map(|tp| tp.0.clone()).collect();
        if let Ok(configs) = topic_configs(
            client,
            topics.into_iter().collect(),
            &[CLEANUP_POLICY],
            driver,
            bound,
        )
        .await
        {
            for (topic, config) in configs {
                let policy = config
                    .ok()
                    .and_then(|c| c.get(CLEANUP_POLICY).cloned().flatten());
                if policy.is_some_and(|p| !p.split(',').any(|v| v.trim() == "compact")) {
                    uncompacted.insert(topic);
                }
            }
        }
        known.retain(|tp| uncompacted.contains(&tp.0));
    }
    let mut partitions: BTreeMap<TopicPartition, PartitionLag> = BTreeMap::new();
    let mut jobs: Vec<(TopicPartition, Tally, Vec<i64>)> = Vec::new();
    for (tp, b) in bounds {
        let mut ready = None;
        if let Ok(b) = &b {
            let start = starts
                .get(&tp)
                .copied()
                .flatten()
                .map(|c| c.max(b.log_start.unwrap_or(c)));
            if let Some(start) = start.filter(|&s| s < b.last_stable_offset) {
                let cs = committed_on
                    .get(&tp)
                    .map(|s| s.iter().map(|&c| c.max(start)).collect())
                    .unwrap_or_default();
                let tally = match known.as_deref_mut() {
                    Some(known) => known.tally(&tp, start, b.last_stable_offset),
                    None => Tally::new(start, b.last_stable_offset),
                };
                if tally.is_done() {
                    // what is known already: no request
                    ready = Some(tally);
                } else {
                    jobs.push((tp.clone(), tally, cs));
                }
            }
        }
        partitions.insert(
            tp,
            PartitionLag {
                bounds: b,
                tally: ready,
                stopped: None,
            },
        );
    }
    let (mut bytes_read, mut fetches) = (0u64, 0u64);
    let mut fetched: BTreeMap<TopicPartition, u64> = BTreeMap::new();
    if !jobs.is_empty() {
        let topics: Vec<String> = jobs
            .iter()
            .map(|j| j.0 .0.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let lookup = client.metadata_within(Some(&topics), bound.request_timeout());
        let metadata = match tokio::time::timeout_at(bound.deadline().at(), lookup).await {
            Ok(Ok(md)) => md,
            // each read looks its partition up again
            _ => ClusterMetadata::default(),
        };
        let permits = Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
        let mut reads = tokio::task::JoinSet::new();
        for (tp, tally, cs) in jobs {
            // only this partition's metadata: a copy of the whole cluster's
            // for each read costs partitions squared on a large cluster
            let mut md = ClusterMetadata {
                cluster_id: None,
                controller_id: metadata.controller_id,
                brokers: metadata.brokers.clone(),
                topics: BTreeMap::new(),
            };
            if let Some(t) = metadata.topic(&tp.0) {
                let partitions = t
                    .partitions
                    .get(&tp.1)
                    .map(|p| BTreeMap::from([(tp.1, p.clone())]))
                    .unwrap_or_default();
                let topic = TopicInfo {
                    name: t.name.clone(),
                    error_code: t.error_code,
                    topic_id: t.topic_id,
                    is_internal: t.is_internal,
                    partitions,
                };
                md.topics.insert(tp.0.clone(), topic);
            }
            let (client, permits, bound) = (client.clone(), permits.clone(), *bound);
            let settings = FetchSettings {
                isolation_level: READ_COMMITTED,
                partition_max_bytes: opts.fetch_bytes,
                max_wait_ms: 0,
            };
            let budget = opts.max_bytes_per_partition;
            reads.spawn(async move {
                let _permit = permits.acquire_owned().await.ok();
                let counted =
                    count(&client, &tp, tally, &cs, &mut md, settings, budget, &bound).await;
                (tp, counted)
            });
        }
        while let Some(done) = reads.join_next().await {
            let Ok((tp, counted)) = done else { continue };
            bytes_read += counted.bytes;
            fetches += counted.fetches;
            if counted.fetches > 0 {
                fetched.insert(tp.clone(), counted.fetches);
            }
            if let Some(known) = known.as_deref_mut() {
                if uncompacted.contains(&tp.0) {
                    known.learn(&tp, &counted.tally);
                }
            }
            if let Some(p) = partitions.get_mut(&tp) {
                p.tally = Some(counted.tally);
                p.stopped = counted.stopped;
            }
        }
    }
    let judged = lag(&groups, &partitions, &blocked_diagnosis, &opts.lag);
    Gathered {
        groups,
        partitions,
        blocked: blocked_diagnosis,
        join_error,
        lag: judged,
        bytes_read,
        fetches,
        fetched,
    }
}

/// One partition's count and what it cost.
struct Counted {
    tally: Tally,
    stopped: Option<Stop>,
    bytes: u64,
    fetches: u64,
}

/// The most a Fetch's PartitionMaxBytes grows to for a batch larger than
/// asked.
const MAX_PARTITION_BYTES: i32 = 64 << 20;

/// Counts what `tally` has left to read of `tp` (up to the LSO it was
/// made against) with Fetch READ_COMMITTED: the broker stops at the LSO
/// and lists the aborted transactions of what it returns.
/// `committed`: the offsets counts are asked from (a batch holding one is
/// decompressed for its records' offsets).
#[allow(clippy::too_many_arguments)]
async fn count(
    client: &SharedClient,
    tp: &TopicPartition,
    tally: Tally,
    committed: &[i64],
    metadata: &mut ClusterMetadata,
    mut settings: FetchSettings,
    budget: u64,
    bound: &TimeBound,
) -> Counted {
    let mut c = Counted {
        tally,
        stopped: None,
        bytes: 0,
        fetches: 0,
    };
    let mut empty_answers = 0;
    while !c.tally.is_done() {
        if c.bytes >= budget {
            c.stopped = Some(Stop::Budget { bytes: c.bytes });
            break;
        }
        let offset = c.tally.next_offset();
        c.fetches += 1;
        // never ask for more than the budget has left (a broker still
        // returns a first batch larger than asked whole, KIP-74)
        let left = i32::try_from(budget.saturating_sub(c.bytes)).unwrap_or(i32::MAX);
        let asked = FetchSettings {
            partition_max_bytes: settings.partition_max_bytes.min(left.max(1)),
            ..settings.clone()
        };
        let chunk = match fetch_once(client, tp, offset, None, metadata, &asked, bound).await {
            Ok(chunk) => chunk,
            Err(e) => {
                c.stopped = Some(Stop::Failed(e));
                break;
            }
        };
        c.bytes = c.bytes.saturating_add(chunk.records.len() as u64);
        c.tally.answer(chunk.aborted_transactions.as_deref());
        let mut batches = Batches::new(&chunk.records);
        let mut broken = None;
        for item in &mut batches {
            match item {
                Ok(batch) => {
                    let h = *batch.header();
                    let control = if h.is_control() {
                        batch
                            .control(DEFAULT_MAX_DECOMPRESSED)
                            .ok()
                            .flatten()
                            .map(|r| r.control_type)
                    } else {
                        None
                    };
                    let offsets = if !h.is_control() && Tally::needs_offsets(&h, committed) {
                        record_offsets(&batch)
                    } else {
                        None
                    };
                    c.tally.batch(&h, control, offsets);
                }
                Err(e) => {
                    broken = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = broken {
            c.stopped = Some(Stop::Failed(KeyError::client(
                ErrorCode::CORRUPT_MESSAGE,
                e.to_string(),
            )));
            break;
        }
        if c.tally.next_offset() > offset {
            empty_answers = 0;
            continue;
        }
        if chunk.records.is_empty() {
            // Nothing from `offset` below the LSO: compacted away. Asked
            // twice, as an answer a quota throttled is empty too (the
            // broker holds the next request until the throttle ends).
            empty_answers += 1;
            if empty_answers >= 2 {
                c.tally.nothing_more();
            }
            continue;
        }
        // a batch larger than asked for
        let needed = batches.partial().and_then(|p| p.size).unwrap_or(0);
        if settings.partition_max_bytes >= MAX_PARTITION_BYTES {
            c.stopped = Some(Stop::Failed(KeyError::client(
                ErrorCode::RECORD_LIST_TOO_LARGE,
                "a batch larger than 64 MiB",
            )));
            break;
        }
        settings.partition_max_bytes = i32::try_from(needed)
            .unwrap_or(i32::MAX)
            .max(settings.partition_max_bytes.saturating_mul(2))
            .min(MAX_PARTITION_BYTES);
    }
    c
}

/// The offsets of a batch's records (`None` when they cannot be read:
/// the count from inside it is then a bound).
fn record_offsets(batch: &Batch<'_>) -> Option<Vec<i64>> {
    let data = batch.records_data(DEFAULT_MAX_DECOMPRESSED).ok()?;
    let base = batch.header().base_offset;
    let mut out = Vec::with_capacity(data.count().min(batch.size()));
    for r in data.iter() {
        out.push(base.saturating_add(i64::from(r.ok()?.offset_delta)));
    }
    Some(out)
}
