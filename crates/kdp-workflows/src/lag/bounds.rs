//! Each partition's bounds for the lag: its log start, high watermark and
//! LSO (ListOffsets earliest, latest READ_UNCOMMITTED, latest
//! READ_COMMITTED: three driver runs, as a request has one isolation level
//! and a partition once), read in waves of at most
//! [`LagReadOptions::offsets_per_wave`] partitions, in order.
//!
//! Each wave looks its topics up once (one Metadata request, kept without
//! its replica lists) and the three runs route by that copy; its answers are folded into the bounds before the next wave is
//! asked. So what the bounds hold at once, besides the bounds themselves
//! (one slot per partition: the result), is one wave's routing, keys,
//! requests and answers, not the cluster's three times over (issue 30).
//! A topic cut by a wave's edge is looked up by both waves.
//!
//! [`LagReadOptions::offsets_per_wave`]: super::LagReadOptions::offsets_per_wave

use kdp_client::admin::{DriverOptions, PartitionLeader};
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::txn::offsets::list_offsets_via;
use kdp_domain::key_error::KeyError;
use kdp_domain::lag::Bounds;
use kdp_domain::partition::TopicPartition;
use kdp_wire::messages::list_offsets::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP};
use kdp_wire::messages::{READ_COMMITTED, READ_UNCOMMITTED};
use kdp_wire::ErrorCode;

use kdp_client::metadata::ClusterMetadata;

/// A partition's bounds, or why they could not be read.
pub type Bound = std::result::Result<Bounds, KeyError>;

/// The bounds of `keys` (sorted, each once), in their order: waves of at
/// most `per_wave` partitions (a wave's keys copied, not the cluster's),
/// each of three ListOffsets runs through the driver (`driver`: keys per
/// request, brokers at once), all within `bound`.
pub async fn read_bounds<'a>(
    client: &SharedClient,
    mut keys: impl ExactSizeIterator<Item = &'a TopicPartition>,
    per_wave: usize,
    driver: &DriverOptions,
    bound: &TimeBound,
) -> Vec<(TopicPartition, Bound)> {
    let mut out = Vec::with_capacity(keys.len());
    loop {
        let wave: Vec<TopicPartition> = keys.by_ref().take(per_wave.max(1)).cloned().collect();
        if wave.is_empty() {
            return out;
        }
        read_wave(client, &wave, driver, bound, &mut out).await;
    }
}

/// One wave's bounds, pushed onto `out` in `wave`'s order.
async fn read_wave(
    client: &SharedClient,
    wave: &[TopicPartition],
    driver: &DriverOptions,
    bound: &TimeBound,
    out: &mut Vec<(TopicPartition, Bound)>,
) {
    // one lookup for the three runs; without it, each looks its leaders
    // up itself
    let routing = wave_metadata(client, wave.iter(), bound)
        .await
        .map(leaders_only);
    let leaders = || match &routing {
        Some(md) => PartitionLeader::new().with_metadata(md.clone()),
        None => PartitionLeader::new(),
    };
    let run = |timestamp, isolation| {
        list_offsets_via(
            client,
            wave.to_vec(),
            timestamp,
            isolation,
            driver,
            bound,
            leaders(),
        )
    };
    let (earliest, hwm, lso) = tokio::join!(
        run(EARLIEST_TIMESTAMP, READ_UNCOMMITTED),
        run(LATEST_TIMESTAMP, READ_UNCOMMITTED),
        run(LATEST_TIMESTAMP, READ_COMMITTED),
    );
    drop(routing);
    let missing = || KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, "no ListOffsets answer");
    for tp in wave {
        let get = |m: &std::collections::BTreeMap<
            TopicPartition,
            std::result::Result<i64, KeyError>,
        >| { m.get(tp).cloned().unwrap_or_else(|| Err(missing())) };
        let b = (|| {
            Ok(Bounds {
                log_start: Some(get(&earliest)?),
                high_watermark: get(&hwm)?,
                last_stable_offset: get(&lso)?,
            })
        })();
        out.push((tp.clone(), b));
    }
}

/// The metadata of the topics of one wave's partitions (`wave`, in order,
/// so each topic's partitions are consecutive), within `bound`: `None` if
/// the lookup fails, and the caller's requests look their partitions up
/// themselves.
pub(super) async fn wave_metadata<'a>(
    client: &SharedClient,
    wave: impl Iterator<Item = &'a TopicPartition>,
    bound: &TimeBound,
) -> Option<ClusterMetadata> {
    let mut topics: Vec<String> = Vec::new();
    for (topic, _) in wave {
        if topics.last() != Some(topic) {
            topics.push(topic.clone());
        }
    }
    let lookup = client.metadata_within(Some(&topics), bound.request_timeout());
    bound.run("Metadata", lookup).await.ok()
}

/// `md` without what routing to leaders does not use (the replica lists:
/// most of a large topic's metadata). Every topic and partition stays, so
/// a partition or topic the lookup does not know fails as it would have.
fn leaders_only(mut md: ClusterMetadata) -> ClusterMetadata {
    for t in md.topics.values_mut() {
        for p in t.partitions.values_mut() {
            p.replicas = Vec::new();
            p.isr = Vec::new();
            p.offline_replicas = Vec::new();
        }
    }
    md
}
