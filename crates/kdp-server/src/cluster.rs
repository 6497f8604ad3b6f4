//! The cluster file: a JSON description of a Kafka cluster as the mock serves
//! it (brokers, topics, partitions, replica placement, offline logs, and the
//! producer state each replica holds). See `docs/CLUSTER_FILE.md`.
//!
//! Parsing is strict: unknown fields, duplicates and inconsistent placement
//! are errors that name the JSON path of the offending value.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kdp_wire::messages::ProducerState;

use crate::acls::{Acls, ClusterOperation, NamePattern};
use crate::sasl::{SaslMechanism, User, Users};
use crate::txn::{coordinator_partition, Transaction, TxnState};
use kdp_wire::Uuid;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A cluster file that does not parse or does not make sense.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ClusterError {
    /// JSON path of the offending value, e.g. `topics[0].partitions[3].leader`
    /// (`.` for the document itself).
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl ClusterError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ClusterError {
            path: path.into(),
            message: message.into(),
        }
    }
}

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
];

/// DescribeConfigs ConfigType INT.
pub const CONFIG_TYPE_INT: i8 = 3;
/// DescribeConfigs ConfigType STRING (used for keys the mock has no type for).
pub const CONFIG_TYPE_STRING: i8 = 2;

/// Where a broker's configuration value comes from (DescribeConfigs
/// ConfigSource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
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
            .min()
            .map_or(self.high_watermark, |o| o.min(self.high_watermark))
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
    /// What client principals are denied.
    pub acls: Acls,
    /// The SASL users; if there are any, every listener requires SASL.
    pub users: Users,
    by_name: HashMap<String, usize>,
    by_id: HashMap<Uuid, usize>,
    by_transactional_id: HashMap<String, usize>,
    by_broker_id: HashMap<i32, usize>,
    /// The next producer id InitProducerId hands out.
    next_producer_id: i64,
}

impl Cluster {
    /// Parses and validates a cluster file. Relative timestamps (`"now-5m"`)
    /// are resolved against the current time.
    pub fn from_json(text: &str) -> Result<Cluster, ClusterError> {
        Self::from_json_at(text, SystemTime::now())
    }

    /// As [`Cluster::from_json`], with relative timestamps resolved against `now`.
    pub fn from_json_at(text: &str, now: SystemTime) -> Result<Cluster, ClusterError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let file: ClusterFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            ClusterError::new(path, e.into_inner().to_string())
        })?;
        // Only whitespace may follow; checked by the same deserializer, so the
        // text is read once (not again into a Value tree).
        de.end().map_err(|e| {
            ClusterError::new(
                ".",
                format!(
                    "trailing characters after the JSON document at line {} column {}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        file.validate(now_ms(now))
    }

    /// Reads and parses a cluster file; errors name the file.
    pub fn from_path(path: &Path) -> Result<Cluster, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ClusterError::new(path.display().to_string(), e.to_string()))?;
        Self::from_json(&text).map_err(|e| ClusterError {
            path: format!("{}: {}", path.display(), e.path),
            message: e.message,
        })
    }

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
    /// coordinator's `transactional.id.expiration.ms`. Returns how many.
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
        let mut flags = expired.into_iter();
        self.transactions.retain(|_| !flags.next().unwrap_or(false));
        self.by_transactional_id = self
            .transactions
            .iter()
            .enumerate()
            .map(|(i, t)| (t.transactional_id.clone(), i))
            .collect();
        count
    }

    /// A fresh producer id (the producer-id manager's next block).
    pub fn allocate_producer_id(&mut self) -> i64 {
        let id = self.next_producer_id;
        self.next_producer_id = self.next_producer_id.saturating_add(1);
        id
    }
}

/// `transactional.id.expiration.ms`'s default: 7 days.
pub const DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS: i64 = 604_800_000;

/// Kafka's `Topic.TRANSACTION_STATE_TOPIC_NAME`.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";
/// Kafka's `Topic.GROUP_METADATA_TOPIC_NAME`.
pub const GROUP_METADATA_TOPIC: &str = "__consumer_offsets";

fn internal_partition<'a>(cluster: &'a Cluster, topic: &str, key: &str) -> Option<&'a Partition> {
    let t = cluster.topic(topic)?;
    let i = coordinator_partition(key, t.partitions.len())?;
    t.partitions.get(usize::try_from(i).ok()?)
}

/// Kafka's topic-name rules (`org.apache.kafka.common.internals.Topic`):
/// `Err` carries the reason Kafka's `InvalidTopicException` gives.
pub fn validate_topic_name(name: &str) -> Result<(), String> {
    let reason = if name.is_empty() {
        Some("the empty string is not allowed".to_string())
    } else if name == "." {
        Some("'.' is not allowed".to_string())
    } else if name == ".." {
        Some("'..' is not allowed".to_string())
    // Java's String.length() counts UTF-16 units.
    } else if name.encode_utf16().count() > MAX_TOPIC_NAME_LENGTH {
        Some(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
        ))
    } else if !name
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'-')
    {
        Some(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        ))
    } else {
        None
    };
    match reason {
        Some(r) => Err(format!("Topic name is invalid: {r}")),
        None => Ok(()),
    }
}

const MAX_TOPIC_NAME_LENGTH: usize = 249;

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

