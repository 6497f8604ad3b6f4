//! ListOffsets v1+ (`KafkaApis.handleListOffsetRequestV1AndAbove`,
//! `ReplicaManager.fetchOffset`, `Partition.fetchOffsetForTimestamp`):
//! topics the caller may not DESCRIBE answer TOPIC_AUTHORIZATION_FAILED and
//! come after the others; a partition named twice is INVALID_REQUEST; the
//! partition must be led here (NOT_LEADER_OR_FOLLOWER otherwise, unless the
//! debugging replica id -2 asks), its log online (KAFKA_STORAGE_ERROR), and
//! a CurrentLeaderEpoch, when given, the leader's (FENCED_LEADER_EPOCH if
//! older, UNKNOWN_LEADER_EPOCH if newer). Latest (-1) is the high
//! watermark for read_uncommitted and the last stable offset for
//! read_committed, with the leader epoch; earliest (-2, and -4, earliest
//! local) is the log start offset (0 unless the file moves it). A timestamp
//! (0 or more) finds the first record of the partition's log (its
//! `batches`, or a `__transaction_state` partition's `log`) written at or
//! after it, below the isolation's end: its offset and timestamp
//! (`Partition.fetchOffsetForTimestamp`); none: offset and timestamp -1,
//! as Kafka answers. Max timestamp (-3) finds nothing.

use std::collections::HashMap;

use kdp_wire::messages::list_offsets::{
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, READ_COMMITTED, READ_UNCOMMITTED,
};
use kdp_wire::messages::{
    ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopicResponse,
};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};

use super::handler::Invalid;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::budget::Budget;
use crate::cluster::Cluster;

/// `ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP`.
const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
/// `ListOffsetsRequest.DEBUGGING_REPLICA_ID`: may read from a follower.
const DEBUGGING_REPLICA_ID: i32 = -2;

/// Answers ListOffsets from the partitions this broker leads; an unknown IsolationLevel is `Err`, closing the connection.
pub fn list_offsets(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &ListOffsetsRequest,
    version: i16,
) -> Result<ListOffsetsResponse, Invalid> {
    match list_offsets_within(cluster, caller, req, version, &Budget::unlimited()) {
        Ok(resp) => Ok(resp),
        Err(Refusal::Invalid(e)) => Err(e),
        // Nothing is larger than usize::MAX bytes.
        Err(Refusal::TooLarge(e)) => unreachable!("{e}"),
    }
}

/// As [`list_offsets`], refused before it is built when the answer cannot
/// fit `budget`: each named topic and partition is answered once, in
/// entries of a fixed size plus the topic's name.
pub fn list_offsets_within(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &ListOffsetsRequest,
    version: i16,
    budget: &Budget,
) -> Result<ListOffsetsResponse, Refusal> {
    let v = Version::of::<ListOffsetsResponse>(version);
    let (topic, partition) = (
        ListOffsetsTopicResponse::min_len(v),
        ListOffsetsPartitionResponse::min_len(v),
    );
    budget.precheck_each(req.topics.iter().map(|t| {
        topic
            .saturating_add(t.name.len())
            .saturating_add(t.partitions.len().saturating_mul(partition))
    }))?;
    let isolation = if version >= 2 {
        req.isolation_level
    } else {
        READ_UNCOMMITTED
    };
    if isolation != READ_UNCOMMITTED && isolation != READ_COMMITTED {
        return Err(Invalid(format!("Unknown isolation level {isolation}")).into());
    }
    // ListOffsetsRequest.duplicatePartitions.
    let mut counts: HashMap<(&str, i32), usize> = HashMap::new();
    for t in &req.topics {
        for p in &t.partitions {
            *counts
                .entry((t.name.as_str(), p.partition_index))
                .or_default() += 1;
        }
    }
    let mut authorized = Vec::new();
    let mut denied = Vec::new();
    for t in &req.topics {
        if !caller.may_describe_topic(cluster, &t.name) {
            denied.push(ListOffsetsTopicResponse {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| error(p.partition_index, ErrorCode::TOPIC_AUTHORIZATION_FAILED))
                    .collect(),
                unknown_tagged_fields: Default::default(),
            });
            continue;
        }
        let partitions = t
            .partitions
            .iter()
            .map(|p| {
                if counts.get(&(t.name.as_str(), p.partition_index)).copied() > Some(1) {
                    return error(p.partition_index, ErrorCode::INVALID_REQUEST);
                }
                offset(cluster, caller, req.replica_id, isolation, &t.name, p)
            })
            .collect();
        authorized.push(ListOffsetsTopicResponse {
            name: t.name.clone(),
            partitions,
            unknown_tagged_fields: Default::default(),
        });
    }
    authorized.extend(denied);
    Ok(ListOffsetsResponse {
        topics: authorized,
        ..Default::default()
    })
}

