//! One scan's producer state, folded per topic (or per partition) while the
//! results stream in: a million producers become a few numbers per label set,
//! so memory follows the number of topics, never the number of producers.

use std::collections::{BTreeMap, BTreeSet};

use kdp_domain::partition::{has_open_transaction, ProducerFields};
#[cfg(test)]
use kdp_domain::PartitionOutcome;
use kdp_workflows::leaders::LeaderAnswer;

/// What a series is labelled with: a topic, and the partition only with
/// `--per-partition`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub topic: String,
    pub partition: Option<i32>,
}

impl Key {
    pub fn new(topic: &str, partition: i32, per_partition: bool) -> Key {
        Key {
            topic: topic.to_string(),
            partition: per_partition.then_some(partition),
        }
    }

    /// Prometheus labels: `topic`, and `partition` when there is one.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let mut l = vec![("topic", self.topic.clone())];
        if let Some(p) = self.partition {
            l.push(("partition", p.to_string()));
        }
        l
    }
}

/// The numbers kept per key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub producers: u64,
    /// Producers with an open transaction (`CurrentTxnStartOffset` >= 0).
    pub open_transactions: u64,
    /// The earliest `LastTimestamp` (ms) among producers with an open
    /// transaction: a lower bound of the oldest open transaction's start
    /// until the diagnosis gives the coordinator's start time. A timestamp
    /// of 0 or below is unknown (Kafka's -1, or never set) and gives no
    /// age: `None` when no open transaction has a known one.
    pub oldest_open_last_timestamp_ms: Option<i64>,
}

/// Whether a `LastTimestamp` is a time: 0 and below are unknown (a broker
/// answers -1 when it has none), never 1970.
pub fn known_timestamp(ms: i64) -> bool {
    ms > 0
}

/// One scan, folded.
#[derive(Debug, Default)]
pub struct Aggregate {
    pub per_partition: bool,
    pub counts: BTreeMap<Key, Counts>,
    /// Keys with at least one partition that could not be described.
    pub failed_keys: BTreeSet<Key>,
    /// Topics reported as a whole as failed (partition -1: e.g. unknown topic).
    pub failed_topics: BTreeSet<String>,
    /// Failed partitions by Kafka error name.
    pub errors: BTreeMap<&'static str, u64>,
    pub partitions: u64,
    pub failed_partitions: u64,
}

impl Aggregate {
    pub fn new(per_partition: bool) -> Aggregate {
        Aggregate {
            per_partition,
            ..Aggregate::default()
        }
    }

    /// Folds one partition's answer in; the producers are not kept.
    #[cfg(test)]
    pub fn add(&mut self, outcome: &PartitionOutcome) {
        self.add_answer(&LeaderAnswer::of(outcome));
    }

    /// Folds one partition's answer in, read where it lies; the producers
    /// are not kept.
    pub fn add_answer(&mut self, answer: &LeaderAnswer<'_>) {
        self.partitions += 1;
        match answer.result {
            Ok(producers) => {
                let key = Key::new(answer.topic, answer.partition, self.per_partition);
                let c = self.counts.entry(key).or_default();
                for p in producers.iter() {
                    c.producers += 1;
                    if !has_open_transaction(&p) {
                        continue;
                    }
                    c.open_transactions += 1;
                    let last = p.last_timestamp();
                    if known_timestamp(last) {
                        let oldest = c.oldest_open_last_timestamp_ms.get_or_insert(last);
                        *oldest = (*oldest).min(last);
                    }
                }
            }
            Err(e) => {
                self.failed_partitions += 1;
                *self.errors.entry(e.name()).or_default() += 1;
                if answer.partition < 0 {
                    self.failed_topics.insert(answer.topic.to_owned());
                } else {
                    let key = Key::new(answer.topic, answer.partition, self.per_partition);
                    self.failed_keys.insert(key);
                }
            }
        }
    }

