//! Fetch v4+ from a consumer (`KafkaApis.handleFetchRequest`,
//! `ReplicaManager.readFromLog`, `UnifiedLog.read`): each partition is read
//! from the log the mock holds for it (its `batches`).
//!
//! - v13+ name topics by id: an unknown id answers UNKNOWN_TOPIC_ID; up to
//!   v12 an unknown name UNKNOWN_TOPIC_OR_PARTITION.
//! - READ on the topic, else TOPIC_AUTHORIZATION_FAILED.
//! - The leader answers; from v11 (the consumer sends client metadata) a
//!   follower answers too (KIP-392), else NOT_LEADER_OR_FOLLOWER, as for a
//!   broker with no replica. An offline log answers KAFKA_STORAGE_ERROR; a
//!   CurrentLeaderEpoch older than the leader's FENCED_LEADER_EPOCH, newer
//!   UNKNOWN_LEADER_EPOCH.
//! - An offset below the log start or past the high watermark answers
//!   OFFSET_OUT_OF_RANGE; at the high watermark, no records.
//! - read_uncommitted reads to the high watermark; read_committed to the
//!   last stable offset, with the aborted transactions of the records
//!   returned (an empty list when none, null for read_uncommitted).
//! - Bytes: PartitionMaxBytes per partition and MaxBytes in all, cut at a
//!   byte, so the last batch may come partial, as from a segment slice;
//!   the first batch of the response comes whole even when larger
//!   (KIP-74). The answer also stays within what the client accepts.
//! - No fetch sessions: SessionId 0 (a full fetch every time), as a broker
//!   answers when its session cache is full. Follower fetches (ReplicaId
//!   >= 0) are not served.

use kdp_wire::messages::{
    AbortedTransaction, FetchPartitionData, FetchRequest, FetchResponse, FetchableTopicResponse,
    READ_COMMITTED, READ_UNCOMMITTED,
};
use kdp_wire::{ErrorCode, Uuid};

use super::handler::Invalid;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::TopicOperation;
use crate::cluster::{Cluster, Topic};

/// Bytes the answer takes besides records, per partition (generous: a
/// partition's fixed fields, tags and an aborted-transaction list).
const PARTITION_OVERHEAD: usize = 128;

/// Answers a Fetch from this broker's replicas; an unknown IsolationLevel
/// or a follower's fetch is `Err` (the connection closes).
pub fn fetch(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &FetchRequest,
    version: i16,
    limit: usize,
) -> Result<FetchResponse, Invalid> {
    let isolation = req.isolation_level;
    if isolation != READ_UNCOMMITTED && isolation != READ_COMMITTED {
        return Err(Invalid(format!("Unknown isolation level {isolation}")));
    }
    if req.replica_id >= 0 && version <= 14 {
        return Err(Invalid("the mock serves consumers' fetches only".into()));
    }
    let partitions: usize = req.topics.iter().map(|t| t.partitions.len()).sum();
    let room = limit.saturating_sub(64 + partitions.saturating_mul(PARTITION_OVERHEAD));
    let mut bytes_left = usize::try_from(req.max_bytes.max(0)).unwrap_or(0).min(room);
    let mut any_records = false;
    let mut responses = Vec::new();
    for t in &req.topics {
        let (topic, name): (Option<&Topic>, &str) = if version >= 13 {
            let found = cluster.topic_by_id(t.topic_id);
            (found, found.map_or("", |x| x.name.as_str()))
        } else {
            (cluster.topic(&t.topic), t.topic.as_str())
        };
        let unknown = if version >= 13 {
            ErrorCode::UNKNOWN_TOPIC_ID
        } else {
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        };
        let denied = topic.is_some()
            && !(cluster
                .acls
                .allows_topic(&caller.request.principal, TopicOperation::Read, name)
                && caller.authorizer.authorize_read_topic(caller.request, name));
        let parts = t
            .partitions
            .iter()
            .map(|p| {
                let Some(topic) = topic else {
                    return error(p.partition, unknown);
                };
                if denied {
                    return error(p.partition, ErrorCode::TOPIC_AUTHORIZATION_FAILED);
                }
                let max = usize::try_from(p.partition_max_bytes.max(0))
                    .unwrap_or(0)
                    .min(bytes_left);
                let answer = read(
                    topic,
                    caller.broker_id,
                    p,
                    isolation,
                    version,
                    max,
                    !any_records,
                );
                let used = answer.records.as_ref().map_or(0, Vec::len);
                if used > 0 {
                    any_records = true;
                }
                bytes_left = bytes_left.saturating_sub(used);
                answer
            })
            .collect();
        responses.push(FetchableTopicResponse {
            topic: if version >= 13 {
                String::new()
            } else {
                t.topic.clone()
            },
            topic_id: if version >= 13 {
                t.topic_id
            } else {
                Uuid::default()
            },
            partitions: parts,
            unknown_tagged_fields: Default::default(),
        });
    }
    Ok(FetchResponse {
        throttle_time_ms: 0,
        error_code: ErrorCode::NONE,
        session_id: 0,
        responses,
        unknown_tagged_fields: Default::default(),
    })
}

