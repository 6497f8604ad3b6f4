//! The coordinator's abort of transactions that outlived their timeout
//! (`TransactionCoordinator.abortTimedOutTransactions`, scheduled every
//! `transaction.abort.timed.out.transaction.cleanup.interval.ms`;
//! `TransactionStateManager.timedOutTransactions`: Ongoing, no change
//! pending, and `txnStartTimestamp + txnTimeoutMs < now`). Each is aborted
//! as [`super::abort::abort_open_transaction`] does, which fences its producer.
//!
//! Opt-in on the mock: a broker's coordinator scans only when the cluster
//! file sets that configuration on it. A cluster file is a picture of a
//! cluster, open transactions included (often long past their timeout, as
//! the ones it is about); Kafka's default (every 10 s) would end them at
//! the first scan. The scans of a broker follow one another every interval
//! from the first request the mock serves; scans that fell between two
//! requests run at the next one: each transaction is aborted at the time
//! of the first scan after its deadline.

use std::collections::BTreeMap;

use crate::cluster::Cluster;
use crate::txn::TxnState;

pub use crate::cluster::TRANSACTION_ABORT_INTERVAL_CONFIG as ABORT_INTERVAL_CONFIG;

/// When each broker's coordinator scans next (ms since the epoch).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TimeoutScans {
    next: BTreeMap<i32, i64>,
    started: bool,
}