fn now_ms(now: SystemTime) -> i64 {
    now.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

// ---------------------------------------------------------------- the file

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterFile {
    #[serde(default)]
    cluster_id: Option<String>,
    #[serde(default)]
    controller_id: Option<i32>,
    brokers: Vec<BrokerFile>,
    #[serde(default)]
    topics: Vec<TopicFile>,
    #[serde(default)]
    transactions: Vec<TransactionFile>,
    #[serde(default)]
    acls: AclsFile,
    #[serde(default)]
    sasl: SaslFile,
}

/// `"sasl": {"users": [...]}`: who may authenticate, and how.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SaslFile {
    #[serde(default)]
    users: Vec<UserFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFile {
    name: String,
    password: FilePassword,
    /// Default: every mechanism the mock serves.
    #[serde(default)]
    mechanisms: Option<Vec<String>>,
    /// SCRAM iteration count (Kafka's default for `kafka-configs --add-config SCRAM-...`).
    #[serde(default = "default_scram_iterations")]
    iterations: u32,
}

fn default_scram_iterations() -> u32 {
    kdp_scram::MIN_ITERATIONS
}

/// A password: a string. A value of another type is refused without
/// quoting it (serde's own message would).
struct FilePassword(zeroize::Zeroizing<String>);

impl<'de> Deserialize<'de> for FilePassword {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FilePassword;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FilePassword, E> {
                Ok(FilePassword(zeroize::Zeroizing::new(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<FilePassword, E> {
                Ok(FilePassword(zeroize::Zeroizing::new(v)))
            }
        }
        d.deserialize_string(V)
            .map_err(|_| de::Error::custom("a password must be a string"))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransactionFile {
    transactional_id: String,
    producer_id: i64,
    #[serde(default)]
    producer_epoch: i16,
    state: String,
    #[serde(default = "default_txn_timeout_ms")]
    timeout_ms: i32,
    #[serde(default)]
    start_time: Timestamp,
    #[serde(default)]
    partitions: BTreeMap<String, Vec<i32>>,
    #[serde(default)]
    coordinator: Option<i32>,
    /// `txnLastUpdateTimestamp`; default: when the file is loaded.
    #[serde(default)]
    last_update: Option<Timestamp>,
}

/// The Java producer's `transaction.timeout.ms` default.
fn default_txn_timeout_ms() -> i32 {
    60_000
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AclsFile {
    #[serde(default)]
    transactional_id_describe_deny: Vec<String>,
    #[serde(default)]
    transactional_id_describe_allow: Option<Vec<String>>,
    #[serde(default)]
    transactional_id_write_deny: Vec<String>,
    #[serde(default)]
    cluster_deny: Vec<String>,
    #[serde(default)]
    topic_read_deny: Vec<String>,
    #[serde(default)]
    topic_describe_deny: Vec<String>,
    /// `"User:alice": {...}`: rules replacing the ones above for one principal.
    #[serde(default)]
    principals: BTreeMap<String, AclsFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BrokerFile {
    id: i32,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    rack: Option<String>,
    #[serde(default)]
    configs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicFile {
    name: String,
    #[serde(default)]
    internal: Option<bool>,
    partitions: Vec<PartitionFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionFile {
    partition: i32,
    leader: i32,
    #[serde(default)]
    leader_epoch: Option<i32>,
    replicas: Vec<i32>,
    #[serde(default)]
    isr: Option<Vec<i32>>,
    #[serde(default)]
    offline_replicas: Vec<i32>,
    #[serde(default)]
    producers: Vec<ProducerFile>,
    #[serde(default)]
    replica_producers: BTreeMap<i32, Vec<ProducerFile>>,
    #[serde(default)]
    high_watermark: Option<i64>,
    #[serde(default)]
    last_stable_offset: Option<i64>,
}

/// A producer entry in the seed's field names, with the schema's defaults.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct ProducerFile {
    producer_id: i64,
    #[serde(default)]
    producer_epoch: i32,
    #[serde(default = "minus_one_i32")]
    last_sequence: i32,
    #[serde(default)]
    last_timestamp: Timestamp,
    #[serde(default)]
    coordinator_epoch: i32,
    #[serde(default = "minus_one_i64")]
    current_txn_start_offset: i64,
}

fn minus_one_i32() -> i32 {
    -1
}

fn minus_one_i64() -> i64 {
    -1
}

/// `LastTimestamp`: milliseconds since the epoch, `"now"`, `"now-<duration>"`
/// (humantime: `"90s"`, `"2h 5m"`), or an RFC 3339 time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timestamp {
    Absolute(i64),
    Ago(Duration),
}

impl Default for Timestamp {
    fn default() -> Self {
        Timestamp::Absolute(-1)
    }
}

impl Timestamp {
    fn resolve(self, now_ms: i64) -> i64 {
        match self {
            Timestamp::Absolute(ms) => ms,
            Timestamp::Ago(d) => {
                now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            }
        }
    }

    fn parse(s: &str) -> Result<Timestamp, String> {
        let t = s.trim();
        if t == "now" {
            return Ok(Timestamp::Ago(Duration::ZERO));
        }
        if let Some(rest) = t.strip_prefix("now-") {
            return humantime::parse_duration(rest.trim())
                .map(Timestamp::Ago)
                .map_err(|e| format!("bad duration in {s:?}: {e}"));
        }
        humantime::parse_rfc3339_weak(t)
            .map(|st| Timestamp::Absolute(now_ms(st)))
            .map_err(|_| {
                format!(
                    "{s:?} is not a timestamp: use milliseconds since the epoch, \"now\", \
                     \"now-<duration>\" (e.g. \"now-15m\") or RFC 3339"
                )
            })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("milliseconds since the epoch, \"now\", \"now-<duration>\" or RFC 3339")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Timestamp, E> {
                Ok(Timestamp::Absolute(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Timestamp, E> {
                i64::try_from(v)
                    .map(Timestamp::Absolute)
                    .map_err(|_| E::custom(format!("{v} does not fit an int64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl ClusterFile {
    fn validate(self, now_ms: i64) -> Result<Cluster, ClusterError> {
        if self.brokers.is_empty() {
            return Err(ClusterError::new(
                "brokers",
                "at least one broker is needed",
            ));
        }
        let mut broker_ids = BTreeSet::new();
        let mut brokers = Vec::with_capacity(self.brokers.len());
        for (i, b) in self.brokers.into_iter().enumerate() {
            let path = format!("brokers[{i}]");
            if b.id < 0 {
                return Err(ClusterError::new(
                    format!("{path}.id"),
                    format!("broker id {} is negative", b.id),
                ));
            }
            if !broker_ids.insert(b.id) {
                return Err(ClusterError::new(
                    format!("{path}.id"),
                    format!("broker id {} appears twice", b.id),
                ));
            }
            if let Some(h) = &b.host {
                if h.is_empty() || h.contains(char::is_whitespace) {
                    return Err(ClusterError::new(
                        format!("{path}.host"),
                        format!("{h:?} is not a host name"),
                    ));
                }
            }
            for (k, v) in &b.configs {
                if k.is_empty() {
                    return Err(ClusterError::new(
                        format!("{path}.configs"),
                        "a configuration name must not be empty",
                    ));
                }
                if DEFAULT_BROKER_CONFIGS.iter().any(|d| d.0 == k) && v.parse::<i64>().is_err() {
                    return Err(ClusterError::new(
                        format!("{path}.configs.{k}"),
                        format!("{v:?} is not a number"),
                    ));
                }
            }
            brokers.push(Broker {
                id: b.id,
                host: b.host,
                rack: b.rack,
                configs: b.configs,
            });
        }
        let controller_id = match self.controller_id {
            Some(id) if broker_ids.contains(&id) => id,
            Some(id) => {
                return Err(ClusterError::new(
                    "controller_id",
                    format!("{id} is not a broker of this file"),
                ))
            }
            // Validated above: a cluster has at least one broker.
            None => brokers.first().map_or(-1, |b| b.id),
        };
        let cluster_id = match self.cluster_id {
            Some(id) if id.is_empty() => {
                return Err(ClusterError::new("cluster_id", "must not be empty"))
            }
            Some(id) => id,
            None => "kdp-mock-cluster".to_string(),
        };

        let mut topics = Vec::with_capacity(self.topics.len());
        let mut by_name = HashMap::new();
        for (ti, t) in self.topics.into_iter().enumerate() {
            let tpath = format!("topics[{ti}]");
            validate_topic_name(&t.name)
                .map_err(|m| ClusterError::new(format!("{tpath}.name"), m))?;
            if by_name.insert(t.name.clone(), ti).is_some() {
                return Err(ClusterError::new(
                    format!("{tpath}.name"),
                    format!("topic {:?} appears twice", t.name),
                ));
            }
            if t.partitions.is_empty() {
                return Err(ClusterError::new(
                    format!("{tpath}.partitions"),
                    "a topic has at least one partition",
                ));
            }
            let mut slots: Vec<Option<Partition>> = vec![None; t.partitions.len()];
            let count = t.partitions.len();
            for (pi, p) in t.partitions.into_iter().enumerate() {
                let ppath = format!("{tpath}.partitions[{pi}]");
                let idx = usize::try_from(p.partition)
                    .ok()
                    .filter(|&i| i < count)
                    .ok_or_else(|| {
                        ClusterError::new(
                            format!("{ppath}.partition"),
                            format!(
                                "partition {} is out of range: the {count} partitions of a topic are numbered 0 to {}",
                                p.partition,
                                count - 1
                            ),
                        )
                    })?;
                let index = p.partition;
                let validated = p.validate(&ppath, &broker_ids, now_ms)?;
                match slots.get_mut(idx) {
                    Some(slot @ None) => *slot = Some(validated),
                    _ => {
                        return Err(ClusterError::new(
                            format!("{ppath}.partition"),
                            format!("partition {index} appears twice"),
                        ))
                    }
                }
            }
            let partitions = slots.into_iter().flatten().collect();
            topics.push(Topic {
                topic_id: derived_topic_id(&t.name),
                internal: t.internal.unwrap_or_else(|| is_internal_topic(&t.name)),
                name: t.name,
                partitions,
            });
        }
        // Metadata v12 looks topics up by id, possibly tens of thousands per
        // request. On an id collision the first topic wins.
        let mut by_id = HashMap::with_capacity(topics.len());
        for (i, t) in topics.iter().enumerate() {
            by_id.entry(t.topic_id).or_insert(i);
        }
        let acls = self.acls.validate("acls")?;
        let users = self.sasl.validate()?;
        let by_broker_id = brokers.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
        let mut cluster = Cluster {
            cluster_id,
            controller_id,
            by_broker_id,
            brokers,
            topics,
            transactions: Vec::new(),
            acls,
            users,
            by_name,
            by_id,
            by_transactional_id: HashMap::new(),
            next_producer_id: 0,
        };
        for (i, t) in self.transactions.into_iter().enumerate() {
            let txn = t.validate(&format!("transactions[{i}]"), &cluster, &broker_ids, now_ms)?;
            if cluster.transaction(&txn.transactional_id).is_some() {
                return Err(ClusterError::new(
                    format!("transactions[{i}].transactional_id"),
                    format!("transactional id {:?} appears twice", txn.transactional_id),
                ));
            }
            cluster.insert_transaction(txn);
        }
        // New producer ids start above every id the file uses.
        let max_file_id = cluster
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .flat_map(|p| {
                std::iter::once(&p.producers)
                    .chain(p.replica_producers.values())
                    .flatten()
            })
            .map(|s| s.producer_id)
            .chain(cluster.transactions.iter().map(|t| t.producer_id))
            .max()
            .unwrap_or(-1);
        cluster.next_producer_id = max_file_id.saturating_add(1).max(1000);
        Ok(cluster)
    }
}

fn check_broker_list(
    path: &str,
    list: &[i32],
    broker_ids: &BTreeSet<i32>,
    within: Option<(&[i32], &str)>,
) -> Result<(), ClusterError> {
    let mut seen = BTreeSet::new();
    for (i, id) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if !broker_ids.contains(id) {
            return Err(ClusterError::new(
                p,
                format!("{id} is not a broker of this file"),
            ));
        }
        if !seen.insert(*id) {
            return Err(ClusterError::new(p, format!("broker {id} appears twice")));
        }
        if let Some((set, name)) = within {
            if !set.contains(id) {
                return Err(ClusterError::new(
                    p,
                    format!("broker {id} is not in {name}"),
                ));
            }
        }
    }
    Ok(())
}

impl PartitionFile {
    fn validate(
        self,
        path: &str,
        broker_ids: &BTreeSet<i32>,
        now_ms: i64,
    ) -> Result<Partition, ClusterError> {
        if self.replicas.is_empty() {
            return Err(ClusterError::new(
                format!("{path}.replicas"),
                "a partition has at least one replica",
            ));
        }
        check_broker_list(
            &format!("{path}.replicas"),
            &self.replicas,
            broker_ids,
            None,
        )?;
        if self.leader != -1 && !self.replicas.contains(&self.leader) {
            return Err(ClusterError::new(
                format!("{path}.leader"),
                format!(
                    "leader {} is not one of the replicas (use -1 for no leader)",
                    self.leader
                ),
            ));
        }
        let replicas_ctx = Some((self.replicas.as_slice(), "replicas"));
        check_broker_list(
            &format!("{path}.offline_replicas"),
            &self.offline_replicas,
            broker_ids,
            replicas_ctx,
        )?;
        let isr = match self.isr {
            Some(isr) => {
                check_broker_list(&format!("{path}.isr"), &isr, broker_ids, replicas_ctx)?;
                isr
            }
            None => self
                .replicas
                .iter()
                .copied()
                .filter(|r| !self.offline_replicas.contains(r))
                .collect(),
        };
        let leader_epoch = self.leader_epoch.unwrap_or(0);
        if leader_epoch < 0 {
            return Err(ClusterError::new(
                format!("{path}.leader_epoch"),
                "must not be negative",
            ));
        }
        let producers = producer_list(&format!("{path}.producers"), self.producers, now_ms)?;
        let mut replica_producers = BTreeMap::new();
        for (broker, list) in self.replica_producers {
            let p = format!("{path}.replica_producers.{broker}");
            if !self.replicas.contains(&broker) {
                return Err(ClusterError::new(
                    p,
                    format!("broker {broker} is not a replica of this partition"),
                ));
            }
            if self.offline_replicas.contains(&broker) {
                return Err(ClusterError::new(
                    p,
                    format!("the log on broker {broker} is offline: it has no producer state"),
                ));
            }
            replica_producers.insert(broker, producer_list(&p, list, now_ms)?);
        }
        // Default high watermark: just past the latest open transaction's
        // first offset any replica holds, or 0.
        let high_watermark = match self.high_watermark {
            Some(hw) if hw < 0 => {
                return Err(ClusterError::new(
                    format!("{path}.high_watermark"),
                    "must not be negative",
                ))
            }
            Some(hw) => hw,
            None => std::iter::once(&producers)
                .chain(replica_producers.values())
                .flatten()
                .map(|p| p.current_txn_start_offset.saturating_add(1))
                .max()
                .unwrap_or(0)
                .max(0),
        };
        let mut partition = Partition {
            index: self.partition,
            leader: self.leader,
            leader_epoch,
            replicas: self.replicas,
            isr,
            offline_replicas: self.offline_replicas,
            producers,
            replica_producers,
            high_watermark,
            explicit_last_stable_offset: None,
        };
        if self.leader >= 0 {
            if let Some(open) = partition
                .producers_on(self.leader)
                .iter()
                .find(|p| p.current_txn_start_offset >= high_watermark)
            {
                return Err(ClusterError::new(
                    format!("{path}.high_watermark"),
                    format!(
                        "{high_watermark} is not above the leader's open transaction of producer {} \
                         (CurrentTxnStartOffset {})",
                        open.producer_id, open.current_txn_start_offset
                    ),
                ));
            }
        }
        if let Some(lso) = self.last_stable_offset {
            if !(0..=high_watermark).contains(&lso) {
                return Err(ClusterError::new(
                    format!("{path}.last_stable_offset"),
                    format!("{lso} is not between 0 and the high watermark {high_watermark}"),
                ));
            }
            partition.explicit_last_stable_offset = Some(lso);
        }
        Ok(partition)
    }
}

impl TransactionFile {
    fn validate(
        self,
        path: &str,
        cluster: &Cluster,
        broker_ids: &BTreeSet<i32>,
        now_ms: i64,
    ) -> Result<Transaction, ClusterError> {
        if self.transactional_id.is_empty() {
            return Err(ClusterError::new(
                format!("{path}.transactional_id"),
                "must not be empty",
            ));
        }
        if self.producer_id < 0 {
            return Err(ClusterError::new(
                format!("{path}.producer_id"),
                "must not be negative",
            ));
        }
        if self.producer_epoch < 0 {
            return Err(ClusterError::new(
                format!("{path}.producer_epoch"),
                "must not be negative",
            ));
        }
        let state = TxnState::from_name(&self.state).ok_or_else(|| {
            let names: Vec<&str> = TxnState::ALL.iter().map(|s| s.name()).collect();
            ClusterError::new(
                format!("{path}.state"),
                format!(
                    "{:?} is not a transaction state ({})",
                    self.state,
                    names.join(", ")
                ),
            )
        })?;
        if self.timeout_ms <= 0 {
            return Err(ClusterError::new(
                format!("{path}.timeout_ms"),
                "must be positive",
            ));
        }
        if let Some(b) = self.coordinator {
            if !broker_ids.contains(&b) {
                return Err(ClusterError::new(
                    format!("{path}.coordinator"),
                    format!("{b} is not a broker of this file"),
                ));
            }
        } else if cluster.topic(TRANSACTION_STATE_TOPIC).is_none() {
            return Err(ClusterError::new(
                format!("{path}.coordinator"),
                "the file has no __transaction_state topic to place this transactional id on: \
                 add the topic or name the coordinator broker",
            ));
        }
        let mut partitions: Vec<(String, Vec<i32>)> = Vec::new();
        for (topic, list) in self.partitions {
            let tpath = format!("{path}.partitions.{topic}");
            let Some(t) = cluster.topic(&topic) else {
                return Err(ClusterError::new(
                    tpath,
                    format!("topic {topic:?} is not in this file"),
                ));
            };
            let mut seen = BTreeSet::new();
            for (pi, &p) in list.iter().enumerate() {
                let ppath = format!("{tpath}[{pi}]");
                if usize::try_from(p).map_or(true, |i| i >= t.partitions.len()) {
                    return Err(ClusterError::new(
                        ppath,
                        format!("topic {topic:?} has no partition {p}"),
                    ));
                }
                if !seen.insert(p) {
                    return Err(ClusterError::new(
                        ppath,
                        format!("partition {p} appears twice"),
                    ));
                }
            }
            partitions.push((topic, list));
        }
        Ok(Transaction {
            transactional_id: self.transactional_id,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            state,
            timeout_ms: self.timeout_ms,
            start_time_ms: self.start_time.resolve(now_ms),
            partitions,
            coordinator_override: self.coordinator,
            last_update_ms: match self.last_update {
                Some(t) => t.resolve(now_ms),
                // Not said: as if the coordinator had just loaded it.
                None => now_ms,
            },
        })
    }
}

impl AclsFile {
    fn validate(self, at: &str) -> Result<Acls, ClusterError> {
        let patterns = |name: &str, list: Vec<String>| {
            list.iter()
                .enumerate()
                .map(|(i, s)| {
                    NamePattern::parse(s)
                        .map_err(|m| ClusterError::new(format!("{at}.{name}[{i}]"), m))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let mut cluster_deny = Vec::new();
        for (i, op) in self.cluster_deny.iter().enumerate() {
            cluster_deny.push(ClusterOperation::parse(op).ok_or_else(|| {
                ClusterError::new(
                    format!("{at}.cluster_deny[{i}]"),
                    format!("{op:?} is not one of ALTER, CLUSTER_ACTION, DESCRIBE_CONFIGS"),
                )
            })?);
        }
        let transactional_id_describe_allow = match self.transactional_id_describe_allow {
            Some(list) => Some(patterns("transactional_id_describe_allow", list)?),
            None => None,
        };
        let mut principals = BTreeMap::new();
        for (principal, rules) in self.principals {
            let path = format!("{at}.principals.{principal}");
            if at != "acls" {
                return Err(ClusterError::new(
                    path,
                    "a principal's rules cannot name other principals",
                ));
            }
            match principal.strip_prefix("User:") {
                Some(name) if !name.is_empty() => {}
                _ => {
                    return Err(ClusterError::new(
                        path,
                        "a principal is written User:<name>, e.g. User:alice or User:ANONYMOUS",
                    ))
                }
            }
            let rules = rules.validate(&path)?;
            principals.insert(principal, rules);
        }
        Ok(Acls {
            transactional_id_describe_allow,
            transactional_id_describe_deny: patterns(
                "transactional_id_describe_deny",
                self.transactional_id_describe_deny,
            )?,
            transactional_id_write_deny: patterns(
                "transactional_id_write_deny",
                self.transactional_id_write_deny,
            )?,
            cluster_deny,
            topic_read_deny: patterns("topic_read_deny", self.topic_read_deny)?,
            topic_describe_deny: patterns("topic_describe_deny", self.topic_describe_deny)?,
            principals,
        })
    }
}

impl SaslFile {
    fn validate(self) -> Result<Users, ClusterError> {
        let mut users = Vec::with_capacity(self.users.len());
        let mut names = BTreeSet::new();
        for (i, u) in self.users.into_iter().enumerate() {
            let path = format!("sasl.users[{i}]");
            if u.name.is_empty() {
                return Err(ClusterError::new(
                    format!("{path}.name"),
                    "a user name must not be empty",
                ));
            }
            if !names.insert(u.name.clone()) {
                return Err(ClusterError::new(
                    format!("{path}.name"),
                    format!("user {:?} appears twice", u.name),
                ));
            }
            if u.password.0.is_empty() {
                return Err(ClusterError::new(
                    format!("{path}.password"),
                    "a password must not be empty",
                ));
            }
            if !(kdp_scram::MIN_ITERATIONS..=kdp_scram::MAX_ITERATIONS).contains(&u.iterations) {
                return Err(ClusterError::new(
                    format!("{path}.iterations"),
                    format!(
                        "{} is outside {}..={} (Kafka's bounds)",
                        u.iterations,
                        kdp_scram::MIN_ITERATIONS,
                        kdp_scram::MAX_ITERATIONS
                    ),
                ));
            }
            let mechanisms = match u.mechanisms {
                None => SaslMechanism::ALL.to_vec(),
                Some(list) => {
                    if list.is_empty() {
                        return Err(ClusterError::new(
                            format!("{path}.mechanisms"),
                            "a user needs at least one mechanism (leave the field out for all)",
                        ));
                    }
                    let mut out = Vec::with_capacity(list.len());
                    for (j, name) in list.iter().enumerate() {
                        let m = SaslMechanism::from_name(name).ok_or_else(|| {
                            ClusterError::new(
                                format!("{path}.mechanisms[{j}]"),
                                format!(
                                    "{name:?} is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"
                                ),
                            )
                        })?;
                        if out.contains(&m) {
                            return Err(ClusterError::new(
                                format!("{path}.mechanisms[{j}]"),
                                format!("{name} appears twice"),
                            ));
                        }
                        out.push(m);
                    }
                    out
                }
            };
            users.push(User::new(&u.name, &u.password.0, &mechanisms, u.iterations));
        }
        Ok(Users::new(users))
    }
}

fn producer_list(
    path: &str,
    list: Vec<ProducerFile>,
    now_ms: i64,
) -> Result<Vec<ProducerState>, ClusterError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, p) in list.into_iter().enumerate() {
        // A replica's producer-state manager keys its entries by producer id.
        if !seen.insert(p.producer_id) {
            return Err(ClusterError::new(
                format!("{path}[{i}].ProducerId"),
                format!(
                    "producer id {} appears twice: a replica holds one entry per producer id \
                     (model an older epoch on another replica with replica_producers)",
                    p.producer_id
                ),
            ));
        }
        out.push(ProducerState {
            producer_id: p.producer_id,
            producer_epoch: p.producer_epoch,
            last_sequence: p.last_sequence,
            last_timestamp: p.last_timestamp.resolve(now_ms),
            coordinator_epoch: p.coordinator_epoch,
            current_txn_start_offset: p.current_txn_start_offset,
            unknown_tagged_fields: Default::default(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn at_now(text: &str) -> Result<Cluster, ClusterError> {
        Cluster::from_json_at(text, UNIX_EPOCH + Duration::from_millis(NOW as u64))
    }

    const SMALL: &str = r#"{
        "brokers": [{"id": 1}, {"id": 2, "host": "localhost", "rack": "b"}, {"id": 3}],
        "topics": [{
            "name": "orders",
            "partitions": [
                {"partition": 1, "leader": 2, "replicas": [2, 3, 1], "offline_replicas": [3],
                 "producers": [{"ProducerId": 7, "ProducerEpoch": 2, "LastTimestamp": "now-90s"}],
                 "replica_producers": {"1": [{"ProducerId": 7, "ProducerEpoch": 1}]}},
                {"partition": 0, "leader": 1, "replicas": [1, 2]}
            ]
        }, {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": -1, "replicas": [1]}]}]
    }"#;

    #[test]
    fn parses_with_defaults_and_overrides() {
        let c = at_now(SMALL).unwrap();
        assert_eq!(c.controller_id, 1);
        assert_eq!(c.cluster_id, "kdp-mock-cluster");
        let t = c.topic("orders").unwrap();
        assert!(!t.internal);
        assert!(c.topic("__transaction_state").unwrap().internal);
        assert_eq!(t.partitions[0].index, 0);
        let p = &t.partitions[1];
        assert_eq!(p.isr, vec![2, 1], "isr defaults to the online replicas");
        let on2 = p.producers_on(2);
        assert_eq!(on2.len(), 1);
        assert_eq!(on2[0].producer_epoch, 2);
        assert_eq!(on2[0].last_timestamp, NOW - 90_000);
        assert_eq!(on2[0].last_sequence, -1);
        assert_eq!(on2[0].current_txn_start_offset, -1);
        assert_eq!(on2[0].coordinator_epoch, 0);
        assert_eq!(p.producers_on(1)[0].producer_epoch, 1);
        assert_eq!(p.producers_on(1)[0].last_timestamp, -1);
        assert_ne!(t.topic_id, Uuid::ZERO);
        assert_eq!(t.topic_id, derived_topic_id("orders"));
        assert_eq!(c.partition("orders", 2), None);
        assert_eq!(c.partition("orders", -1), None);
    }

    fn err(text: &str) -> ClusterError {
        at_now(text).unwrap_err()
    }

    #[test]
    fn parse_errors_name_the_path() {
        let e = err(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 1, "Epoch": 3}]}]}]}"#,
        );
        assert_eq!(e.path, "topics[0].partitions[0].producers[0].Epoch");
        assert!(e.message.contains("Epoch"), "{e}");

        let e = err(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 1, "LastTimestamp": "yesterday"}]}]}]}"#,
        );
        assert_eq!(e.path, "topics[0].partitions[0].producers[0].LastTimestamp");

        let e = err(r#"{"brokers": [{"id": 1}]} {}"#);
        assert_eq!(e.path, ".");
    }

    #[test]
    fn semantic_errors_name_the_path() {
        let cases = [
            (r#"{"brokers": []}"#, "brokers"),
            (r#"{"brokers": [{"id": 1}, {"id": 1}]}"#, "brokers[1].id"),
            (
                r#"{"brokers": [{"id": 1}], "controller_id": 4}"#,
                "controller_id",
            ),
            (
                r#"{"brokers": [{"id": 1}], "topics": [{"name": "a b", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}]}"#,
                "topics[0].name",
            ),
            (
                r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 1, "leader": 1, "replicas": [1]}]}]}"#,
                "topics[0].partitions[0].partition",
            ),
            (
                r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 2, "replicas": [1]}]}]}"#,
                "topics[0].partitions[0].leader",
            ),
            (
                r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 5]}]}]}"#,
                "topics[0].partitions[0].replicas[1]",
            ),
            (
                r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "isr": [2]}]}]}"#,
                "topics[0].partitions[0].isr[0]",
            ),
            (
                r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "replica_producers": {"2": []}}]}]}"#,
                "topics[0].partitions[0].replica_producers.2",
            ),
            (
                r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 3}, {"ProducerId": 3}]}]}]}"#,
                "topics[0].partitions[0].producers[1].ProducerId",
            ),
            (
                r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}, {"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}]}"#,
                "topics[1].name",
            ),
        ];
        for (text, path) in cases {
            assert_eq!(err(text).path, path, "{text}");
        }
    }

    const TXN_BASE: &str = r#""brokers": [{"id": 1}, {"id": 2}], "topics": [
        {"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2]}]},
        {"name": "__transaction_state", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1]}, {"partition": 1, "leader": 2, "replicas": [2]}]}]"#;

    #[test]
    fn transaction_errors_name_the_path() {
        let cases = [
            (
                r#""transactions": [{"transactional_id": "", "producer_id": 1, "state": "Empty"}]"#,
                "transactions[0].transactional_id",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Running"}]"#,
                "transactions[0].state",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "producer_epoch": 40000}]"#,
                "transactions[0].producer_epoch",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "timeout_ms": 0}]"#,
                "transactions[0].timeout_ms",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "coordinator": 9}]"#,
                "transactions[0].coordinator",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Ongoing", "partitions": {"b": [0]}}]"#,
                "transactions[0].partitions.b",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Ongoing", "partitions": {"a": [0, 1]}}]"#,
                "transactions[0].partitions.a[1]",
            ),
            (
                r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty"}, {"transactional_id": "x", "producer_id": 2, "state": "Empty"}]"#,
                "transactions[1].transactional_id",
            ),
            (
                r#""acls": {"transactional_id_describe_deny": ["a*b"]}"#,
                "acls.transactional_id_describe_deny[0]",
            ),
            (
                r#""acls": {"cluster_deny": ["READ"]}"#,
                "acls.cluster_deny[0]",
            ),
            (r#""acls": {"topic_deny": []}"#, "acls.topic_deny"),
            (
                r#""acls": {"topic_read_deny": ["a*b"]}"#,
                "acls.topic_read_deny[0]",
            ),
            (
                r#""acls": {"principals": {"alice": {}}}"#,
                "acls.principals.alice",
            ),
            (
                r#""acls": {"principals": {"User:a": {"topic_describe_deny": ["x*y"]}}}"#,
                "acls.principals.User:a.topic_describe_deny[0]",
            ),
            (
                r#""acls": {"principals": {"User:a": {"principals": {"User:b": {}}}}}"#,
                "acls.principals.User:a.principals.User:b",
            ),
            (
                r#""sasl": {"users": [{"name": "", "password": "p"}]}"#,
                "sasl.users[0].name",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "password": "p"}, {"name": "a", "password": "q"}]}"#,
                "sasl.users[1].name",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "password": ""}]}"#,
                "sasl.users[0].password",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "password": "p", "mechanisms": ["GSSAPI"]}]}"#,
                "sasl.users[0].mechanisms[0]",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "password": "p", "mechanisms": []}]}"#,
                "sasl.users[0].mechanisms",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "password": "p", "iterations": 100}]}"#,
                "sasl.users[0].iterations",
            ),
            (
                r#""sasl": {"users": [{"name": "a", "pasword": "p"}]}"#,
                "sasl.users[0].pasword",
            ),
        ];
        for (extra, path) in cases {
            let text = format!("{{{TXN_BASE}, {extra}}}");
            assert_eq!(err(&text).path, path, "{text}");
        }
        // Without __transaction_state, a transaction needs its coordinator.
        let e = err(
            r#"{"brokers": [{"id": 1}], "transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty"}]}"#,
        );
        assert_eq!(e.path, "transactions[0].coordinator");
        let e =
            err(r#"{"brokers": [{"id": 1, "configs": {"transaction.max.timeout.ms": "15m"}}]}"#);
        assert_eq!(e.path, "brokers[0].configs.transaction.max.timeout.ms");
    }

    #[test]
    fn offsets_default_and_are_checked() {
        let c = at_now(
            r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1, 2],
                 "producers": [{"ProducerId": 1, "CurrentTxnStartOffset": 40}, {"ProducerId": 2, "CurrentTxnStartOffset": 30}],
                 "replica_producers": {"2": [{"ProducerId": 1, "CurrentTxnStartOffset": 70}]}},
                {"partition": 1, "leader": 2, "replicas": [2], "high_watermark": 9}]}]}"#,
        )
        .unwrap();
        let p = c.partition("a", 0).unwrap();
        // One past the largest open transaction start on any replica; the
        // LSO is the leader's earliest.
        assert_eq!((p.high_watermark, p.last_stable_offset()), (71, 30));
        let p = c.partition("a", 1).unwrap();
        assert_eq!((p.high_watermark, p.last_stable_offset()), (9, 9));
        let e = err(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 40,
                 "producers": [{"ProducerId": 1, "CurrentTxnStartOffset": 40}]}]}]}"#,
        );
        assert_eq!(e.path, "topics[0].partitions[0].high_watermark");
        let e = err(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 4, "last_stable_offset": 5}]}]}"#,
        );
        assert_eq!(e.path, "topics[0].partitions[0].last_stable_offset");
    }

    #[test]
    fn transactions_are_placed_by_kafkas_rule_or_the_file() {
        let text = format!(
            r#"{{{TXN_BASE}, "transactions": [
                {{"transactional_id": "hello", "producer_id": 1, "state": "Ongoing", "start_time": "now-5m", "partitions": {{"a": [0]}}}},
                {{"transactional_id": "y", "producer_id": 2, "state": "Empty", "coordinator": 1}}]}}"#
        );
        let c = at_now(&text).unwrap();
        // "hello".hashCode() = 99162322, even: partition 0 of 2, led by 1.
        assert_eq!(c.transaction_coordinator("hello"), Some(1));
        // "a".hashCode() = 97, odd: partition 1, led by 2 (no entry needed).
        assert_eq!(c.transaction_coordinator("a"), Some(2));
        // "y".hashCode() = 121 would give partition 1 (broker 2); the file says 1.
        assert_eq!(c.transaction_coordinator("y"), Some(1));
        let t = c.transaction("hello").unwrap();
        assert_eq!(t.start_time_ms, NOW - 300_000);
        assert_eq!((t.timeout_ms, t.producer_epoch), (60_000, 0));
        assert!(t.has_partition("a", 0));
        let mut c = c;
        assert_eq!(c.allocate_producer_id(), 1000);
    }

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("../../../docs/CLUSTER_FILE.md");
        let start = doc.find("```json\n").unwrap() + "```json\n".len();
        let len = doc[start..].find("```").unwrap();
        let c = at_now(&doc[start..start + len]).unwrap();
        assert_eq!(
            c.partition("orders", 0).unwrap().producers_on(3)[0].producer_epoch,
            11
        );
        assert_eq!(c.partition("orders", 1).unwrap().isr, vec![2, 1]);
    }

    #[test]
    fn timestamps() {
        assert_eq!(Timestamp::parse("now").unwrap().resolve(NOW), NOW);
        assert_eq!(
            Timestamp::parse("now-2h 5m").unwrap().resolve(NOW),
            NOW - (2 * 3600 + 5 * 60) * 1000
        );
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:01Z")
                .unwrap()
                .resolve(NOW),
            1000
        );
        assert!(Timestamp::parse("soon").is_err());
    }

    #[test]
    fn topic_name_rules_match_kafka() {
        assert!(validate_topic_name("orders.v1_x-y").is_ok());
        assert_eq!(
            validate_topic_name("").unwrap_err(),
            "Topic name is invalid: the empty string is not allowed"
        );
        assert_eq!(
            validate_topic_name("..").unwrap_err(),
            "Topic name is invalid: '..' is not allowed"
        );
        assert!(validate_topic_name(&"a".repeat(249)).is_ok());
        assert!(validate_topic_name(&"a".repeat(250))
            .unwrap_err()
            .contains("longer than the max allowed length 249"));
        assert_eq!(
            validate_topic_name("a/b").unwrap_err(),
            "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        );
    }

    #[test]
    fn users_and_principal_rules() {
        let c = Cluster::from_json(
            r#"{"brokers": [{"id": 1}],
                "sasl": {"users": [
                    {"name": "alice", "password": "alice-pw"},
                    {"name": "bob", "password": "bob-pw", "mechanisms": ["SCRAM-SHA-512"], "iterations": 8192}
                ]},
                "acls": {"transactional_id_describe_allow": ["app-*"],
                         "principals": {"User:bob": {"topic_read_deny": ["payroll"]}}}}"#,
        )
        .unwrap();
        assert!(c.users.is_enabled());
        let alice = c.users.get("alice").unwrap();
        assert!(alice.plain_password_matches(b"alice-pw"));
        let bob = c.users.get("bob").unwrap();
        assert!(!bob.plain_password_matches(b"bob-pw"));
        assert_eq!(
            bob.scram(kdp_scram::Mechanism::Sha512).unwrap().iterations,
            8192
        );
        assert!(!format!("{c:?}").contains("-pw"));
        use crate::acls::{TopicOperation, TxnIdOperation};
        assert!(!c
            .acls
            .allows_topic("User:bob", TopicOperation::Read, "payroll"));
        assert!(c
            .acls
            .allows_topic("User:alice", TopicOperation::Read, "payroll"));
        assert!(!c
            .acls
            .allows_transactional_id("User:alice", TxnIdOperation::Describe, "x"));
        assert!(c
            .acls
            .allows_transactional_id("User:bob", TxnIdOperation::Describe, "x"));
        // A password of the wrong type is refused without being quoted.
        let e = Cluster::from_json(
            r#"{"brokers": [{"id": 1}], "sasl": {"users": [{"name": "a", "password": 918273645}]}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "sasl.users[0].password");
        assert!(!e.to_string().contains("918273645"), "{e}");
    }
}
