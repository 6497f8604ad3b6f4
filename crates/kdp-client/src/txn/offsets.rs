//! ListOffsets on partition leaders: the high watermark (latest offset,
//! READ_UNCOMMITTED) and the last stable offset (latest, READ_COMMITTED).
//! The records between them are what an open transaction holds back from
//! every read_committed consumer.

use std::collections::BTreeMap;

use kdp_domain::key_error::KeyError;
use kdp_domain::offsets::Offsets;
use kdp_domain::partition::TopicPartition;
use kdp_wire::messages::list_offsets::{LATEST_TIMESTAMP, READ_COMMITTED, READ_UNCOMMITTED};
use kdp_wire::messages::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic,
};

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, DriverOptions, KeyOutcome, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::SharedClient;

struct Handler {
    isolation_level: i8,
    timestamp: i64,
}

impl AdminHandler for Handler {
    type Key = TopicPartition;
    type Value = i64;
    type Request = ListOffsetsRequest;
    type Response = ListOffsetsResponse;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> ListOffsetsRequest {
        let mut topics: BTreeMap<&str, Vec<ListOffsetsPartition>> = BTreeMap::new();
        for (t, p) in keys {
            topics.entry(t).or_default().push(ListOffsetsPartition {
                partition_index: *p,
                timestamp: self.timestamp,
                ..Default::default()
            });
        }
        ListOffsetsRequest {
            isolation_level: self.isolation_level,
            topics: topics
                .into_iter()
                .map(|(name, partitions)| ListOffsetsTopic {
                    name: name.to_string(),
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[TopicPartition],
        resp: ListOffsetsResponse,
    ) -> Vec<(TopicPartition, KeyOutcome<i64>)> {
        let mut out = Vec::new();
        // a set: a linear search per answered partition is quadratic
        let asked: std::collections::HashSet<&TopicPartition> = keys.iter().collect();
        for t in resp.topics {
            for p in t.partitions {
                let key = (t.name.clone(), p.partition_index);
                if asked.contains(&key) {
                    out.push((key, KeyOutcome::from_code(p.error_code, None, || p.offset)));
                }
            }
        }
        out
    }
}

/// ListOffsets of each partition at `timestamp` (`LATEST_TIMESTAMP`,
/// `EARLIEST_TIMESTAMP`, or a time), asked of its leader.
pub async fn list_offsets(
    client: &SharedClient,
    partitions: Vec<TopicPartition>,
    timestamp: i64,
    isolation_level: i8,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<TopicPartition, std::result::Result<i64, KeyError>> {
    let leaders = PartitionLeader::new();
    list_offsets_via(
        client,
        partitions,
        timestamp,
        isolation_level,
        opts,
        bound,
        leaders,
    )
    .await
}

/// [`list_offsets`] routed by `leaders` (which may hold metadata already:
/// runs that share one lookup).
pub async fn list_offsets_via(
    client: &SharedClient,
    partitions: Vec<TopicPartition>,
    timestamp: i64,
    isolation_level: i8,
    opts: &DriverOptions,
    bound: &TimeBound,
    mut leaders: PartitionLeader,
) -> BTreeMap<TopicPartition, std::result::Result<i64, KeyError>> {
    let mut results = Vec::new();
    drive(
        client,
        &Handler {
            isolation_level,
            timestamp,
        },
        &mut leaders,
        partitions,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}

/// The high watermark and LSO of each partition, asked of its leader.
pub async fn offsets(
    client: &SharedClient,
    partitions: Vec<TopicPartition>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<TopicPartition, std::result::Result<Offsets, KeyError>> {
    // one Metadata for both isolation levels (their topics may hold 100,000
    // partitions); without it, each run looks its leaders up itself
    let mut topics: Vec<String> = partitions.iter().map(|(t, _)| t.clone()).collect();
    topics.dedup();
    topics.sort();
    topics.dedup();
    let leaders = match bound
        .run(
            "Metadata",
            client.metadata_within(Some(&topics), bound.request_timeout()),
        )
        .await
    {
        Ok(md) => (
            PartitionLeader::new().with_metadata(md.clone()),
            PartitionLeader::new().with_metadata(md),
        ),
        Err(_) => (PartitionLeader::new(), PartitionLeader::new()),
    };
    let (hw, lso) = tokio::join!(
        list_offsets_via(
            client,
            partitions.clone(),
            LATEST_TIMESTAMP,
            READ_UNCOMMITTED,
            opts,
            bound,
            leaders.0
        ),
        list_offsets_via(
            client,
            partitions,
            LATEST_TIMESTAMP,
            READ_COMMITTED,
            opts,
            bound,
            leaders.1
        ),
    );
    hw.into_iter()
        .map(|(tp, hw)| {
            let lso = lso.get(&tp).cloned();
            let r = match (hw, lso) {
                (Ok(high_watermark), Some(Ok(last_stable_offset))) => Ok(Offsets {
                    high_watermark,
                    last_stable_offset,
                }),
                (Err(e), _) | (Ok(_), Some(Err(e))) => Err(e),
                (Ok(_), None) => Err(KeyError::client(
                    kdp_wire::ErrorCode::UNKNOWN_SERVER_ERROR,
                    "no READ_COMMITTED answer",
                )),
            };
            (tp, r)
        })
        .collect()
}
