//! The APIs a broker serves, without sockets: one [`Handler`] per request
//! type of kdp-wire's registry, each taking the request, the cluster (read,
//! or written for the APIs that change it), who asks, and returning what a
//! Kafka broker would answer.
//!
//! Facts are from Apache Kafka's `KafkaApis`, `TransactionCoordinator`,
//! `TransactionStateManager` and `ProducerAppendInfo` (checked against
//! apache/kafka at 1eb7644, plus the transaction-version-2 marker rule of
//! later releases); each file names what it mirrors.

pub mod api_versions;
pub mod consumer_group_describe;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_producers;
pub mod describe_share_group_offsets;
pub mod describe_transactions;
pub mod fetch;
pub mod find_coordinator;
mod group_errors;
mod handler;
pub mod init_producer_id;
pub mod list_groups;
pub mod list_offsets;
pub mod list_transactions;
pub mod metadata;
pub mod offset_fetch;
pub mod sasl_state;
pub mod streams_group_describe;
pub mod write_txn_markers;

pub use handler::{Call, Caller, Handler, Invalid, Refusal};

/// Test helpers shared by the API tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::cluster::Cluster;
    use crate::responder::AllowAll;
    use crate::responder::RequestContext;

    pub const NOW: i64 = 1_700_000_000_000;

    pub fn caller(broker_id: i32) -> Caller<'static> {
        static CTX: std::sync::OnceLock<RequestContext> = std::sync::OnceLock::new();
        Caller {
            broker_id,
            authorizer: &AllowAll,
            request: CTX.get_or_init(RequestContext::default),
            now_ms: NOW,
        }
    }

    pub fn cluster(json: &str) -> Cluster {
        Cluster::from_json_at(
            json,
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(NOW as u64),
        )
        .unwrap()
    }

    /// Three brokers; `__transaction_state` has 3 partitions led by 1, 2, 3
    /// (leader epochs 7, 8, 9); transactional ids placed by the hash rule.
    pub const TXN_CLUSTER: &str = r#"{
        "brokers": [{"id": 1, "configs": {"transaction.max.timeout.ms": "120000"}}, {"id": 2}, {"id": 3}],
        "topics": [
            {"name": "orders", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "leader_epoch": 5, "high_watermark": 500,
                 "producers": [
                    {"ProducerId": 10, "ProducerEpoch": 3, "LastSequence": 9, "LastTimestamp": "now-1h", "CoordinatorEpoch": 7, "CurrentTxnStartOffset": 400},
                    {"ProducerId": 11, "ProducerEpoch": 1, "LastSequence": 4, "LastTimestamp": "now-1m", "CoordinatorEpoch": 8, "CurrentTxnStartOffset": 450}
                 ],
                 "replica_producers": {"3": [
                    {"ProducerId": 10, "ProducerEpoch": 2, "CurrentTxnStartOffset": 400}
                 ]}},
                {"partition": 1, "leader": 2, "replicas": [2, 1], "high_watermark": 80}
            ]},
            {"name": "__transaction_state", "partitions": [
                {"partition": 0, "leader": 1, "leader_epoch": 7, "replicas": [1, 2]},
                {"partition": 1, "leader": 2, "leader_epoch": 8, "replicas": [2, 3]},
                {"partition": 2, "leader": 3, "leader_epoch": 9, "replicas": [3, 1]}
            ]}
        ],
        "transactions": [
            {"transactional_id": "app-a", "producer_id": 10, "producer_epoch": 3, "state": "Ongoing",
             "timeout_ms": 60000, "start_time": "now-1h", "partitions": {"orders": [0]}, "coordinator": 1},
            {"transactional_id": "app-b", "producer_id": 11, "producer_epoch": 1, "state": "PrepareCommit",
             "start_time": "now-2m", "partitions": {"orders": [0]}, "coordinator": 1},
            {"transactional_id": "secret-c", "producer_id": 12, "state": "Empty", "coordinator": 1},
            {"transactional_id": "app-d", "producer_id": 13, "state": "CompleteCommit", "coordinator": 2},
            {"transactional_id": "gone", "producer_id": 14, "state": "Dead", "coordinator": 1}
        ],
        "acls": {"transactional_id_describe_deny": ["secret-*"], "transactional_id_write_deny": ["secret-*"]}
    }"#;

    /// Three brokers; `__consumer_offsets` has 3 partitions led by 1, 2, 3.
    /// By the hash rule "reports", "idle" and "hidden-x" live on partition
    /// 0 (broker 1), "etl" on 1 (broker 2). "hidden-*" may not be described.
    pub const GROUP_CLUSTER: &str = r#"{
        "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
        "topics": [
            {"name": "orders", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1, 2], "high_watermark": 500},
                {"partition": 1, "leader": 2, "replicas": [2, 1], "high_watermark": 80}
            ]},
            {"name": "__consumer_offsets", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1]},
                {"partition": 1, "leader": 2, "replicas": [2]},
                {"partition": 2, "leader": 3, "replicas": [3]}
            ]}
        ],
        "groups": [
            {"group_id": "reports", "type": "consumer", "group_epoch": 4,
             "members": [{"member_id": "m-1", "client_id": "reports-1", "client_host": "/10.0.0.1",
                          "assignment": {"orders": [0, 1]}}],
             "offsets": {"orders": {"0": 400, "1": 80}}},
            {"group_id": "idle", "offsets": {"orders": {"0": 12}}},
            {"group_id": "hidden-x", "members": [{"member_id": "h-1"}]},
            {"group_id": "etl", "members": [
                {"member_id": "e-1", "group_instance_id": "etl-a", "assignment": {"orders": [0]}},
                {"member_id": "e-2", "assignment": {"orders": [1]}}],
             "offsets": {"orders": {"0": 450}}}
        ],
        "acls": {"group_describe_deny": ["hidden-*"]}
    }"#;
}
