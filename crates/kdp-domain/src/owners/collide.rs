//! Two Flink jobs on one transactional-id prefix (docs/OWNERS.md, "Two
//! jobs on one prefix").
//!
//! KafkaSink's default naming gives each transaction of a subtask the id
//! `<prefix>-<subtask>-<checkpoint>`, one per checkpoint, so one job's ids
//! of a subtask start in counter order. A job restarted without state
//! starts that order again from 1, once. Two jobs writing one prefix at
//! the same time each keep their own order: in start order their counters
//! alternate between two increasing sequences, again and again. That
//! alternation is the evidence; a single drop (a restart) never is.
//!
//! Only ids whose transaction start time is known count. The ids are cut
//! into the fewest increasing sequences in start order (each id extends
//! the sequence whose last counter is the largest below its own); two
//! sequences whose ids, in start order, switch from one to the other at
//! least [`MIN_SWITCHES`] times are two jobs.

use std::collections::{BTreeMap, BTreeSet};

/// Switches between two sequences that make them two jobs: `A B A B`.
/// One job restored from an older checkpoint after a fresh start gives
/// `A B A`, a restart gives `A B`.
pub const MIN_SWITCHES: usize = 3;

/// The sequences compared, the longest first: two jobs are the two that
/// keep writing, and comparing every pair of many restarts is quadratic.
const MAX_SEQUENCES: usize = 8;

/// One id of a Flink (prefix, subtask) with its transaction's start time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started<'a> {
    /// The transactional id.
    pub transactional_id: &'a str,
    /// Its counter (the checkpoint id).
    pub counter: u64,
    /// When its transaction started (ms since the epoch).
    pub start_ms: i64,
    /// The topics its open transaction writes (empty when closed).
    pub topics: BTreeSet<String>,
}

/// One job's increasing run of ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    /// Its first id (lowest counter).
    pub first: String,
    /// Its last id (highest counter).
    pub last: String,
    /// How many ids.
    pub ids: usize,
    /// The topics its open transactions write.
    pub topics: BTreeSet<String>,
}

/// Two jobs writing one Flink prefix and subtask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// The two sequences, the one with the higher counters first.
    pub sequences: [Sequence; 2],
    /// How often, in start order, the ids switch from one to the other.
    pub switches: usize,
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b] = &self.sequences;
        write!(
            f,
            "two jobs write it: ids {}…{} ({}) and {}…{} ({}) started interleaved, {} switches",
            a.first, a.last, a.ids, b.first, b.last, b.ids, self.switches
        )?;
        if !a.topics.is_empty() && !b.topics.is_empty() && a.topics != b.topics {
            let list = |t: &BTreeSet<String>| t.iter().cloned().collect::<Vec<_>>().join(",");
            write!(
                f,
                "; open ones write {} and {}",
                list(&a.topics),
                list(&b.topics)
            )?;
        }
        Ok(())
    }
}

