//! A whole-cluster lag read cut into waves of topics, so that what it holds
//! at once follows one wave, not the cluster (issue 30, "memory bounded by
//! what is in flight"; docs/LAG.md section 10).
//!
//! A first pass over the groups' committed offsets keeps only which topics
//! each group commits on and how many offsets each topic has
//! ([`TopicWaves`]); the topics are then cut, by name, into waves of about
//! a chosen number of committed offsets ([`WavePlan`]). Each wave asks its
//! groups' offsets again, kept for its topics only, and is read, counted
//! and judged before the next: a partition belongs to one wave, so it is
//! read once, and its groups' offsets are those its count was asked from
//! (a second pass never judges an offset the count did not see).
//! [`WaveGaps`] gathers what each wave could not check, once.

use std::collections::{BTreeMap, BTreeSet};

use crate::lag::model::LagGap;
use crate::partition::TopicPartition;

/// The topics a first pass found, each with an id (in the order first
/// seen) and its committed offsets so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicWaves {
    by_name: BTreeMap<String, (u32, usize)>,
}

impl TopicWaves {
    /// No topic yet.
    pub fn new() -> TopicWaves {
        TopicWaves::default()
    }

    /// Counts `offsets` more committed offsets on `topic`; its id.
    pub fn add(&mut self, topic: &str, offsets: usize) -> u32 {
        let next = u32::try_from(self.by_name.len()).unwrap_or(u32::MAX);
        let entry = match self.by_name.get_mut(topic) {
            Some(e) => e,
            None => self.by_name.entry(topic.to_string()).or_insert((next, 0)),
        };
        entry.1 = entry.1.saturating_add(offsets);
        entry.0
    }

    /// The topics by name, in waves of at most `per_wave` committed
    /// offsets each (a topic holding more is a wave of its own; 0 means
    /// one wave for everything). Always at least one wave, empty when no
    /// topic was seen.
    pub fn plan(self, per_wave: usize) -> WavePlan {
        let mut wave_by_id = vec![0u32; self.by_name.len()];
        let mut topics: Vec<BTreeSet<String>> = vec![BTreeSet::new()];
        let mut in_wave = 0usize;
        for (name, (id, offsets)) in self.by_name {
            let full = in_wave > 0 && in_wave.saturating_add(offsets) > per_wave;
            if per_wave > 0 && full {
                topics.push(BTreeSet::new());
                in_wave = 0;
            }
            in_wave = in_wave.saturating_add(offsets);
            let wave = topics.len() - 1;
            if let Some(slot) = wave_by_id.get_mut(id as usize) {
                *slot = u32::try_from(wave).unwrap_or(u32::MAX);
            }
            if let Some(set) = topics.last_mut() {
                set.insert(name);
            }
        }
        WavePlan { wave_by_id, topics }
    }
}

/// Which wave reads each topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WavePlan {
    /// By topic id ([`TopicWaves::add`]).
    wave_by_id: Vec<u32>,
    /// Each wave's topics.
    topics: Vec<BTreeSet<String>>,
}

impl WavePlan {
    /// How many waves (at least one).
    pub fn len(&self) -> usize {
        self.topics.len()
    }

    /// Never: a plan has a first wave even without topics (the groups
    /// with nothing to read are judged there).
    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// The topics wave `wave` reads.
    pub fn topics(&self, wave: usize) -> Option<&BTreeSet<String>> {
        self.topics.get(wave)
    }

    /// The waves that read the topics `ids`, each once, in order.
    pub fn waves_of(&self, ids: &[u32]) -> Vec<u32> {
        let mut waves: Vec<u32> = ids
            .iter()
            .filter_map(|&id| self.wave_by_id.get(id as usize).copied())
            .collect();
        waves.sort_unstable();
        waves.dedup();
        waves
    }
}

/// What the waves could not check, each gap once: a group whose offsets
/// failed in two waves, or a partition a share group's wave reads again,
/// is one gap.
#[derive(Debug, Clone, Default)]
pub struct WaveGaps {
    gaps: Vec<LagGap>,
    groups: BTreeSet<String>,
    partitions: BTreeSet<(bool, TopicPartition)>,
}

impl WaveGaps {
    /// None yet.
    pub fn new() -> WaveGaps {
        WaveGaps::default()
    }

    /// A wave's gaps, less those an earlier wave gave.
    pub fn add(&mut self, gaps: Vec<LagGap>) {
        for g in gaps {
            let new = match &g {
                LagGap::GroupOffsets(id, _) => self.groups.insert(id.clone()),
                LagGap::Bounds(tp, _) => self.partitions.insert((false, tp.clone())),
                LagGap::Read(tp, _) => self.partitions.insert((true, tp.clone())),
                _ => !self.gaps.contains(&g),
            };
            if new {
                self.gaps.push(g);
            }
        }
    }

