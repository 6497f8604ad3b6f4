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

use kdp_wire::error_code;
use kdp_wire::messages::{
    ProducerState, WritableTxnMarker, WritableTxnMarkerPartitionResult, WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};

use super::Caller;
use crate::acls::ClusterOperation;
use crate::cluster::{Cluster, Partition};

/// Applies WriteTxnMarkers' COMMIT/ABORT markers to the partitions this broker leads, ending producers' open transactions.
pub fn write_txn_markers(
    cluster: &mut Cluster,
    caller: &Caller<'_>,
    req: &WriteTxnMarkersRequest,
) -> WriteTxnMarkersResponse {
    let allowed = caller.may_cluster(cluster, ClusterOperation::Alter)
        || caller.may_cluster(cluster, ClusterOperation::ClusterAction);
    let mut resp = WriteTxnMarkersResponse::default();
    for marker in &req.markers {
        for t in &marker.topics {
            for &index in &t.partition_indexes {
                let code = if allowed {
                    match cluster.partition_mut(&t.name, index) {
                        Some(p) => append_marker(p, caller, marker),
                        None => error_code::UNKNOWN_TOPIC_OR_PARTITION,
                    }
                } else {
                    error_code::CLUSTER_AUTHORIZATION_FAILED
                };
                record(&mut resp, marker.producer_id, &t.name, index, code);
            }
        }
    }
    resp
}

fn record(
    resp: &mut WriteTxnMarkersResponse,
    producer_id: i64,
    topic: &str,
    index: i32,
    code: i16,
) {
    let pos = match resp
        .markers
        .iter()
        .position(|m| m.producer_id == producer_id)
    {
        Some(i) => i,
        None => {
            resp.markers.push(WritableTxnMarkerResult {
                producer_id,
                ..Default::default()
            });
            resp.markers.len() - 1
        }
    };
    let Some(m) = resp.markers.get_mut(pos) else {
        return;
    };
    let topic_pos = match m.topics.iter().position(|t| t.name == topic) {
        Some(i) => i,
        None => {
            m.topics.push(WritableTxnMarkerTopicResult {
                name: topic.to_string(),
                ..Default::default()
            });
            m.topics.len() - 1
        }
    };
    if let Some(t) = m.topics.get_mut(topic_pos) {
        t.partitions.push(WritableTxnMarkerPartitionResult {
            partition_index: index,
            error_code: code,
            unknown_tagged_fields: Default::default(),
        });
    }
}

fn append_marker(p: &mut Partition, caller: &Caller<'_>, marker: &WritableTxnMarker) -> i16 {
    let me = caller.broker_id;
    if !p.is_replica(me) {
        return error_code::UNKNOWN_TOPIC_OR_PARTITION;
    }
    if p.is_offline_on(me) {
        return error_code::KAFKA_STORAGE_ERROR;
    }
    if p.leader != me {
        return error_code::NOT_LEADER_OR_FOLLOWER;
    }
    let epoch = i32::from(marker.producer_epoch);
    if let Some(current) = p
        .producers_on(me)
        .iter()
        .find(|s| s.producer_id == marker.producer_id)
    {
        let stale = if marker.transaction_version >= 2 {
            epoch <= current.producer_epoch
        } else {
            epoch < current.producer_epoch
        };
        if stale {
            return error_code::INVALID_PRODUCER_EPOCH;
        }
        if current.coordinator_epoch > marker.coordinator_epoch {
            return error_code::TRANSACTION_COORDINATOR_FENCED;
        }
    }
    end_transaction(
        p,
        marker.producer_id,
        epoch,
        marker.coordinator_epoch,
        caller.now_ms,
    );
    error_code::NONE
}

/// A marker appended to `p` for `producer_id`, on every replica alike.
pub(crate) fn end_transaction(
    p: &mut Partition,
    producer_id: i64,
    epoch: i32,
    coordinator_epoch: i32,
    now_ms: i64,
) {
    for list in p.all_producer_lists_mut() {
        match list.iter_mut().find(|s| s.producer_id == producer_id) {
            Some(s) => {
                if s.producer_epoch != epoch {
                    s.last_sequence = -1;
                }
                s.producer_epoch = epoch;
                s.coordinator_epoch = coordinator_epoch;
                s.current_txn_start_offset = -1;
                s.last_timestamp = now_ms;
            }
            None => list.push(ProducerState {
                producer_id,
                producer_epoch: epoch,
                last_sequence: -1,
                last_timestamp: now_ms,
                coordinator_epoch,
                current_txn_start_offset: -1,
                unknown_tagged_fields: Default::default(),
            }),
        }
    }
    p.high_watermark = p.high_watermark.saturating_add(1);
    p.explicit_last_stable_offset = None;
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

    fn codes(r: &WriteTxnMarkersResponse) -> Vec<i16> {
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
        assert_eq!(codes(&r), vec![0]);
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
        assert_eq!(codes(&r), vec![0]);
        assert_eq!(c.partition("orders", 0).unwrap().last_stable_offset(), 450);
    }

    #[test]
    fn stale_epochs_are_refused_and_change_nothing() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.clone();
        // Producer 10 is at epoch 3, coordinator epoch 7.
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 2, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![error_code::INVALID_PRODUCER_EPOCH]);
        // Transaction version 2: the marker must be newer than the entry.
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 2, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![error_code::INVALID_PRODUCER_EPOCH]);
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 6, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![error_code::TRANSACTION_COORDINATOR_FENCED]);
        assert_eq!(c, before);
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 4, 7, 2, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![0]);
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
                error_code::NOT_LEADER_OR_FOLLOWER,
                error_code::UNKNOWN_TOPIC_OR_PARTITION,
                error_code::UNKNOWN_TOPIC_OR_PARTITION
            ]
        );
        assert_eq!(r.markers[0].topics.len(), 2);
        assert_eq!(c, before);
        let r = write_txn_markers(&mut c, &caller(3), &abort(10, 3, 7, 0, &[("orders", 1)]));
        assert_eq!(codes(&r), vec![error_code::UNKNOWN_TOPIC_OR_PARTITION]);
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
        assert_eq!(codes(&r), vec![0]);
        c.acls.cluster_deny.push(ClusterOperation::ClusterAction);
        let before = c.clone();
        let r = write_txn_markers(&mut c, &caller(1), &abort(10, 3, 7, 0, &[("orders", 0)]));
        assert_eq!(codes(&r), vec![error_code::CLUSTER_AUTHORIZATION_FAILED]);
        assert_eq!(c, before);
    }

    #[test]
    fn a_producer_without_an_entry_gets_one() {
        let mut c = cluster(TXN_CLUSTER);
        let r = write_txn_markers(&mut c, &caller(2), &abort(77, 1, 0, 0, &[("orders", 1)]));
        assert_eq!(codes(&r), vec![0]);
        let p = c.partition("orders", 1).unwrap();
        assert_eq!(p.producers_on(2)[0].producer_id, 77);
        assert_eq!(p.high_watermark, 81);
    }
}
