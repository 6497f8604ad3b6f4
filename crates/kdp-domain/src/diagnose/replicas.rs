//! Replica divergence: each replica of a partition answers DescribeProducers
//! from its own producer state (there is no leader check), so asking every
//! replica and comparing shows a follower that lost a producer, kept an old
//! epoch or sequence, or still has a transaction open.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kdp_wire::messages::ProducerState;

use crate::key_error::KeyError;
use crate::partition::{ProducerFields, TopicPartition};

/// One difference, for one producer id on one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The producer id.
    pub producer_id: i64,
    /// The field that differs (schema name), or `ActiveProducers` when some
    /// replicas do not list the producer at all.
    pub field: &'static str,
    /// Each replica's value, by broker id (`absent` where it has none).
    pub values: BTreeMap<i32, String>,
}

/// The compared fields of one producer as one replica answered them: what
/// a comparison keeps of each answer (no names, no tagged fields), folded
/// from the owned type or read through the response's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerRecord {
    /// `ProducerId`.
    pub producer_id: i64,
    /// `ProducerEpoch`.
    pub producer_epoch: i32,
    /// `LastSequence`.
    pub last_sequence: i32,
    /// `LastTimestamp`.
    pub last_timestamp: i64,
    /// `CoordinatorEpoch`.
    pub coordinator_epoch: i32,
    /// `CurrentTxnStartOffset`.
    pub current_txn_start_offset: i64,
}

impl ProducerRecord {
    /// The compared fields of `p`.
    pub fn of<P: ProducerFields + ?Sized>(p: &P) -> ProducerRecord {
        ProducerRecord {
            producer_id: p.producer_id(),
            producer_epoch: p.producer_epoch(),
            last_sequence: p.last_sequence(),
            last_timestamp: p.last_timestamp(),
            coordinator_epoch: p.coordinator_epoch(),
            current_txn_start_offset: p.current_txn_start_offset(),
        }
    }
}

type Getter = fn(&ProducerRecord) -> String;

/// The compared fields. LastTimestamp is included: replicas rebuild it from
/// the same batches, so a difference means they hold different data.
const FIELDS: &[(&str, Getter)] = &[
    ("ProducerEpoch", |p| p.producer_epoch.to_string()),
    ("LastSequence", |p| p.last_sequence.to_string()),
    ("LastTimestamp", |p| p.last_timestamp.to_string()),
    ("CoordinatorEpoch", |p| p.coordinator_epoch.to_string()),
    ("CurrentTxnStartOffset", |p| {
        p.current_txn_start_offset.to_string()
    }),
];

/// Compares the replicas' answers for one partition (broker id to its
/// producers). Differences come out by producer id, then field order.
pub fn compare<P: ProducerFields>(replicas: &BTreeMap<i32, Vec<P>>) -> Vec<Difference> {
    compare_records(replicas.iter().map(|(b, ps)| {
        let records: Vec<ProducerRecord> = ps.iter().map(ProducerRecord::of).collect();
        (*b, records)
    }))
}

/// [`compare`] of each broker's records.
fn compare_records<R: AsRef<[ProducerRecord]>>(
    replicas: impl Iterator<Item = (i32, R)>,
) -> Vec<Difference> {
    let by_broker: BTreeMap<i32, BTreeMap<i64, ProducerRecord>> = replicas
        .map(|(b, ps)| (b, ps.as_ref().iter().map(|p| (p.producer_id, *p)).collect()))
        .collect();
    let ids: BTreeSet<i64> = by_broker.values().flat_map(|m| m.keys().copied()).collect();
    let mut out = Vec::new();
    for id in ids {
        let states: BTreeMap<i32, Option<&ProducerRecord>> =
            by_broker.iter().map(|(b, m)| (*b, m.get(&id))).collect();
        if states.values().any(Option::is_none) {
            out.push(Difference {
                producer_id: id,
                field: "ActiveProducers",
                values: states
                    .iter()
                    .map(|(b, s)| {
                        (
                            *b,
                            if s.is_some() { "present" } else { "absent" }.to_string(),
                        )
                    })
                    .collect(),
            });
        }
        for (field, get) in FIELDS {
            let values: BTreeMap<i32, String> = states
                .iter()
                .filter_map(|(b, s)| s.map(|s| (*b, get(s))))
                .collect();
            let distinct: BTreeSet<&String> = values.values().collect();
            if distinct.len() > 1 {
                out.push(Difference {
                    producer_id: id,
                    field,
                    values,
                });
            }
        }
    }
    out
}

