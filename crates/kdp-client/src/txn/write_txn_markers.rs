//! WriteTxnMarkers (ABORT) straight to a partition's leader, as
//! `Admin.abortTransaction` (AbortTransactionHandler) sends it: the raw
//! abort of one producer's open transaction. The coordinator is not told: a
//! producer still alive can go on.

use std::collections::BTreeMap;

use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;
use kdp_domain::repair::levers::{AbortSpec, ABORT_TRANSACTION_VERSION};
use kdp_wire::messages::{
    WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kdp_wire::ErrorCode;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, DriverOptions, KeyOutcome, PartitionLeader};
use crate::bound::TimeBound;
use crate::client::SharedClient;

struct AbortHandler {
    specs: BTreeMap<TopicPartition, AbortSpec>,
}

impl AdminHandler for AbortHandler {
    type Key = TopicPartition;
    type Value = ();
    type Request = WriteTxnMarkersRequest;
    type Response = WriteTxnMarkersResponse;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> WriteTxnMarkersRequest {
        let markers = keys
            .iter()
            .filter_map(|k| self.specs.get(k))
            .map(|s| WritableTxnMarker {
                producer_id: s.producer_id,
                producer_epoch: s.producer_epoch,
                transaction_result: false,
                topics: vec![WritableTxnMarkerTopic {
                    name: s.topic.clone(),
                    partition_indexes: vec![s.partition],
                    ..Default::default()
                }],
                coordinator_epoch: s.coordinator_epoch,
                transaction_version: ABORT_TRANSACTION_VERSION,
                ..Default::default()
            })
            .collect();
        WriteTxnMarkersRequest {
            markers,
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[TopicPartition],
        resp: WriteTxnMarkersResponse,
    ) -> Vec<(TopicPartition, KeyOutcome<()>)> {
        let mut out = Vec::new();
        let keys: std::collections::HashSet<&TopicPartition> = keys.iter().collect();
        for m in resp.markers {
            for t in m.topics {
                for p in t.partitions {
                    let key = (t.name.clone(), p.partition_index);
                    // an answer for another producer is not this key's answer
                    let asked = self
                        .specs
                        .get(&key)
                        .is_some_and(|s| s.producer_id == m.producer_id);
                    if asked && keys.contains(&key) {
                        out.push((key, abort_outcome(p.error_code)));
                    }
                }
            }
        }
        out
    }
}

/// AbortTransactionHandler's rule: a leader that moved (or is not known
/// yet) is looked up again; anything else is the answer.
fn abort_outcome(code: ErrorCode) -> KeyOutcome<()> {
    match code {
        ErrorCode::NONE => KeyOutcome::Done(()),
        ErrorCode::NOT_LEADER_OR_FOLLOWER
        | ErrorCode::REPLICA_NOT_AVAILABLE
        | ErrorCode::BROKER_NOT_AVAILABLE
        | ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => KeyOutcome::Retry {
            reason: KeyError::broker(code, None),
            refresh: true,
        },
        code => KeyOutcome::Failed(KeyError::broker(code, None)),
    }
}

/// Writes an ABORT marker for each spec at its partition's leader. At most
/// one spec per partition: a later spec for the same partition replaces an
/// earlier one (run them in separate calls).
pub async fn abort(
    client: &SharedClient,
    specs: Vec<AbortSpec>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<TopicPartition, std::result::Result<(), KeyError>> {
    let specs: BTreeMap<TopicPartition, AbortSpec> =
        specs.into_iter().map(|s| (s.key(), s)).collect();
    let keys: Vec<TopicPartition> = specs.keys().cloned().collect();
    let mut results = Vec::new();
    drive(
        client,
        &AbortHandler { specs },
        &mut PartitionLeader::new(),
        keys,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_leader_is_looked_up_again_and_a_fenced_epoch_is_the_answer() {
        assert!(matches!(
            abort_outcome(ErrorCode::NOT_LEADER_OR_FOLLOWER),
            KeyOutcome::Retry { refresh: true, .. }
        ));
        assert!(matches!(
            abort_outcome(ErrorCode::INVALID_PRODUCER_EPOCH),
            KeyOutcome::Failed(_)
        ));
        assert!(matches!(
            abort_outcome(ErrorCode::CLUSTER_AUTHORIZATION_FAILED),
            KeyOutcome::Failed(_)
        ));
    }

    #[test]
    fn a_marker_for_another_producer_is_not_the_answer() {
        let h = AbortHandler {
            specs: [(
                ("t".to_string(), 0),
                AbortSpec {
                    topic: "t".into(),
                    partition: 0,
                    producer_id: 7,
                    producer_epoch: 1,
                    coordinator_epoch: 0,
                },
            )]
            .into_iter()
            .collect(),
        };
        let keys = vec![("t".to_string(), 0)];
        let req = h.build_request(1, &keys);
        assert_eq!(req.markers.len(), 1);
        assert!(!req.markers[0].transaction_result);
        let resp = WriteTxnMarkersResponse {
            markers: vec![kdp_wire::messages::WritableTxnMarkerResult {
                producer_id: 8,
                topics: vec![kdp_wire::messages::WritableTxnMarkerTopicResult {
                    name: "t".into(),
                    partitions: vec![kdp_wire::messages::WritableTxnMarkerPartitionResult {
                        partition_index: 0,
                        error_code: ErrorCode::NONE,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(h.handle_response(1, &keys, resp).is_empty());
    }
}
