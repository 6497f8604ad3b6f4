//! What `kdp lag` and the exporter's lag series read: every group's
//! committed offsets, each partition's log start, LSO and high watermark
//! (in waves of [`LagReadOptions::offsets_per_wave`] partitions, the
//! `bounds` module),
//! a read_committed count of [smallest committed offset, LSO) where one
//! is needed, and the transactions holding an LSO, as `kdp blocked` finds
//! them. One [`TimeBound`] for all of it; every request through the
//! driver.
//!
//! A partition is read only when some committed offset lies below its
//! LSO: at or past it, the records to deliver are 0 without a read; nor
//! when the broker proves its range holds no marker and no transactional
//! record (the `proof` module, docs/LAG.md section 11): a `LogAppendTime`,
//! uncompacted topic whose leader lists no transactional producer after
//! the bounds were read, and whose range was appended within
//! `producer.id.expiration.ms`. The
//! positions of groups read read_uncommitted
//! ([`LagOptions::isolation`]) are counted by a read of their own, Fetch
//! READ_UNCOMMITTED up to the high watermark, after the read_committed
//! one and in the same way (batched per leader, the same budget). Each
//! partition is read once for all its groups, from the smallest of their
//! offsets (at least the log start), until the LSO read before the first
//! Fetch or [`LagReadOptions::max_bytes_per_partition`]; past that
//! budget the figures are bounds ([`Stop::Budget`]). A read the deadline
//! or an error cuts short gives bounds too, and makes the answer partial
//! ([`Stop::Failed`]); one partition's failure leaves the others of its
//! request counted.
//!
//! The partitions are read together, in Fetch requests batched per
//! leader ([`LagReadOptions::partitions_per_fetch`] partitions at most,
//! [`LagReadOptions::fetch_bytes`] per partition and
//! [`LagReadOptions::fetch_max_bytes`] per request, from
//! [`LagReadOptions::concurrency`] brokers at once), round after round
//! from where each count stands, each round in waves of a few sets of
//! concurrent requests; each answer is folded into its partition's count
//! as it arrives, and a count whose read is over keeps only its answers
//! for the offsets it is asked from ([`Tally::settle`]). What the reads
//! hold at once is the counts, the batches of the partitions being read,
//! one wave's requests and at most `concurrency` × `fetch_max_bytes` of
//! answers (64 MiB by default).
//!
//! [`Stop::Budget`]: kdp_domain::lag::Stop::Budget
//! [`Stop::Failed`]: kdp_domain::lag::Stop::Failed
//!
//! With a [`Known`] carried from one gather to the next (the exporter's
//! scans), a partition a read found without any transactional or control
//! batch is read only from where that read ended: a partition never
//! written transactionally needs no Fetch while its log does not grow.
//! Only topics whose `cleanup.policy` (DescribeConfigs) has no `compact`
//! are kept there, as compaction can remove records already counted.
//!
//! This is one read of everything asked, held whole until judged (what
//! [`gather`]'s callers need). [`crate::lag_waves`] makes the same read in
//! waves of topics, so that what is held follows one wave.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::fetch::FetchSettings;
use kdp_client::metadata::{ClusterMetadata, PartitionInfo, TopicInfo};
use kdp_client::txn::configs::{topic_configs, CLEANUP_POLICY};
use kdp_client::{DescribeOptions, TopicSelection};
use kdp_domain::diagnose::blocked::{blocked, Blocked, BlockedOptions};
use kdp_domain::groups::read::GroupsRead;
use kdp_domain::groups::Isolation;
use kdp_domain::lag::proof::compacted;
use kdp_domain::lag::{
    each_start, lag, partitions_to_read, Known, Lag, LagOptions, PartitionLag, Proof, Tally,
};
use kdp_domain::partition::TopicPartition;
use kdp_wire::messages::{READ_COMMITTED, READ_UNCOMMITTED};

use crate::groups::{read_groups, read_shares, ReadOptions};
use crate::join::{join, JoinOptions};

mod bounds;
mod proof;
mod read;

use bounds::read_bounds;
use read::{read_all, Reading};

/// `kdp lag`'s default for [`LagReadOptions::max_bytes_per_partition`]:
/// 64 MiB, a few seconds of Fetch on a loaded broker.
pub const DEFAULT_MAX_BYTES_PER_PARTITION: u64 = 64 << 20;

/// [`LagReadOptions::committed_per_wave`]'s default: 100,000 committed
/// offsets, a few MB of offsets, bounds and counts at once, and few waves
/// on a large cluster (ten for a million offsets).
pub const DEFAULT_COMMITTED_PER_WAVE: usize = 100_000;