/// One partition's replicas as they answer, for [`compare`] once they all
/// have: each broker's records, a replica whose answer is exactly another's
/// sharing its records (replicas that agree, the usual case, hold one copy).
#[derive(Debug, Default)]
pub struct PartitionReplicas {
    by_broker: BTreeMap<i32, Arc<[ProducerRecord]>>,
}

impl PartitionReplicas {
    /// Broker `broker`'s producers (a second answer of the same broker
    /// replaces its first, as [`Replicas`] keeps one per broker).
    pub fn add<P: ProducerFields>(&mut self, broker: i32, producers: impl Iterator<Item = P>) {
        let records: Vec<ProducerRecord> = producers.map(|p| ProducerRecord::of(&p)).collect();
        let shared = self
            .by_broker
            .iter()
            .find(|(b, r)| **b != broker && ***r == *records)
            .map(|(_, r)| r.clone());
        let records = shared.unwrap_or_else(|| Arc::from(records));
        self.by_broker.insert(broker, records);
    }

    /// Whether no replica has answered.
    pub fn is_empty(&self) -> bool {
        self.by_broker.is_empty()
    }

    /// [`compare`] of the replicas that answered.
    pub fn differences(&self) -> Vec<Difference> {
        let mut records = self.by_broker.values();
        let first = records.next();
        // one copy for all: they agree, whatever their producers
        if first.is_some_and(|f| records.all(|r| Arc::ptr_eq(f, r))) {
            return Vec::new();
        }
        compare_records(self.by_broker.iter().map(|(b, r)| (*b, r.clone())))
    }
}

/// Each compared partition's differences (none: its replicas agree), what
/// a comparison keeps of a partition once its replicas have all answered.
pub type Compared = BTreeMap<TopicPartition, Vec<Difference>>;

/// What a whole comparison says, decided here so that every caller (the
/// command, the exporter, another program) says the same: "all agree" only
/// when every selected replica answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Some replicas differ (whatever else failed).
    Differ {
        /// The differences found.
        differences: usize,
    },
    /// Every replica of every compared partition answered, and they agree.
    Agree {
        /// The partitions compared.
        partitions: usize,
    },
    /// The replicas that answered agree, but some could not be asked: the
    /// others may still differ.
    Unchecked {
        /// The partitions compared (with the replicas that answered).
        partitions: usize,
        /// Replicas or brokers that could not be asked.
        failed: usize,
    },
    /// No replica answered for any partition: nothing was compared.
    Nothing,
}

impl Verdict {
    /// The verdict of `partitions` compared, `differences` found and
    /// `failed` replicas or brokers not asked.
    pub fn of(partitions: usize, differences: usize, failed: usize) -> Verdict {
        if differences > 0 {
            Verdict::Differ { differences }
        } else if partitions == 0 {
            Verdict::Nothing
        } else if failed > 0 {
            Verdict::Unchecked { partitions, failed }
        } else {
            Verdict::Agree { partitions }
        }
    }
}

/// Each partition's producers, by the broker that answered.
pub type Replicas = BTreeMap<TopicPartition, BTreeMap<i32, Vec<ProducerState>>>;

/// What could not be asked; `E` is the error a broker's whole scan failed
/// with (the client's).
#[derive(Debug, Clone)]
pub enum ReplicaError<E> {
    /// A broker's whole scan failed.
    Broker {
        /// The broker.
        broker: i32,
        /// Why.
        error: E,
    },
    /// A broker's scan ended without an answer (its task failed).
    Lost,
    /// One partition on one broker.
    Partition {
        /// The partition.
        partition: TopicPartition,
        /// The broker.
        broker: i32,
        /// Its error.
        error: KeyError,
    },
}

/// A whole comparison: each difference with its partition, how many
/// partitions were compared, and what could not be asked.
#[derive(Debug)]
pub struct Comparison<E> {
    /// The differences, by partition, then producer id and field.
    pub differences: Vec<(TopicPartition, Difference)>,
    /// The partitions at least one replica answered for.
    pub partitions: usize,
    /// What could not be asked.
    pub failures: Vec<ReplicaError<E>>,
}

impl<E> Comparison<E> {
    /// The comparison of every partition of `replicas` ([`compare`] on
    /// each), with what could not be asked.
    pub fn of(replicas: &Replicas, failures: Vec<ReplicaError<E>>) -> Self {
        let compared = replicas
            .iter()
            .map(|(tp, by_broker)| (tp.clone(), compare(by_broker)))
            .collect();
        Comparison::of_compared(compared, failures)
    }

