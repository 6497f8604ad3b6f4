//! The two levers of a repair as data: a raw abort's marker
//! ([`AbortSpec`]: WriteTxnMarkers ABORT at the partition leader) and what
//! a force-terminate leaves behind ([`Terminated`]: InitProducerId with
//! producer id and epoch -1 at the coordinator), with Kafka's rules for
//! their epochs and what to do about the errors they get. Sending them is
//! kdp-client's (one handler per API).

use kdp_wire::ErrorCode;

use crate::partition::TopicPartition;

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

/// The producer id and epoch a force-terminate left the transactional id
/// with (the epoch the previous instance is fenced below).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminated {
    /// The producer id.
    pub producer_id: i64,
    /// The new epoch.
    pub producer_epoch: i16,
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
    fn a_negative_coordinator_epoch_is_sent_as_zero_as_kafkas_tool_does() {
        assert_eq!(marker_coordinator_epoch(-1), 0);
        assert_eq!(marker_coordinator_epoch(4), 4);
        let spec = AbortSpec {
            topic: "t".into(),
            partition: 3,
            producer_id: 7,
            producer_epoch: 1,
            coordinator_epoch: 0,
        };
        assert_eq!(spec.key(), ("t".to_string(), 3));
    }

    #[test]
    fn each_refusal_a_repair_gets_says_what_to_do() {
        for code in [
            ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
            ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            ErrorCode::INVALID_PRODUCER_EPOCH,
            ErrorCode::TRANSACTION_COORDINATOR_FENCED,
            ErrorCode::CONCURRENT_TRANSACTIONS,
        ] {
            assert!(advice(code).is_some(), "{code}");
        }
        assert!(advice(ErrorCode::CLUSTER_AUTHORIZATION_FAILED)
            .unwrap()
            .contains("force-terminate"));
        assert_eq!(advice(ErrorCode::NONE), None);
    }
}