/// The two jobs writing the ids of one Flink (prefix, subtask), if its
/// ids show two (see the module's documentation); `None` otherwise.
pub fn collision(ids: &[Started<'_>]) -> Option<Collision> {
    let mut order: Vec<&Started<'_>> = ids.iter().collect();
    order.sort_by_key(|s| (s.start_ms, s.counter));
    // the fewest increasing sequences: each id extends the sequence whose
    // last counter is the largest below its own
    let mut tails: BTreeMap<u64, usize> = BTreeMap::new();
    let mut sequences: Vec<Vec<usize>> = Vec::new();
    let mut label = Vec::with_capacity(order.len());
    for (i, s) in order.iter().enumerate() {
        let seq = match tails.range(..s.counter).next_back().map(|(k, v)| (*k, *v)) {
            Some((tail, seq)) => {
                tails.remove(&tail);
                seq
            }
            None => {
                sequences.push(Vec::new());
                sequences.len() - 1
            }
        };
        tails.insert(s.counter, seq);
        if let Some(members) = sequences.get_mut(seq) {
            members.push(i);
        }
        label.push(seq);
    }
    let mut longest: Vec<usize> = (0..sequences.len())
        .filter(|&q| sequences.get(q).is_some_and(|m| m.len() >= 2))
        .collect();
    longest.sort_by_key(|&q| std::cmp::Reverse(sequences.get(q).map_or(0, Vec::len)));
    longest.truncate(MAX_SEQUENCES);
    let mut best: Option<(usize, usize, usize)> = None;
    for (n, &a) in longest.iter().enumerate() {
        for &b in longest.iter().skip(n + 1) {
            let mut switches = 0;
            let mut last = None;
            for &l in label.iter().filter(|&&l| l == a || l == b) {
                if last.is_some_and(|p| p != l) {
                    switches += 1;
                }
                last = Some(l);
            }
            if switches >= MIN_SWITCHES && best.is_none_or(|(_, _, s)| switches > s) {
                best = Some((a, b, switches));
            }
        }
    }
    let (a, b, switches) = best?;
    let describe = |q: usize| -> Option<Sequence> {
        let members = sequences.get(q)?;
        let first = order.get(*members.first()?)?;
        let last = order.get(*members.last()?)?;
        Some(Sequence {
            first: first.transactional_id.to_string(),
            last: last.transactional_id.to_string(),
            ids: members.len(),
            topics: members
                .iter()
                .filter_map(|&i| order.get(i))
                .flat_map(|s| s.topics.iter().cloned())
                .collect(),
        })
    };
    let (high, low) = {
        let top = |q: usize| {
            sequences
                .get(q)
                .and_then(|m| m.last())
                .and_then(|&i| order.get(i))
                .map_or(0, |s| s.counter)
        };
        if top(a) >= top(b) {
            (a, b)
        } else {
            (b, a)
        }
    };
    Some(Collision {
        sequences: [describe(high)?, describe(low)?],
        switches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TransactionalIdFactory.buildTransactionalId`: prefix, subtask and
    /// checkpoint joined by `-`.
    fn id(prefix: &str, subtask: u32, checkpoint: u64) -> String {
        format!("{prefix}-{subtask}-{checkpoint}")
    }

    fn started<'a>(ids: &'a [(String, u64, i64)]) -> Vec<Started<'a>> {
        ids.iter()
            .map(|(id, counter, start_ms)| Started {
                transactional_id: id,
                counter: *counter,
                start_ms: *start_ms,
                topics: BTreeSet::new(),
            })
            .collect()
    }

    /// A job writing checkpoints `from..to`, one a second from `at`.
    fn job(prefix: &str, from: u64, to: u64, at: i64, every: i64) -> Vec<(String, u64, i64)> {
        (from..to)
            .enumerate()
            .map(|(i, c)| (id(prefix, 0, c), c, at + every * i as i64))
            .collect()
    }

    #[test]
    fn two_jobs_writing_at_once_collide() {
        // job A at checkpoints 21.., job B started fresh at 1.., both a
        // checkpoint a second, half a second apart
        let mut ids = job("sink", 21, 31, 1_000, 1_000);
        ids.extend(job("sink", 1, 11, 1_500, 1_000));
        let c = collision(&started(&ids)).expect("two jobs");
        assert_eq!(c.sequences[0].first, "sink-0-21");
        assert_eq!(c.sequences[0].last, "sink-0-30");
        assert_eq!(c.sequences[1].first, "sink-0-1");
        assert_eq!(c.sequences[1].ids, 10);
        assert_eq!(c.switches, 19);
        assert!(c.to_string().contains("sink-0-21…sink-0-30"), "{c}");
    }

    #[test]
    fn a_restart_or_one_restore_is_no_collision() {
        // a job at 98..=100, then restarted without state: 1, 2, 3
        let mut ids = job("sink", 98, 101, 0, 1_000);
        ids.extend(job("sink", 1, 4, 10_000, 1_000));
        assert_eq!(collision(&started(&ids)), None);
        // and then restored from its checkpoint 100: 101, 102 (A B A)
        ids.extend(job("sink", 101, 103, 20_000, 1_000));
        assert_eq!(collision(&started(&ids)), None);
        // restarted without state twice: each time from 1 again (each id
        // listed once, with its latest start)
        let mut ids = job("sink", 98, 101, 0, 1_000);
        ids.extend(job("sink", 3, 4, 10_000, 1_000));
        ids.extend(job("sink", 1, 3, 20_000, 1_000));
        assert_eq!(collision(&started(&ids)), None);
        // one job alone, in order
        assert_eq!(collision(&started(&job("sink", 1, 50, 0, 1_000))), None);
        assert_eq!(collision(&[]), None);
    }

    #[test]
    fn a_third_sequence_between_them_does_not_hide_two_jobs() {
        let mut ids = job("sink", 21, 25, 1_000, 1_000);
        ids.extend(job("sink", 1, 5, 1_500, 1_000));
        // a lone id of a third counter range in the middle
        ids.push((id("sink", 0, 11), 11, 2_200));
        let c = collision(&started(&ids)).expect("two jobs");
        // the stray id takes B's first place in the cover: B's 2..=4 remain
        assert_eq!(c.sequences[0].first, "sink-0-21");
        assert_eq!((c.sequences[0].ids, c.sequences[1].ids), (4, 3));
        assert_eq!(c.sequences[1].first, "sink-0-2");
    }

    #[test]
    fn the_topics_of_their_open_transactions_are_named() {
        let ids = [
            (id("p", 0, 7), 7, 0, "a"),
            (id("p", 0, 1), 1, 1, "b"),
            (id("p", 0, 8), 8, 2, "a"),
            (id("p", 0, 2), 2, 3, "b"),
        ];
        let s: Vec<Started<'_>> = ids
            .iter()
            .map(|(id, c, t, topic)| Started {
                transactional_id: id,
                counter: *c,
                start_ms: *t,
                topics: BTreeSet::from([topic.to_string()]),
            })
            .collect();
        let c = collision(&s).expect("two jobs");
        assert!(c.to_string().ends_with("open ones write a and b"), "{c}");
    }
}