fn error(partition_index: i32, code: ErrorCode) -> FetchPartitionData {
    FetchPartitionData {
        partition_index,
        error_code: code,
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        aborted_transactions: None,
        preferred_read_replica: -1,
        records: Some(Vec::new()),
        unknown_tagged_fields: Default::default(),
    }
}

fn read(
    topic: &Topic,
    me: i32,
    req: &kdp_wire::messages::FetchPartition,
    isolation: i8,
    version: i16,
    max_bytes: usize,
    min_one: bool,
) -> FetchPartitionData {
    let index = req.partition;
    let Some(p) = usize::try_from(index)
        .ok()
        .and_then(|i| topic.partitions.get(i))
    else {
        return error(index, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    };
    if !p.is_replica(me) || (p.leader != me && version < 11) {
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
    let hw = p.high_watermark;
    let lso = p.last_stable_offset();
    let log_start = p.log_start_offset();
    let mut answer = FetchPartitionData {
        partition_index: index,
        error_code: ErrorCode::NONE,
        high_watermark: hw,
        last_stable_offset: lso,
        log_start_offset: log_start,
        aborted_transactions: None,
        preferred_read_replica: -1,
        records: Some(Vec::new()),
        unknown_tagged_fields: Default::default(),
    };
    if req.fetch_offset < log_start || req.fetch_offset > hw {
        answer.error_code = ErrorCode::OFFSET_OUT_OF_RANGE;
        return answer;
    }
    let upper = if isolation == READ_COMMITTED { lso } else { hw };
    let records = p.log.read(req.fetch_offset, upper, max_bytes, min_one);
    if isolation == READ_COMMITTED {
        // The aborted transactions overlapping what is returned.
        let end = p
            .log
            .batches()
            .iter()
            .take_while(|b| b.last_offset < upper)
            .map(|b| b.last_offset)
            .last()
            .unwrap_or(req.fetch_offset);
        answer.aborted_transactions = Some(
            p.log
                .aborted_transactions()
                .into_iter()
                .filter(|a| a.last_offset >= req.fetch_offset && a.first_offset <= end)
                .map(|a| AbortedTransaction {
                    producer_id: a.producer_id,
                    first_offset: a.first_offset,
                    unknown_tagged_fields: Default::default(),
                })
                .collect(),
        );
    }
    answer.records = Some(records);
    answer
}

impl Handler for FetchRequest {
    fn handle(&self, call: &Call<'_>) -> Result<FetchResponse, Refusal> {
        Ok(fetch(
            &call.shared.read(),
            &call.caller,
            self,
            call.version,
            call.limit,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::{FetchPartition, FetchTopic};
    use kdp_wire::records::Batches;

    /// Producer 9's transaction aborted (offsets 3-4, marker 5), then an
    /// open one from 6; non-transactional batches around them.
    const LOG: &str = r#"{
        "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
        "topics": [{"name": "t", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1, 2], "leader_epoch": 4, "log_start_offset": 1, "batches": [
                {"offset": 1, "producer_id": 7, "base_sequence": 0, "records": 2},
                {"producer_id": 9, "producer_epoch": 1, "base_sequence": 0, "records": 2, "transactional": true},
                {"producer_id": 9, "producer_epoch": 1, "control": "abort", "coordinator_epoch": 2},
                {"producer_id": 9, "producer_epoch": 2, "base_sequence": 0, "records": 3, "transactional": true},
                {"producer_id": 7, "base_sequence": 2, "records": 1, "compression": "zstd"}
            ]}
        ]}],
        "acls": {"topic_read_deny": ["secret"]}
    }"#;

    fn ask(
        c: &Cluster,
        broker: i32,
        version: i16,
        offset: i64,
        isolation: i8,
        max: i32,
    ) -> FetchPartitionData {
        let t = c.topic("t").unwrap();
        let req = FetchRequest {
            max_bytes: 1 << 20,
            isolation_level: isolation,
            topics: vec![FetchTopic {
                topic: "t".into(),
                topic_id: t.topic_id,
                partitions: vec![FetchPartition {
                    partition: 0,
                    fetch_offset: offset,
                    partition_max_bytes: max,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let resp = fetch(c, &caller(broker), &req, version, usize::MAX).unwrap();
        if version >= 13 {
            assert_eq!(resp.responses[0].topic_id, t.topic_id);
        } else {
            assert_eq!(resp.responses[0].topic, "t");
        }
        resp.responses[0].partitions[0].clone()
    }

    fn bases(records: &[u8]) -> Vec<i64> {
        Batches::new(records)
            .map(|b| b.unwrap().header().base_offset)
            .collect()
    }

    #[test]
    fn reads_up_to_the_high_watermark_or_the_lso() {
        let c = cluster(LOG);
        let all = ask(&c, 1, 18, 1, READ_UNCOMMITTED, 1 << 20);
        assert_eq!(bases(all.records.as_deref().unwrap()), [1, 3, 5, 6, 9]);
        assert_eq!(
            (
                all.high_watermark,
                all.last_stable_offset,
                all.log_start_offset
            ),
            (10, 6, 1)
        );
        assert_eq!(all.aborted_transactions, None);
        let committed = ask(&c, 1, 12, 2, READ_COMMITTED, 1 << 20);
        assert_eq!(bases(committed.records.as_deref().unwrap()), [1, 3, 5]);
        let aborted: Vec<(i64, i64)> = committed
            .aborted_transactions
            .unwrap()
            .iter()
            .map(|a| (a.producer_id, a.first_offset))
            .collect();
        assert_eq!(aborted, [(9, 3)]);
        // Past the aborted transaction: an empty list, not null.
        let later = ask(&c, 1, 12, 6, READ_COMMITTED, 1 << 20);
        assert_eq!(later.aborted_transactions, Some(vec![]));
        assert_eq!(later.records, Some(vec![]));
    }

    #[test]
    fn byte_limits_cut_the_last_batch_but_never_the_first() {
        let c = cluster(LOG);
        let whole = ask(&c, 1, 18, 1, READ_UNCOMMITTED, 1 << 20)
            .records
            .unwrap();
        let first = c.topic("t").unwrap().partitions[0].log.batches()[0]
            .bytes
            .len();
        let cut = ask(&c, 1, 18, 1, READ_UNCOMMITTED, (first + 10) as i32)
            .records
            .unwrap();
        assert_eq!(cut, whole[..first + 10]);
        let mut batches = Batches::new(&cut);
        assert_eq!(batches.by_ref().count(), 1);
        assert_eq!(batches.partial().unwrap().available, 10);
        let tiny = ask(&c, 1, 18, 1, READ_UNCOMMITTED, 1).records.unwrap();
        assert_eq!(tiny, whole[..first], "KIP-74: the first batch whole");
    }

    #[test]
    fn errors_follow_kafka() {
        let c = cluster(LOG);
        let code = |broker, version, offset| {
            ask(&c, broker, version, offset, READ_UNCOMMITTED, 1000).error_code
        };
        assert_eq!(code(1, 18, 0), ErrorCode::OFFSET_OUT_OF_RANGE);
        assert_eq!(code(1, 18, 11), ErrorCode::OFFSET_OUT_OF_RANGE);
        assert_eq!(code(1, 18, 10), ErrorCode::NONE);
        // A follower serves v11+ consumers only; a non-replica none.
        assert_eq!(code(2, 10, 1), ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(code(2, 11, 1), ErrorCode::NONE);
        assert_eq!(code(3, 18, 1), ErrorCode::NOT_LEADER_OR_FOLLOWER);
        let unknown = FetchRequest {
            topics: vec![FetchTopic {
                topic_id: Uuid([5; 16]),
                partitions: vec![FetchPartition::default()],
                ..Default::default()
            }],
            ..Default::default()
        };
        let resp = fetch(&c, &caller(1), &unknown, 13, usize::MAX).unwrap();
        assert_eq!(
            resp.responses[0].partitions[0].error_code,
            ErrorCode::UNKNOWN_TOPIC_ID
        );
        let resp = fetch(&c, &caller(1), &unknown, 12, usize::MAX).unwrap();
        assert_eq!(
            resp.responses[0].partitions[0].error_code,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        );
        let bad = FetchRequest {
            isolation_level: 2,
            ..Default::default()
        };
        assert!(fetch(&c, &caller(1), &bad, 12, usize::MAX).is_err());
    }
}
