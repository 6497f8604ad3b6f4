//! The cluster as the mock serves it: brokers, topics, partitions, the
//! producer state each replica holds and the coordinators' transactions,
//! with the queries and the few mutations the handlers need.

use std::collections::{BTreeMap, HashMap};

use kdp_wire::messages::ProducerState;
use kdp_wire::Uuid;

use crate::acls::Acls;
use crate::group::Group;
use crate::sasl::Users;
use crate::txn::{coordinator_partition, Transaction};

/// One broker of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// The broker's `NodeId`.
    pub id: i32,
    /// The host name to advertise in Metadata instead of the listener's address.
    pub host: Option<String>,
    /// `Rack` in Metadata.
    pub rack: Option<String>,
    /// Configuration the file sets (`configs`); see [`Cluster::broker_configs`].
    pub configs: BTreeMap<String, String>,
}

/// Broker configurations every mock broker reports, with Kafka's defaults,
/// unless its `configs` sets them: (name, default, DescribeConfigs
/// ConfigType).
pub const DEFAULT_BROKER_CONFIGS: &[(&str, &str, i8)] = &[
    ("transaction.max.timeout.ms", "900000", CONFIG_TYPE_INT),
    ("producer.id.expiration.ms", "86400000", CONFIG_TYPE_INT),
    (
        "transactional.id.expiration.ms",
        "604800000",
        CONFIG_TYPE_INT,
    ),
    // The internal topics' settings (see `internal`).
    ("offsets.topic.num.partitions", "50", CONFIG_TYPE_INT),
    ("offsets.topic.replication.factor", "3", CONFIG_TYPE_SHORT),
    (
        "transaction.state.log.num.partitions",
        "50",
        CONFIG_TYPE_INT,
    ),
    (
        "transaction.state.log.replication.factor",
        "3",
        CONFIG_TYPE_SHORT,
    ),
];

/// DescribeConfigs ConfigType INT.
pub const CONFIG_TYPE_INT: i8 = 3;
/// DescribeConfigs ConfigType SHORT.
pub const CONFIG_TYPE_SHORT: i8 = 4;
/// DescribeConfigs ConfigType STRING (used for keys the mock has no type for).
pub const CONFIG_TYPE_STRING: i8 = 2;

/// Where a broker's configuration value comes from (DescribeConfigs
/// ConfigSource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// A topic's own setting: DYNAMIC_TOPIC_CONFIG (1).
    DynamicTopic = 1,
    /// A group's own setting: GROUP_CONFIG (8, Kafka 4.x).
    DynamicGroup = 8,
    /// Set in the file: STATIC_BROKER_CONFIG (4), as from server.properties.
    Static = 4,
    /// Kafka's default: DEFAULT_CONFIG (5).
    Default = 5,
}

/// One configuration entry of a broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerConfig {
    /// The config key, e.g. `transaction.max.timeout.ms`.
    pub name: String,
    /// The value DescribeConfigs reports, as a string.
    pub value: String,
    /// Where the value comes from: the file (STATIC_BROKER_CONFIG) or Kafka's default (DEFAULT_CONFIG).
    pub source: ConfigSource,
    /// Kafka's default, when the mock knows it (for synonyms).
    pub default: Option<&'static str>,
    /// DescribeConfigs ConfigType (v3+), e.g. [`CONFIG_TYPE_INT`] or [`CONFIG_TYPE_STRING`].
    pub config_type: i8,
}

/// One topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    /// The topic name.
    pub name: String,
    /// Derived from the name (stable across runs); never zero.
    pub topic_id: Uuid,
    /// `IsInternal` in Metadata, e.g. for `__transaction_state`.
    pub internal: bool,
    /// The topic's own settings (DescribeConfigs, DYNAMIC_TOPIC_CONFIG),
    /// e.g. `cleanup.policy`.
    pub configs: std::collections::BTreeMap<String, String>,
    /// Indexed by partition id: `partitions[i].index == i`.
    pub partitions: Vec<Partition>,
}

