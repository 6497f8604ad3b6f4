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
//!   transaction is aborted at the next epoch (markers on each of its
//!   partitions, so their open transactions end and the LSO moves), the
//!   state becomes CompleteAbort, and the answer is CONCURRENT_TRANSACTIONS;
//! * Empty, CompleteCommit, CompleteAbort: the epoch is bumped (a new
//!   producer id at epoch 0 once the epoch is exhausted, 32766), the state
//!   becomes Empty without partitions or start time; the answer is the id
//!   and epoch. So forcing out an open transaction takes two calls, the
//!   second returning the epoch two above the fenced one.
//!
//! Errors carry ProducerId -1 and ProducerEpoch -1.
//!
//! Every change is appended to the id's `__transaction_state` partition
//! before it applies (`TransactionStateManager.appendTransactionToLog`,
//! see [`crate::txn::record`]): Empty at the new epoch (a new id's first
//! record is Empty at epoch 0; an exhausted epoch's, Empty at epoch 0 of a
//! new producer id), and for an Ongoing id PrepareAbort then CompleteAbort
//! ([`crate::coordinator::abort_open_transaction`]). Version 6's
//! KeepPreparedTxn (KIP-939) is past what the mock serves (up to v5).

use kdp_wire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kdp_wire::ErrorCode;

use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::TxnIdOperation;
use crate::cluster::Cluster;
use crate::coordinator::abort_open_transaction;
use crate::txn::{Transaction, TxnState};