/// Runs every scan due by `now_ms`. Returns how many transactions were
/// aborted and when the next scan is due (`None`: no broker scans).
pub fn abort_timed_out_transactions(
    cluster: &mut Cluster,
    scans: &mut TimeoutScans,
    now_ms: i64,
) -> (usize, Option<i64>) {
    if !scans.started {
        scans.started = true;
        for b in &cluster.brokers {
            if let Some(interval) = cluster.abort_interval_ms(b.id) {
                scans.next.insert(b.id, now_ms.saturating_add(interval));
            }
        }
    }
    let mut aborted = 0;
    let due: Vec<(i32, i64, i64)> = scans
        .next
        .iter()
        .filter(|(_, &next)| next <= now_ms)
        .filter_map(|(&b, &next)| Some((b, next, cluster.abort_interval_ms(b)?)))
        .collect();
    for (broker, next, interval) in due {
        // Each transaction at the first scan after its deadline (Kafka's
        // `<`): the scans that fell between two requests run in turn.
        let mut timed_out: Vec<(i64, String)> = cluster
            .transactions
            .iter()
            .filter(|t| t.state == TxnState::Ongoing)
            .filter_map(|t| {
                let deadline = t.start_time_ms.saturating_add(i64::from(t.timeout_ms));
                let at = if deadline < next {
                    next
                } else {
                    next.saturating_add(
                        ((deadline - next) / interval)
                            .saturating_add(1)
                            .saturating_mul(interval),
                    )
                };
                (at <= now_ms).then(|| (at, t.transactional_id.clone()))
            })
            .filter(|(_, id)| cluster.transaction_coordinator(id) == Some(broker))
            .collect();
        timed_out.sort();
        for (at, id) in timed_out {
            if super::abort::abort_open_transaction(cluster, &id, at) {
                aborted += 1;
            }
        }
        // The first scan after now.
        let after = next.saturating_add(((now_ms - next) / interval + 1).saturating_mul(interval));
        scans.next.insert(broker, after);
    }
    (aborted, scans.next.values().min().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::coordinator_log::testing::txn_log;
    use kdp_wire::coordinator::txn_log::{TransactionLogValue, TxnLogEntry};
    use kdp_wire::coordinator::Versioned;

    const T0: i64 = 1_700_000_000_000;

    fn cluster(configs: &str, tv: i16) -> Cluster {
        Cluster::from_json_at(
            &format!(
                r#"{{"transaction_version": {tv},
                "brokers": [{{"id": 1, "configs": {{{configs}}}}}, {{"id": 2}}],
                "topics": [{{"name": "t", "partitions": [
                    {{"partition": 0, "leader": 1, "replicas": [1, 2],
                      "producers": [{{"ProducerId": 9, "ProducerEpoch": 4, "CoordinatorEpoch": 3,
                                      "CurrentTxnStartOffset": 10}}]}}]}},
                  {{"name": "__transaction_state", "partitions": [
                    {{"partition": 0, "leader": 1, "leader_epoch": 3, "replicas": [1, 2]}}]}}],
                "transactions": [
                  {{"transactional_id": "slow", "producer_id": 9, "producer_epoch": 4, "state": "Ongoing",
                   "timeout_ms": 60000, "start_time": {start}, "partitions": {{"t": [0]}}}},
                  {{"transactional_id": "elsewhere", "producer_id": 8, "state": "Ongoing", "coordinator": 2,
                   "timeout_ms": 1000, "start_time": {start}, "partitions": {{"t": [0]}}}}]}}"#,
                start = T0 - 30_000
            ),
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(T0 as u64),
        )
        .unwrap()
    }

    /// The values `__transaction_state-0` holds, in order, with their
    /// record's timestamp.
    fn log(c: &Cluster) -> Vec<(i64, Versioned<TransactionLogValue>)> {
        txn_log(c, 0)
            .into_iter()
            .filter_map(|(_, at, _, e)| match e {
                TxnLogEntry::State { value, .. } => Some((at, value)),
                TxnLogEntry::Tombstone { .. } => None,
            })
            .collect()
    }

    #[test]
    fn without_the_setting_nothing_times_out() {
        let mut c = cluster("", 2);
        let mut scans = TimeoutScans::default();
        assert_eq!(
            abort_timed_out_transactions(&mut c, &mut scans, T0),
            (0, None)
        );
        assert_eq!(
            abort_timed_out_transactions(&mut c, &mut scans, T0 + 86_400_000),
            (0, None)
        );
        assert_eq!(c.transaction("slow").unwrap().state, TxnState::Ongoing);
    }

    #[test]
    fn a_scan_aborts_what_outlived_its_timeout_at_the_time_it_ran() {
        for tv in [0, 2] {
            let mut c = cluster(
                r#""transaction.abort.timed.out.transaction.cleanup.interval.ms": "10000""#,
                tv,
            );
            let mut scans = TimeoutScans::default();
            // First request: scans every 10 s from now on.
            assert_eq!(
                abort_timed_out_transactions(&mut c, &mut scans, T0),
                (0, Some(T0 + 10_000))
            );
            // At T0 + 30 s the deadline (start + 60 s) is reached, not
            // passed: Kafka's `<`. Broker 2 does not scan: "elsewhere" stays.
            assert_eq!(
                abort_timed_out_transactions(&mut c, &mut scans, T0 + 30_000),
                (0, Some(T0 + 40_000))
            );
            assert!(log(&c).is_empty());
            // Asked next at T0 + 47 s: the scan due at T0 + 40 s, the first
            // after the deadline, runs.
            assert_eq!(
                abort_timed_out_transactions(&mut c, &mut scans, T0 + 47_000),
                (1, Some(T0 + 50_000))
            );
            let t = c.transaction("slow").unwrap();
            assert_eq!((t.state, t.producer_epoch), (TxnState::CompleteAbort, 5));
            assert_eq!(c.transaction("elsewhere").unwrap().state, TxnState::Ongoing);
            let records = log(&c);
            let states: Vec<_> = records
                .iter()
                .map(|(at, v)| (*at, v.record.state().unwrap(), v.record.producer_epoch))
                .collect();
            assert_eq!(
                states,
                [
                    (T0 + 40_000, TxnState::PrepareAbort, 5),
                    (T0 + 40_000, TxnState::CompleteAbort, 5)
                ],
                "level {tv}"
            );
            let prepare = &records[0].1.record;
            // Written once it outlived its timeout: kdp history's "timeout".
            assert!(
                prepare.transaction_last_update_timestamp_ms
                    - prepare.transaction_start_timestamp_ms
                    >= i64::from(prepare.transaction_timeout_ms)
            );
            assert_eq!(
                prepare.client_transaction_version,
                if tv >= 2 { 2 } else { 0 },
                "the server's version"
            );
            // The abort marker fenced the producer on t-0.
            let s = &c.partition("t", 0).unwrap().producers_on(1)[0];
            assert_eq!(
                (
                    s.producer_epoch,
                    s.coordinator_epoch,
                    s.current_txn_start_offset
                ),
                (5, 3, -1)
            );
        }
    }
}
