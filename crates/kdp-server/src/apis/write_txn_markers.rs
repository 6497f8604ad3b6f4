//! WriteTxnMarkers (`KafkaApis.handleWriteTxnMarkersRequest`,
//! `ProducerAppendInfo.appendEndTxnMarker`): what `kafka-transactions.sh
//! abort` sends to a partition leader. ALTER on the cluster, else
//! CLUSTER_ACTION, is required: without either every partition answers
//! CLUSTER_AUTHORIZATION_FAILED and nothing changes.
//!
//! Per partition: not hosted here -> UNKNOWN_TOPIC_OR_PARTITION (the
//! broker has no log to read the format from); log offline ->
//! KAFKA_STORAGE_ERROR; a follower -> NOT_LEADER_OR_FOLLOWER. On the
//! leader the marker is checked against the producer's entry: an epoch
//! older than the entry's -> INVALID_PRODUCER_EPOCH (under transaction
//! version 2, a marker must be newer: an equal epoch is refused too); a
//! coordinator epoch older than the entry's ->
//! TRANSACTION_COORDINATOR_FENCED. Accepted, the marker is one record
//! appended (the high watermark moves by one) and every replica's entry for
//! the producer takes the marker's epoch and coordinator epoch, its open
//! transaction ends (CurrentTxnStartOffset -1, so the last stable offset
//! moves), its LastTimestamp is now, and a changed epoch forgets the
//! sequence (LastSequence -1). A producer without an entry gets one. A
//! marker for a producer with no open transaction changes only that, so a
//! retried abort is harmless.
//!
//! The response has one entry per producer id, in order of first
//! appearance, its partitions grouped by topic.
//!
//! Cost: a request is laid out once ([`MarkerPlan`]: the answer with every
//! entry in place, found through hash maps, and one step per marker and
//! partition), so its work is linear in its size; the answer's size is
//! known before any marker is written. The steps are then applied in
//! chunks of at most [`CHUNK`], each under the cluster's write lock taken
//! for it alone, so a request of 100,000 markers lets other clients in
//! between its chunks instead of holding the lock for all of them.

use std::collections::HashMap;
use std::ops::{DerefMut, Range};

use kdp_wire::messages::{
    WritableTxnMarker, WritableTxnMarkerPartitionResult, WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};
use kdp_wire::Message;

use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::ClusterOperation;
use crate::budget::Budget;
use crate::budget::TooLarge;
use crate::cluster::marker::MarkerState;
use crate::cluster::{Cluster, Partition};
use crate::shared::Shared;

/// Steps (one marker on one partition) applied under one taking of the
/// cluster's write lock.
pub const CHUNK: usize = 1024;

/// Applies WriteTxnMarkers' COMMIT/ABORT markers to the partitions this broker leads, ending producers' open transactions.
pub fn write_txn_markers(
    cluster: &mut Cluster,
    caller: &Caller<'_>,
    req: &WriteTxnMarkersRequest,
) -> WriteTxnMarkersResponse {
    let allowed = caller.may_cluster(cluster, ClusterOperation::Alter)
        || caller.may_cluster(cluster, ClusterOperation::ClusterAction);
    let mut plan = MarkerPlan::new(req, allowed);
    plan.apply(cluster, caller, req, 0..plan.steps());
    plan.into_response()
}

/// A WriteTxnMarkers request laid out before anything is written: the
/// answer's skeleton (each partition's code still to be decided) and, in
/// request order, one step per marker and partition.
#[derive(Debug)]
pub struct MarkerPlan {
    response: WriteTxnMarkersResponse,
    steps: Vec<Step>,
    allowed: bool,
}

/// One marker on one partition, and where its code goes in the answer.
#[derive(Debug, Clone, Copy)]
struct Step {
    marker: usize,
    topic: usize,
    partition: i32,
    result: usize,
    result_topic: usize,
    result_partition: usize,
}

