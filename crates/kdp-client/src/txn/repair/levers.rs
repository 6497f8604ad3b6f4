//! The two levers on the wire: WriteTxnMarkers (ABORT) at the partition
//! leader, and InitProducerId (-1/-1) at the transactional id's coordinator.

use std::collections::BTreeMap;

use kdp_wire::messages::{
    InitProducerIdRequest, InitProducerIdResponse, WritableTxnMarker, WritableTxnMarkerTopic,
    WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kdp_wire::ErrorCode;

use crate::admin::{
    drive, AdminHandler, Coordinator, DriverOptions, KeyError, KeyOutcome, PartitionLeader,
    TopicPartition,
};
use crate::txn::coordinator::TransactionCoordinators;
use crate::txn::{collect, SharedClient};

/// One raw abort: the producer's open transaction on one partition, with the
/// epochs the marker carries (Kafka's `AbortTransactionSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortSpec {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The producer whose transaction is aborted.
    pub producer_id: i64,
    /// Its epoch on the partition (DescribeProducers' ProducerEpoch).
    pub producer_epoch: i16,
    /// The coordinator epoch on the partition; Kafka's tool sends 0 when the
    /// partition reports a negative one.
    pub coordinator_epoch: i32,
}

impl AbortSpec {
    /// The partition this spec aborts on.
    pub fn key(&self) -> TopicPartition {
        (self.topic.clone(), self.partition)
    }
}

/// A coordinator epoch as Kafka's `kafka-transactions.sh abort` sends it:
/// a negative one (the producer never saw a marker) becomes 0.
pub fn marker_coordinator_epoch(reported: i32) -> i32 {
    reported.max(0)
}

/// The marker's `TransactionVersion` (WriteTxnMarkers v2+). Kafka's
/// AbortTransactionHandler leaves it at 0, so the leader checks the epoch
/// with the pre-KIP-890 rule (marker epoch >= the producer's), which the
/// producer's current epoch passes on every broker generation; under
/// transaction version 2 the marker's epoch would have to be strictly newer.
pub const ABORT_TRANSACTION_VERSION: i8 = 0;

struct AbortHandler {
    specs: BTreeMap<TopicPartition, AbortSpec>,
}

impl AdminHandler for AbortHandler {
    type Key = TopicPartition;
    type Value = ();
    type Request = WriteTxnMarkersRequest;

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
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}

/// The producer id and epoch a force-terminate left the transactional id
/// with (the epoch the previous instance is fenced below).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminated {
    /// The producer id.
    pub producer_id: i64,
    /// The new epoch.
    pub producer_epoch: i16,
}

struct TerminateHandler {
    transaction_timeout_ms: i32,
}

impl AdminHandler for TerminateHandler {
    type Key = String;
    type Value = Terminated;
    type Request = InitProducerIdRequest;

    fn build_request(&self, _broker: i32, keys: &[String]) -> InitProducerIdRequest {
        // one id per request: the driver is run with max_keys_per_request 1
        InitProducerIdRequest {
            transactional_id: keys.first().cloned(),
            transaction_timeout_ms: self.transaction_timeout_ms,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[String],
        resp: InitProducerIdResponse,
    ) -> Vec<(String, KeyOutcome<Terminated>)> {
        let Some(key) = keys.first() else {
            return Vec::new();
        };
        vec![(key.clone(), terminate_outcome(&resp))]
    }
}

/// FenceProducersHandler's rule.
fn terminate_outcome(resp: &InitProducerIdResponse) -> KeyOutcome<Terminated> {
    match resp.error_code {
        ErrorCode::NONE => KeyOutcome::Done(Terminated {
            producer_id: resp.producer_id,
            producer_epoch: resp.producer_epoch,
        }),
        // the coordinator is still ending the transaction (or loading): ask again
        code @ (ErrorCode::CONCURRENT_TRANSACTIONS | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS) => {
            KeyOutcome::Retry {
                reason: KeyError::broker(code, None),
                refresh: false,
            }
        }
        code @ (ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE) => {
            KeyOutcome::Retry {
                reason: KeyError::broker(code, None),
                refresh: true,
            }
        }
        code => KeyOutcome::Failed(KeyError::broker(code, None)),
    }
}

/// Force-terminates each transactional id at its coordinator.
/// `transaction_timeout_ms` is what the coordinator records with the new
/// epoch (Kafka's Admin uses its request timeout).
pub async fn force_terminate(
    client: &SharedClient,
    ids: Vec<String>,
    transaction_timeout_ms: i32,
    opts: &DriverOptions,
) -> BTreeMap<String, std::result::Result<Terminated, KeyError>> {
    let mut opts = opts.clone();
    opts.max_keys_per_request = 1;
    let mut results = Vec::new();
    drive(
        client,
        &TerminateHandler {
            transaction_timeout_ms,
        },
        &mut Coordinator::new(TransactionCoordinators),
        ids,
        &opts,
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}

/// What to do about an error a repair got, when there is something to do.
pub fn advice(code: ErrorCode) -> Option<&'static str> {
    Some(match code {
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED => {
            "WriteTxnMarkers needs ALTER or CLUSTER_ACTION on the cluster: grant one to this principal \
             (kafka-acls.sh --add --operation Alter --cluster), or use force-terminate, which needs \
             WRITE on the transactional id"
        }
        ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => {
            "force-terminate needs WRITE on the transactional id"
        }
        ErrorCode::INVALID_PRODUCER_EPOCH => {
            "the producer's epoch on the partition is newer than the one given: describe the \
             partition again and use its ProducerEpoch (or --start-offset)"
        }
        ErrorCode::TRANSACTION_COORDINATOR_FENCED => {
            "the coordinator epoch given is older than the partition's: describe the partition \
             again and use its CoordinatorEpoch (or --start-offset)"
        }
        ErrorCode::CONCURRENT_TRANSACTIONS => {
            "the coordinator has decided the transaction's outcome (PrepareCommit/PrepareAbort) \
             but its markers are not written: force-terminate cannot end it; move the \
             coordinator (restart its broker) so the new one writes them; a raw abort would \
             discard a decided commit"
        }
        ErrorCode::NOT_LEADER_OR_FOLLOWER | ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
            "the partition's leader kept moving: try again once the partition has a stable leader"
        }
        _ => return None,
    })
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
    fn concurrent_transactions_is_asked_again_at_the_same_coordinator() {
        let resp = InitProducerIdResponse {
            error_code: ErrorCode::CONCURRENT_TRANSACTIONS,
            ..Default::default()
        };
        assert!(matches!(
            terminate_outcome(&resp),
            KeyOutcome::Retry { refresh: false, .. }
        ));
        let resp = InitProducerIdResponse {
            error_code: ErrorCode::NOT_COORDINATOR,
            ..Default::default()
        };
        assert!(matches!(
            terminate_outcome(&resp),
            KeyOutcome::Retry { refresh: true, .. }
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
