//! The coordinator aborting an open transaction itself
//! (`TransactionCoordinator.endTransaction` with `isFromClient = false`,
//! after `TransactionMetadata.prepareFenceProducerEpoch`): for an
//! InitProducerId that finds the id Ongoing, and for a transaction that
//! outlived its timeout (`abortTimedOutTransactions`). The client's version
//! is the cluster's ("Since this is not from client, use server TV"):
//!
//! * below `transaction.version` 2 (Kafka 3.9, and 4.x at levels 0 and 1;
//!   `endTransactionWithTV1`): the fence bumps the epoch, and PrepareAbort
//!   is written at that epoch with ClientTransactionVersion 0;
//! * at level 2 (Kafka 4.x's default; protocol v2): the abort itself bumps
//!   the epoch (`prepareAbortOrCommit` with a version that
//!   `supportsEpochBump`), PrepareAbort carries ClientTransactionVersion 2,
//!   and an epoch that ran out announces the next producer id.
//!
//! Either way the epoch written is one above the transaction's. The markers
//! (ABORT, at that epoch and the coordinator epoch of the id's
//! `__transaction_state` partition) then go to each partition of the
//! transaction, and CompleteAbort is written once they are all there
//! (`TransactionMarkerChannelManager`, `prepareComplete`). Kafka sends the
//! markers and completes asynchronously; the mock does both at once.

use crate::cluster::marker::end_transaction;
use crate::cluster::Cluster;
use crate::txn::TxnState;

/// Aborts `transactional_id`'s open transaction at `now_ms` as its
/// coordinator does, fencing its producer. `false` (and nothing changes)
/// unless the id is Ongoing.
pub fn abort_open_transaction(cluster: &mut Cluster, transactional_id: &str, now_ms: i64) -> bool {
    let Some(t) = cluster.transaction(transactional_id) else {
        return false;
    };
    if t.state != TxnState::Ongoing {
        return false;
    }
    let producer_id = t.producer_id;
    let next = if cluster.transaction_version >= 2 && t.is_epoch_exhausted() {
        cluster.allocate_producer_id()
    } else {
        -1
    };
    let Some(t) = cluster.transaction(transactional_id) else {
        return false;
    };
    let transit = if cluster.transaction_version >= 2 {
        t.prepare_end(false, 2, next, now_ms)
    } else {
        // prepareFenceProducerEpoch, then the abort keeps that epoch.
        let mut fenced = t.clone();
        fenced.producer_epoch = fenced.producer_epoch.saturating_add(1);
        fenced.prepare_end(false, 0, -1, now_ms)
    };
    cluster.commit_transit(transactional_id, &transit, now_ms);
    let coordinator_epoch = cluster.transaction_coordinator_epoch(transactional_id);
    for (topic, indexes) in &transit.partitions {
        for &i in indexes {
            if let Some(p) = cluster.partition_mut(topic, i) {
                end_transaction(
                    p,
                    producer_id,
                    i32::from(transit.producer_epoch),
                    coordinator_epoch,
                    now_ms,
                );
            }
        }
    }
    let complete = match cluster.transaction(transactional_id) {
        Some(t) => t.prepare_complete(now_ms),
        None => return true,
    };
    cluster.commit_transit(transactional_id, &complete, now_ms);
    true
}
