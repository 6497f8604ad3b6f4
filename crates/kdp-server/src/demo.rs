//! The built-in cluster of `kdp demo`: three brokers and a few topics whose
//! producers show what DescribeProducers is for. `orders` partition 3 holds
//! exactly the seed document's example producer; elsewhere: an idle
//! idempotent producer (4001), a transactional producer with open
//! transactions (5002) whose older epoch lingers on a lagging follower of
//! `orders-2` and on `orders-4` (a fenced zombie epoch), a hanging
//! transaction on `payments-0` (7003, open for over three hours), and
//! timestamps relative to the moment the cluster is loaded.

use std::time::SystemTime;

use crate::cluster::{Cluster, ClusterError};

/// The demo cluster file (JSON, see `docs/CLUSTER_FILE.md`).
pub const DEMO_CLUSTER_JSON: &str = include_str!("demo_cluster.json");

/// The demo cluster, with relative timestamps resolved against now.
pub fn cluster() -> Result<Cluster, ClusterError> {
    cluster_at(SystemTime::now())
}

/// The demo cluster, with relative timestamps resolved against `now`.
pub fn cluster_at(now: SystemTime) -> Result<Cluster, ClusterError> {
    Cluster::from_json_at(DEMO_CLUSTER_JSON, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn parses_and_holds_the_seed_example() {
        let now = UNIX_EPOCH + Duration::from_secs(1_750_000_000);
        let c = cluster_at(now).unwrap();
        assert_eq!(c.brokers.len(), 3);
        let p = c.partition("orders", 3).unwrap();
        assert_eq!(p.producers.len(), 1);
        let s = &p.producers[0];
        assert_eq!(
            (
                s.producer_id,
                s.producer_epoch,
                s.last_sequence,
                s.last_timestamp,
                s.coordinator_epoch,
                s.current_txn_start_offset
            ),
            (0, 12, 0, 0, 12, 150382)
        );
        assert!(p.replica_producers.is_empty());
        assert!(c.topic("__transaction_state").unwrap().internal);
        assert!(c.topic("__consumer_offsets").unwrap().internal);
        // The hanging transaction is older than the default 15-minute
        // transaction timeout kafka-transactions.sh find-hanging uses.
        let hanging = &c.partition("payments", 0).unwrap().producers[0];
        let now_ms = 1_750_000_000_000i64;
        assert!(hanging.current_txn_start_offset >= 0);
        assert!(now_ms - hanging.last_timestamp > 15 * 60 * 1000);
        // The zombie: the same producer id, an older epoch on one replica.
        let o2 = c.partition("orders", 2).unwrap();
        assert_eq!(o2.producers_on(3)[0].producer_epoch, 3);
        assert_eq!(o2.producers_on(2)[0].producer_epoch, 2);
    }
}