/// Answers InitProducerId: a new producer id, or the transactional id's
/// epoch bumped and its open transaction aborted; each change the
/// coordinator makes is appended to `__transaction_state`.
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
    if cluster.transaction(id).is_none() {
        // A new entry, at epoch -1 until its first transition is written
        // (`putTransactionStateIfNotExists`, client version TV_0).
        let producer_id = cluster.allocate_producer_id();
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
            client_transaction_version: 0,
            next_producer_id: -1,
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
            // Fence the running producer: its transaction is aborted; the
            // client retries and gets the epoch after.
            abort_open_transaction(cluster, id, caller.now_ms);
            error(ErrorCode::CONCURRENT_TRANSACTIONS)
        }
        TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort => {
            let transit = if t.is_epoch_exhausted() {
                let new_id = cluster.allocate_producer_id();
                match cluster.transaction(id) {
                    Some(t) => {
                        t.prepare_rotation(new_id, req.transaction_timeout_ms, caller.now_ms)
                    }
                    None => return error(ErrorCode::COORDINATOR_NOT_AVAILABLE),
                }
            } else {
                t.prepare_increment_epoch(req.transaction_timeout_ms, caller.now_ms)
            };
            cluster.commit_transit(id, &transit, caller.now_ms);
            InitProducerIdResponse {
                producer_id: transit.producer_id,
                producer_epoch: transit.producer_epoch,
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

    use crate::cluster::coordinator_log::testing::{txn_log, values};
    use kdp_wire::coordinator::txn_log::{PartitionsSchema, TransactionLogValue, TxnLogEntry};
    use kdp_wire::coordinator::Versioned;

    /// TXN_CLUSTER at `transaction.version` `tv`.
    fn at_level(tv: i16) -> Cluster {
        cluster(&TXN_CLUSTER.replacen('{', &format!(r#"{{"transaction_version": {tv},"#), 1))
    }

    /// What Kafka writes for a change: the value at the cluster's version,
    /// the fields version 0 lacks at their defaults.
    #[allow(clippy::too_many_arguments)]
    fn written(
        tv: i16,
        state: TxnState,
        (pid, prev, epoch): (i64, i64, i16),
        timeout: i32,
        partitions: Option<&[(&str, &[i32])]>,
        (start, update): (i64, i64),
        client: i16,
    ) -> Versioned<TransactionLogValue> {
        let v1 = tv >= 1;
        Versioned {
            version: i16::from(v1),
            record: TransactionLogValue {
                producer_id: pid,
                previous_producer_id: if v1 { prev } else { -1 },
                next_producer_id: -1,
                producer_epoch: epoch,
                next_producer_epoch: -1,
                transaction_timeout_ms: timeout,
                transaction_status: state.id(),
                transaction_partitions: partitions.map(|ps| {
                    ps.iter()
                        .map(|(t, ids)| PartitionsSchema {
                            topic: t.to_string(),
                            partition_ids: ids.to_vec(),
                            ..Default::default()
                        })
                        .collect()
                }),
                transaction_last_update_timestamp_ms: update,
                transaction_start_timestamp_ms: start,
                client_transaction_version: if v1 { client } else { 0 },
                ..Default::default()
            },
        }
    }

    #[test]
    fn force_terminate_writes_the_fence_the_abort_and_the_new_epoch() {
        // app-a: partition 1 of __transaction_state (abs(hashCode) % 3),
        // led by broker 1's coordinator at leader epoch 8; Ongoing at 10/3.
        let started = NOW - 3_600_000;
        for tv in [0, 1, 2] {
            let mut c = at_level(tv);
            let r = init_producer_id(&mut c, &caller(1), &init(Some("app-a"), 30_000), 5);
            assert_eq!(answer(&r), (ErrorCode::CONCURRENT_TRANSACTIONS, -1, -1));
            let r = init_producer_id(&mut c, &caller(1), &init(Some("app-a"), 30_000), 5);
            assert_eq!(answer(&r), (ErrorCode::NONE, 10, 5));
            // Protocol v2's abort is the client's version of the server.
            let client = if tv >= 2 { 2 } else { 0 };
            assert_eq!(
                values(&c, 1),
                [
                    written(
                        tv,
                        TxnState::PrepareAbort,
                        (10, 10, 4),
                        60_000,
                        Some(&[("orders", &[0])]),
                        (started, NOW),
                        client
                    ),
                    written(
                        tv,
                        TxnState::CompleteAbort,
                        (10, 10, 4),
                        60_000,
                        Some(&[]),
                        (started, NOW),
                        client
                    ),
                    // The retry's timeout; the client version stays.
                    written(
                        tv,
                        TxnState::Empty,
                        (10, 10, 5),
                        30_000,
                        None,
                        (-1, NOW),
                        client
                    ),
                ],
                "transaction.version {tv}"
            );
            // One batch per change, at offsets 0, 1, 2 of the empty log,
            // stamped with the leader's epoch and the coordinator's time;
            // the high watermark past them.
            let at: Vec<(i64, i64, i32)> = txn_log(&c, 1)
                .iter()
                .map(|(o, t, e, _)| (*o, *t, *e))
                .collect();
            assert_eq!(at, [(0, NOW, 8), (1, NOW, 8), (2, NOW, 8)]);
            let p = c.partition("__transaction_state", 1).unwrap();
            assert_eq!(p.log.batches().len(), 3);
            assert_eq!(p.high_watermark, 3);
            // Nothing on the other partitions.
            assert!(txn_log(&c, 0).is_empty() && txn_log(&c, 2).is_empty());
        }
    }

    #[test]
    fn new_ids_bumps_and_rotations_are_written() {
        for tv in [0, 2] {
            let mut c = at_level(tv);
            // "ghost": partition 0, a new producer id at epoch 0.
            let r = init_producer_id(&mut c, &caller(1), &init(Some("ghost"), 1_000), 5);
            let pid = r.producer_id;
            // app-d (CompleteCommit, epoch 0 at broker 2): bumped to 1.
            let d = init_producer_id(&mut c, &caller(2), &init(Some("app-d"), 2_000), 5);
            assert_eq!(answer(&d), (ErrorCode::NONE, 13, 1));
            let client = if tv >= 2 { 2 } else { 0 };
            assert_eq!(
                values(&c, 0),
                [written(
                    tv,
                    TxnState::Empty,
                    (pid, pid, 0),
                    1_000,
                    None,
                    (-1, NOW),
                    0
                )]
            );
            // app-d's log is partition 1; its client version was the
            // cluster's (a completed transaction of a v2 cluster).
            assert_eq!(
                values(&c, 1),
                [written(
                    tv,
                    TxnState::Empty,
                    (13, 13, 1),
                    2_000,
                    None,
                    (-1, NOW),
                    client
                )]
            );
            // Once the epoch is exhausted, a new producer id at epoch 0.
            c.transaction_mut("ghost").unwrap().producer_epoch = 32_766;
            let r = init_producer_id(&mut c, &caller(1), &init(Some("ghost"), 1_000), 5);
            assert_eq!((r.error_code, r.producer_epoch), (ErrorCode::NONE, 0));
            assert_ne!(r.producer_id, pid);
            assert_eq!(
                values(&c, 0).last().unwrap(),
                &written(
                    tv,
                    TxnState::Empty,
                    (r.producer_id, pid, 0),
                    1_000,
                    None,
                    (-1, NOW),
                    0
                )
            );
        }
    }

    #[test]
    fn refusals_and_stuck_transactions_write_nothing() {
        let mut c = at_level(2);
        for (broker, id) in [(1, "secret-c"), (2, "app-a"), (1, "app-b"), (1, "")] {
            init_producer_id(&mut c, &caller(broker), &init(Some(id), 1_000), 5);
        }
        for p in 0..3 {
            assert!(txn_log(&c, p).is_empty(), "partition {p}");
        }
    }

    #[test]
    fn under_protocol_v2_an_exhausted_epochs_abort_announces_the_next_id() {
        let mut c = at_level(2);
        c.transaction_mut("app-a").unwrap().producer_epoch = 32_766;
        init_producer_id(&mut c, &caller(1), &init(Some("app-a"), 30_000), 5);
        let v = values(&c, 1);
        let (prepare, complete) = (&v[0].record, &v[1].record);
        assert_eq!(
            (prepare.producer_id, prepare.producer_epoch),
            (10, i16::MAX)
        );
        let next = prepare.next_producer_id;
        assert!(next >= 1000, "a new id: {next}");
        assert_eq!(
            (
                complete.producer_id,
                complete.previous_producer_id,
                complete.producer_epoch,
                complete.next_producer_id
            ),
            (next, 10, 0, -1)
        );
        assert!(matches!(txn_log(&c, 1)[1].3, TxnLogEntry::State { .. }));
        let t = c.transaction("app-a").unwrap();
        assert_eq!((t.producer_id, t.producer_epoch), (next, 0));
    }
}