    /// The state to publish: this scan's counts, except that a key this scan
    /// could not fully describe keeps the previous scan's value (a partial
    /// scan must not make producers vanish from the graphs). Keys gone from
    /// the cluster (deleted topics) are dropped.
    pub fn merge_over(self, previous: &BTreeMap<Key, Counts>) -> BTreeMap<Key, Counts> {
        let mut out = self.counts;
        for key in &self.failed_keys {
            if let Some(prev) = previous.get(key) {
                out.insert(key.clone(), *prev);
            }
        }
        for topic in &self.failed_topics {
            for (key, prev) in previous.iter().filter(|(k, _)| &k.topic == topic) {
                out.insert(key.clone(), *prev);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_domain::partition::PartitionError;
    use kdp_wire::messages::ProducerState;
    use kdp_wire::ErrorCode;

    fn producer(id: i64, last_timestamp: i64, txn_start: i64) -> ProducerState {
        ProducerState {
            producer_id: id,
            producer_epoch: 0,
            last_sequence: 0,
            last_timestamp,
            coordinator_epoch: 0,
            current_txn_start_offset: txn_start,
            ..Default::default()
        }
    }

    fn ok(topic: &str, partition: i32, producers: Vec<ProducerState>) -> PartitionOutcome {
        PartitionOutcome {
            topic: topic.into(),
            partition,
            broker_id: Some(1),
            result: Ok(producers),
        }
    }

    fn failed(topic: &str, partition: i32, code: ErrorCode) -> PartitionOutcome {
        PartitionOutcome {
            topic: topic.into(),
            partition,
            broker_id: Some(1),
            result: Err(PartitionError {
                code,
                message: None,
                client_side: false,
                stalled: None,
            }),
        }
    }

    fn topic(name: &str) -> Key {
        Key {
            topic: name.into(),
            partition: None,
        }
    }

    #[test]
    fn folds_producers_and_open_transactions_per_topic() {
        let mut agg = Aggregate::new(false);
        agg.add(&ok(
            "t",
            0,
            vec![producer(1, 5_000, 10), producer(2, 9_000, -1)],
        ));
        agg.add(&ok("t", 1, vec![producer(3, 3_000, 0), producer(4, -1, 7)]));
        agg.add(&ok("u", 0, vec![]));
        let c = agg.counts[&topic("t")];
        assert_eq!(c.producers, 4);
        assert_eq!(c.open_transactions, 3);
        // the unknown timestamp (-1) is not taken as the oldest
        assert_eq!(c.oldest_open_last_timestamp_ms, Some(3_000));
        assert_eq!(agg.counts[&topic("u")], Counts::default());
    }

    #[test]
    fn a_zero_timestamp_is_unknown_and_gives_no_age() {
        let mut agg = Aggregate::new(false);
        agg.add(&ok("t", 0, vec![producer(1, 0, 10), producer(2, 7_000, 3)]));
        agg.add(&ok("z", 0, vec![producer(3, 0, 10), producer(4, -1, 3)]));
        assert_eq!(
            agg.counts[&topic("t")].oldest_open_last_timestamp_ms,
            Some(7_000)
        );
        // every open transaction of z has an unknown time: no oldest, no age
        let z = agg.counts[&topic("z")];
        assert_eq!(z.open_transactions, 2);
        assert_eq!(z.oldest_open_last_timestamp_ms, None);
    }

    #[test]
    fn per_partition_keys_carry_the_partition() {
        let mut agg = Aggregate::new(true);
        agg.add(&ok("t", 0, vec![producer(1, 1, -1)]));
        agg.add(&ok("t", 1, vec![producer(2, 1, -1), producer(3, 1, -1)]));
        let keys: Vec<_> = agg.counts.keys().map(|k| k.labels()).collect();
        assert_eq!(
            keys,
            vec![
                vec![("topic", "t".to_string()), ("partition", "0".to_string())],
                vec![("topic", "t".to_string()), ("partition", "1".to_string())],
            ]
        );
    }

    #[test]
    fn a_failed_partition_keeps_the_previous_value_of_its_key() {
        let mut previous = BTreeMap::new();
        previous.insert(
            topic("t"),
            Counts {
                producers: 9,
                open_transactions: 1,
                oldest_open_last_timestamp_ms: Some(1),
            },
        );
        previous.insert(
            topic("gone"),
            Counts {
                producers: 1,
                ..Counts::default()
            },
        );
        let mut agg = Aggregate::new(false);
        agg.add(&ok("t", 0, vec![producer(1, 1, -1)]));
        agg.add(&failed("t", 1, ErrorCode::NOT_LEADER_OR_FOLLOWER));
        agg.add(&ok("new", 0, vec![producer(2, 1, -1)]));
        assert_eq!(agg.errors.get("NOT_LEADER_OR_FOLLOWER"), Some(&1));
        assert_eq!(agg.failed_partitions, 1);
        let merged = agg.merge_over(&previous);
        assert_eq!(merged[&topic("t")].producers, 9, "kept from the last scan");
        assert_eq!(merged[&topic("new")].producers, 1);
        assert!(
            !merged.contains_key(&topic("gone")),
            "a deleted topic is dropped"
        );
    }

    #[test]
    fn a_failed_topic_keeps_every_previous_key_of_it() {
        let mut previous = BTreeMap::new();
        let k = Key {
            topic: "t".into(),
            partition: Some(3),
        };
        previous.insert(
            k.clone(),
            Counts {
                producers: 2,
                ..Counts::default()
            },
        );
        let mut agg = Aggregate::new(true);
        agg.add(&failed("t", -1, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
        let merged = agg.merge_over(&previous);
        assert_eq!(merged[&k].producers, 2);
    }
}
