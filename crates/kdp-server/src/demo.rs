//! The built-in cluster of `kdp demo`: three brokers and a few topics whose
//! producers show what DescribeProducers is for. `orders` partition 3 holds
//! exactly the seed document's example producer (an open transaction no
//! coordinator knows); elsewhere: an idle idempotent producer (4001), a
//! transactional producer with open transactions (5002, `orders-app`) whose
//! older epoch lingers on a lagging follower of `orders-2` and on `orders-4`
//! (a fenced zombie epoch), a hanging transaction on `payments-0` (7003,
//! open for over three hours, unknown to every coordinator), and timestamps
//! relative to the moment the cluster is loaded.
//!
//! The `ledger` topic holds one case each of what a healthy broker does not
//! produce: `ledger-0` a hanging transaction whose partition is missing from
//! the coordinator's transaction (8001, `ledger-writer`), `ledger-2` a
//! transaction stuck in PrepareCommit for an hour (8002, `billing-app`),
//! `ledger-3` an open transaction whose transactional id the client may not
//! describe (8003, `secret-payroll`: Kafka's tool calls it hanging),
//! `ledger-4` a fenced instance (8004 at epoch 6, the coordinator's
//! `inventory-sync` at 7, no open transaction), whose transaction log
//! (`__transaction_state-2`, starting at offset 4218: older records are
//! gone) shows the second instance's InitProducerId six minutes ago, after
//! which it wrote `inventory-2`. `inventory-0`'s follower on
//! broker 1 has diverged (it misses producer 9102 and lags on 9101).
//!
//! Four consumer groups read `payments`, whose partition 0 the hanging
//! transaction pins: `payments-ledger` (classic, read_committed) is blocked
//! at the LSO, `payments-audit` (a KIP-848 consumer group) lags behind it,
//! `payments-reporting` (read_uncommitted) is past it, and
//! `payments-archive` has no members left, only old offsets.

use std::time::SystemTime;

use crate::cluster::{Cluster, ClusterError};

/// The demo cluster file (JSON, see `docs/CLUSTER_FILE.md`).
pub const DEMO_CLUSTER_JSON: &str = include_str!("demo_cluster.json");

/// What `kdp demo --producers` adds to the demo cluster (JSON, merged by
/// [`producers_cluster_json`]): a Flink-like sink that makes a transactional
/// id every 20 seconds (`ingest-flink-{n}`, for a day) on `checkpoints`,
/// whose replicas are all on broker 2, the one broker left at Kafka's
/// default `producer.id.expiration.ms` of a day (1 and 3 expire ids after an
/// hour), so broker 2 holds about 4,300 producer ids and the others about
/// 90; a function that makes a transactional id per request
/// (`receipt-fn-{uuid}`, two a second for the last five minutes) on
/// `receipts`; a steady idempotent service on `events`; and
/// `settlement-writer` on
/// `settlements`, a transactional id using an epoch a second (a transaction
/// a second under protocol v2) from 32000, near the end of its epochs.
pub const DEMO_PRODUCERS_JSON: &str = include_str!("demo_producers.json");

/// The cluster of `kdp demo --owners` (JSON): transactional ids of the
/// frameworks `kdp owners` knows, with the groups that show their owners.
/// A Kafka Streams application `orders-app` whose group lists one live
/// instance (its members' subscriptions carry its process id) while
/// another instance's two ids hold transactions open on `orders-out` for 9
/// minutes (orphaned), holding back the read_committed group
/// `orders-report` committed at their LSOs; `payments-app`, a KIP-1071
/// streams group (StreamsGroupDescribe lists its one live process id) with
/// an orphaned id open on `payments-out` for 12 minutes; a Connect cluster `connect-prod` whose one worker
/// runs connector `ticks-2024-v2`'s three tasks (its metadata and
/// assignment as a real worker sent them) and whose leader writes
/// `connect-cluster-connect-prod`; a Flink KafkaSink `ingest-sink` restarted
/// without state, whose old `ingest-sink-0-41` is still open 50 minutes
/// after the new job committed `-0-1` and `-0-2` (lingering) while `-0-3`
/// is its newest checkpoint's; and `legacy-writer.7`, a prefix with a
/// counter (unattributed). The members' bytes are from real runs
/// (vectors/owners).
pub const DEMO_OWNERS_JSON: &str = include_str!("demo_owners.json");

/// [`DEMO_OWNERS_JSON`], resolved against now.
pub fn owners_cluster() -> Result<Cluster, ClusterError> {
    Cluster::from_json(DEMO_OWNERS_JSON)
}