impl MarkerPlan {
    /// Lays `req` out in time linear in its size. `allowed`: the caller
    /// may ALTER or CLUSTER_ACTION the cluster (else every partition
    /// answers CLUSTER_AUTHORIZATION_FAILED and nothing is written).
    pub fn new(req: &WriteTxnMarkersRequest, allowed: bool) -> MarkerPlan {
        let code = if allowed {
            ErrorCode::NONE
        } else {
            ErrorCode::CLUSTER_AUTHORIZATION_FAILED
        };
        let mut response = WriteTxnMarkersResponse::default();
        let mut steps = Vec::new();
        let mut by_producer: HashMap<i64, usize> = HashMap::new();
        let mut by_topic: HashMap<(usize, &str), usize> = HashMap::new();
        for (marker, m) in req.markers.iter().enumerate() {
            let result = *by_producer.entry(m.producer_id).or_insert_with(|| {
                response.markers.push(WritableTxnMarkerResult {
                    producer_id: m.producer_id,
                    ..Default::default()
                });
                response.markers.len() - 1
            });
            let Some(result_entry) = response.markers.get_mut(result) else {
                continue;
            };
            for (topic, t) in m.topics.iter().enumerate() {
                let result_topic =
                    *by_topic
                        .entry((result, t.name.as_str()))
                        .or_insert_with(|| {
                            result_entry.topics.push(WritableTxnMarkerTopicResult {
                                name: t.name.clone(),
                                ..Default::default()
                            });
                            result_entry.topics.len() - 1
                        });
                let Some(topic_entry) = result_entry.topics.get_mut(result_topic) else {
                    continue;
                };
                topic_entry.partitions.reserve(t.partition_indexes.len());
                for &partition in &t.partition_indexes {
                    topic_entry
                        .partitions
                        .push(WritableTxnMarkerPartitionResult {
                            partition_index: partition,
                            error_code: code,
                            unknown_tagged_fields: Default::default(),
                        });
                    if allowed {
                        steps.push(Step {
                            marker,
                            topic,
                            partition,
                            result,
                            result_topic,
                            result_partition: topic_entry.partitions.len() - 1,
                        });
                    }
                }
            }
        }
        MarkerPlan {
            response,
            steps,
            allowed,
        }
    }

    /// The answer as far as it is decided; its encoded size is the final
    /// one (codes have a fixed width).
    pub fn response(&self) -> &WriteTxnMarkersResponse {
        &self.response
    }

    /// The answer.
    pub fn into_response(self) -> WriteTxnMarkersResponse {
        self.response
    }

    /// How many markers-on-a-partition there are to write (none when the
    /// caller is not allowed to).
    pub fn steps(&self) -> usize {
        if self.allowed {
            self.steps.len()
        } else {
            0
        }
    }

    /// Writes the steps in `range` (of `0..self.steps()`) to `cluster`,
    /// recording each partition's code in the answer. Each partition's
    /// producer entries are indexed once per call, not searched per marker.
    pub fn apply(
        &mut self,
        cluster: &mut Cluster,
        caller: &Caller<'_>,
        req: &WriteTxnMarkersRequest,
        range: Range<usize>,
    ) {
        let Some(steps) = self.steps.get(range) else {
            return;
        };
        let mut indexes: HashMap<(&str, i32), ProducerIndex> = HashMap::new();
        for step in steps {
            let Some(marker) = req.markers.get(step.marker) else {
                continue;
            };
            let Some(topic) = marker.topics.get(step.topic) else {
                continue;
            };
            let code = match cluster.partition_mut(&topic.name, step.partition) {
                Some(p) => {
                    let index = indexes
                        .entry((topic.name.as_str(), step.partition))
                        .or_insert_with(|| ProducerIndex::of(p));
                    append_marker(p, index, caller, marker)
                }
                None => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            };
            if let Some(slot) = self
                .response
                .markers
                .get_mut(step.result)
                .and_then(|m| m.topics.get_mut(step.result_topic))
                .and_then(|t| t.partitions.get_mut(step.result_partition))
            {
                slot.error_code = code;
            }
        }
    }

    /// Writes every step, [`CHUNK`] at a time, each chunk under its own
    /// `lock()`: between chunks the lock is free for other requests.
    pub fn apply_in_chunks<G: DerefMut<Target = Cluster>>(
        &mut self,
        mut lock: impl FnMut() -> G,
        caller: &Caller<'_>,
        req: &WriteTxnMarkersRequest,
    ) {
        let total = self.steps();
        let mut start = 0;
        while start < total {
            let end = start.saturating_add(CHUNK).min(total);
            {
                let mut cluster = lock();
                self.apply(&mut cluster, caller, req, start..end);
            }
            start = end;
            if start < total {
                // Let a waiting reader take the lock before the next chunk.
                std::thread::yield_now();
            }
        }
    }
}

