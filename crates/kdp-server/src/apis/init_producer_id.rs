//! InitProducerId (`KafkaApis.handleInitProducerIdRequest`,
//! `TransactionCoordinator.handleInitProducerId` and
//! `prepareInitProducerIdTransit`, `TransactionMetadata`), as a
//! transaction-protocol-v1 coordinator does it:
//!
//! * no transactional id: an idempotent producer, a fresh producer id at
//!   epoch 0;
//! * WRITE on the transactional id denied ->
//!   TRANSACTIONAL_ID_AUTHORIZATION_FAILED; exactly one of ProducerId and
//!   ProducerEpoch given (v3+) -> INVALID_REQUEST; an empty id ->
//!   INVALID_REQUEST; a timeout not in 1..=`transaction.max.timeout.ms` ->
//!   INVALID_TRANSACTION_TIMEOUT; not this broker's id -> NOT_COORDINATOR;
//! * an unknown id starts at a fresh producer id, epoch 0, Empty;
//! * a given producer id that is not the id's (and not a fresh entry's) ->
//!   PRODUCER_FENCED; a given epoch that is not the current one ->
//!   PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v4);
//! * PrepareCommit, PrepareAbort (and the transient PrepareEpochFence, Dead)
//!   -> CONCURRENT_TRANSACTIONS: the client retries; a transaction stuck in
//!   prepare stays stuck;
//! * Ongoing: the epoch is bumped to fence the running producer, the
//!   transaction is aborted with that epoch (markers on each of its
//!   partitions, so their open transactions end and the LSO moves), the
//!   state becomes CompleteAbort, and the answer is CONCURRENT_TRANSACTIONS;
//! * Empty, CompleteCommit, CompleteAbort: the epoch is bumped (a new
//!   producer id at epoch 0 once the epoch is exhausted, 32766), the state
//!   becomes Empty without partitions or start time; the answer is the id
//!   and epoch. So forcing out an open transaction takes two calls, the
//!   second returning the epoch two above the fenced one.
//!
//! Errors carry ProducerId -1 and ProducerEpoch -1.

use kdp_wire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kdp_wire::ErrorCode;

use super::write_txn_markers::end_transaction;
use super::{Call, Caller, Handler, Refusal};
use crate::acls::TxnIdOperation;
use crate::cluster::Cluster;
use crate::txn::{Transaction, TxnState};

/// `TransactionMetadata.isEpochExhausted`: `Short.MaxValue - 1`.
const EPOCH_EXHAUSTED: i16 = i16::MAX - 1;

