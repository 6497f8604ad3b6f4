//! Turning a cluster file into a [`Cluster`]: parsing, then every check
//! (placement, duplicates, names, transactions, ACLs, users), each error
//! naming the JSON path of the offending value.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::SystemTime;

use kdp_wire::messages::ProducerState;

use crate::acls::{Acls, ClusterOperation, NamePattern};
use crate::group::{Group, GroupMember, GroupState, GroupType, SHARE_ISOLATION_LEVEL};
use crate::sasl::{SaslMechanism, User, Users};
use crate::txn::{Transaction, TxnState};

use super::error::ClusterError;
use super::file::*;
use super::model::*;
use super::timestamp::now_ms;

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
                if k == TRANSACTION_ABORT_INTERVAL_CONFIG
                    && !v
                        .parse::<i64>()
                        .is_ok_and(|ms| (1..=i64::from(i32::MAX)).contains(&ms))
                {
                    return Err(ClusterError::new(
                        format!("{path}.configs.{k}"),
                        format!("{v:?} is not a number of milliseconds from 1 to 2147483647"),
                    ));
                }
                if DEFAULT_BROKER_CONFIGS.iter().any(|d| d.0 == k) {
                    let n = v.parse::<i64>().map_err(|_| {
                        ClusterError::new(
                            format!("{path}.configs.{k}"),
                            format!("{v:?} is not a number"),
                        )
                    })?;
                    if let Some(range) = super::internal::valid_range(k) {
                        if !range.contains(&n) {
                            return Err(ClusterError::new(
                                format!("{path}.configs.{k}"),
                                format!(
                                    "{n} is not in {}..={} (the internal topic this sets is \
                                     made with it)",
                                    range.start(),
                                    range.end()
                                ),
                            ));
                        }
                    }
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
                configs: t.configs,
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
        if !(0..=2).contains(&self.transaction_version) {
            return Err(ClusterError::new(
                "transaction_version",
                "Kafka's transaction.version levels are 0, 1 and 2",
            ));
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
            groups: Vec::new(),
            acls,
            users,
            transaction_version: self.transaction_version,
            withheld_apis: self.withheld_apis,
            by_name,
            by_id,
            by_transactional_id: HashMap::new(),
            by_group_id: HashMap::new(),
            next_producer_id: 0,
            generators: Vec::new(),
        };
        // A transactional id lives in __transaction_state and a group in
        // __consumer_offsets: the coordinator that took them on made the
        // topic (`internal`). A file that leaves it out gets it as the
        // controller's settings make it, when the brokers can hold it.
        for (made, topic) in [
            (!self.transactions.is_empty(), TRANSACTION_STATE_TOPIC),
            (!self.groups.is_empty(), GROUP_METADATA_TOPIC),
        ] {
            if made {
                let _ = cluster.create_internal_topic(topic, cluster.controller_id);
            }
        }
        for (i, mut t) in self.transactions.into_iter().enumerate() {
            let path = format!("transactions[{i}]");
            let log = std::mem::take(&mut t.log);
            let mut txn = t.validate(&path, &cluster, &broker_ids, now_ms)?;
            if cluster.transaction(&txn.transactional_id).is_some() {
                return Err(ClusterError::new(
                    format!("transactions[{i}].transactional_id"),
                    format!("transactional id {:?} appears twice", txn.transactional_id),
                ));
            }
            if !log.is_empty() {
                // the coordinator's own records, where it keeps them
                let client_version = log.last().map(|e| e.client_transaction_version);
                let records = super::txn_log::records(&path, &txn, log, &cluster, now_ms)?;
                if let Some(version) = client_version {
                    txn.client_transaction_version = version;
                }
                let partition = cluster
                    .transaction_state_partition(&txn.transactional_id)
                    .map(|p| p.index)
                    .ok_or_else(|| {
                        ClusterError::new(
                            format!("{path}.log"),
                            "a transaction log needs the __transaction_state topic",
                        )
                    })?;
                for r in &records {
                    cluster
                        .append_records(TRANSACTION_STATE_TOPIC, partition, std::slice::from_ref(r))
                        .map_err(|e| ClusterError::new(format!("{path}.log"), e.to_string()))?;
                }
            }
            cluster.insert_transaction(txn);
        }
        for (i, g) in self.groups.into_iter().enumerate() {
            let group = g.validate(&format!("groups[{i}]"), &cluster)?;
            let id = group.group_id.clone();
            if !cluster.insert_group(group) {
                return Err(ClusterError::new(
                    format!("groups[{i}].group_id"),
                    format!("group {id:?} appears twice"),
                ));
            }
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
        // each generator's block of ids above the file's, then InitProducerId's
        if !self.producer_generators.is_empty() {
            let block = super::generator::BLOCK;
            let mut first = (cluster.next_producer_id / block + 1).saturating_mul(block);
            for (i, g) in self.producer_generators.into_iter().enumerate() {
                let path = format!("producer_generators[{i}]");
                let g = g.validate(&path, &cluster, i, first, now_ms)?;
                cluster.generators.push(g);
                first = first.saturating_add(block);
            }
            cluster.next_producer_id = first;
            cluster.advance_generators(now_ms);
        }
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
            log: Default::default(),
        };
        let log_start = self.log_start_offset.unwrap_or(0);
        if log_start < 0 {
            return Err(ClusterError::new(
                format!("{path}.log_start_offset"),
                "must not be negative",
            ));
        }
        partition.log = super::log::PartitionLog::starting_at(log_start);
        for (i, batch) in self.batches.into_iter().enumerate() {
            let at = format!("{path}.batches[{i}]");
            let built = batch.build(&at, partition.log.end_offset(), leader_epoch, now_ms)?;
            partition
                .log
                .append(&built)
                .map_err(|e| ClusterError::new(at, e.to_string()))?;
        }
        let log_end = partition.log.end_offset();
        if self.high_watermark.is_some() && partition.high_watermark < log_end {
            return Err(ClusterError::new(
                format!("{path}.high_watermark"),
                format!(
                    "{} is below the end of the partition's batches ({log_end})",
                    partition.high_watermark
                ),
            ));
        }
        partition.high_watermark = partition.high_watermark.max(log_end);
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

impl super::file::BatchFile {
    /// The batch the file describes, at `log_end` unless it gives an offset.
    fn build(
        self,
        at: &str,
        log_end: i64,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<kdp_wire::records::RecordBatch<'static>, ClusterError> {
        use kdp_wire::records::{
            Attributes, Compression, ControlRecord, Record, RecordBatch, TimestampType,
        };
        let compression = match self.compression.as_deref() {
            None => Compression::None,
            Some(name) => Compression::from_name(name).ok_or_else(|| {
                ClusterError::new(
                    format!("{at}.compression"),
                    format!("{name:?} is not one of none, gzip, snappy, lz4, zstd"),
                )
            })?,
        };
        let commit = match self.control.as_deref() {
            None => None,
            Some("commit") => Some(true),
            Some("abort") => Some(false),
            Some(other) => {
                return Err(ClusterError::new(
                    format!("{at}.control"),
                    format!("{other:?} is not \"commit\" or \"abort\""),
                ))
            }
        };
        if commit.is_some() && (self.producer_id < 0 || self.records.is_some_and(|n| n != 1)) {
            return Err(ClusterError::new(
                format!("{at}.control"),
                "a transaction marker has a producer_id and one record",
            ));
        }
        let count = self.records.unwrap_or(1);
        if !(1..=100_000).contains(&count) {
            return Err(ClusterError::new(
                format!("{at}.records"),
                "between 1 and 100000 records",
            ));
        }
        let base_offset = self.offset.unwrap_or(log_end);
        let timestamp = self.timestamp.map_or(now_ms, |t| t.resolve(now_ms));
        let records: Vec<Record<'static>> = match commit {
            Some(commit) => vec![ControlRecord::marker_record(commit, self.coordinator_epoch)],
            None => (0..count)
                .map(|i| Record {
                    timestamp_delta: i64::from(i),
                    offset_delta: i,
                    value: Some(
                        format!("record-{}", base_offset + i64::from(i))
                            .into_bytes()
                            .into(),
                    ),
                    ..Record::default()
                })
                .collect(),
        };
        Ok(RecordBatch {
            base_offset,
            partition_leader_epoch: self.partition_leader_epoch.unwrap_or(leader_epoch),
            attributes: Attributes::new(
                compression,
                TimestampType::CreateTime,
                self.transactional || commit.is_some(),
                commit.is_some(),
                false,
            ),
            last_offset_delta: count - 1,
            base_timestamp: timestamp,
            max_timestamp: timestamp + i64::from(count - 1),
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: if commit.is_some() {
                -1
            } else {
                self.base_sequence
            },
            records,
        })
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
                "the file has no __transaction_state topic to place this transactional id on, and \
                 its brokers cannot hold the one Kafka would make (transaction.state.log.\
                 replication.factor, default 3): add the topic, name the coordinator broker, \
                 or lower that setting on the controller",
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
            // A transaction of a protocol v2 cluster was begun by a v2
            // client (the log's last record says, when there is one).
            client_transaction_version: if cluster.transaction_version >= 2
                && state != TxnState::Empty
            {
                2
            } else {
                0
            },
            next_producer_id: -1,
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
        let group_describe_allow = match self.group_describe_allow {
            Some(list) => Some(patterns("group_describe_allow", list)?),
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
            group_describe_deny: patterns("group_describe_deny", self.group_describe_deny)?,
            group_describe_allow,
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

impl GroupFile {
    fn validate(self, at: &str, cluster: &Cluster) -> Result<Group, ClusterError> {
        if self.group_id.is_empty() {
            return Err(ClusterError::new(
                format!("{at}.group_id"),
                "a group id cannot be empty",
            ));
        }
        let group_type = match self.group_type.as_deref() {
            None => GroupType::Classic,
            Some(t) => GroupType::from_name(t).ok_or_else(|| {
                ClusterError::new(
                    format!("{at}.type"),
                    format!("{t:?} is not a group type: classic, consumer, share or streams"),
                )
            })?,
        };
        let state = match self.state.as_deref() {
            None if self.members.is_empty() => GroupState::Empty,
            None => GroupState::Stable,
            Some(s) => GroupState::from_name(s)
                .filter(|st| st.is_state_of(group_type) && *st != GroupState::Dead)
                .ok_or_else(|| {
                    ClusterError::new(
                        format!("{at}.state"),
                        format!(
                            "{s:?} is not a state of a {} group ({})",
                            group_type.name(),
                            match group_type {
                                GroupType::Classic =>
                                    "Empty, Stable, PreparingRebalance, CompletingRebalance",
                                GroupType::Consumer => "Empty, Stable, Assigning, Reconciling",
                                GroupType::Share => "Empty, Stable",
                                GroupType::Streams => "Empty, Stable, Assigning, Reconciling",
                            }
                        ),
                    )
                })?,
        };
        if state == GroupState::Empty && !self.members.is_empty() {
            return Err(ClusterError::new(
                format!("{at}.state"),
                "an Empty group has no members",
            ));
        }
        if state != GroupState::Empty && self.members.is_empty() {
            return Err(ClusterError::new(
                format!("{at}.members"),
                format!("a {} group has members", state.name()),
            ));
        }
        let check_partition = |path: String, topic: &str, p: i32| {
            if cluster.partition(topic, p).is_none() {
                return Err(ClusterError::new(
                    path,
                    format!("{topic}-{p} is not a partition of the cluster"),
                ));
            }
            Ok(())
        };
        let mut members = Vec::with_capacity(self.members.len());
        for (m, member) in self.members.into_iter().enumerate() {
            let path = format!("{at}.members[{m}]");
            if member.member_id.is_empty() {
                return Err(ClusterError::new(
                    format!("{path}.member_id"),
                    "a member id cannot be empty",
                ));
            }
            if members
                .iter()
                .any(|x: &GroupMember| x.member_id == member.member_id)
            {
                return Err(ClusterError::new(
                    format!("{path}.member_id"),
                    format!("member {:?} appears twice", member.member_id),
                ));
            }
            for (topic, partitions) in &member.assignment {
                for (k, &p) in partitions.iter().enumerate() {
                    check_partition(format!("{path}.assignment.{topic}[{k}]"), topic, p)?;
                }
            }
            let hex = |field: &str, h: &Option<String>| match h {
                None => Ok(None),
                Some(h) => kdp_wire::hex::decode(h)
                    .map(Some)
                    .map_err(|e| ClusterError::new(format!("{path}.{field}"), e.to_string())),
            };
            let metadata = hex("metadata_hex", &member.metadata_hex)?;
            let assignment = hex("assignment_hex", &member.assignment_hex)?;
            let protocol_bytes =
                (metadata.is_some() || assignment.is_some()).then(|| crate::group::ProtocolBytes {
                    metadata: metadata.unwrap_or_default(),
                    assignment: assignment.unwrap_or_default(),
                });
            let process_id = match (group_type, member.process_id) {
                (GroupType::Streams, Some(p)) if !p.is_empty() => Some(p),
                (GroupType::Streams, _) => {
                    return Err(ClusterError::new(
                        format!("{path}.process_id"),
                        "a streams group's member has its Streams process id",
                    ))
                }
                (_, Some(_)) => {
                    return Err(ClusterError::new(
                        format!("{path}.process_id"),
                        "only a streams group's member has a process id",
                    ))
                }
                (_, None) => None,
            };
            members.push(GroupMember {
                process_id,
                member_id: member.member_id,
                group_instance_id: member.group_instance_id,
                client_id: member.client_id.unwrap_or_else(|| "consumer".into()),
                client_host: member.client_host.unwrap_or_else(|| "/127.0.0.1".into()),
                assignment: member.assignment,
                protocol_bytes,
            });
        }
        for (topic, partitions) in &self.offsets {
            for (&p, &offset) in partitions {
                let path = format!("{at}.offsets.{topic}.{p}");
                check_partition(path.clone(), topic, p)?;
                if offset < 0 {
                    return Err(ClusterError::new(path, "a committed offset is at least 0"));
                }
            }
        }
        for (key, value) in &self.configs {
            let path = format!("{at}.configs.{key}");
            match key.as_str() {
                // GroupConfig's validator: one of IsolationLevel's names
                SHARE_ISOLATION_LEVEL => {
                    if value != "read_committed" && value != "read_uncommitted" {
                        return Err(ClusterError::new(
                            path,
                            "share.isolation.level is read_committed or read_uncommitted",
                        ));
                    }
                }
                _ => {
                    return Err(ClusterError::new(
                        path,
                        "the mock knows one group config: share.isolation.level",
                    ))
                }
            }
        }
        Ok(Group {
            group_id: self.group_id,
            group_type,
            state,
            // ShareGroup.PROTOCOL_TYPE is `share`.
            protocol_type: self.protocol_type.unwrap_or_else(|| {
                match group_type {
                    GroupType::Share => "share",
                    GroupType::Streams => "streams",
                    _ => "consumer",
                }
                .into()
            }),
            protocol: self.protocol.unwrap_or_else(|| {
                match group_type {
                    GroupType::Classic => "range",
                    GroupType::Consumer => "uniform",
                    GroupType::Share => "simple",
                    GroupType::Streams => "",
                }
                .into()
            }),
            group_epoch: self.group_epoch.unwrap_or(1),
            members,
            offsets: self.offsets,
            configs: self.configs,
        })
    }
}