/// The demo cluster file with [`DEMO_PRODUCERS_JSON`] merged in: its
/// brokers' configs set by id, its topics, generators and allowed
/// transactional-id prefixes added.
pub fn producers_cluster_json() -> String {
    let mut base: serde_json::Value = match serde_json::from_str(DEMO_CLUSTER_JSON) {
        Ok(v) => v,
        Err(_) => return DEMO_CLUSTER_JSON.to_string(),
    };
    let Ok(extra) = serde_json::from_str::<serde_json::Value>(DEMO_PRODUCERS_JSON) else {
        return DEMO_CLUSTER_JSON.to_string();
    };
    for b in extra["brokers"].as_array().into_iter().flatten() {
        let into = base["brokers"]
            .as_array_mut()
            .and_then(|bs| bs.iter_mut().find(|x| x["id"] == b["id"]));
        if let (Some(into), Some(configs)) = (into, b["configs"].as_object()) {
            for (k, v) in configs {
                into["configs"][k] = v.clone();
            }
        }
    }
    let allow = "transactional_id_describe_allow";
    if let (Some(list), Some(add)) = (
        base["acls"][allow].as_array_mut(),
        extra["acls"][allow].as_array(),
    ) {
        list.extend(add.iter().cloned());
    }
    for key in ["topics", "producer_generators"] {
        let add = extra[key].as_array().cloned().unwrap_or_default();
        match base[key].as_array_mut() {
            Some(list) => list.extend(add),
            None => base[key] = serde_json::Value::Array(add),
        }
    }
    serde_json::to_string_pretty(&base).unwrap_or_else(|_| DEMO_CLUSTER_JSON.to_string())
}

/// The demo cluster with [`DEMO_PRODUCERS_JSON`], resolved against now.
pub fn producers_cluster() -> Result<Cluster, ClusterError> {
    Cluster::from_json(&producers_cluster_json())
}

/// `kdp demo --lag`'s cluster file (JSON): `transfers-0` holds idempotent
/// records, a committed and an aborted transaction and their markers,
/// ending on a commit marker at 16; `transfers-1` an open transaction
/// (`transfers-writer`, producer 13) from offset 3. Group `settlement` sits
/// on the last marker of partition 0 (Kafka's LAG 1, nothing to read) and
/// at the LSO of partition 1 (held back); `reconciler` is at 0 (17
/// offsets, 11 records); share group `payouts` (read_committed) has start
/// offsets 9 and 0 (at most 2 and 3 records, the open transaction holds 3
/// back).
pub const DEMO_LAG_JSON: &str = include_str!("demo_lag.json");