/// How much to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagReadOptions {
    /// Which groups and topics.
    pub lag: LagOptions,
    /// Stop reading a partition after this many bytes of batches: its
    /// figures are bounds from there.
    pub max_bytes_per_partition: u64,
    /// `PartitionMaxBytes` of each partition in a Fetch (grown for a
    /// batch larger than it, up to 64 MiB).
    pub fetch_bytes: i32,
    /// `MaxBytes` of each Fetch: a broker's answer to one request, all
    /// its partitions together (a first batch larger than it comes whole,
    /// KIP-74).
    pub fetch_max_bytes: i32,
    /// Partitions in one Fetch at most.
    pub partitions_per_fetch: usize,
    /// Brokers fetched from at once.
    pub concurrency: usize,
    /// Partitions whose bounds (three ListOffsets runs) are asked at
    /// once: the next ones are asked once their answers are in.
    pub offsets_per_wave: usize,
    /// Also describe each group (its state and members).
    pub members: bool,
    /// [`crate::lag_waves::read_in_waves`]: the committed offsets one wave of topics holds
    /// at most (a topic holding more is a wave of its own; 0: one wave).
    pub committed_per_wave: usize,
    /// [`crate::lag_waves::read_in_waves`]: the groups whose offsets are asked at once.
    pub groups_per_wave: usize,
}