fn error(partition_index: i32, code: ErrorCode) -> ListOffsetsPartitionResponse {
    ListOffsetsPartitionResponse {
        partition_index,
        error_code: code,
        timestamp: -1,
        offset: -1,
        leader_epoch: -1,
        unknown_tagged_fields: Default::default(),
    }
}

fn offset(
    cluster: &Cluster,
    caller: &Caller<'_>,
    replica_id: i32,
    isolation: i8,
    topic: &str,
    req: &kdp_wire::messages::ListOffsetsPartition,
) -> ListOffsetsPartitionResponse {
    let index = req.partition_index;
    let Some(p) = cluster.partition(topic, index) else {
        return error(index, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    };
    let me = caller.broker_id;
    if !p.is_replica(me) || (p.leader != me && replica_id != DEBUGGING_REPLICA_ID) {
        return error(index, ErrorCode::NOT_LEADER_OR_FOLLOWER);
    }
    if p.is_offline_on(me) {
        return error(index, ErrorCode::KAFKA_STORAGE_ERROR);
    }
    if req.current_leader_epoch >= 0 {
        if req.current_leader_epoch < p.leader_epoch {
            return error(index, ErrorCode::FENCED_LEADER_EPOCH);
        }
        if req.current_leader_epoch > p.leader_epoch {
            return error(index, ErrorCode::UNKNOWN_LEADER_EPOCH);
        }
    }
    let (timestamp, offset) = match req.timestamp {
        LATEST_TIMESTAMP if isolation == READ_COMMITTED => (-1, p.last_stable_offset()),
        LATEST_TIMESTAMP => (-1, p.high_watermark),
        EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => (-1, p.log_start_offset()),
        ts if ts >= 0 => {
            let end = if isolation == READ_COMMITTED {
                p.last_stable_offset()
            } else {
                p.high_watermark
            };
            offset_for_timestamp(p, ts, end).unwrap_or((-1, -1))
        }
        _ => (-1, -1),
    };
    ListOffsetsPartitionResponse {
        partition_index: index,
        error_code: ErrorCode::NONE,
        timestamp,
        offset,
        leader_epoch: if offset >= 0 { p.leader_epoch } else { -1 },
        unknown_tagged_fields: Default::default(),
    }
}

/// The first record below `end` written at or after `target`: its
/// timestamp and offset (Kafka: the first batch whose max timestamp
/// reaches the target, then the first such record in it).
fn offset_for_timestamp(
    p: &crate::cluster::Partition,
    target: i64,
    end: i64,
) -> Option<(i64, i64)> {
    use kdp_wire::records::{Batches, TimestampType, DEFAULT_MAX_DECOMPRESSED};
    for b in p.log.batches() {
        if b.base_offset >= end {
            return None;
        }
        for batch in Batches::new(&b.bytes).flatten() {
            let h = *batch.header();
            if h.max_timestamp < target || h.is_control() {
                continue;
            }
            let Ok(data) = batch.records_data(DEFAULT_MAX_DECOMPRESSED) else {
                continue;
            };
            for r in data.iter().flatten() {
                let offset = h.base_offset.saturating_add(i64::from(r.offset_delta));
                let ts = if h.timestamp_type() == TimestampType::LogAppendTime {
                    h.max_timestamp
                } else {
                    h.base_timestamp.saturating_add(r.timestamp_delta)
                };
                if offset >= end {
                    return None;
                }
                if ts >= target {
                    return Some((ts, offset));
                }
            }
        }
    }
    None
}

impl Handler for ListOffsetsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ListOffsetsResponse, Refusal> {
        list_offsets_within(
            &call.shared.read(),
            &call.caller,
            self,
            call.version,
            &Budget::new(call.limit),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::{ListOffsetsPartition, ListOffsetsTopic};

    fn ask(
        c: &Cluster,
        broker: i32,
        isolation: i8,
        parts: &[(&str, i32, i64, i32)],
    ) -> Vec<(String, i32, ErrorCode, i64)> {
        let mut topics: Vec<ListOffsetsTopic> = Vec::new();
        for &(t, p, ts, epoch) in parts {
            let part = ListOffsetsPartition {
                partition_index: p,
                current_leader_epoch: epoch,
                timestamp: ts,
                ..Default::default()
            };
            match topics.iter_mut().find(|x| x.name == t) {
                Some(x) => x.partitions.push(part),
                None => topics.push(ListOffsetsTopic {
                    name: t.into(),
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        let req = ListOffsetsRequest {
            replica_id: -1,
            isolation_level: isolation,
            topics,
            ..Default::default()
        };
        let r = list_offsets(c, &caller(broker), &req, 9).unwrap();
        r.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.clone(), p.partition_index, p.error_code, p.offset))
            })
            .collect()
    }

    #[test]
    fn a_timestamp_finds_the_first_record_written_at_or_after_it() {
        use crate::cluster::log::SimpleRecord;
        let mut c = cluster(TXN_CLUSTER);
        let rec = |t| SimpleRecord {
            key: Some(b"k".to_vec()),
            value: Some(b"v".to_vec()),
            timestamp_ms: t,
        };
        // one batch of three records (1000, 2000, 3000), then one at 3000,
        // appended after the partition's high watermark
        let (base, _) = c
            .append_records("orders", 1, &[rec(1000), rec(2000), rec(3000)])
            .unwrap();
        c.append_records("orders", 1, &[rec(3000)]).unwrap();
        for (ts, delta) in [
            (0, 0),
            (1000, 0),
            (1001, 1),
            (2500, 2),
            (3000, 2),
            (3001, -1),
        ] {
            let want = if delta < 0 { -1 } else { base + delta };
            assert_eq!(
                ask(&c, 2, 0, &[("orders", 1, ts, -1)]),
                vec![("orders".into(), 1, ErrorCode::NONE, want)],
                "timestamp {ts}"
            );
        }
    }

    #[test]
    fn latest_is_the_high_watermark_or_the_lso() {
        let c = cluster(TXN_CLUSTER);
        // orders-0: HW 500; open transactions from 400 and 450 on the leader.
        assert_eq!(
            ask(&c, 1, 0, &[("orders", 0, -1, -1)]),
            vec![("orders".into(), 0, ErrorCode::NONE, 500)]
        );
        assert_eq!(
            ask(&c, 1, 1, &[("orders", 0, -1, 5)]),
            vec![("orders".into(), 0, ErrorCode::NONE, 400)]
        );
        assert_eq!(
            ask(&c, 1, 1, &[("orders", 0, -2, -1)]),
            vec![("orders".into(), 0, ErrorCode::NONE, 0)]
        );
        // No open transaction: LSO = HW.
        assert_eq!(
            ask(&c, 2, 1, &[("orders", 1, -1, -1)]),
            vec![("orders".into(), 1, ErrorCode::NONE, 80)]
        );
        // A timestamp search in a partition without records finds nothing.
        assert_eq!(
            ask(&c, 2, 1, &[("orders", 1, 12345, -1)]),
            vec![("orders".into(), 1, ErrorCode::NONE, -1)]
        );
    }

    #[test]
    fn an_explicit_lso_wins() {
        let json = TXN_CLUSTER.replace(
            r#""high_watermark": 80"#,
            r#""high_watermark": 80, "last_stable_offset": 70"#,
        );
        let c = cluster(&json);
        assert_eq!(
            ask(&c, 2, 1, &[("orders", 1, -1, -1)]),
            vec![("orders".into(), 1, ErrorCode::NONE, 70)]
        );
    }

    #[test]
    fn errors() {
        let c = cluster(TXN_CLUSTER);
        let got = ask(
            &c,
            1,
            0,
            &[
                ("orders", 0, -1, 4),
                ("orders", 1, -1, -1),
                ("orders", 7, -1, -1),
                ("nope", 0, -1, -1),
            ],
        );
        assert_eq!(
            got.iter().map(|g| g.2).collect::<Vec<_>>(),
            vec![
                ErrorCode::FENCED_LEADER_EPOCH,
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
            ]
        );
        assert_eq!(
            ask(&c, 1, 0, &[("orders", 0, -1, 6)])[0].2,
            ErrorCode::UNKNOWN_LEADER_EPOCH
        );
        // A follower does not answer.
        assert_eq!(
            ask(&c, 2, 0, &[("orders", 0, -1, -1)])[0].2,
            ErrorCode::NOT_LEADER_OR_FOLLOWER
        );
        let dup = ask(&c, 1, 0, &[("orders", 0, -1, -1), ("orders", 0, -2, -1)]);
        assert!(dup.iter().all(|g| g.2 == ErrorCode::INVALID_REQUEST));
    }
}
