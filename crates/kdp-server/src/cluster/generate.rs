//! Producers made by the clock (`producer_generators` in the cluster
//! file): a churning client that makes a new producer id at a rate (a
//! Flink sink with one transactional id per checkpoint, a function per
//! request), or a steady set that keeps writing, with epochs that may grow
//! towards 32767 (transaction protocol v2 uses one per transaction).
//!
//! Generated producers are not stored once and for all: each replica's
//! list is recomputed from the clock ([`Cluster::advance_generators`],
//! called before a request is handled, only when something changed), so a
//! mock that runs for an hour makes an hour's worth of ids, and each
//! replica drops those idle for its broker's `producer.id.expiration.ms`,
//! as a broker's expiration check does. Each generator owns a block of
//! producer ids no file entry uses; requests that change producer state
//! (markers, InitProducerId) do not stick to generated producers.

use std::collections::BTreeSet;
use std::time::Duration;

use kdp_wire::messages::ProducerState;
use kdp_wire::TxnState;
use serde::Deserialize;

use super::error::ClusterError;
use super::generator::{Generator, Kind};
use super::model::Cluster;
use super::timestamp::Timestamp;
use crate::txn::Transaction;

/// The most ids one replica may hold from one generator (a bound on what a
/// typo in `every` could make the mock allocate).
const MAX_HELD: i64 = 10_000_000;
/// How often the steady producers' timestamps are moved on.
const STEADY_TICK_MS: i64 = 1_000;
/// Producer-id expiration when a broker's setting is not a number.
const DEFAULT_EXPIRATION_MS: i64 = 86_400_000;

/// `"producer_generators": [...]` in the file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GeneratorFile {
    topic: String,
    #[serde(default)]
    partitions: Option<Vec<i32>>,
    #[serde(default, with = "duration")]
    every: Option<Duration>,
    #[serde(default)]
    start: Option<Timestamp>,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    transactional_id: Option<String>,
    #[serde(default)]
    epoch: i32,
    #[serde(default)]
    epochs_per_hour: f64,
    #[serde(default, with = "duration")]
    idle: Option<Duration>,
    #[serde(default)]
    coordinator: Option<i32>,
    #[serde(default = "default_timeout_ms")]
    timeout_ms: i32,
}

fn default_timeout_ms() -> i32 {
    60_000
}

mod duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(s.trim())
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("{s:?} is not a duration: {e}")))
    }
}

