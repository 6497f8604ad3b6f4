//! Kafka's internal topics, made when first needed as a broker makes them:
//! FindCoordinator of a group or a transactional id on a cluster without
//! `__consumer_offsets` or `__transaction_state` asks for the topic
//! (`KafkaApis.getCoordinator` -> `AutoTopicCreationManager.createTopics`),
//! with the partition count and replication factor of the receiving
//! broker's configuration (`GroupCoordinatorConfig`, `TransactionLogConfig`:
//! 50 partitions and 3 replicas each by default). The controller places the
//! replicas on the registered brokers (`StripedReplicaPlacer`); a
//! replication factor above their number is refused
//! (INVALID_REPLICATION_FACTOR: "The target replication factor of 3 cannot
//! be reached because only 1 broker(s) are registered."), and the topic is
//! then never made: every FindCoordinator asks again and answers
//! COORDINATOR_NOT_AVAILABLE.
//!
//! Every broker of a mock cluster is registered and alive. Kafka's placer
//! starts at a random broker; the mock's placement is fixed instead (the
//! brokers by id, partition `p` on the `replication_factor` brokers from
//! `p` on, the first one leading), so a run is reproducible. Topic
//! configurations (cleanup.policy=compact, min.insync.replicas of
//! `transaction.state.log.min.isr`, segment sizes) are not modelled: the
//! mock's topics carry none.

use std::ops::RangeInclusive;

use super::log::PartitionLog;
use super::model::{
    derived_topic_id, Cluster, Partition, Topic, GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC,
};

/// `offsets.topic.num.partitions` (`GroupCoordinatorConfig`, default 50).
pub const OFFSETS_TOPIC_PARTITIONS: &str = "offsets.topic.num.partitions";
/// `offsets.topic.replication.factor` (default 3).
pub const OFFSETS_TOPIC_REPLICATION_FACTOR: &str = "offsets.topic.replication.factor";
/// `transaction.state.log.num.partitions` (`TransactionLogConfig`, default 50).
pub const TRANSACTION_STATE_PARTITIONS: &str = "transaction.state.log.num.partitions";
/// `transaction.state.log.replication.factor` (default 3).
pub const TRANSACTION_STATE_REPLICATION_FACTOR: &str = "transaction.state.log.replication.factor";

/// Kafka's default partition count of both topics.
pub const DEFAULT_PARTITIONS: i64 = 50;
/// Kafka's default replication factor of both topics.
pub const DEFAULT_REPLICATION_FACTOR: i64 = 3;
/// The most partitions the mock makes an internal topic with (Kafka has no
/// such bound; the mock keeps a typo from allocating millions).
pub const MAX_PARTITIONS: i64 = 10_000;

/// The values a setting of an internal topic may take: partition counts
/// `1..=MAX_PARTITIONS`, replication factors those of a Java short from 1
/// (Kafka's `atLeast(1)`). `None` for any other configuration name.
pub fn valid_range(config: &str) -> Option<RangeInclusive<i64>> {
    match config {
        OFFSETS_TOPIC_PARTITIONS | TRANSACTION_STATE_PARTITIONS => Some(1..=MAX_PARTITIONS),
        OFFSETS_TOPIC_REPLICATION_FACTOR | TRANSACTION_STATE_REPLICATION_FACTOR => {
            Some(1..=i64::from(i16::MAX))
        }
        _ => None,
    }
}

/// Why an internal topic was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// Not one of the internal topics a coordinator asks for.
    #[error("{0:?} is not an internal topic a coordinator creates")]
    NotInternal(String),
    /// More replicas than registered brokers (`StripedReplicaPlacer`).
    #[error(
        "Unable to replicate the partition {replication_factor} time(s): The target replication \
         factor of {replication_factor} cannot be reached because only {brokers} broker(s) are \
         registered."
    )]
    InvalidReplicationFactor {
        /// The replication factor asked for.
        replication_factor: i64,
        /// The brokers there are.
        brokers: usize,
    },
}

impl Cluster {
    /// The partition count and replication factor broker `broker_id` asks
    /// `topic` to be made with: its configuration, else Kafka's defaults.
    pub fn internal_topic_settings(&self, topic: &str, broker_id: i32) -> Option<(i64, i64)> {
        let (partitions, replication) = match topic {
            GROUP_METADATA_TOPIC => (OFFSETS_TOPIC_PARTITIONS, OFFSETS_TOPIC_REPLICATION_FACTOR),
            TRANSACTION_STATE_TOPIC => (
                TRANSACTION_STATE_PARTITIONS,
                TRANSACTION_STATE_REPLICATION_FACTOR,
            ),
            _ => return None,
        };
        let setting = |name: &str, default: i64| {
            self.broker(broker_id)
                .and_then(|b| b.configs.get(name))
                .and_then(|v| v.parse::<i64>().ok())
                .filter(|v| valid_range(name).is_some_and(|r| r.contains(v)))
                .unwrap_or(default)
        };
        Some((
            setting(partitions, DEFAULT_PARTITIONS),
            setting(replication, DEFAULT_REPLICATION_FACTOR),
        ))
    }