/// Where each producer's entry is, in each producer list of one partition
/// (the shared list, then each replica's own, in
/// [`Partition::all_producer_lists_mut`] order).
#[derive(Debug)]
struct ProducerIndex {
    lists: Vec<HashMap<i64, usize>>,
}

impl ProducerIndex {
    fn of(p: &mut Partition) -> ProducerIndex {
        ProducerIndex {
            lists: p
                .all_producer_lists_mut()
                .map(|list| {
                    list.iter()
                        .enumerate()
                        .map(|(i, s)| (s.producer_id, i))
                        .collect()
                })
                .collect(),
        }
    }

    /// Which of the lists `broker_id`'s replica reads.
    fn list_of(p: &Partition, broker_id: i32) -> usize {
        p.replica_producers
            .keys()
            .position(|&b| b == broker_id)
            .map_or(0, |i| i + 1)
    }
}

fn append_marker(
    p: &mut Partition,
    index: &mut ProducerIndex,
    caller: &Caller<'_>,
    marker: &WritableTxnMarker,
) -> ErrorCode {
    let me = caller.broker_id;
    if !p.is_replica(me) {
        return ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
    }
    if p.is_offline_on(me) {
        return ErrorCode::KAFKA_STORAGE_ERROR;
    }
    if p.leader != me {
        return ErrorCode::NOT_LEADER_OR_FOLLOWER;
    }
    let epoch = i32::from(marker.producer_epoch);
    let current = index
        .lists
        .get(ProducerIndex::list_of(p, me))
        .and_then(|l| l.get(&marker.producer_id))
        .and_then(|&i| p.producers_on(me).get(i));
    if let Some(current) = current {
        let stale = if marker.transaction_version >= 2 {
            epoch <= current.producer_epoch
        } else {
            epoch < current.producer_epoch
        };
        if stale {
            return ErrorCode::INVALID_PRODUCER_EPOCH;
        }
        if current.coordinator_epoch > marker.coordinator_epoch {
            return ErrorCode::TRANSACTION_COORDINATOR_FENCED;
        }
    }
    let state = MarkerState {
        producer_id: marker.producer_id,
        epoch,
        coordinator_epoch: marker.coordinator_epoch,
        now_ms: caller.now_ms,
    };
    for (list, positions) in p.all_producer_lists_mut().zip(index.lists.iter_mut()) {
        state.write(list, positions.get(&marker.producer_id).copied());
        // A new entry is the last one.
        let last = list.len().saturating_sub(1);
        positions.entry(marker.producer_id).or_insert(last);
    }
    p.high_watermark = p.high_watermark.saturating_add(1);
    p.explicit_last_stable_offset = None;
    ErrorCode::NONE
}

impl Handler for WriteTxnMarkersRequest {
    fn handle(&self, call: &Call<'_>) -> Result<WriteTxnMarkersResponse, Refusal> {
        Ok(write_txn_markers_within(
            call.shared,
            &call.caller,
            self,
            call.version,
            &Budget::new(call.limit),
        )?)
    }
}

