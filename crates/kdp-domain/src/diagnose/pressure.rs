//! Producer-id pressure: how many producer ids each broker holds, by topic,
//! when they expire, which epochs near their end, and which transactional
//! ids look like one per task. Pure functions over what every replica
//! answered (kdp-workflows' `replicas::describe_every_replica`).
//!
//! Counting follows the broker's `ProducerIdCount` gauge: one id per
//! partition replica and producer, leaders and followers alike, so a
//! producer writing to 3 partitions of a topic with replication factor 3
//! counts 9 times in the cluster and 3 times on each broker.

use std::collections::{BTreeMap, BTreeSet};

use kdp_wire::messages::ProducerState;
use serde::{Deserialize, Serialize};

use crate::diagnose::id_set::{self, IdSet};
use crate::partition::{is_transactional, ProducerFields};
use crate::time::age_ms;

/// The largest producer epoch (an int16 in Kafka's log).
pub const MAX_EPOCH: i32 = i16::MAX as i32;
/// Default margin below [`MAX_EPOCH`] at which an epoch is near its end.
pub const DEFAULT_EPOCH_MARGIN: i32 = 1000;
/// One hour in ms.
pub const HOUR_MS: i64 = 3_600_000;
/// One day in ms.
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// When a held producer id expires, by the broker's rule: an id with no
/// open transaction is removed once idle for `producer.id.expiration.ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expiry {
    /// Idle for longer than the setting and still held.
    Past,
    /// Expires in this many ms (> 0).
    In(i64),
    /// Does not expire while its transaction is open.
    OpenTransaction,
    /// No timestamp, or the broker's setting is unknown.
    Unknown,
}

/// The expiry of `p` on a broker whose setting is `expiration_ms`.
pub fn expiry(p: &ProducerState, expiration_ms: Option<i64>, now_ms: i64) -> Expiry {
    if p.current_txn_start_offset >= 0 {
        return Expiry::OpenTransaction;
    }
    match (expiration_ms, age_ms(p.last_timestamp, now_ms)) {
        (Some(exp), Some(idle)) => {
            let left = exp.saturating_sub(idle);
            if left <= 0 {
                Expiry::Past
            } else {
                Expiry::In(left)
            }
        }
        _ => Expiry::Unknown,
    }
}

/// The shape of a transactional id's tail, removed to make its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tail {
    /// Ended in one or more numeric groups (`sink-3-17`).
    Counter,
    /// Ended in a UUID (`fn-1b4e28ba-2fa1-11d2-883f-0016d3cca427`).
    Uuid,
    /// Nothing removed: the id is its own prefix.
    None,
}

impl Tail {
    /// "counter", "uuid" or "none".
    pub fn label(self) -> &'static str {
        match self {
            Tail::Counter => "counter",
            Tail::Uuid => "uuid",
            Tail::None => "none",
        }
    }
}

fn is_sep(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | ':')
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A transactional id's prefix and the tail removed.
///
/// Rule: repeatedly remove a trailing UUID (8-4-4-4-12 hex digits) or a
/// trailing run of ASCII digits, each with the one separator (`-`, `_`,
/// `.`, `:`) before it; stop when neither is there, or when removing would
/// leave nothing (an id of digits only is its own prefix). `Uuid` when a
/// UUID was removed, else `Counter` when digits were. Limit: a fixed number
/// at the end (`orders-v2`) is taken for a counter too.
pub fn prefix(id: &str) -> (&str, Tail) {
    let mut rest = id;
    let mut tail = Tail::None;
    loop {
        if is_uuid(rest) {
            // a uuid alone: removing it would leave nothing
            break;
        }
        let cut = if rest.len() > 36
            && rest.is_char_boundary(rest.len() - 36)
            && is_uuid(&rest[rest.len() - 36..])
        {
            tail = Tail::Uuid;
            rest.len() - 36
        } else {
            let digits = rest.len() - rest.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 || digits == rest.len() {
                break;
            }
            if tail == Tail::None {
                tail = Tail::Counter;
            }
            rest.len() - digits
        };
        let head = &rest[..cut];
        let head = match head.char_indices().last() {
            Some((i, c)) if is_sep(c) => &head[..i],
            _ => head,
        };
        if head.is_empty() {
            break;
        }
        rest = head;
    }
    if rest.len() == id.len() {
        tail = Tail::None;
    }
    (rest, tail)
}