impl GeneratorFile {
    pub(super) fn validate(
        self,
        path: &str,
        cluster: &Cluster,
        index: usize,
        first_id: i64,
        now_ms: i64,
    ) -> Result<Generator, ClusterError> {
        let err = |field: &str, m: String| ClusterError::new(format!("{path}.{field}"), m);
        let topic = cluster.topic(&self.topic).ok_or_else(|| {
            err(
                "topic",
                format!("topic {:?} is not in the file", self.topic),
            )
        })?;
        let partitions = match self.partitions {
            None => topic.partitions.iter().map(|p| p.index).collect(),
            Some(ps) => {
                if ps.is_empty() {
                    return Err(err("partitions", "name at least one partition".into()));
                }
                let mut seen = BTreeSet::new();
                for &p in &ps {
                    if cluster.partition(&self.topic, p).is_none() {
                        return Err(err(
                            "partitions",
                            format!("{}-{p} is not in the file", self.topic),
                        ));
                    }
                    if !seen.insert(p) {
                        return Err(err("partitions", format!("partition {p} appears twice")));
                    }
                }
                ps
            }
        };
        if !(0..=i32::from(i16::MAX)).contains(&self.epoch) {
            return Err(err("epoch", format!("{} is not in 0..=32767", self.epoch)));
        }
        if !self.epochs_per_hour.is_finite() || !(0.0..=1e9).contains(&self.epochs_per_hour) {
            return Err(err(
                "epochs_per_hour",
                format!("{} is not a rate", self.epochs_per_hour),
            ));
        }
        if !(1..).contains(&self.timeout_ms) {
            return Err(err(
                "timeout_ms",
                format!("{} is not above 0", self.timeout_ms),
            ));
        }
        if let Some(c) = self.coordinator {
            if cluster.broker(c).is_none() {
                return Err(err(
                    "coordinator",
                    format!("{c} is not a broker of this file"),
                ));
            }
        }
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let kind = match self.every {
            Some(every) => {
                for (field, set) in [
                    ("count", self.count.is_some()),
                    ("idle", self.idle.is_some()),
                    ("epochs_per_hour", self.epochs_per_hour > 0.0),
                ] {
                    if set {
                        return Err(err(
                            field,
                            "only for a steady generator (one without \"every\")".into(),
                        ));
                    }
                }
                let every_ms = ms(every);
                if every_ms < 1 {
                    return Err(err("every", "must be at least 1ms".into()));
                }
                let longest = cluster
                    .brokers
                    .iter()
                    .map(|b| expiration_ms(cluster, b.id))
                    .max()
                    .unwrap_or(DEFAULT_EXPIRATION_MS);
                if longest / every_ms > MAX_HELD {
                    return Err(err(
                        "every",
                        format!(
                            "a broker would hold {} ids from it (its producer.id.expiration.ms / every), above {MAX_HELD}",
                            longest / every_ms
                        ),
                    ));
                }
                Kind::Churn {
                    every_ms,
                    start_ms: self.start.map_or(now_ms, |s| s.resolve(now_ms)),
                }
            }
            None => {
                if self.start.is_some() {
                    return Err(err(
                        "start",
                        "only for a churning generator (one with \"every\")".into(),
                    ));
                }
                let count = self.count.unwrap_or(1);
                if count == 0 || i64::from(count) > MAX_HELD {
                    return Err(err("count", format!("{count} is not in 1..={MAX_HELD}")));
                }
                Kind::Steady {
                    count,
                    idle_ms: ms(self.idle.unwrap_or(Duration::from_secs(1))),
                }
            }
        };
        if let Some(t) = &self.transactional_id {
            let varies = t.contains("{n}") || t.contains("{uuid}");
            let many = !matches!(kind, Kind::Steady { count: 1, .. });
            if t.is_empty() || (many && !varies) {
                return Err(err(
                    "transactional_id",
                    "each producer needs its own id: put {n} or {uuid} in it".into(),
                ));
            }
        }
        Ok(Generator {
            topic: self.topic,
            partitions,
            kind,
            transactional_id: self.transactional_id,
            epoch: self.epoch,
            milli_epochs_per_hour: (self.epochs_per_hour * 1000.0).round() as u64,
            coordinator: self.coordinator,
            timeout_ms: self.timeout_ms,
            first_id,
            loaded_ms: now_ms,
            index,
            next_txn: 0,
        })
    }
}