    /// The comparison of partitions already compared, with what could not
    /// be asked.
    pub fn of_compared(compared: Compared, failures: Vec<ReplicaError<E>>) -> Self {
        let partitions = compared.len();
        let differences = compared
            .into_iter()
            .flat_map(|(tp, ds)| ds.into_iter().map(move |d| (tp.clone(), d)))
            .collect();
        Comparison {
            differences,
            partitions,
            failures,
        }
    }

    /// What the comparison says (see [`Verdict`]).
    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.partitions, self.differences.len(), self.failures.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: i64, epoch: i32, seq: i32) -> ProducerState {
        ProducerState {
            producer_id: id,
            producer_epoch: epoch,
            last_sequence: seq,
            last_timestamp: 1_000,
            coordinator_epoch: 0,
            current_txn_start_offset: -1,
            ..Default::default()
        }
    }

    #[test]
    fn identical_replicas_agree() {
        let r = BTreeMap::from([
            (1, vec![p(7, 0, 3), p(8, 1, 0)]),
            (2, vec![p(8, 1, 0), p(7, 0, 3)]),
        ]);
        assert!(compare(&r).is_empty());
    }

    #[test]
    fn missing_producer_and_field_differences() {
        let mut lagging = p(7, 0, 2);
        lagging.current_txn_start_offset = 40;
        let r = BTreeMap::from([
            (1, vec![p(7, 0, 3), p(8, 1, 0)]),
            (2, vec![lagging]),
            (3, vec![p(7, 0, 3), p(8, 1, 0)]),
        ]);
        let d = compare(&r);
        let fields: Vec<(i64, &str)> = d.iter().map(|d| (d.producer_id, d.field)).collect();
        assert_eq!(
            fields,
            vec![
                (7, "LastSequence"),
                (7, "CurrentTxnStartOffset"),
                (8, "ActiveProducers")
            ]
        );
        assert_eq!(d[0].values.get(&2).map(String::as_str), Some("2"));
        assert_eq!(d[2].values.get(&2).map(String::as_str), Some("absent"));
    }

    #[test]
    fn replicas_folded_as_they_answer_compare_as_their_answers_do() {
        let mut lagging = p(7, 0, 2);
        lagging.current_txn_start_offset = 40;
        let cases = [
            // all agree, in another order on one of them
            BTreeMap::from([
                (1, vec![p(7, 0, 3), p(8, 1, 0)]),
                (2, vec![p(7, 0, 3), p(8, 1, 0)]),
                (3, vec![p(8, 1, 0), p(7, 0, 3)]),
            ]),
            // two agree, one differs
            BTreeMap::from([
                (1, vec![p(7, 0, 3), p(8, 1, 0)]),
                (2, vec![lagging]),
                (3, vec![p(7, 0, 3), p(8, 1, 0)]),
            ]),
            // a duplicate id in one answer: the last one counts, as in compare
            BTreeMap::from([(1, vec![p(7, 0, 3), p(7, 0, 4)]), (2, vec![p(7, 0, 4)])]),
            BTreeMap::from([(1, vec![]), (2, vec![p(9, 0, 0)])]),
        ];
        for r in cases {
            let mut folded = PartitionReplicas::default();
            // the second answer of broker 1 replaces its first
            folded.add(1, [p(1, 0, 0)].iter());
            for (b, ps) in &r {
                folded.add(*b, ps.iter());
            }
            assert_eq!(folded.differences(), compare(&r), "{r:?}");
        }
        let mut one = PartitionReplicas::default();
        assert!(one.is_empty());
        one.add(4, [p(7, 0, 3)].iter());
        assert!(one.differences().is_empty());
    }

    #[test]
    fn agreement_is_claimed_only_when_every_replica_answered() {
        assert_eq!(Verdict::of(3, 0, 0), Verdict::Agree { partitions: 3 });
        assert_eq!(
            Verdict::of(3, 0, 1),
            Verdict::Unchecked {
                partitions: 3,
                failed: 1
            }
        );
        assert_eq!(Verdict::of(0, 0, 0), Verdict::Nothing);
        assert_eq!(Verdict::of(0, 0, 2), Verdict::Nothing);
        assert_eq!(Verdict::of(3, 2, 1), Verdict::Differ { differences: 2 });
    }
}