/// One partition: placement and the producer state of each replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// `PartitionIndex`.
    pub index: i32,
    /// The leader's broker id, or -1 if the partition has no leader.
    pub leader: i32,
    /// `LeaderEpoch` in Metadata.
    pub leader_epoch: i32,
    /// Broker ids holding a replica (`ReplicaNodes`).
    pub replicas: Vec<i32>,
    /// In-sync replicas (`IsrNodes`).
    pub isr: Vec<i32>,
    /// Replicas whose log is offline (a failed log directory): the broker is
    /// up, but answers KAFKA_STORAGE_ERROR for this partition.
    pub offline_replicas: Vec<i32>,
    /// The state every replica holds unless overridden below.
    pub producers: Vec<ProducerState>,
    /// Replica-specific state (a replica that diverged), by broker id.
    pub replica_producers: BTreeMap<i32, Vec<ProducerState>>,
    /// The high watermark (ListOffsets latest, read_uncommitted).
    pub high_watermark: i64,
    /// The file's `last_stable_offset`; `None`: derived, see
    /// [`Partition::last_stable_offset`]. Cleared when a marker changes the
    /// partition's open transactions.
    pub explicit_last_stable_offset: Option<i64>,
    /// The record batches Fetch serves (the file's `batches`, and what
    /// [`Cluster::append_batch`] added); empty for most partitions.
    pub log: super::log::PartitionLog,
}

impl Partition {
    /// Whether `broker_id` holds a replica.
    pub fn is_replica(&self, broker_id: i32) -> bool {
        self.replicas.contains(&broker_id)
    }

    /// Whether the replica on `broker_id` has an offline log.
    pub fn is_offline_on(&self, broker_id: i32) -> bool {
        self.offline_replicas.contains(&broker_id)
    }

    /// The producer state the replica on `broker_id` holds (meaningful only
    /// for a replica).
    pub fn producers_on(&self, broker_id: i32) -> &[ProducerState] {
        self.replica_producers
            .get(&broker_id)
            .map(Vec::as_slice)
            .unwrap_or(&self.producers)
    }

    /// The last stable offset (ListOffsets latest, read_committed): the
    /// file's value, else the first offset of the earliest open transaction
    /// on the leader, else the high watermark.
    pub fn last_stable_offset(&self) -> i64 {
        if let Some(lso) = self.explicit_last_stable_offset {
            return lso;
        }
        let leader_state = if self.leader >= 0 {
            self.producers_on(self.leader)
        } else {
            &self.producers
        };
        leader_state
            .iter()
            .map(|p| p.current_txn_start_offset)
            .filter(|&o| o >= 0)
            .chain(self.log.first_unstable_offset())
            .min()
            .map_or(self.high_watermark, |o| o.min(self.high_watermark))
    }

    /// The log start offset: the log's (0 unless the file moved it).
    pub fn log_start_offset(&self) -> i64 {
        self.log.log_start_offset
    }

    /// Every producer-state list of the partition (the shared one and each
    /// replica's own), for changes that every replica makes alike.
    pub fn all_producer_lists_mut(&mut self) -> impl Iterator<Item = &mut Vec<ProducerState>> {
        std::iter::once(&mut self.producers).chain(self.replica_producers.values_mut())
    }
}

/// A validated cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// `ClusterId` in Metadata.
    pub cluster_id: String,
    /// The broker Metadata names as controller (KRaft brokers name a live broker).
    pub controller_id: i32,
    /// In file order.
    pub brokers: Vec<Broker>,
    /// In file order.
    pub topics: Vec<Topic>,
    /// What the transaction coordinators hold, in file order.
    pub transactions: Vec<Transaction>,
    /// What the group coordinators hold, in file order.
    pub groups: Vec<Group>,
    /// What client principals are denied.
    pub acls: Acls,
    /// The SASL users; if there are any, every listener requires SASL.
    pub users: Users,
    /// The finalized `transaction.version` feature level ApiVersions (v3+)
    /// reports; 0 reports none (transaction protocol v1, as Kafka 3.9).
    pub transaction_version: i16,
    /// API keys the mock neither advertises in ApiVersions nor serves.
    pub withheld_apis: Vec<i16>,
    pub(super) by_name: HashMap<String, usize>,
    pub(super) by_id: HashMap<Uuid, usize>,
    pub(super) by_transactional_id: HashMap<String, usize>,
    /// `groups` by group id (a scan per lookup is quadratic at 10,000
    /// groups); checked on each hit, since `groups` is public.
    pub(super) by_group_id: HashMap<String, usize>,
    pub(super) by_broker_id: HashMap<i32, usize>,
    /// The next producer id InitProducerId hands out.
    pub(super) next_producer_id: i64,
    /// Producers made by the clock (`producer_generators`), brought to the
    /// present by [`Cluster::advance_generators`].
    pub generators: Vec<super::generator::Generator>,
}