/// What the pressure report is computed from, all at once (the scan folds
/// the same as it streams: [`Fold`]).
#[derive(Debug, Clone, Default)]
pub struct Inputs<'a> {
    /// Each partition's producers by the broker that answered.
    pub replicas: Option<&'a crate::diagnose::replicas::Replicas>,
    /// Brokers asked (answered or not).
    pub brokers: BTreeSet<i32>,
    /// Brokers whose scan failed as a whole (no answer at all).
    pub failed: BTreeSet<i32>,
    /// Brokers that answered but failed some request (a partition, their
    /// configs or their transaction listing).
    pub incomplete: BTreeSet<i32>,
    /// Each broker's `producer.id.expiration.ms`, where known.
    pub expiration_ms: BTreeMap<i32, i64>,
    /// Transactional id by producer id (ListTransactions).
    pub transactional_ids: BTreeMap<i64, String>,
    /// Now (ms since the epoch).
    pub now_ms: i64,
    /// Epochs at or above `MAX_EPOCH - margin` are near their end.
    pub epoch_margin: i32,
    /// How many topics to keep in [`Pressure::top_topics`].
    pub top: usize,
    /// Scans that failed without naming their broker: totals are partial.
    pub lost: usize,
    /// Keep only these brokers (empty: all).
    pub only_brokers: BTreeSet<i32>,
    /// Transactions listed in `PrepareEpochFence`, described.
    pub epoch_fences: Vec<EpochFence>,
}

/// One broker's producer ids.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BrokerPressure {
    /// The broker.
    pub broker: i32,
    /// Whether it answered at all.
    pub answered: bool,
    /// Whether every request to it succeeded (its counts are whole).
    pub complete: bool,
    /// Producer ids held (one per partition replica and producer).
    pub producer_ids: u64,
    /// Of those, transactional ([`is_transactional`]).
    pub transactional: u64,
    /// Of those, idempotent only.
    pub idempotent: u64,
    /// The longest idle time (ms) among known timestamps.
    pub oldest_idle_ms: Option<i64>,
    /// The median idle time (ms) among known timestamps.
    pub median_idle_ms: Option<i64>,
    /// Its `producer.id.expiration.ms`, if known.
    pub expiration_ms: Option<i64>,
    /// Ids expiring within the next hour.
    pub expiring_within_hour: u64,
    /// Ids expiring within the next day (the hour's included).
    pub expiring_within_day: u64,
    /// Ids idle past the setting and still held.
    pub past_expiration: u64,
}

/// One topic's producer ids, summed over its replicas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TopicPressure {
    /// The topic.
    pub topic: String,
    /// Producer ids held for it over every replica.
    pub producer_ids: u64,
    /// Distinct producer ids writing it.
    pub distinct_producers: u64,
    /// The largest epoch of any of its producers.
    pub max_epoch: i32,
    /// Its producers whose epoch is near the end.
    pub near_exhaustion: u64,
    /// Some replica of it did not answer: its counts are lower bounds.
    #[serde(default)]
    pub partial: bool,
}

/// A producer whose epoch is near [`MAX_EPOCH`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NearEpoch {
    /// The producer id.
    pub producer_id: i64,
    /// Its largest epoch over every replica.
    pub producer_epoch: i32,
    /// Epochs left before [`MAX_EPOCH`].
    pub epochs_left: i32,
    /// Its transactional id, where ListTransactions showed it.
    pub transactional_id: Option<String>,
    /// Topics it writes.
    pub topics: BTreeSet<String>,
    /// Epochs used per hour between two scans (`--since`, `--interval`),
    /// when the producer was near its end in both and its epoch moved.
    #[serde(default)]
    pub epochs_per_hour: Option<f64>,
    /// When it reaches [`MAX_EPOCH`] at that rate (ms since the epoch).
    #[serde(default)]
    pub exhausted_at_ms: Option<i64>,
}