    /// Makes internal topic `topic` as broker `broker_id`'s request for it
    /// does, unless it exists. `Ok(true)`: made now; `Ok(false)`: it was
    /// there.
    pub fn create_internal_topic(
        &mut self,
        topic: &str,
        broker_id: i32,
    ) -> Result<bool, CreateError> {
        if self.topic(topic).is_some() {
            return Ok(false);
        }
        let (partitions, replication_factor) = self
            .internal_topic_settings(topic, broker_id)
            .ok_or_else(|| CreateError::NotInternal(topic.to_string()))?;
        let mut brokers: Vec<i32> = self.brokers.iter().map(|b| b.id).collect();
        brokers.sort_unstable();
        let rf = usize::try_from(replication_factor).unwrap_or(usize::MAX);
        if rf > brokers.len() || brokers.is_empty() {
            return Err(CreateError::InvalidReplicationFactor {
                replication_factor,
                brokers: brokers.len(),
            });
        }
        let count = usize::try_from(partitions).unwrap_or(0);
        let partitions = (0..count)
            .map(|p| {
                let replicas: Vec<i32> = (0..rf)
                    .filter_map(|k| brokers.get((p + k) % brokers.len()).copied())
                    .collect();
                Partition {
                    index: i32::try_from(p).unwrap_or(i32::MAX),
                    leader: replicas.first().copied().unwrap_or(-1),
                    leader_epoch: 0,
                    isr: replicas.clone(),
                    replicas,
                    offline_replicas: Vec::new(),
                    producers: Vec::new(),
                    replica_producers: Default::default(),
                    high_watermark: 0,
                    explicit_last_stable_offset: None,
                    log: PartitionLog::starting_at(0),
                }
            })
            .collect();
        self.insert_topic(Topic {
            name: topic.to_string(),
            topic_id: derived_topic_id(topic),
            internal: true,
            configs: Default::default(),
            partitions,
        });
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(brokers: &str) -> Cluster {
        Cluster::from_json(&format!(r#"{{"brokers": [{brokers}]}}"#)).unwrap()
    }

    #[test]
    fn made_with_kafkas_defaults_on_every_broker_in_turn() {
        let mut c = cluster(r#"{"id": 3}, {"id": 1}, {"id": 2}"#);
        assert_eq!(c.create_internal_topic(GROUP_METADATA_TOPIC, 1), Ok(true));
        let t = c.topic(GROUP_METADATA_TOPIC).unwrap();
        assert!(t.internal);
        assert_eq!(t.partitions.len(), 50);
        let placed: Vec<(i32, Vec<i32>)> = t
            .partitions
            .iter()
            .take(4)
            .map(|p| (p.leader, p.replicas.clone()))
            .collect();
        assert_eq!(
            placed,
            [
                (1, vec![1, 2, 3]),
                (2, vec![2, 3, 1]),
                (3, vec![3, 1, 2]),
                (1, vec![1, 2, 3])
            ]
        );
        assert!(t
            .partitions
            .iter()
            .enumerate()
            .all(|(i, p)| p.index as usize == i && p.isr == p.replicas));
        // Found by id too, and made once.
        assert_eq!(
            c.topic_by_id(derived_topic_id(GROUP_METADATA_TOPIC))
                .map(|t| t.name.as_str()),
            Some(GROUP_METADATA_TOPIC)
        );
        assert_eq!(c.create_internal_topic(GROUP_METADATA_TOPIC, 2), Ok(false));
    }

    #[test]
    fn the_asking_brokers_settings_apply() {
        let mut c = cluster(
            r#"{"id": 1, "configs": {"transaction.state.log.num.partitions": "4",
                                    "transaction.state.log.replication.factor": "1"}},
               {"id": 2}"#,
        );
        // Broker 2 asks with Kafka's defaults: 3 replicas on 2 brokers.
        let refused = c.create_internal_topic(TRANSACTION_STATE_TOPIC, 2);
        assert_eq!(
            refused,
            Err(CreateError::InvalidReplicationFactor {
                replication_factor: 3,
                brokers: 2
            })
        );
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("only 2 broker(s) are registered"));
        assert!(c.topic(TRANSACTION_STATE_TOPIC).is_none());
        // Broker 1's settings: 4 partitions of one replica.
        assert_eq!(
            c.create_internal_topic(TRANSACTION_STATE_TOPIC, 1),
            Ok(true)
        );
        let t = c.topic(TRANSACTION_STATE_TOPIC).unwrap();
        let replicas: Vec<Vec<i32>> = t.partitions.iter().map(|p| p.replicas.clone()).collect();
        assert_eq!(replicas, [vec![1], vec![2], vec![1], vec![2]]);
        assert_eq!(
            c.create_internal_topic("orders", 1),
            Err(CreateError::NotInternal("orders".into()))
        );
    }
}