    /// Every gap, in the order first given.
    pub fn finish(self) -> Vec<LagGap> {
        self.gaps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_error::KeyError;
    use kdp_wire::ErrorCode;

    fn seen(topics: &[(&str, usize)]) -> (TopicWaves, Vec<u32>) {
        let mut t = TopicWaves::new();
        let ids = topics.iter().map(|(n, o)| t.add(n, *o)).collect();
        (t, ids)
    }

    #[test]
    fn topics_go_by_name_into_waves_of_at_most_the_offsets_chosen() {
        let (t, ids) = seen(&[("c", 40), ("a", 30), ("b", 50), ("a", 10), ("d", 500)]);
        // "a" again keeps its id and adds its offsets: a 40, b 50, c 40, d 500
        assert_eq!(ids, vec![0, 1, 2, 1, 3]);
        let plan = t.clone().plan(100);
        let names = |w: usize| -> Vec<&str> {
            plan.topics(w)
                .map(|s| s.iter().map(String::as_str).collect())
                .unwrap_or_default()
        };
        assert_eq!(plan.len(), 3);
        assert_eq!(names(0), vec!["a", "b"]); // 90
        assert_eq!(names(1), vec!["c"]); // 40 + 500 > 100
        assert_eq!(names(2), vec!["d"]); // alone, larger than a wave
        assert_eq!(plan.waves_of(&[2, 0, 1, 3, 2]), vec![0, 1, 2]);
        assert_eq!(plan.waves_of(&[1, 2]), vec![0]);
        assert_eq!(plan.waves_of(&[0, 2]), vec![0, 1]);
        assert_eq!(plan.waves_of(&[]), Vec::<u32>::new());
        // 0: one wave for everything
        let one = t.plan(0);
        assert_eq!(one.len(), 1);
        assert_eq!(one.waves_of(&[0, 1, 2, 3]), vec![0]);
    }

    #[test]
    fn a_plan_without_topics_still_has_its_first_wave() {
        let plan = TopicWaves::new().plan(10);
        assert_eq!((plan.len(), plan.is_empty()), (1, false));
        assert_eq!(plan.topics(0).map(BTreeSet::len), Some(0));
        assert_eq!(plan.topics(1), None);
    }

    #[test]
    fn every_topic_is_in_exactly_one_wave_and_waves_stay_under_the_size() {
        let mut g = kdp_wire::testgen::Gen::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: u64| g.below(n);
        for _ in 0..200 {
            let per_wave = next(300) as usize;
            let mut t = TopicWaves::new();
            let mut sizes: BTreeMap<String, usize> = BTreeMap::new();
            for _ in 0..next(60) {
                let name = format!("t{}", next(25));
                // a topic is seen with at least one offset
                let n = 1 + next(120) as usize;
                t.add(&name, n);
                *sizes.entry(name).or_default() += n;
            }
            let plan = t.plan(per_wave);
            let mut all: Vec<&String> = Vec::new();
            for w in 0..plan.len() {
                let topics = plan.topics(w).expect("a wave");
                let total: usize = topics.iter().map(|n| sizes[n]).sum();
                if per_wave > 0 && topics.len() > 1 {
                    assert!(total <= per_wave, "{total} > {per_wave}");
                }
                all.extend(topics.iter());
            }
            // each once, by name across the waves
            assert_eq!(all, sizes.keys().collect::<Vec<_>>());
            if per_wave == 0 {
                assert_eq!(plan.len(), 1);
            }
        }
    }

    #[test]
    fn a_gap_two_waves_give_is_kept_once() {
        let e = || KeyError::client(ErrorCode::REQUEST_TIMED_OUT, "timed out");
        let tp = || ("t".to_string(), 0);
        let mut gaps = WaveGaps::new();
        gaps.add(vec![
            LagGap::MayHideGroups,
            LagGap::GroupOffsets("g".into(), e()),
            LagGap::Bounds(tp(), e()),
        ]);
        gaps.add(vec![
            LagGap::GroupOffsets("g".into(), e()),
            LagGap::GroupOffsets("h".into(), e()),
            LagGap::Bounds(tp(), e()),
            LagGap::Read(tp(), e()),
            LagGap::MayHideGroups,
        ]);
        assert_eq!(
            gaps.finish(),
            vec![
                LagGap::MayHideGroups,
                LagGap::GroupOffsets("g".into(), e()),
                LagGap::Bounds(tp(), e()),
                LagGap::GroupOffsets("h".into(), e()),
                LagGap::Read(tp(), e()),
            ]
        );
    }
}