/// WriteTxnMarkers without holding the cluster longer than its share: the
/// file's ACLs are read under a brief read lock and the authorizer hook is
/// asked with no lock held; the request is laid out, and its answer's size
/// checked, before anything is written (a refused answer writes nothing);
/// then the markers are written a chunk at a time, each chunk under its
/// own write lock.
fn write_txn_markers_within(
    shared: &Shared,
    caller: &Caller<'_>,
    req: &WriteTxnMarkersRequest,
    version: i16,
    budget: &Budget,
) -> Result<WriteTxnMarkersResponse, TooLarge> {
    // Every partition named is answered, in an entry of a fixed size.
    let v = Version::of::<WriteTxnMarkersResponse>(version);
    let each = WritableTxnMarkerPartitionResult::min_len(v);
    budget.precheck_each(
        req.markers
            .iter()
            .flat_map(|m| &m.topics)
            .map(|t| t.partition_indexes.len().saturating_mul(each)),
    )?;
    let file_allows = {
        let cluster = shared.read();
        let acls = &cluster.acls;
        [ClusterOperation::Alter, ClusterOperation::ClusterAction]
            .map(|op| (op, acls.allows_cluster(&caller.request.principal, op)))
    };
    let allowed = file_allows
        .into_iter()
        .any(|(op, file)| file && caller.authorizer.authorize_cluster(caller.request, op));
    let mut plan = MarkerPlan::new(req, allowed);
    budget.precheck(plan.response().encoded_len(version))?;
    plan.apply_in_chunks(|| shared.write(), caller, req);
    Ok(plan.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::WritableTxnMarkerTopic;

    fn abort(
        pid: i64,
        epoch: i16,
        coordinator_epoch: i32,
        tv: i8,
        parts: &[(&str, i32)],
    ) -> WriteTxnMarkersRequest {
        let mut topics: Vec<WritableTxnMarkerTopic> = Vec::new();
        for &(t, p) in parts {
            match topics.iter_mut().find(|x| x.name == t) {
                Some(x) => x.partition_indexes.push(p),
                None => topics.push(WritableTxnMarkerTopic {
                    name: t.into(),
                    partition_indexes: vec![p],
                    ..Default::default()
                }),
            }
        }
        WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: pid,
                producer_epoch: epoch,
                transaction_result: false,
                topics,
                coordinator_epoch,
                transaction_version: tv,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn codes(r: &WriteTxnMarkersResponse) -> Vec<ErrorCode> {
        r.markers
            .iter()
            .flat_map(|m| &m.topics)
            .flat_map(|t| &t.partitions)
            .map(|p| p.error_code)
            .collect()
    }

    #[test]
    fn an_abort_ends_the_open_transaction_on_every_replica() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.partition("orders", 0).unwrap().clone();
        assert_eq!(before.last_stable_offset(), 400);
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::NONE]);
        assert_eq!(r.markers[0].producer_id, 10);
        let p = c.partition("orders", 0).unwrap();
        for broker in [1, 2, 3] {
            let s = p
                .producers_on(broker)
                .iter()
                .find(|s| s.producer_id == 10)
                .unwrap();
            assert_eq!(
                (
                    s.producer_epoch,
                    s.current_txn_start_offset,
                    s.coordinator_epoch,
                    s.last_timestamp
                ),
                (3, -1, 7, NOW),
                "broker {broker}"
            );
        }
        // Same epoch: the sequence stays; broker 3 had epoch 2: forgotten.
        assert_eq!(p.producers_on(1)[0].last_sequence, 9);
        assert_eq!(p.producers_on(3)[0].last_sequence, -1);
        // The other open transaction (450) now holds the LSO; one record more.
        assert_eq!(p.high_watermark, 501);
        assert_eq!(p.last_stable_offset(), 450);
        // A retried abort is harmless.
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::NONE]);
        assert_eq!(c.partition("orders", 0).unwrap().last_stable_offset(), 450);
    }

    #[test]
    fn stale_epochs_are_refused_and_change_nothing() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.clone();
        // Producer 10 is at epoch 3, coordinator epoch 7.
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 2, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::INVALID_PRODUCER_EPOCH]);
        // Transaction version 2: the marker must be newer than the entry.
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 2, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::INVALID_PRODUCER_EPOCH]);
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 6, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::TRANSACTION_COORDINATOR_FENCED]);
        assert_eq!(c, before);
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 4, 7, 2, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::NONE]);
        assert_eq!(
            c.partition("orders", 0).unwrap().producers_on(1)[0].producer_epoch,
            4
        );
    }

    #[test]
    fn only_the_leader_writes() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.clone();
        let r = write_txn_markers(
            &mut c,
            &caller(2),
            &abort(10, 3, 7, 0, &[("orders", 0), ("orders", 9), ("nope", 0)]),
        );
        assert_eq!(
            codes(&r),
            vec![
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
            ]
        );
        assert_eq!(r.markers[0].topics.len(), 2);
        assert_eq!(c, before);
        let r = write_txn_markers(&mut c, &caller(3), &abort(10, 3, 7, 0, &[("orders", 1)]));
        assert_eq!(codes(&r), vec![ErrorCode::UNKNOWN_TOPIC_OR_PARTITION]);
    }

    #[test]
    fn without_cluster_permission_nothing_changes() {
        let mut c = cluster(TXN_CLUSTER);
        c.acls.cluster_deny.push(ClusterOperation::Alter);
        // CLUSTER_ACTION alone still allows it.
        let mut allowed = c.clone();
        let r = write_txn_markers(
            &mut allowed,
            &caller(1),
            &abort(10, 3, 7, 0, &[("orders", 0)]),
        );
        assert_eq!(codes(&r), vec![ErrorCode::NONE]);
        c.acls.cluster_deny.push(ClusterOperation::ClusterAction);
        let before = c.clone();
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![ErrorCode::CLUSTER_AUTHORIZATION_FAILED]);
        assert_eq!(c, before);
    }

    #[test]
    fn a_hundred_thousand_markers_take_the_lock_a_chunk_at_a_time() {
        let n = 100_000usize;
        let req = WriteTxnMarkersRequest {
            markers: (0..n as i64)
                .map(|i| WritableTxnMarker {
                    producer_id: 1_000 + i,
                    producer_epoch: 1,
                    topics: vec![WritableTxnMarkerTopic {
                        name: "orders".into(),
                        partition_indexes: vec![0],
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let cell = std::cell::RefCell::new(cluster(TXN_CLUSTER));
        let mut plan = MarkerPlan::new(&req, true);
        assert_eq!(plan.steps(), n);
        let mut locks = 0;
        plan.apply_in_chunks(
            || {
                locks += 1;
                cell.borrow_mut()
            },
            &caller(1),
            &req,
        );
        // Never more than CHUNK markers under one taking of the lock.
        assert_eq!(locks, n.div_ceil(CHUNK));
        let r = plan.into_response();
        assert_eq!(r.markers.len(), n);
        assert_eq!(r.markers[n - 1].producer_id, 1_000 + n as i64 - 1);
        assert!(codes(&r).iter().all(|&c| c == ErrorCode::NONE));
        let c = cell.into_inner();
        let p = c.partition("orders", 0).unwrap();
        // The file's producers (two; broker 3's own list one), and one
        // entry per marker on every replica.
        for (broker, file) in [(1, 2), (2, 2), (3, 1)] {
            assert_eq!(p.producers_on(broker).len(), file + n, "broker {broker}");
        }
        assert_eq!(p.high_watermark, 500 + n as i64);
    }

    #[test]
    fn markers_of_one_producer_merge_by_topic_in_order_of_first_appearance() {
        let m = |pid: i64, topics: &[(&str, i32)]| WritableTxnMarker {
            producer_id: pid,
            producer_epoch: 3,
            coordinator_epoch: 7,
            topics: topics
                .iter()
                .map(|&(t, p)| WritableTxnMarkerTopic {
                    name: t.into(),
                    partition_indexes: vec![p],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let req = WriteTxnMarkersRequest {
            markers: vec![
                m(10, &[("orders", 0), ("x", 1)]),
                m(99, &[("y", 0)]),
                m(10, &[("x", 2), ("orders", 0), ("z", 0)]),
            ],
            ..Default::default()
        };
        let mut c = cluster(TXN_CLUSTER);
        let r = write_txn_markers(&mut c, &caller(1), &req);
        type Shape<'a> = Vec<(i64, Vec<(&'a str, Vec<i32>)>)>;
        let shape: Shape<'_> = r
            .markers
            .iter()
            .map(|m| {
                (
                    m.producer_id,
                    m.topics
                        .iter()
                        .map(|t| {
                            (
                                t.name.as_str(),
                                t.partitions.iter().map(|p| p.partition_index).collect(),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (
                    10,
                    vec![("orders", vec![0, 0]), ("x", vec![1, 2]), ("z", vec![0])]
                ),
                (99, vec![("y", vec![0])]),
            ]
        );
        // orders-0 got both of producer 10's markers (the second a retry).
        let (ok, unknown) = (ErrorCode::NONE, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
        assert_eq!(codes(&r), vec![ok, ok, unknown, unknown, unknown, unknown]);
        assert_eq!(c.partition("orders", 0).unwrap().high_watermark, 502);
    }

    #[test]
    fn a_producer_without_an_entry_gets_one() {
        let mut c = cluster(TXN_CLUSTER);
        let r = write_txn_markers(&mut c, &caller(2), &abort(77, 1, 0, 0, &[("orders", 1)]));
        assert_eq!(codes(&r), vec![ErrorCode::NONE]);
        let p = c.partition("orders", 1).unwrap();
        assert_eq!(p.producers_on(2)[0].producer_id, 77);
        assert_eq!(p.high_watermark, 81);
    }
}