/// Answers InitProducerId: a new producer id, or the transactional id's epoch bumped and its open transaction aborted.
pub fn init_producer_id(
    cluster: &mut Cluster,
    caller: &Caller<'_>,
    req: &InitProducerIdRequest,
    version: i16,
) -> InitProducerIdResponse {
    let error = |code: ErrorCode| InitProducerIdResponse {
        error_code: code,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let Some(id) = req.transactional_id.as_deref() else {
        let producer_id = cluster.allocate_producer_id();
        return InitProducerIdResponse {
            producer_id,
            producer_epoch: 0,
            ..Default::default()
        };
    };
    if !caller.may_transactional_id(cluster, TxnIdOperation::Write, id) {
        return error(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    }
    let expected = match (req.producer_id, req.producer_epoch) {
        (-1, -1) => None,
        (-1, _) | (_, -1) => return error(ErrorCode::INVALID_REQUEST),
        (pid, epoch) => Some((pid, epoch)),
    };
    if id.is_empty() {
        return error(ErrorCode::INVALID_REQUEST);
    }
    let max = cluster.transaction_max_timeout_ms(caller.broker_id);
    if req.transaction_timeout_ms <= 0 || i64::from(req.transaction_timeout_ms) > max {
        return error(ErrorCode::INVALID_TRANSACTION_TIMEOUT);
    }
    if cluster.transaction_coordinator(id) != Some(caller.broker_id) {
        return error(ErrorCode::NOT_COORDINATOR);
    }
    let fenced = if version < 4 {
        ErrorCode::INVALID_PRODUCER_EPOCH
    } else {
        ErrorCode::PRODUCER_FENCED
    };
    let coordinator_epoch = cluster.transaction_coordinator_epoch(id);
    let fresh_producer_id = match cluster.transaction(id) {
        None => Some(cluster.allocate_producer_id()),
        Some(_) => None,
    };
    if let Some(producer_id) = fresh_producer_id {
        cluster.insert_transaction(Transaction {
            transactional_id: id.to_string(),
            producer_id,
            producer_epoch: -1,
            state: TxnState::Empty,
            timeout_ms: req.transaction_timeout_ms,
            start_time_ms: -1,
            partitions: Vec::new(),
            coordinator_override: None,
            last_update_ms: caller.now_ms,
        });
    }
    let Some(t) = cluster.transaction(id) else {
        return error(ErrorCode::COORDINATOR_NOT_AVAILABLE);
    };
    if let Some((pid, epoch)) = expected {
        if t.producer_epoch != -1 && (pid != t.producer_id || epoch != t.producer_epoch) {
            return error(fenced);
        }
    }
    match t.state {
        TxnState::PrepareCommit
        | TxnState::PrepareAbort
        | TxnState::PrepareEpochFence
        | TxnState::Dead => error(ErrorCode::CONCURRENT_TRANSACTIONS),
        TxnState::Ongoing => {
            let producer_id = t.producer_id;
            let bumped = t.producer_epoch.saturating_add(1);
            let partitions = t.partitions.clone();
            for (topic, indexes) in &partitions {
                for &i in indexes {
                    if let Some(p) = cluster.partition_mut(topic, i) {
                        end_transaction(
                            p,
                            producer_id,
                            i32::from(bumped),
                            coordinator_epoch,
                            caller.now_ms,
                        );
                    }
                }
            }
            if let Some(t) = cluster.transaction_mut(id) {
                t.producer_epoch = bumped;
                t.state = TxnState::CompleteAbort;
                t.partitions.clear();
                t.last_update_ms = caller.now_ms;
            }
            error(ErrorCode::CONCURRENT_TRANSACTIONS)
        }
        TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort => {
            let rotate = t.producer_epoch >= EPOCH_EXHAUSTED;
            let new_id = if rotate {
                Some(cluster.allocate_producer_id())
            } else {
                None
            };
            let Some(t) = cluster.transaction_mut(id) else {
                return error(ErrorCode::COORDINATOR_NOT_AVAILABLE);
            };
            match new_id {
                Some(pid) => {
                    t.producer_id = pid;
                    t.producer_epoch = 0;
                }
                None => t.producer_epoch = t.producer_epoch.saturating_add(1),
            }
            t.state = TxnState::Empty;
            t.timeout_ms = req.transaction_timeout_ms;
            t.partitions.clear();
            t.start_time_ms = -1;
            t.last_update_ms = caller.now_ms;
            InitProducerIdResponse {
                producer_id: t.producer_id,
                producer_epoch: t.producer_epoch,
                ..Default::default()
            }
        }
    }
}

impl Handler for InitProducerIdRequest {
    fn handle(&self, call: &Call<'_>) -> Result<InitProducerIdResponse, Refusal> {
        Ok(init_producer_id(
            &mut call.shared.write(),
            &call.caller,
            self,
            call.version,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    fn init(id: Option<&str>, timeout: i32) -> InitProducerIdRequest {
        InitProducerIdRequest {
            transactional_id: id.map(String::from),
            transaction_timeout_ms: timeout,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        }
    }

    fn answer(r: &InitProducerIdResponse) -> (ErrorCode, i64, i16) {
        (r.error_code, r.producer_id, r.producer_epoch)
    }

    #[test]
    fn force_terminating_an_open_transaction_fences_and_aborts() {
        let mut c = cluster(TXN_CLUSTER);
        assert_eq!(c.partition("orders", 0).unwrap().last_stable_offset(), 400);
        let r = init_producer_id(&mut c, &caller(1), &init(Some("app-a"), 60000), 5);
        assert_eq!(answer(&r), (ErrorCode::CONCURRENT_TRANSACTIONS, -1, -1));
        let t = c.transaction("app-a").unwrap();
        assert_eq!((t.state, t.producer_epoch), (TxnState::CompleteAbort, 4));
        assert!(t.partitions.is_empty());
        // The marker went out with the fencing epoch and the coordinator
        // epoch: that of app-a's __transaction_state partition (1, epoch 8).
        let p = c.partition("orders", 0).unwrap();
        let s = p
            .producers_on(1)
            .iter()
            .find(|s| s.producer_id == 10)
            .unwrap();
        assert_eq!(
            (
                s.producer_epoch,
                s.coordinator_epoch,
                s.current_txn_start_offset
            ),
            (4, 8, -1)
        );
        assert_eq!(p.last_stable_offset(), 450);
        // The retry gets a usable epoch; a marker of the old epoch is now fenced.
        let r = init_producer_id(&mut c, &caller(1), &init(Some("app-a"), 60000), 5);
        assert_eq!(answer(&r), (ErrorCode::NONE, 10, 5));
        assert_eq!(c.transaction("app-a").unwrap().state, TxnState::Empty);
        let old = kdp_wire::messages::WriteTxnMarkersRequest {
            markers: vec![kdp_wire::messages::WritableTxnMarker {
                producer_id: 10,
                producer_epoch: 3,
                coordinator_epoch: 8,
                topics: vec![kdp_wire::messages::WritableTxnMarkerTopic {
                    name: "orders".into(),
                    partition_indexes: vec![0],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let w = super::super::write_txn_markers::write_txn_markers(&mut c, &caller(1), &old);
        assert_eq!(
            w.markers[0].topics[0].partitions[0].error_code,
            ErrorCode::INVALID_PRODUCER_EPOCH
        );
    }

    #[test]
    fn prepare_states_stay_stuck() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.clone();
        let r = init_producer_id(&mut c, &caller(1), &init(Some("app-b"), 60000), 5);
        assert_eq!(answer(&r), (ErrorCode::CONCURRENT_TRANSACTIONS, -1, -1));
        assert_eq!(c, before);
    }

    #[test]
    fn completed_and_new_ids_get_a_bumped_epoch() {
        let mut c = cluster(TXN_CLUSTER);
        let r = init_producer_id(&mut c, &caller(2), &init(Some("app-d"), 1000), 5);
        assert_eq!(answer(&r), (ErrorCode::NONE, 13, 1));
        // "ghost" lands on partition 0, led by 1: a new id, above the file's.
        let r = init_producer_id(&mut c, &caller(1), &init(Some("ghost"), 1000), 5);
        assert_eq!((r.error_code, r.producer_epoch), (ErrorCode::NONE, 0));
        assert!(r.producer_id >= 1000);
        assert_eq!(c.transaction("ghost").unwrap().state, TxnState::Empty);
        let idempotent = init_producer_id(&mut c, &caller(3), &init(None, 0), 5);
        assert_eq!(idempotent.error_code, ErrorCode::NONE);
        assert_ne!(idempotent.producer_id, r.producer_id);
    }

    #[test]
    fn errors() {
        let mut c = cluster(TXN_CLUSTER);
        let before = c.clone();
        let mut call = |broker, req: InitProducerIdRequest, v| {
            init_producer_id(&mut c, &caller(broker), &req, v).error_code
        };
        assert_eq!(
            call(1, init(Some("secret-c"), 1000), 5),
            ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        );
        assert_eq!(
            call(2, init(Some("app-a"), 1000), 5),
            ErrorCode::NOT_COORDINATOR
        );
        assert_eq!(call(1, init(Some(""), 1000), 5), ErrorCode::INVALID_REQUEST);
        // Broker 1's transaction.max.timeout.ms is 120000.
        assert_eq!(
            call(1, init(Some("app-a"), 120_001), 5),
            ErrorCode::INVALID_TRANSACTION_TIMEOUT
        );
        assert_eq!(
            call(1, init(Some("app-a"), 0), 5),
            ErrorCode::INVALID_TRANSACTION_TIMEOUT
        );
        let half = InitProducerIdRequest {
            producer_id: 10,
            ..init(Some("app-a"), 1000)
        };
        assert_eq!(call(1, half, 5), ErrorCode::INVALID_REQUEST);
        let wrong_epoch = InitProducerIdRequest {
            producer_id: 10,
            producer_epoch: 2,
            ..init(Some("app-a"), 1000)
        };
        assert_eq!(call(1, wrong_epoch.clone(), 5), ErrorCode::PRODUCER_FENCED);
        assert_eq!(call(1, wrong_epoch, 3), ErrorCode::INVALID_PRODUCER_EPOCH);
        assert_eq!(c, before);
    }
}