/// A transaction in `PrepareEpochFence` for longer than its timeout: its
/// coordinator began fencing the producer (a new instance's InitProducerId,
/// or the end of the epochs) and has not finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EpochFence {
    /// The transactional id.
    pub transactional_id: String,
    /// Its producer id.
    pub producer_id: i64,
    /// The coordinator that lists it.
    pub coordinator: i32,
    /// When its transaction started (ms since the epoch), if known.
    pub transaction_start_time_ms: Option<i64>,
    /// Its transaction timeout.
    pub transaction_timeout_ms: i32,
}

impl EpochFence {
    /// Whether it has been fencing for longer than its timeout at `now_ms`
    /// (unknown start: not known to be).
    pub fn past_timeout(&self, now_ms: i64) -> bool {
        self.transaction_start_time_ms
            .is_some_and(|s| now_ms.saturating_sub(s) > i64::from(self.transaction_timeout_ms))
    }
}

/// A transactional-id prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PrefixCount {
    /// The prefix ([`prefix`]).
    pub prefix: String,
    /// The tail removed from its ids.
    pub tail: Tail,
    /// Distinct transactional ids under it.
    pub transactional_ids: u64,
}

impl PrefixCount {
    /// Looks like one transactional id per task: several ids under a
    /// counter or uuid tail.
    pub fn one_per_task(&self) -> bool {
        self.tail != Tail::None && self.transactional_ids > 1
    }
}

/// The report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Pressure {
    /// Per broker, by id.
    pub brokers: Vec<BrokerPressure>,
    /// Per topic, by name.
    pub topics: Vec<TopicPressure>,
    /// The topics holding the most ids, most first.
    pub top_topics: Vec<String>,
    /// Producers near the end of their epochs, fewest left first.
    pub epochs_near_exhaustion: Vec<NearEpoch>,
    /// Prefixes, most ids first.
    pub prefixes: Vec<PrefixCount>,
    /// Totals over the brokers.
    pub total_producer_ids: u64,
    /// Some broker did not answer, or not fully: totals are lower bounds.
    pub partial: bool,
    /// The ids held, per broker and topic, each list sorted without
    /// repeats (what `--since` compares).
    pub held: BTreeMap<i32, BTreeMap<String, Vec<i64>>>,
    /// When this was computed (ms since the epoch).
    pub scanned_at_ms: i64,
    /// Transactions in `PrepareEpochFence` longer than their timeout.
    #[serde(default)]
    pub epoch_fences_past_timeout: Vec<EpochFence>,
    /// Topics a broker answered for in part, by broker: their ids in
    /// [`Pressure::held`] are not all it holds.
    #[serde(default)]
    pub unanswered: BTreeMap<i32, BTreeSet<String>>,
    /// The ids held, as [`Pressure::held`], from a [`Fold::lean`] fold
    /// (which leaves [`Pressure::held`] empty): each list delta-encoded, a
    /// byte or two an id. Not written out.
    #[serde(skip)]
    pub held_sets: BTreeMap<i32, BTreeMap<String, IdSet>>,
}

impl Pressure {
    /// Sorts each list of [`Pressure::held`] and removes repeats, as
    /// [`churn`] needs (a report read back from a file may not be).
    pub fn normalize(&mut self) {
        for ids in self.held.values_mut().flat_map(|t| t.values_mut()) {
            ids.sort_unstable();
            ids.dedup();
        }
    }
}

/// Sets each near-exhaustion producer's rate and forecast from `before`
/// (an earlier scan): epochs used per hour where it was near in both scans
/// and its epoch moved, and when it reaches [`MAX_EPOCH`] at that rate.
pub fn epoch_rates(before: &Pressure, now: &mut Pressure) {
    let dt = now.scanned_at_ms - before.scanned_at_ms;
    if dt <= 0 {
        return;
    }
    let was: BTreeMap<i64, i32> = before
        .epochs_near_exhaustion
        .iter()
        .map(|n| (n.producer_id, n.producer_epoch))
        .collect();
    for n in &mut now.epochs_near_exhaustion {
        let Some(&e) = was.get(&n.producer_id) else {
            continue;
        };
        let used = n.producer_epoch - e;
        if used <= 0 {
            continue;
        }
        let per_ms = f64::from(used) / dt as f64;
        n.epochs_per_hour = Some(per_ms * 3_600_000.0);
        n.exhausted_at_ms = Some(now.scanned_at_ms + (f64::from(n.epochs_left) / per_ms) as i64);
    }
}