/// A broker's `producer.id.expiration.ms`.
fn expiration_ms(cluster: &Cluster, broker: i32) -> i64 {
    cluster
        .broker(broker)
        .and_then(|b| b.configs.get("producer.id.expiration.ms"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_EXPIRATION_MS)
}

/// The longest `transactional.id.expiration.ms` of the cluster: older
/// transactional ids are not made.
fn longest_transactional_id_expiration_ms(cluster: &Cluster) -> i64 {
    cluster
        .brokers
        .iter()
        .map(|b| cluster.transactional_id_expiration_ms(b.id))
        .max()
        .unwrap_or(super::model::DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS)
}

impl Cluster {
    /// Brings every generator's producers (and transactional ids) to
    /// `now_ms`. Returns when something changes next (`None`: never, or no
    /// generator).
    pub fn advance_generators(&mut self, now_ms: i64) -> Option<i64> {
        let mut generators = std::mem::take(&mut self.generators);
        let mut next: Option<i64> = None;
        let mut due = |t: i64| next = Some(next.map_or(t, |n| n.min(t)));
        for g in &mut generators {
            self.materialize(g, now_ms, &mut due);
            self.transactions_of(g, now_ms);
        }
        self.generators = generators;
        next
    }

    fn materialize(&mut self, g: &Generator, now_ms: i64, due: &mut impl FnMut(i64)) {
        let n = g.partitions.len() as i64;
        let coordinator_epoch = |c: &Cluster, k: i64| match g.transactional_id_of(k) {
            Some(id) => c.transaction_coordinator_epoch(&id),
            None => -1,
        };
        for (i, &index) in g.partitions.iter().enumerate() {
            let Some(p) = self.partition(&g.topic, index) else {
                continue;
            };
            let replicas: Vec<(i32, i64)> = p
                .replicas
                .iter()
                .map(|&b| (b, expiration_ms(self, b)))
                .collect();
            let make =
                |c: &Cluster, expiration: i64, due: &mut dyn FnMut(i64)| -> Vec<ProducerState> {
                    match g.kind {
                        Kind::Churn { every_ms, start_ms } => {
                            let Some(last) = g.made(now_ms) else {
                                due(start_ms);
                                return Vec::new();
                            };
                            due(start_ms.saturating_add((last + 1).saturating_mul(every_ms)));
                            // held while idle for less than the setting
                            let oldest = now_ms.saturating_sub(expiration).saturating_sub(start_ms);
                            let first = if oldest < 0 { 0 } else { oldest / every_ms + 1 };
                            let first = first + (i as i64 - first).rem_euclid(n);
                            if first <= last {
                                due(start_ms + first * every_ms + expiration);
                            }
                            (first..=last)
                                .step_by(usize::try_from(n).unwrap_or(1))
                                .map(|k| ProducerState {
                                    producer_id: g.first_id + k,
                                    producer_epoch: g.epoch,
                                    last_sequence: 0,
                                    last_timestamp: start_ms + k * every_ms,
                                    coordinator_epoch: coordinator_epoch(c, k),
                                    current_txn_start_offset: -1,
                                    ..Default::default()
                                })
                                .collect()
                        }
                        Kind::Steady { count, idle_ms } => {
                            due(now_ms + STEADY_TICK_MS);
                            (0..i64::from(count))
                                .map(|k| ProducerState {
                                    producer_id: g.first_id + k,
                                    producer_epoch: g.epoch_at(now_ms),
                                    last_sequence: i32::try_from(
                                        ((now_ms - g.loaded_ms) / 1000).max(0)
                                            % i64::from(i32::MAX),
                                    )
                                    .unwrap_or(0),
                                    last_timestamp: now_ms - idle_ms,
                                    coordinator_epoch: coordinator_epoch(c, k),
                                    current_txn_start_offset: -1,
                                    ..Default::default()
                                })
                                .collect()
                        }
                    }
                };
            let same = replicas.windows(2).all(|w| w[0].1 == w[1].1);
            let lists: Vec<(Option<i32>, Vec<ProducerState>)> = if same {
                let exp = replicas.first().map_or(DEFAULT_EXPIRATION_MS, |r| r.1);
                vec![(None, make(self, exp, due))]
            } else {
                replicas
                    .iter()
                    .map(|&(b, exp)| (Some(b), make(self, exp, due)))
                    .collect()
            };
            let Some(p) = self.partition_mut(&g.topic, index) else {
                continue;
            };
            for (on, generated) in lists {
                match on {
                    None => {
                        for list in p.all_producer_lists_mut() {
                            list.retain(|s| !g.owns(s.producer_id));
                            list.extend(generated.iter().cloned());
                        }
                    }
                    Some(b) => {
                        let shared = p.producers.clone();
                        let list = p.replica_producers.entry(b).or_insert(shared);
                        list.retain(|s| !g.owns(s.producer_id));
                        list.extend(generated);
                    }
                }
            }
        }
    }

    /// The coordinators learn the generator's transactional ids: churn, one
    /// each as its producer is made (those older than the longest
    /// `transactional.id.expiration.ms` never); steady, kept at the
    /// producers' epoch.
    fn transactions_of(&mut self, g: &mut Generator, now_ms: i64) {
        if g.transactional_id.is_none() {
            return;
        }
        let client_version = if self.transaction_version >= 2 { 2 } else { 0 };
        let entry = |g: &Generator, k: i64, epoch: i32, at: i64| Transaction {
            transactional_id: g.transactional_id_of(k).unwrap_or_default(),
            producer_id: g.first_id + k,
            producer_epoch: i16::try_from(epoch).unwrap_or(i16::MAX),
            state: TxnState::CompleteCommit,
            timeout_ms: g.timeout_ms,
            start_time_ms: at,
            partitions: Vec::new(),
            coordinator_override: g.coordinator,
            last_update_ms: at,
            client_transaction_version: client_version,
            next_producer_id: -1,
        };
        match g.kind {
            Kind::Churn { every_ms, start_ms } => {
                let Some(last) = g.made(now_ms) else {
                    return;
                };
                let oldest = now_ms
                    .saturating_sub(longest_transactional_id_expiration_ms(self))
                    .saturating_sub(start_ms);
                let from = g
                    .next_txn
                    .max(if oldest < 0 { 0 } else { oldest / every_ms + 1 });
                for k in from..=last {
                    let t = entry(g, k, g.epoch, start_ms + k * every_ms);
                    self.insert_transaction(t);
                }
                g.next_txn = last + 1;
            }
            Kind::Steady { count, idle_ms } => {
                for k in 0..i64::from(count) {
                    let t = entry(g, k, g.epoch_at(now_ms), now_ms - idle_ms);
                    match self.transaction_mut(&t.transactional_id) {
                        // an id InitProducerId moved on is no longer the generator's
                        Some(have) if have.producer_id == t.producer_id => {
                            have.producer_epoch = t.producer_epoch;
                            have.last_update_ms = t.last_update_ms;
                            have.start_time_ms = t.start_time_ms;
                        }
                        Some(_) => {}
                        None => self.insert_transaction(t),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::super::generator::BLOCK;
    use super::*;

    const NOW_S: u64 = 1_750_000_000;
    const NOW: i64 = NOW_S as i64 * 1000;

    fn cluster(generators: &str) -> Result<Cluster, ClusterError> {
        let text = format!(
            r#"{{"brokers": [{{"id": 1, "configs": {{"producer.id.expiration.ms": "1800000"}}}}, {{"id": 2}}],
                "topics": [{{"name": "t", "partitions": [
                   {{"partition": 0, "leader": 1, "replicas": [1, 2],
                     "producers": [{{"ProducerId": 7, "LastTimestamp": "now-1m"}}]}},
                   {{"partition": 1, "leader": 2, "replicas": [2, 1]}},
                   {{"partition": 2, "leader": 1, "replicas": [1, 2]}}]}},
                   {{"name": "__transaction_state", "partitions": [{{"partition": 0, "leader": 1, "replicas": [1]}}]}}],
                "producer_generators": [{generators}]}}"#
        );
        Cluster::from_json_at(&text, UNIX_EPOCH + Duration::from_secs(NOW_S))
    }

    /// Generated ids on `broker` over t's partitions.
    fn held(c: &Cluster, broker: i32) -> Vec<i64> {
        let mut ids: Vec<i64> = (0..3)
            .flat_map(|p| c.partition("t", p).unwrap().producers_on(broker).to_vec())
            .map(|s| s.producer_id)
            .filter(|&id| id >= BLOCK)
            .collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn churn_makes_an_id_per_period_and_each_broker_expires_them_by_its_setting() {
        let mut c = cluster(
            r#"{"topic": "t", "every": "10s", "start": "now-1h", "transactional_id": "sink-{n}"}"#,
        )
        .unwrap();
        let g = c.generators[0].clone();
        let first = g.first_id;
        assert!(first >= BLOCK, "above the file's ids");
        // broker 2 (a day) holds all 361 made in the hour; broker 1 (30
        // minutes) those idle for less: k = 181..=360
        assert_eq!(
            held(&c, 2),
            (0..=360).map(|k| first + k).collect::<Vec<_>>()
        );
        assert_eq!(
            held(&c, 1),
            (181..=360).map(|k| first + k).collect::<Vec<_>>()
        );
        // round robin: producer 4 wrote t-1, at its time, once
        let p1 = c.partition("t", 1).unwrap().producers_on(2);
        let four = p1.iter().find(|s| s.producer_id == first + 4).unwrap();
        assert_eq!(four.last_timestamp, NOW - 3_600_000 + 40_000);
        assert!(
            four.coordinator_epoch >= 0,
            "transactional: its marker written"
        );
        // the file's own producer is still there
        assert!(c
            .partition("t", 0)
            .unwrap()
            .producers_on(1)
            .iter()
            .any(|s| s.producer_id == 7));
        // its transactional ids are at the coordinator
        let t = c.transaction("sink-360").expect("sink-360");
        assert_eq!(
            (t.producer_id, t.state),
            (first + 360, TxnState::CompleteCommit)
        );
        assert_eq!(c.transactions.len(), 361);
        // 25 s on: two more made, two more gone from broker 1
        let next = c.advance_generators(NOW + 25_000).expect("a next change");
        assert_eq!(held(&c, 2).len(), 363);
        assert_eq!(
            held(&c, 1),
            (183..=362).map(|k| first + k).collect::<Vec<_>>()
        );
        assert!(c.transaction("sink-362").is_some());
        assert!(next > NOW + 25_000 && next <= NOW + 30_000, "{next}");
        assert!(
            c.next_producer_id >= first + BLOCK,
            "InitProducerId stays clear"
        );
    }

    #[test]
    fn steady_producers_write_everywhere_and_use_epochs_at_their_rate() {
        let mut c = cluster(
            r#"{"topic": "t", "partitions": [0], "transactional_id": "settle", "epoch": 32760,
                "epochs_per_hour": 3600, "idle": "2s"}"#,
        )
        .unwrap();
        let on = |c: &Cluster| {
            c.partition("t", 0)
                .unwrap()
                .producers_on(1)
                .last()
                .cloned()
                .unwrap()
        };
        let p = on(&c);
        assert_eq!((p.producer_epoch, p.last_timestamp), (32760, NOW - 2_000));
        assert!(c.partition("t", 1).unwrap().producers_on(1).is_empty());
        c.advance_generators(NOW + 5_000);
        let p = on(&c);
        assert_eq!((p.producer_epoch, p.last_timestamp), (32765, NOW + 3_000));
        assert_eq!(c.transaction("settle").unwrap().producer_epoch, 32765);
        c.advance_generators(NOW + 3_600_000);
        assert_eq!(on(&c).producer_epoch, 32767, "never past the last epoch");
        // one entry per producer, not one per advance
        assert_eq!(c.partition("t", 0).unwrap().producers_on(1).len(), 2);
    }

    #[test]
    fn ids_by_counter_uuid_or_none() {
        let c = cluster(
            r#"{"topic": "t", "every": "1m", "start": "now-3m", "transactional_id": "fn-{uuid}"},
               {"topic": "t", "count": 3}"#,
        )
        .unwrap();
        let g = &c.generators[0];
        let id = g.transactional_id_of(2).unwrap();
        let uuid = id.strip_prefix("fn-").unwrap();
        assert_eq!(uuid.len(), 36);
        assert!(uuid.char_indices().all(|(i, ch)| match i {
            8 | 13 | 18 | 23 => ch == '-',
            _ => ch.is_ascii_hexdigit(),
        }));
        assert_ne!(id, g.transactional_id_of(3).unwrap());
        assert_eq!(id, g.transactional_id_of(2).unwrap(), "stable");
        // idempotent steady producers: no transaction, coordinator epoch -1
        assert_eq!(c.generators[1].first_id, g.first_id + BLOCK);
        let steady: Vec<_> = c
            .partition("t", 2)
            .unwrap()
            .producers_on(2)
            .iter()
            .filter(|s| c.generators[1].owns(s.producer_id))
            .cloned()
            .collect();
        assert_eq!(steady.len(), 3);
        assert!(steady.iter().all(|s| s.coordinator_epoch == -1));
        assert_eq!(c.transactions.len(), 4, "the churning one's 4 (k = 0..=3)");
    }

    #[test]
    fn refuses_what_cannot_be_meant() {
        for (g, at) in [
            (r#"{"topic": "nope", "every": "1s"}"#, "topic"),
            (
                r#"{"topic": "t", "partitions": [3], "every": "1s"}"#,
                "partitions",
            ),
            (
                r#"{"topic": "t", "count": 2, "transactional_id": "same"}"#,
                "transactional_id",
            ),
            (
                r#"{"topic": "t", "every": "1s", "transactional_id": "same"}"#,
                "transactional_id",
            ),
            (r#"{"topic": "t", "every": "1s", "count": 2}"#, "count"),
            (r#"{"topic": "t", "start": "now-1h"}"#, "start"),
            (r#"{"topic": "t", "epoch": 32768}"#, "epoch"),
            (r#"{"topic": "t", "every": "1ms"}"#, "every"),
            (r#"{"topic": "t", "every": "soon"}"#, "every"),
        ] {
            let e = cluster(g).err().unwrap_or_else(|| panic!("{g} accepted"));
            assert!(
                e.to_string()
                    .contains(&format!("producer_generators[0].{at}")),
                "{g}: {e}"
            );
        }
    }
}