impl Cluster {
    /// A topic by name.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.by_name.get(name).and_then(|&i| self.topics.get(i))
    }

    /// A topic by `TopicId`.
    pub fn topic_by_id(&self, id: Uuid) -> Option<&Topic> {
        self.by_id.get(&id).and_then(|&i| self.topics.get(i))
    }

    /// A partition, if its topic has it.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&Partition> {
        let t = self.topic(topic)?;
        usize::try_from(partition)
            .ok()
            .and_then(|i| t.partitions.get(i))
    }

    /// A broker by id (indexed: requests look brokers up per item).
    pub fn broker(&self, id: i32) -> Option<&Broker> {
        match self
            .by_broker_id
            .get(&id)
            .and_then(|&i| self.brokers.get(i))
        {
            Some(b) if b.id == id => Some(b),
            // `brokers` changed since the index was made.
            _ => self.brokers.iter().find(|b| b.id == id),
        }
    }

    /// A partition by topic name and index, for changing it (WriteTxnMarkers, InitProducerId).
    pub fn partition_mut(&mut self, topic: &str, partition: i32) -> Option<&mut Partition> {
        let &t = self.by_name.get(topic)?;
        let i = usize::try_from(partition).ok()?;
        self.topics.get_mut(t)?.partitions.get_mut(i)
    }

    /// Adds a topic the cluster does not have yet, indexed by name and id
    /// (an internal topic a coordinator asked for). `false`: the name is
    /// taken, nothing changed.
    pub fn insert_topic(&mut self, topic: Topic) -> bool {
        if self.by_name.contains_key(&topic.name) {
            return false;
        }
        let i = self.topics.len();
        self.by_name.insert(topic.name.clone(), i);
        self.by_id.entry(topic.topic_id).or_insert(i);
        self.topics.push(topic);
        true
    }

    /// The coordinator's entry for a transactional id, if the cluster has it.
    pub fn transaction(&self, transactional_id: &str) -> Option<&Transaction> {
        self.by_transactional_id
            .get(transactional_id)
            .and_then(|&i| self.transactions.get(i))
    }

    /// The coordinator's entry for a transactional id, for changing it (InitProducerId).
    pub fn transaction_mut(&mut self, transactional_id: &str) -> Option<&mut Transaction> {
        let &i = self.by_transactional_id.get(transactional_id)?;
        self.transactions.get_mut(i)
    }

    /// Adds a transactional id the file did not have (InitProducerId).
    pub fn insert_transaction(&mut self, txn: Transaction) {
        if self.transaction(&txn.transactional_id).is_some() {
            return;
        }
        self.by_transactional_id
            .insert(txn.transactional_id.clone(), self.transactions.len());
        self.transactions.push(txn);
    }

    /// The partition of `__transaction_state` that owns `transactional_id`
    /// (`TransactionStateManager.partitionFor`), if that topic exists.
    pub fn transaction_state_partition(&self, transactional_id: &str) -> Option<&Partition> {
        internal_partition(self, TRANSACTION_STATE_TOPIC, transactional_id)
    }

    /// The broker coordinating `transactional_id`: the file's `coordinator`
    /// for a transaction that names one, else the leader of its
    /// `__transaction_state` partition. `None`: no coordinator (no such
    /// topic, or the partition has no leader).
    pub fn transaction_coordinator(&self, transactional_id: &str) -> Option<i32> {
        if let Some(b) = self
            .transaction(transactional_id)
            .and_then(|t| t.coordinator_override)
        {
            return Some(b);
        }
        self.transaction_state_partition(transactional_id)
            .map(|p| p.leader)
            .filter(|&l| l >= 0)
    }

    /// The coordinator epoch the coordinator of `transactional_id` writes
    /// markers with: the leader epoch of its `__transaction_state`
    /// partition by the hash rule, even when the file names the coordinator
    /// (0 without that topic).
    pub fn transaction_coordinator_epoch(&self, transactional_id: &str) -> i32 {
        self.transaction_state_partition(transactional_id)
            .map_or(0, |p| p.leader_epoch)
    }

    /// The broker coordinating consumer group `group` (the leader of its
    /// `__consumer_offsets` partition).
    pub fn group_coordinator(&self, group: &str) -> Option<i32> {
        internal_partition(self, GROUP_METADATA_TOPIC, group)
            .map(|p| p.leader)
            .filter(|&l| l >= 0)
    }

    /// A group by id: by the index, or by a scan when `groups` changed in
    /// length since the index was built (add groups with
    /// [`Cluster::insert_group`] to keep lookups direct).
    pub fn group(&self, group_id: &str) -> Option<&Group> {
        let hit = self
            .by_group_id
            .get(group_id)
            .and_then(|&i| self.groups.get(i))
            .filter(|g| g.group_id == group_id);
        if hit.is_some() || self.by_group_id.len() == self.groups.len() {
            return hit;
        }
        self.groups.iter().find(|g| g.group_id == group_id)
    }

    /// Adds a group the cluster does not have yet (keeps the index).
    pub fn insert_group(&mut self, group: Group) -> bool {
        if self.group(&group.group_id).is_some() {
            return false;
        }
        self.by_group_id
            .insert(group.group_id.clone(), self.groups.len());
        self.groups.push(group);
        true
    }

    /// A broker's configuration: [`DEFAULT_BROKER_CONFIGS`] (unless set),
    /// then what the file sets, sorted by name.
    pub fn broker_configs(&self, broker_id: i32) -> Vec<BrokerConfig> {
        let set = self.broker(broker_id).map(|b| &b.configs);
        let mut out: Vec<BrokerConfig> = DEFAULT_BROKER_CONFIGS
            .iter()
            .map(|&(name, default, config_type)| {
                let (value, source) = match set.and_then(|c| c.get(name)) {
                    Some(v) => (v.clone(), ConfigSource::Static),
                    None => (default.to_string(), ConfigSource::Default),
                };
                BrokerConfig {
                    name: name.to_string(),
                    value,
                    source,
                    default: Some(default),
                    config_type,
                }
            })
            .collect();
        for (name, value) in set.into_iter().flatten() {
            if DEFAULT_BROKER_CONFIGS.iter().any(|d| d.0 == name) {
                continue;
            }
            out.push(BrokerConfig {
                name: name.clone(),
                value: value.clone(),
                source: ConfigSource::Static,
                default: None,
                config_type: CONFIG_TYPE_STRING,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// A broker's `transaction.max.timeout.ms` (Kafka's default when the
    /// value is not a number).
    pub fn transaction_max_timeout_ms(&self, broker_id: i32) -> i64 {
        self.broker(broker_id)
            .and_then(|b| b.configs.get("transaction.max.timeout.ms"))
            .and_then(|v| v.parse().ok())
            .unwrap_or(900_000)
    }

    /// A broker's [`TRANSACTION_ABORT_INTERVAL_CONFIG`], when the file sets
    /// it (a positive number, checked on load).
    pub fn abort_interval_ms(&self, broker_id: i32) -> Option<i64> {
        self.broker(broker_id)
            .and_then(|b| b.configs.get(TRANSACTION_ABORT_INTERVAL_CONFIG))
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|&ms| ms >= 1)
    }

    /// A broker's `transactional.id.expiration.ms` (Kafka's default, 7
    /// days, when not set or not a number).
    pub fn transactional_id_expiration_ms(&self, broker_id: i32) -> i64 {
        self.broker(broker_id)
            .and_then(|b| b.configs.get("transactional.id.expiration.ms"))
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS)
    }

    /// Removes the transactional ids that expired by `now_ms`
    /// (`TransactionStateManager.removeExpiredTransactionalIds`): settled
    /// (Empty, CompleteCommit, CompleteAbort) and idle for their
    /// coordinator's `transactional.id.expiration.ms`, each leaving a
    /// tombstone in `__transaction_state`. Returns how many.
    /// One pass over the transactions.
    pub fn expire_transactional_ids(&mut self, now_ms: i64) -> usize {
        let expired: Vec<bool> = self
            .transactions
            .iter()
            .map(|t| {
                let expiration = self
                    .transaction_coordinator(&t.transactional_id)
                    .map_or(DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS, |b| {
                        self.transactional_id_expiration_ms(b)
                    });
                t.should_expire(now_ms, expiration)
            })
            .collect();
        let count = expired.iter().filter(|&&e| e).count();
        if count == 0 {
            return 0;
        }
        let ids: Vec<String> = self
            .transactions
            .iter()
            .zip(&expired)
            .filter(|(_, &e)| e)
            .map(|(t, _)| t.transactional_id.clone())
            .collect();
        let mut flags = expired.into_iter();
        self.transactions.retain(|_| !flags.next().unwrap_or(false));
        self.by_transactional_id = self
            .transactions
            .iter()
            .enumerate()
            .map(|(i, t)| (t.transactional_id.clone(), i))
            .collect();
        // Each removal is a tombstone in the id's log.
        self.append_tombstones(&ids, now_ms);
        count
    }

    /// Appends a batch to a partition's log (at its `base_offset`, at or
    /// after the log's end), moving the high watermark past it. What the
    /// mock then serves with Fetch; returns the batch's first and last
    /// offsets.
    pub fn append_batch(
        &mut self,
        topic: &str,
        partition: i32,
        batch: &kdp_wire::records::RecordBatch<'_>,
    ) -> Result<(i64, i64), super::log::AppendError> {
        let p = self.partition_mut(topic, partition).ok_or_else(|| {
            super::log::AppendError::UnknownPartition {
                topic: topic.to_string(),
                partition,
            }
        })?;
        let appended = p.log.append(batch)?;
        p.high_watermark = p.high_watermark.max(appended.1.saturating_add(1));
        Ok(appended)
    }

    /// Appends `records` (keys, values, timestamps: e.g. the transaction
    /// log's own records in `__transaction_state`) as one uncompressed
    /// batch without a producer, at the end of the partition's log (after
    /// its high watermark). Returns the batch's first and last offsets.
    pub fn append_records(
        &mut self,
        topic: &str,
        partition: i32,
        records: &[super::log::SimpleRecord],
    ) -> Result<(i64, i64), super::log::AppendError> {
        let (base, leader_epoch) = self
            .partition(topic, partition)
            .map(|p| (p.log.end_offset().max(p.high_watermark), p.leader_epoch))
            .unwrap_or((0, 0));
        let batch = super::log::simple_batch(base, leader_epoch, records);
        self.append_batch(topic, partition, &batch)
    }

    /// A fresh producer id (the producer-id manager's next block).
    pub fn allocate_producer_id(&mut self) -> i64 {
        let id = self.next_producer_id;
        self.next_producer_id = self.next_producer_id.saturating_add(1);
        id
    }
}

/// How often a broker's transaction coordinator aborts timed-out
/// transactions: Kafka's `transaction.abort.timed.out.transaction.cleanup.interval.ms`
/// (10 s on a broker; on the mock only where the cluster file sets it).
pub const TRANSACTION_ABORT_INTERVAL_CONFIG: &str =
    "transaction.abort.timed.out.transaction.cleanup.interval.ms";

/// `transactional.id.expiration.ms`'s default: 7 days.
pub const DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS: i64 = 604_800_000;

/// Kafka's `Topic.TRANSACTION_STATE_TOPIC_NAME`.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";
/// Kafka's `Topic.GROUP_METADATA_TOPIC_NAME`.
pub const GROUP_METADATA_TOPIC: &str = "__consumer_offsets";

pub(super) fn internal_partition<'a>(
    cluster: &'a Cluster,
    topic: &str,
    key: &str,
) -> Option<&'a Partition> {
    let t = cluster.topic(topic)?;
    let i = coordinator_partition(key, t.partitions.len())?;
    t.partitions.get(usize::try_from(i).ok()?)
}

/// Kafka's internal topics (`Topic.isInternal`).
pub fn is_internal_topic(name: &str) -> bool {
    matches!(
        name,
        "__consumer_offsets" | "__transaction_state" | "__share_group_state"
    )
}

/// A stable, non-zero topic id derived from the name (two FNV-1a passes).
pub fn derived_topic_id(name: &str) -> Uuid {
    fn fnv(seed: u64, bytes: &[u8]) -> u64 {
        let mut h = seed;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
    let a = fnv(0xcbf2_9ce4_8422_2325, name.as_bytes());
    let b = fnv(a ^ 0x9e37_79b9_7f4a_7c15, name.as_bytes());
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    // Kafka reserves the zero id and the metadata topic's id (0...01).
    if bytes[..15].iter().all(|&x| x == 0) {
        bytes[0] = 1;
    }
    Uuid(bytes)
}