/// The median of `v` (the lower one of an even count), reordering it.
fn median(v: &mut [i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    let mid = (v.len() - 1) / 2;
    Some(*v.select_nth_unstable(mid).1)
}

/// Distinct values over sorted, repeat-free lists (a merge: nothing is
/// allocated per value).
fn count_distinct(mut lists: Vec<&[i64]>) -> u64 {
    let mut n = 0u64;
    loop {
        lists.retain(|l| !l.is_empty());
        let Some(min) = lists.iter().filter_map(|l| l.first()).min().copied() else {
            return n;
        };
        n += 1;
        for l in &mut lists {
            if let Some((&first, rest)) = l.split_first() {
                if first == min {
                    *l = rest;
                }
            }
        }
    }
}

/// One broker while folding.
#[derive(Debug, Default)]
struct BrokerAcc {
    row: BrokerPressure,
    /// Idle times of the ids with no open transaction (those expire), then
    /// of the others: the expiry forecast is made once the broker's setting
    /// is known, at the end, and the median over both.
    idle_closed: Vec<i64>,
    idle_open: Vec<i64>,
    /// Partitions it answered for.
    answered: usize,
    /// It failed some request.
    incomplete: bool,
    /// Its whole scan failed.
    failed: bool,
}

/// The report, folded from answers as they arrive, so that a scan of
/// millions of producers keeps counts, the ids held and their idle times
/// (8 bytes each per broker), never the producers themselves. [`pressure`]
/// is the same fold over answers already in memory.
///
/// Usage: [`Fold::broker`] for each broker asked, [`Fold::add`] for each
/// partition a broker answered, [`Fold::failed_partition`],
/// [`Fold::failed_broker`], [`Fold::incomplete`] and [`Fold::lost`] for
/// what it did not, then [`Fold::finish`] with each broker's
/// `producer.id.expiration.ms` (which may arrive after the producers).
#[derive(Debug)]
pub struct Fold {
    now_ms: i64,
    near_from: i32,
    brokers: BTreeMap<i32, BrokerAcc>,
    topics: std::collections::HashMap<String, TopicPressure>,
    near: std::collections::HashMap<i64, (i32, BTreeSet<String>)>,
    held: BTreeMap<i32, BTreeMap<String, Vec<i64>>>,
    unanswered: BTreeMap<i32, BTreeSet<String>>,
    lost: usize,
    /// Set by [`Fold::lean`].
    lean: Option<Lean>,
}

/// What a [`Fold::lean`] fold keeps instead of idle times and id lists.
#[derive(Debug, Default)]
struct Lean {
    /// Each broker's `producer.id.expiration.ms`, once known
    /// ([`Fold::expiration`]).
    expiration_ms: BTreeMap<i32, i64>,
    /// Each answer's ids, sorted and delta-encoded, per broker and topic;
    /// joined per topic at the end.
    parts: BTreeMap<i32, BTreeMap<String, Vec<IdSet>>>,
    /// Where one answer's ids are sorted (reused).
    scratch: Vec<i64>,
}

impl Fold {
    /// A fold at `now_ms`, epochs within `epoch_margin` of [`MAX_EPOCH`]
    /// near their end.
    pub fn new(now_ms: i64, epoch_margin: i32) -> Fold {
        Fold {
            now_ms,
            near_from: MAX_EPOCH.saturating_sub(epoch_margin.max(0)),
            brokers: BTreeMap::new(),
            topics: Default::default(),
            near: Default::default(),
            held: BTreeMap::new(),
            unanswered: BTreeMap::new(),
            lost: 0,
            lean: None,
        }
    }

    /// A fold that keeps no more than the exporter publishes: once a
    /// broker's `producer.id.expiration.ms` is known ([`Fold::expiration`],
    /// the same value [`Fold::finish`] will be given), each of its
    /// producers' expiry is counted as it arrives instead of keeping its
    /// idle time (only the answers that came before the setting keep theirs
    /// to the end), [`BrokerPressure::median_idle_ms`] is `None` (the oldest
    /// is kept), and each answer's ids are delta-encoded at once into
    /// [`Pressure::held_sets`] instead of [`Pressure::held`]: about two
    /// bytes a replica entry for the scan instead of sixteen.
    pub fn lean(mut self) -> Fold {
        self.lean = Some(Lean::default());
        self
    }

    /// Broker `b`'s `producer.id.expiration.ms`, read while its answers
    /// arrive: a [`Fold::lean`] fold counts its expiry from now on (any
    /// other ignores it and counts at [`Fold::finish`]).
    pub fn expiration(&mut self, b: i32, ms: i64) {
        if let Some(l) = &mut self.lean {
            l.expiration_ms.insert(b, ms);
        }
    }

    fn broker_mut(&mut self, b: i32) -> &mut BrokerAcc {
        self.brokers.entry(b).or_insert_with(|| BrokerAcc {
            row: BrokerPressure {
                broker: b,
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn topic_mut(&mut self, topic: &str) -> &mut TopicPressure {
        if !self.topics.contains_key(topic) {
            self.topics.insert(
                topic.to_string(),
                TopicPressure {
                    topic: topic.to_string(),
                    max_epoch: -1,
                    ..Default::default()
                },
            );
        }
        self.topics
            .get_mut(topic)
            .unwrap_or_else(|| unreachable!("inserted above"))
    }

    /// Broker `b` was asked (it gets a row, with zeros until it answers).
    pub fn broker(&mut self, b: i32) {
        self.broker_mut(b);
    }

    /// What broker `b` holds for one partition of `topic`.
    pub fn add(&mut self, b: i32, topic: &str, producers: &[ProducerState]) {
        self.add_each(b, topic, producers.iter());
    }

    /// [`Fold::add`] of producers read where they lie (a response's view,
    /// walked three times): nothing of them is kept but what the fold keeps.
    pub fn add_each<P, I>(&mut self, b: i32, topic: &str, producers: I)
    where
        P: ProducerFields,
        I: Iterator<Item = P> + Clone,
    {
        let (now, near_from) = (self.now_ms, self.near_from);
        let mut lean = self.lean.take();
        let lean_exp = lean.as_ref().map(|l| l.expiration_ms.get(&b).copied());
        let acc = self.broker_mut(b);
        acc.answered += 1;
        let mut count = 0u64;
        let mut max_epoch = -1;
        for p in producers.clone() {
            count += 1;
            max_epoch = max_epoch.max(p.producer_epoch());
            acc.row.producer_ids += 1;
            if is_transactional(&p) {
                acc.row.transactional += 1;
            } else {
                acc.row.idempotent += 1;
            }
            if let Some(idle) = age_ms(p.last_timestamp(), now) {
                let open = p.current_txn_start_offset() >= 0;
                match lean_exp {
                    None if open => acc.idle_open.push(idle),
                    None => acc.idle_closed.push(idle),
                    Some(exp) => {
                        acc.row.oldest_idle_ms =
                            Some(acc.row.oldest_idle_ms.map_or(idle, |o| o.max(idle)));
                        match (open, exp) {
                            (true, _) => {}
                            (false, Some(exp)) => count_expiry(&mut acc.row, exp, idle),
                            // the setting not read yet: counted at the end
                            (false, None) => acc.idle_closed.push(idle),
                        }
                    }
                }
            }
        }
        let tp = self.topic_mut(topic);
        tp.producer_ids += count;
        tp.max_epoch = tp.max_epoch.max(max_epoch);
        match &mut lean {
            Some(l) => {
                l.scratch.clear();
                l.scratch.extend(producers.clone().map(|p| p.producer_id()));
                l.scratch.sort_unstable();
                l.scratch.dedup();
                let set = IdSet::from_sorted(&l.scratch);
                let by_topic = l.parts.entry(b).or_default();
                match by_topic.get_mut(topic) {
                    Some(sets) => sets.push(set),
                    None => {
                        by_topic.insert(topic.to_string(), vec![set]);
                    }
                }
            }
            None => {
                let by_topic = self.held.entry(b).or_default();
                let ids = match by_topic.get_mut(topic) {
                    Some(ids) => ids,
                    None => by_topic.entry(topic.to_string()).or_default(),
                };
                ids.extend(producers.clone().map(|p| p.producer_id()));
            }
        }
        self.lean = lean;
        for p in producers.filter(|p| p.producer_epoch() >= near_from) {
            let e = self.near.entry(p.producer_id()).or_default();
            e.0 = e.0.max(p.producer_epoch());
            if !e.1.contains(topic) {
                e.1.insert(topic.to_string());
            }
        }
    }

    /// Broker `b` did not answer for a partition of `topic`: its counts
    /// and the topic's are lower bounds.
    pub fn failed_partition(&mut self, b: i32, topic: &str) {
        self.broker_mut(b).incomplete = true;
        self.topic_mut(topic).partial = true;
        let topics = self.unanswered.entry(b).or_default();
        if !topics.contains(topic) {
            topics.insert(topic.to_string());
        }
    }

    /// Broker `b` answered, but some other request to it failed (its
    /// configs, its transactions).
    pub fn incomplete(&mut self, b: i32) {
        self.broker_mut(b).incomplete = true;
    }

    /// Broker `b`'s whole scan failed: which partitions it hosts is not
    /// known, so every topic's counts may be lower bounds.
    pub fn failed_broker(&mut self, b: i32) {
        self.broker_mut(b).failed = true;
    }

    /// A scan ended without saying which broker it was.
    pub fn lost(&mut self) {
        self.lost += 1;
    }

    /// The report. `expiration_ms`: each broker's
    /// `producer.id.expiration.ms` where known (its expiry forecast is
    /// empty otherwise); `transactional_ids` names producers near the end
    /// of their epochs and makes the prefixes; `top` topics are ranked.
    pub fn finish(
        self,
        expiration_ms: &BTreeMap<i32, i64>,
        transactional_ids: &BTreeMap<i64, String>,
        top: usize,
        epoch_fences: &[EpochFence],
    ) -> Pressure {
        let mut held = self.held;
        for ids in held.values_mut().flat_map(|t| t.values_mut()) {
            ids.sort_unstable();
            ids.dedup();
            // kept (by --since and the exporter) past this scan: no growth slack
            ids.shrink_to_fit();
        }
        // a lean fold kept the idle times only of answers that came before
        // their broker's setting; the rest it counted on the way
        let (lean_fold, parts) = match self.lean {
            Some(l) => (true, l.parts),
            None => (false, BTreeMap::new()),
        };
        // a lean fold's answers, joined per broker and topic
        let held_sets: BTreeMap<i32, BTreeMap<String, IdSet>> = parts
            .into_iter()
            .map(|(b, topics)| {
                let topics = topics
                    .into_iter()
                    .map(|(t, sets)| (t, IdSet::union(&sets)))
                    .collect();
                (b, topics)
            })
            .collect();
        // each topic's lists, one per broker, merged to count distinct ids
        let mut lists: std::collections::HashMap<&str, Vec<&[i64]>> = Default::default();
        for (t, ids) in held.values().flatten() {
            lists.entry(t.as_str()).or_default().push(ids);
        }
        let mut distinct: std::collections::HashMap<&str, u64> = lists
            .into_iter()
            .map(|(t, l)| (t, count_distinct(l)))
            .collect();
        let mut sets: std::collections::HashMap<&str, Vec<&IdSet>> = Default::default();
        for (t, ids) in held_sets.values().flatten() {
            sets.entry(t.as_str()).or_default().push(ids);
        }
        for (t, l) in sets {
            *distinct.entry(t).or_default() += id_set::count_distinct(l);
        }
        let mut epochs_near: Vec<NearEpoch> = self
            .near
            .into_iter()
            .map(|(pid, (epoch, topics))| NearEpoch {
                producer_id: pid,
                producer_epoch: epoch,
                epochs_left: MAX_EPOCH.saturating_sub(epoch).max(0),
                transactional_id: transactional_ids.get(&pid).cloned(),
                topics,
                epochs_per_hour: None,
                exhausted_at_ms: None,
            })
            .collect();
        epochs_near.sort_by_key(|n| (n.epochs_left, n.producer_id));
        let mut near_per_topic: std::collections::HashMap<&str, u64> = Default::default();
        for t in epochs_near.iter().flat_map(|n| &n.topics) {
            *near_per_topic.entry(t.as_str()).or_default() += 1;
        }
        // a broker that failed as a whole may host any topic
        let some_broker_failed = self.brokers.values().any(|b| b.failed) || self.lost > 0;
        let mut topics: Vec<TopicPressure> = self
            .topics
            .into_values()
            .map(|mut tp| {
                tp.distinct_producers = distinct.get(tp.topic.as_str()).copied().unwrap_or(0);
                tp.near_exhaustion = near_per_topic.get(tp.topic.as_str()).copied().unwrap_or(0);
                tp.partial |= some_broker_failed;
                tp
            })
            .collect();
        drop(distinct);
        topics.sort_by(|a, b| a.topic.cmp(&b.topic));
        let mut ranked: Vec<&TopicPressure> = topics.iter().collect();
        ranked.sort_by(|a, b| {
            b.producer_ids
                .cmp(&a.producer_ids)
                .then(a.topic.cmp(&b.topic))
        });
        let top_topics = ranked.iter().take(top).map(|t| t.topic.clone()).collect();
        let brokers: Vec<BrokerPressure> = self
            .brokers
            .into_values()
            .map(|mut acc| {
                // a broker with failures and no answer at all answered nothing
                let failed = acc.failed || (acc.incomplete && acc.answered == 0);
                let row = &mut acc.row;
                row.answered = !failed;
                row.complete = !failed && !acc.incomplete;
                row.expiration_ms = expiration_ms.get(&row.broker).copied();
                if let Some(exp) = row.expiration_ms {
                    for &idle in &acc.idle_closed {
                        count_expiry(row, exp, idle);
                    }
                }
                if !lean_fold {
                    let mut idles = acc.idle_closed;
                    idles.append(&mut acc.idle_open);
                    row.oldest_idle_ms = idles.iter().copied().max();
                    row.median_idle_ms = median(&mut idles);
                }
                acc.row
            })
            .collect();
        Pressure {
            total_producer_ids: brokers.iter().map(|b| b.producer_ids).sum(),
            partial: self.lost > 0 || brokers.iter().any(|b| !b.complete),
            brokers,
            topics,
            top_topics,
            epochs_near_exhaustion: epochs_near,
            prefixes: prefixes(transactional_ids.values().map(String::as_str)),
            held,
            scanned_at_ms: self.now_ms,
            epoch_fences_past_timeout: epoch_fences
                .iter()
                .filter(|f| f.past_timeout(self.now_ms))
                .cloned()
                .collect(),
            unanswered: self.unanswered,
            held_sets,
        }
    }
}

/// Counts one idle time (of an id with no open transaction) into `row`'s
/// expiry forecast, on a broker whose setting is `exp`.
fn count_expiry(row: &mut BrokerPressure, exp: i64, idle: i64) {
    let left = exp.saturating_sub(idle);
    if left <= 0 {
        row.past_expiration += 1;
    } else {
        row.expiring_within_hour += u64::from(left <= HOUR_MS);
        row.expiring_within_day += u64::from(left <= DAY_MS);
    }
}

/// Computes the report from answers already in memory (the same
/// [`Fold`] the scan streams into).
pub fn pressure(inp: &Inputs<'_>) -> Pressure {
    let kept = |b: &i32| inp.only_brokers.is_empty() || inp.only_brokers.contains(b);
    let mut fold = Fold::new(inp.now_ms, inp.epoch_margin);
    for &b in inp.brokers.iter().filter(|b| kept(b)) {
        fold.broker(b);
        if inp.failed.contains(&b) {
            fold.failed_broker(b);
        }
        if inp.incomplete.contains(&b) {
            fold.incomplete(b);
        }
    }
    for ((topic, _), by_broker) in inp.replicas.into_iter().flatten() {
        for (&b, producers) in by_broker.iter().filter(|(b, _)| kept(b)) {
            fold.add(b, topic, producers);
        }
    }
    for _ in 0..inp.lost {
        fold.lost();
    }
    fold.finish(
        &inp.expiration_ms,
        &inp.transactional_ids,
        inp.top,
        &inp.epoch_fences,
    )
}

/// Transactional ids grouped by [`prefix`], most ids first.
pub fn prefixes<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<PrefixCount> {
    let mut by: BTreeMap<(&str, Tail), BTreeSet<&str>> = BTreeMap::new();
    for id in ids {
        let (p, t) = prefix(id);
        by.entry((p, t)).or_default().insert(id);
    }
    let mut v: Vec<PrefixCount> = by
        .into_iter()
        .map(|((p, t), ids)| PrefixCount {
            prefix: p.to_string(),
            tail: t,
            transactional_ids: ids.len() as u64,
        })
        .collect();
    v.sort_by(|a, b| {
        b.transactional_ids
            .cmp(&a.transactional_ids)
            .then(a.prefix.cmp(&b.prefix))
    });
    v
}

/// New and gone producer ids in one broker's topic between two scans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Churn {
    /// The broker.
    pub broker: i32,
    /// The topic.
    pub topic: String,
    /// Ids held now and not before.
    pub new: u64,
    /// Ids held before and not now.
    pub gone: u64,
    /// New ids per second between the scans (`None`: no time passed).
    pub new_per_second: Option<f64>,
}

/// One broker's churn between two reports, summed over its topics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrokerChurn {
    /// Ids held now and not before.
    pub new: u64,
    /// Ids held before and not now.
    pub gone: u64,
    /// New ids per second between the reports (`None`: no time passed).
    pub new_per_second: Option<f64>,
}

/// `broker`'s churn from `before` to `now`, out of their [`churn`].
pub fn broker_churn(
    before: &Pressure,
    now: &Pressure,
    churn: &[Churn],
    broker: i32,
) -> BrokerChurn {
    let (new, gone) = churn
        .iter()
        .filter(|c| c.broker == broker)
        .fold((0, 0), |a, c| (a.0 + c.new, a.1 + c.gone));
    let secs = (now.scanned_at_ms - before.scanned_at_ms) as f64 / 1000.0;
    BrokerChurn {
        new,
        gone,
        new_per_second: (secs > 0.0).then(|| new as f64 / secs),
    }
}

/// How many of the sorted, repeat-free `a` are not in the sorted `b`.
pub fn count_missing(a: &[i64], b: &[i64]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0u64);
    while i < a.len() {
        match b.get(j) {
            Some(&y) if y < a[i] => j += 1,
            Some(&y) if y == a[i] => {
                i += 1;
                j += 1;
            }
            _ => {
                n += 1;
                i += 1;
            }
        }
    }
    n
}

/// Churn per broker and topic from `before` to `now`. A broker that did
/// not answer in either scan is left out (its ids are unknown, not new or
/// gone), and so is a topic a broker did not fully answer for in either.
pub fn churn(before: &Pressure, now: &Pressure) -> Vec<Churn> {
    let secs = (now.scanned_at_ms - before.scanned_at_ms) as f64 / 1000.0;
    let empty = BTreeMap::new();
    let no_topics = BTreeSet::new();
    let mut out = Vec::new();
    for bp in now.brokers.iter().filter(|b| b.answered) {
        if before
            .brokers
            .iter()
            .any(|b| b.broker == bp.broker && !b.answered)
        {
            continue;
        }
        let was = before.held.get(&bp.broker).unwrap_or(&empty);
        let is = now.held.get(&bp.broker).unwrap_or(&empty);
        let u1 = before.unanswered.get(&bp.broker).unwrap_or(&no_topics);
        let u2 = now.unanswered.get(&bp.broker).unwrap_or(&no_topics);
        let topics: BTreeSet<&String> = was.keys().chain(is.keys()).collect();
        for t in topics {
            if u1.contains(t) || u2.contains(t) {
                continue;
            }
            let a = was.get(t).map_or(&[][..], Vec::as_slice);
            let b = is.get(t).map_or(&[][..], Vec::as_slice);
            let new = count_missing(b, a);
            let gone = count_missing(a, b);
            out.push(Churn {
                broker: bp.broker,
                topic: t.clone(),
                new,
                gone,
                new_per_second: (secs > 0.0).then(|| new as f64 / secs),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