/// The `kdp demo --lag` cluster, resolved against now.
pub fn lag_cluster() -> Result<Cluster, ClusterError> {
    Cluster::from_json(DEMO_LAG_JSON)
}

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
    use kdp_wire::ErrorCode;
    use std::time::{Duration, UNIX_EPOCH};

    /// The producers overlay: broker 2 under pressure, the others not,
    /// settlement-writer near the end of its epochs, and the demo's own
    /// topics as they were.
    #[test]
    fn the_producers_overlay_puts_broker_2_under_pressure() {
        let c = Cluster::from_json(&producers_cluster_json()).unwrap();
        let held = |b: i32| -> usize {
            c.topics
                .iter()
                .flat_map(|t| &t.partitions)
                .filter(|p| p.is_replica(b) && !p.is_offline_on(b))
                .map(|p| p.producers_on(b).len())
                .sum()
        };
        assert!(held(2) > 4000, "{}", held(2));
        for b in [1, 3] {
            assert!(held(b) < 1000, "broker {b}: {}", held(b));
        }
        let settle = c.partition("settlements", 0).unwrap().producers_on(3)[0].clone();
        assert!(settle.producer_epoch >= 32000 && settle.producer_epoch < 32767 - 700);
        assert_eq!(
            c.transaction("settlement-writer").unwrap().producer_id,
            settle.producer_id
        );
        assert!(c.transaction("ingest-flink-4000").is_some());
        let plain = cluster().unwrap();
        assert_eq!(c.partition("orders", 3), plain.partition("orders", 3));
        assert_eq!(
            c.transactions.len(),
            plain.transactions.len() + 4321 + 601 + 1
        );
    }

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

    #[test]
    fn groups_sit_around_the_lso_the_hanging_transaction_pins() {
        use crate::group::{GroupState, GroupType};
        let c = cluster_at(UNIX_EPOCH + Duration::from_secs(1_750_000_000)).unwrap();
        let p = c.partition("payments", 0).unwrap();
        let lso = p.last_stable_offset();
        assert!(lso < p.high_watermark, "payments-0 is pinned");
        let committed = |g: &str| c.group(g).unwrap().committed("payments", 0).unwrap();
        assert_eq!(committed("payments-ledger"), lso);
        assert!(committed("payments-audit") < lso);
        assert!(committed("payments-reporting") > lso);
        assert!(committed("payments-reporting") <= p.high_watermark);
        let archive = c.group("payments-archive").unwrap();
        assert_eq!(archive.state, GroupState::Empty);
        assert!(archive.members.is_empty());
        assert_eq!(
            c.group("payments-audit").unwrap().group_type,
            GroupType::Consumer
        );
        // Every group has a coordinator.
        for g in &c.groups {
            assert!(c.group_coordinator(&g.group_id).is_some(), "{}", g.group_id);
        }
    }

    /// `kafka-transactions.sh find-hanging` (TransactionsCommand, default
    /// 15-minute timeout) over the responders: the open transactions on
    /// `broker`'s replicas (or the leaders') idle longer than the timeout
    /// whose producer id ListTransactions (on every broker) does not list,
    /// whose transactional id DescribeTransactions does not find, or whose
    /// transaction lacks the partition.
    fn kafka_find_hanging(
        c: &Cluster,
        now_ms: i64,
        broker: Option<i32>,
    ) -> Vec<(String, i32, i64)> {
        use crate::apis::describe_transactions::describe_transactions;
        use crate::apis::list_transactions::list_transactions;
        use crate::apis::Caller;
        use crate::responder::{AllowAll, RequestContext};
        use kdp_wire::messages::{DescribeTransactionsRequest, ListTransactionsRequest};
        let ctx = RequestContext::default();
        let caller = |broker_id| Caller {
            broker_id,
            authorizer: &AllowAll,
            request: &ctx,
            now_ms,
        };
        let mut candidates = Vec::new();
        for t in &c.topics {
            for p in &t.partitions {
                let on = match broker {
                    Some(b) if p.is_replica(b) && !p.is_offline_on(b) => b,
                    Some(_) => continue,
                    None => p.leader,
                };
                for s in p.producers_on(on) {
                    if s.current_txn_start_offset >= 0 && now_ms - s.last_timestamp > 15 * 60_000 {
                        candidates.push((t.name.clone(), p.index, s.producer_id));
                    }
                }
            }
        }
        let mut hanging = Vec::new();
        for (topic, partition, pid) in candidates {
            let req = ListTransactionsRequest {
                producer_id_filters: vec![pid],
                ..Default::default()
            };
            let listed = c.brokers.iter().find_map(|b| {
                list_transactions(c, &caller(b.id), &req, 0)
                    .transaction_states
                    .into_iter()
                    .next()
            });
            let Some(listed) = listed else {
                hanging.push((topic, partition, pid));
                continue;
            };
            let id = listed.transactional_id;
            let coordinator = c.transaction_coordinator(&id).unwrap();
            let req = DescribeTransactionsRequest {
                transactional_ids: vec![id],
                ..Default::default()
            };
            let d = describe_transactions(c, &caller(coordinator), &req)
                .transaction_states
                .remove(0);
            let listed_partition = d
                .topics
                .iter()
                .any(|t| t.topic == topic && t.partitions.contains(&partition));
            if d.error_code != ErrorCode::NONE || !listed_partition {
                hanging.push((topic, partition, pid));
            }
        }
        hanging
    }

    #[test]
    fn kafkas_rule_finds_exactly_the_planted_cases() {
        let now = UNIX_EPOCH + Duration::from_secs(1_750_000_000);
        let c = cluster_at(now).unwrap();
        let now_ms = 1_750_000_000_000;
        let h = |t: &str, p, pid| (t.to_string(), p, pid);
        // The leaders: the seed's producer and 7003 (no coordinator knows
        // them), ledger-0 (not in ledger-writer's transaction), ledger-3
        // (secret-payroll, hidden: a false positive). Not ledger-2: stuck
        // in PrepareCommit, but the coordinator still lists the partition.
        assert_eq!(
            kafka_find_hanging(&c, now_ms, None),
            vec![
                h("orders", 3, 0),
                h("payments", 0, 7003),
                h("ledger", 0, 8001),
                h("ledger", 3, 8003)
            ]
        );
        // Broker 2's lagging follower of orders-2 holds an old open
        // transaction of 5002, but orders-app still covers orders-2.
        assert_eq!(
            kafka_find_hanging(&c, now_ms, Some(2)),
            vec![
                h("orders", 3, 0),
                h("payments", 0, 7003),
                h("ledger", 0, 8001),
                h("ledger", 3, 8003)
            ]
        );
        let stuck = c.transaction("billing-app").unwrap();
        assert_eq!(stuck.state, crate::txn::TxnState::PrepareCommit);
        assert!(stuck.has_partition("ledger", 2));
        // The fenced instance: an older epoch on the partition than the
        // coordinator's, and no open transaction.
        let fenced = &c.partition("ledger", 4).unwrap().producers[0];
        let coordinator = c.transaction("inventory-sync").unwrap();
        assert_eq!(fenced.producer_id, coordinator.producer_id);
        assert!(fenced.producer_epoch < i32::from(coordinator.producer_epoch));
        assert_eq!(fenced.current_txn_start_offset, -1);
        // The diverged follower.
        let inv = c.partition("inventory", 0).unwrap();
        assert_ne!(inv.producers_on(1), inv.producers_on(3));
    }
}
