//! The cluster as a Metadata response describes it.

use std::collections::BTreeMap;

use kdp_wire::messages::MetadataResponse;
use kdp_wire::{ErrorCode, Uuid};

use crate::transport::BrokerAddress;

/// One broker of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    /// `NodeId`.
    pub id: i32,
    /// `Host` and `Port`, where the broker listens.
    pub addr: BrokerAddress,
    /// `Rack`, if the broker has one.
    pub rack: Option<String>,
}

/// One partition: its leader and replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    /// `PartitionIndex`.
    pub partition: i32,
    /// Kafka's error for this partition (e.g. LEADER_NOT_AVAILABLE), 0 for none.
    pub error_code: ErrorCode,
    /// The leader's broker id, or -1 when there is none.
    pub leader: i32,
    /// `LeaderEpoch`, or -1 when unknown.
    pub leader_epoch: i32,
    /// `ReplicaNodes`: every broker with a replica.
    pub replicas: Vec<i32>,
    /// `IsrNodes`: the in-sync replicas.
    pub isr: Vec<i32>,
    /// `OfflineReplicas`: replicas whose log is offline.
    pub offline_replicas: Vec<i32>,
}

/// One topic and its partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// `Name`.
    pub name: String,
    /// Kafka's error for this topic (e.g. UNKNOWN_TOPIC_OR_PARTITION), 0 for none.
    pub error_code: ErrorCode,
    /// `TopicId`, zero from brokers before Metadata v10.
    pub topic_id: Uuid,
    /// `IsInternal`, e.g. `__consumer_offsets`.
    pub is_internal: bool,
    /// By partition index.
    pub partitions: BTreeMap<i32, PartitionInfo>,
}

/// Brokers and topics, as of one Metadata response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterMetadata {
    /// `ClusterId`, if the broker sent one.
    pub cluster_id: Option<String>,
    /// `ControllerId`, or -1 when unknown.
    pub controller_id: i32,
    /// By broker id.
    pub brokers: BTreeMap<i32, BrokerInfo>,
    /// By name. Topics the broker answered without a name (asked for by id)
    /// are left out.
    pub topics: BTreeMap<String, TopicInfo>,
}

impl ClusterMetadata {
    /// The cluster as `resp` describes it; brokers with an impossible port are left out.
    pub fn from_response(resp: &MetadataResponse) -> Self {
        let brokers = resp
            .brokers
            .iter()
            .filter_map(|b| {
                let port = u16::try_from(b.port).ok()?;
                Some((
                    b.node_id,
                    BrokerInfo {
                        id: b.node_id,
                        addr: BrokerAddress::new(b.host.clone(), port),
                        rack: b.rack.clone(),
                    },
                ))
            })
            .collect();
        let topics = resp
            .topics
            .iter()
            .filter_map(|t| {
                let name = t.name.clone()?;
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        (
                            p.partition_index,
                            PartitionInfo {
                                partition: p.partition_index,
                                error_code: p.error_code,
                                leader: p.leader_id,
                                leader_epoch: p.leader_epoch,
                                replicas: p.replica_nodes.clone(),
                                isr: p.isr_nodes.clone(),
                                offline_replicas: p.offline_replicas.clone(),
                            },
                        )
                    })
                    .collect();
                Some((
                    name.clone(),
                    TopicInfo {
                        name,
                        error_code: t.error_code,
                        topic_id: t.topic_id,
                        is_internal: t.is_internal,
                        partitions,
                    },
                ))
            })
            .collect();
        ClusterMetadata {
            cluster_id: resp.cluster_id.clone(),
            controller_id: resp.controller_id,
            brokers,
            topics,
        }
    }

    /// A topic by name.
    pub fn topic(&self, name: &str) -> Option<&TopicInfo> {
        self.topics.get(name)
    }

    /// A partition of a topic, if the metadata lists it.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&PartitionInfo> {
        self.topics.get(topic)?.partitions.get(&partition)
    }

    /// The leader of a partition, if the metadata knows one.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        self.partition(topic, partition)
            .map(|p| p.leader)
            .filter(|l| *l >= 0)
    }

    /// Partitions over all topics.
    pub fn partition_count(&self) -> usize {
        self.topics.values().map(|t| t.partitions.len()).sum()
    }
}