impl Default for LagReadOptions {
    fn default() -> Self {
        LagReadOptions {
            lag: LagOptions::default(),
            max_bytes_per_partition: DEFAULT_MAX_BYTES_PER_PARTITION,
            // 4 MiB per partition: a partition far behind is read in
            // few requests; 8 MiB per request from 8 brokers at once
            // bounds the answers in flight to 64 MiB (Kafka's consumer
            // asks 1 MiB per partition and 50 MiB per request)
            fetch_bytes: 4 << 20,
            fetch_max_bytes: 8 << 20,
            partitions_per_fetch: 1_000,
            concurrency: 8,
            // 10,000 partitions: a request per broker and run on a
            // 50-broker cluster, a few MB of routing and answers at once
            offsets_per_wave: 10_000,
            members: true,
            committed_per_wave: DEFAULT_COMMITTED_PER_WAVE,
            // a few hundred KB of answers at once
            groups_per_wave: 1_000,
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
    /// Fetch requests that asked for each partition (partitions asked in
    /// none are left out).
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
    Ok(judged(read(client, opts, driver, bound).await?, &opts.lag))
}

/// [`gather`] without the judgement, for a caller that judges the rows
/// one by one ([`kdp_domain::lag::lag_each`]) and holds none; everything
/// read is held at once (`kdp lag` reads in waves instead:
/// [`crate::lag_waves`]). `Err` only when the groups cannot be listed at
/// all.
pub async fn read(
    client: &SharedClient,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
) -> Result<LagRead> {
    let read = ReadOptions {
        only: opts.lag.groups.clone(),
        members: opts.members,
    };
    let groups = read_groups(client, &read, driver, bound).await?;
    Ok(read_from(client, groups, opts, driver, bound, None).await)
}

/// [`gather`] from groups already read (the exporter's scan reads them
/// once for its blocked series and its lag series). `known`: what earlier
/// gathers proved, updated with what this one reads (see the module's
/// documentation); it keeps only the partitions asked for now.
pub async fn gather_from(
    client: &SharedClient,
    groups: GroupsRead,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
    known: Option<&mut Known>,
) -> Gathered {
    let r = read_from(client, groups, opts, driver, bound, known).await;
    judged(r, &opts.lag)
}

/// `r` with its judgement.
fn judged(r: LagRead, opts: &LagOptions) -> Gathered {
    let judged = lag(&r.groups, &r.partitions, &r.blocked, opts);
    Gathered {
        groups: r.groups,
        partitions: r.partitions,
        blocked: r.blocked,
        join_error: r.join_error,
        lag: judged,
        bytes_read: r.bytes_read,
        fetches: r.fetches,
        fetched: r.fetched,
    }
}

/// What [`read_from`] read, not judged yet: judged whole by
/// [`kdp_domain::lag::lag`], or row by row by
/// [`kdp_domain::lag::lag_each`] (a monitor folding the rows into its
/// series holds no row per committed offset).
#[derive(Debug, Clone)]
pub struct LagRead {
    /// The groups.
    pub groups: GroupsRead,
    /// Each partition read.
    pub partitions: BTreeMap<TopicPartition, PartitionLag>,
    /// The transactions holding LSOs.
    pub blocked: Blocked,
    /// Why the pinned partitions' producers could not be read, if so.
    pub join_error: Option<String>,
    /// Bytes of batches read in all.
    pub bytes_read: u64,
    /// Fetch requests sent in all.
    pub fetches: u64,
    /// Fetch requests that asked for each partition.
    pub fetched: BTreeMap<TopicPartition, u64>,
}

/// The offsets the groups read with `isolation` start from, per
/// partition: a topic name copied per partition, not per committed offset.
fn starts_by_partition(
    groups: &GroupsRead,
    lag: &LagOptions,
    isolation: Isolation,
) -> BTreeMap<TopicPartition, BTreeSet<i64>> {
    let mut on: BTreeMap<TopicPartition, BTreeSet<i64>> = BTreeMap::new();
    each_start(groups, lag, isolation, |tp, start| {
        if let Some(o) = start {
            match on.get_mut(tp) {
                Some(set) => set.insert(o),
                None => on.entry(tp.clone()).or_default().insert(o),
            };
        }
    });
    on
}

/// A count of `tp` over [`start`, `end`), from what `known` proved by an
/// earlier read where the caller keeps one.
fn count(known: Option<&mut Known>, tp: &TopicPartition, start: i64, end: i64) -> Tally {
    match known {
        Some(known) => known.tally(tp, start, end),
        None => Tally::new(start, end),
    }
}

/// [`gather_from`]'s reads, without the judgement.
pub async fn read_from(
    client: &SharedClient,
    groups: GroupsRead,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
    known: Option<&mut Known>,
) -> LagRead {
    read_scoped(client, groups, opts, driver, bound, known, None).await
}

/// [`read_from`] over the topics of one wave (`scope`,
/// [`crate::lag_waves`]): what
/// `known` holds of other topics is left as it is.
pub(crate) async fn read_scoped(
    client: &SharedClient,
    mut groups: GroupsRead,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
    mut known: Option<&mut Known>,
    scope: Option<&BTreeSet<String>>,
) -> LagRead {
    let outside = |tp: &TopicPartition| scope.is_some_and(|s| !s.contains(&tp.0));
    read_shares(client, &mut groups, driver, bound).await;
    let mut starts = partitions_to_read(&groups, &opts.lag);
    // in waves: one wave's lookup, requests and answers at a time
    let bounds = read_bounds(client, starts.keys(), opts.offsets_per_wave, driver, bound).await;

    // the transactions holding LSOs: the pinned partitions' producers
    let pinned: Vec<&TopicPartition> = bounds
        .iter()
        .filter(|(_, b)| matches!(b, Ok(b) if b.held_back() > 0))
        .map(|(tp, _)| tp)
        .collect();
    let (blocked_diagnosis, join_error) = if pinned.is_empty() {
        (Blocked::default(), None)
    } else {
        let describe = DescribeOptions {
            topics: Some(TopicSelection::of_partitions(
                pinned.iter().map(|tp| (tp.0.clone(), tp.1)),
            )),
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

    // the slots, built in bulk (a map filled in order leaves its nodes
    // half full) before the offsets each partition is read from are
    // gathered: the slots' vector (and the bounds') are never held
    // together with those offsets or the readings
    let mut partitions: BTreeMap<TopicPartition, PartitionLag> = bounds
        .into_iter()
        .map(|(tp, bounds)| {
            let slot = PartitionLag {
                bounds,
                tally: None,
                stopped: None,
                uncommitted: None,
                uncommitted_stopped: None,
            };
            (tp, slot)
        })
        .collect();

    // the reads: each partition once, from its smallest offset
    let mut committed_on = starts_by_partition(&groups, &opts.lag, Isolation::ReadCommitted);
    // the read_uncommitted positions: counted apart, to the high watermark
    let mut uncommitted_on = starts_by_partition(&groups, &opts.lag, Isolation::ReadUncommitted);
    // the topics whose counts may be kept: known not to be compacted
    // (read with the proof's other setting: one DescribeConfigs for both)
    let mut uncompacted: BTreeSet<String> = BTreeSet::new();
    let mut settings: Option<proof::TopicSettings> = None;
    if let Some(known) = known.as_deref_mut() {
        known.retain(|tp| outside(tp) || starts.contains_key(tp));
        let topics: BTreeSet<String> = starts.keys().map(|tp| tp.0.clone()).collect();
        if let Ok(configs) = topic_configs(
            client,
            topics.into_iter().collect(),
            &proof::SETTINGS,
            driver,
            bound,
        )
        .await
        {
            for (topic, config) in &configs {
                let policy = config
                    .as_ref()
                    .ok()
                    .and_then(|c| c.get(CLEANUP_POLICY).cloned().flatten());
                if policy.is_some_and(|p| !compacted(&p)) {
                    uncompacted.insert(topic.clone());
                }
            }
            settings = Some(configs);
        }
        known.retain(|tp| outside(tp) || uncompacted.contains(&tp.0));
    }
    let mut readings: Vec<Reading> = Vec::new();
    let mut uncommitted_readings: Vec<Reading> = Vec::new();
    // each partition's starts are taken out of their maps as its
    // reading is made (its offsets move into it): the maps shrink as the
    // readings grow, rather than both being held whole
    for (tp, p) in partitions.iter_mut() {
        let start = starts.remove(tp).flatten();
        let committed = committed_on.remove(tp);
        let uncommitted = uncommitted_on.remove(tp);
        let Ok(b) = &p.bounds else { continue };
        if let Some(on) = uncommitted {
            let floor = b.log_start.unwrap_or(i64::MIN);
            let cs: Vec<i64> = on.iter().map(|&c| c.max(floor)).collect();
            drop(on);
            if let Some(&start) = cs.iter().min().filter(|&&s| s < b.high_watermark) {
                let tally =
                    count(known.as_deref_mut(), tp, start, b.high_watermark).read_uncommitted();
                if tally.is_done() {
                    p.uncommitted = Some(Box::new(tally));
                } else {
                    uncommitted_readings.push(Reading::new(
                        tp.clone(),
                        tally,
                        cs,
                        opts.fetch_bytes,
                    ));
                }
            }
        }
        let start = start.map(|c| c.max(b.log_start.unwrap_or(c)));
        if let Some(start) = start.filter(|&s| s < b.last_stable_offset) {
            let cs = committed
                .map(|s| s.into_iter().map(|c| c.max(start)).collect())
                .unwrap_or_default();
            let tally = count(known.as_deref_mut(), tp, start, b.last_stable_offset);
            if tally.is_done() {
                // what is known already: no request
                p.tally = Some(Box::new(tally));
            } else {
                readings.push(Reading::new(tp.clone(), tally, cs, opts.fetch_bytes));
            }
        }
    }
    drop((committed_on, uncommitted_on, starts));
    settle_proven(
        client,
        [&mut readings, &mut uncommitted_readings],
        &mut partitions,
        known.as_deref_mut(),
        settings.as_ref(),
        driver,
        bound,
    )
    .await;
    drop(settings);
    let (mut bytes_read, mut fetches) = (0u64, 0u64);
    let mut fetched: BTreeMap<TopicPartition, u64> = BTreeMap::new();
    // read_committed counts first, then the read_uncommitted ones: one
    // isolation per Fetch, and one round of answers in flight at a time
    for (isolation, readings) in [
        (READ_COMMITTED, readings),
        (READ_UNCOMMITTED, uncommitted_readings),
    ] {
        if readings.is_empty() {
            continue;
        }
        let metadata = routing(client, &readings, opts.offsets_per_wave, bound).await;
        let settings = FetchSettings {
            isolation_level: isolation,
            partition_max_bytes: opts.fetch_bytes,
            max_bytes: Some(opts.fetch_max_bytes),
            max_wait_ms: 0,
        };
        let fetch_driver = DriverOptions {
            max_keys_per_request: opts.partitions_per_fetch,
            max_concurrent_brokers: opts.concurrency,
        };
        let (done, requests) = read_all(
            client,
            readings,
            metadata,
            &settings,
            opts.max_bytes_per_partition,
            &fetch_driver,
            bound,
        )
        .await;
        fetches += requests;
        for r in done {
            bytes_read += r.bytes;
            if let Some(known) = known.as_deref_mut() {
                if uncompacted.contains(&r.tp.0) {
                    known.learn(&r.tp, &r.tally);
                }
            }
            if let Some(p) = partitions.get_mut(&r.tp) {
                if r.tally.is_read_committed() {
                    p.tally = Some(r.tally);
                    p.stopped = r.stopped;
                } else {
                    p.uncommitted = Some(r.tally);
                    p.uncommitted_stopped = r.stopped;
                }
            }
            if r.fetches > 0 {
                *fetched.entry(r.tp).or_default() += r.fetches;
            }
        }
    }
    LagRead {
        groups,
        partitions,
        blocked: blocked_diagnosis,
        join_error,
        bytes_read,
        fetches,
        fetched,
    }
}

/// Takes out of `readings` the partitions a proof shows hold no marker
/// and no transactional record in the range to read ([`proof`];
/// docs/LAG.md section 11): their counts are exact without a Fetch, and
/// `known` keeps them as an earlier read's. `settings`: the topics'
/// settings already read for `known`, if so.
async fn settle_proven(
    client: &SharedClient,
    readings: [&mut Vec<Reading>; 2],
    partitions: &mut BTreeMap<TopicPartition, PartitionLag>,
    mut known: Option<&mut Known>,
    settings: Option<&proof::TopicSettings>,
    driver: &DriverOptions,
    bound: &TimeBound,
) {
    let mut candidates: BTreeMap<TopicPartition, proof::Candidate> = BTreeMap::new();
    for r in readings.iter().flat_map(|list| list.iter()) {
        if let Some(Ok(b)) = partitions.get(&r.tp).map(|p| &p.bounds) {
            // a prefix `known` holds is proven already: the rest needs it
            let c = candidates.entry(r.tp.clone()).or_insert(proof::Candidate {
                start: r.tally.next_offset(),
                bounds: *b,
            });
            c.start = c.start.min(r.tally.next_offset());
        }
    }
    if candidates.is_empty() {
        return;
    }
    let proofs = proof::prove_unread(client, &candidates, settings, driver, bound).await;
    for list in readings {
        list.retain(|r| {
            if proofs.get(&r.tp) != Some(&Proof::Proven) {
                return true;
            }
            let mut tally = Tally::proven(r.tally.from(), r.tally.end());
            if !r.tally.is_read_committed() {
                tally = tally.read_uncommitted();
            }
            if let Some(known) = known.as_deref_mut() {
                known.learn(&r.tp, &tally);
            }
            if let Some(p) = partitions.get_mut(&r.tp) {
                match tally.is_read_committed() {
                    true => p.tally = Some(Box::new(tally)),
                    false => p.uncommitted = Some(Box::new(tally)),
                }
            }
            false
        });
    }
}

/// The routing of `readings`' partitions ([`only`]), looked up in waves
/// of `per_wave` partitions: one wave's whole metadata (replica lists and
/// all) at a time, not the cluster's. The default metadata if a lookup
/// fails: the reads look their partitions up again.
async fn routing(
    client: &SharedClient,
    readings: &[Reading],
    per_wave: usize,
    bound: &TimeBound,
) -> ClusterMetadata {
    let mut out = ClusterMetadata::default();
    for wave in readings.chunks(per_wave.max(1)) {
        let Some(md) = bounds::wave_metadata(client, wave.iter().map(|r| &r.tp), bound).await
        else {
            return ClusterMetadata::default();
        };
        let part = only(&md, wave.iter().map(|r| &r.tp));
        drop(md);
        out.controller_id = part.controller_id;
        out.brokers = part.brokers;
        for (name, topic) in part.topics {
            match out.topics.entry(name) {
                Entry::Vacant(e) => {
                    e.insert(topic);
                }
                // a topic cut by a wave's edge
                Entry::Occupied(mut e) => e.get_mut().partitions.extend(topic.partitions),
            }
        }
    }
    out
}

/// `md` with only the partitions `keep` names, and only what the reads
/// route by (a copy of every topic's partitions, or of every replica
/// list, costs more than the reads on a large cluster).
fn only<'a>(
    md: &ClusterMetadata,
    keep: impl Iterator<Item = &'a TopicPartition>,
) -> ClusterMetadata {
    let mut out = ClusterMetadata {
        cluster_id: None,
        controller_id: md.controller_id,
        brokers: md.brokers.clone(),
        topics: BTreeMap::new(),
    };
    // each topic's partitions built in bulk: a map filled in order
    // leaves its nodes half full, and the reads copy it
    let mut kept: BTreeMap<&str, Vec<(i32, PartitionInfo)>> = BTreeMap::new();
    for (topic, partition) in keep {
        let Some(p) = md.partition(topic, *partition) else {
            continue;
        };
        // routing needs the leader and its epoch, not the replicas
        kept.entry(topic.as_str()).or_default().push((
            *partition,
            PartitionInfo {
                partition: p.partition,
                error_code: p.error_code,
                leader: p.leader,
                leader_epoch: p.leader_epoch,
                replicas: Vec::new(),
                isr: Vec::new(),
                offline_replicas: Vec::new(),
            },
        ));
    }
    for (topic, partitions) in kept {
        let Some(t) = md.topic(topic) else {
            continue;
        };
        let info = TopicInfo {
            name: t.name.clone(),
            error_code: t.error_code,
            topic_id: t.topic_id,
            is_internal: t.is_internal,
            partitions: partitions.into_iter().collect(),
        };
        out.topics.insert(topic.to_string(), info);
    }
    out
}
