//! A group's committed offsets as OffsetFetch gives them, typed: an offset,
//! none, or the partition's error; and what to grant when they are refused.

use kdp_wire::ErrorCode;

use crate::partition::TopicPartition;

/// One partition's committed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// The committed offset: the next record the group reads.
    At(i64),
    /// The coordinator holds none (-1).
    Nothing,
    /// The partition's error, e.g. TOPIC_AUTHORIZATION_FAILED or
    /// UNSTABLE_OFFSET_COMMIT.
    Failed(ErrorCode),
}

impl Committed {
    /// A partition of an OffsetFetch answer: its `CommittedOffset` and
    /// `ErrorCode`.
    pub fn of(offset: i64, code: ErrorCode) -> Committed {
        if code != ErrorCode::NONE {
            Committed::Failed(code)
        } else if offset < 0 {
            Committed::Nothing
        } else {
            Committed::At(offset)
        }
    }
}

/// One group's committed offsets, by topic, then partition.
///
/// Held compact: each topic's name once, its partitions in a sorted
/// vector. A whole-cluster read holds every group's offsets at once (a
/// million on a large cluster), and a map keyed by topic name and
/// partition costs a tree slot and a copy of the name per offset, about
/// four times the memory for the same facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupOffsets {
    /// By name, each with at least one partition.
    topics: Vec<TopicOffsets>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct TopicOffsets {
    name: String,
    /// By partition, each once.
    partitions: Vec<(i32, Committed)>,
}

impl GroupOffsets {
    /// No offset.
    pub fn new() -> GroupOffsets {
        GroupOffsets::default()
    }

    /// The offsets of each topic as an answer lists them, topic by topic
    /// (an OffsetFetch answer's own order, taken as it comes: a topic or
    /// partition named twice keeps its last offset, as a map would).
    pub fn of_topics<P>(topics: impl IntoIterator<Item = (String, P)>) -> GroupOffsets
    where
        P: IntoIterator<Item = (i32, Committed)>,
    {
        let mut topics: Vec<TopicOffsets> = exact(
            topics
                .into_iter()
                .map(|(name, partitions)| TopicOffsets {
                    name,
                    partitions: exact(partitions),
                })
                .filter(|t| !t.partitions.is_empty()),
        );
        // stable: of a name or partition given twice, the later comes last
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        topics.dedup_by(|later, kept| {
            let same = later.name == kept.name;
            if same {
                kept.partitions.append(&mut later.partitions);
            }
            same
        });
        for t in &mut topics {
            t.partitions.sort_by_key(|&(p, _)| p);
            t.partitions.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    *kept = *later;
                }
                same
            });
        }
        GroupOffsets { topics }
    }

    /// Whether it holds no offset.
    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// The partitions it holds an offset (or an error) for.
    pub fn len(&self) -> usize {
        self.topics.iter().map(|t| t.partitions.len()).sum()
    }

    /// The offset on `partition` of `topic`.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&Committed> {
        let t = self.topic(topic)?;
        let i = t
            .partitions
            .binary_search_by_key(&partition, |&(p, _)| p)
            .ok()?;
        t.partitions.get(i).map(|(_, c)| c)
    }

    /// Whether it holds an offset on some partition of `topic`.
    pub fn has_topic(&self, topic: &str) -> bool {
        self.topic(topic).is_some()
    }

    fn topic(&self, topic: &str) -> Option<&TopicOffsets> {
        let i = self
            .topics
            .binary_search_by(|t| t.name.as_str().cmp(topic))
            .ok()?;
        self.topics.get(i)
    }

    /// Each topic it holds offsets on, with how many partitions, by name.
    pub fn topics(&self) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.topics
            .iter()
            .map(|t| (t.name.as_str(), t.partitions.len()))
    }

    /// Keeps only the topics `keep` accepts (a read in waves of topics
    /// holds one wave's offsets of each group, not all of them).
    pub fn retain_topics(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.topics.retain(|t| keep(&t.name));
        self.topics.shrink_to_fit();
    }

    /// Keeps only its first offset (by topic, then partition): what still
    /// says the group committed, for a reader that needs no more of it.
    pub fn keep_first(&mut self) {
        self.topics.truncate(1);
        self.topics.shrink_to_fit();
        if let Some(t) = self.topics.first_mut() {
            t.partitions.truncate(1);
            t.partitions.shrink_to_fit();
        }
    }

    /// Sets the offset on `tp`, giving back the one it replaces.
    pub fn insert(&mut self, tp: TopicPartition, committed: Committed) -> Option<Committed> {
        let (name, partition) = tp;
        let t = match self.topics.binary_search_by(|t| t.name.as_str().cmp(&name)) {
            Ok(i) => &mut self.topics[i],
            Err(i) => {
                self.topics.insert(
                    i,
                    TopicOffsets {
                        name,
                        partitions: Vec::new(),
                    },
                );
                &mut self.topics[i]
            }
        };
        match t.partitions.binary_search_by_key(&partition, |&(p, _)| p) {
            Ok(i) => Some(std::mem::replace(&mut t.partitions[i].1, committed)),
            Err(i) => {
                t.partitions.insert(i, (partition, committed));
                None
            }
        }
    }

    /// Each offset with its topic and partition, by topic, then partition.
    pub fn iter(&self) -> impl Iterator<Item = ((&str, i32), &Committed)> + '_ {
        self.topics.iter().flat_map(|t| {
            t.partitions
                .iter()
                .map(move |(p, c)| ((t.name.as_str(), *p), c))
        })
    }

    /// [`iter`](Self::iter) for a caller keyed by [`TopicPartition`]: one
    /// key per topic, its partition set for each offset (no copy of the
    /// name per offset).
    pub fn each(&self, mut f: impl FnMut(&TopicPartition, &Committed)) {
        for t in &self.topics {
            let mut tp: TopicPartition = (t.name.clone(), 0);
            for &(p, ref c) in &t.partitions {
                tp.1 = p;
                f(&tp, c);
            }
        }
    }
}

/// The items of `items` in a vector of their own size: `collect` from a
/// vector's iterator may reuse the source's allocation (an answer's
/// partitions, three times larger each) and keep all of it.
fn exact<T>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let items = items.into_iter();
    let mut out = Vec::with_capacity(items.size_hint().0);
    out.extend(items);
    out.shrink_to_fit();
    out
}

impl FromIterator<(TopicPartition, Committed)> for GroupOffsets {
    fn from_iter<I: IntoIterator<Item = (TopicPartition, Committed)>>(iter: I) -> GroupOffsets {
        let mut topics: Vec<(String, Vec<(i32, Committed)>)> = Vec::new();
        for ((name, partition), c) in iter {
            match topics.last_mut() {
                Some((last, partitions)) if *last == name => partitions.push((partition, c)),
                _ => topics.push((name, vec![(partition, c)])),
            }
        }
        GroupOffsets::of_topics(topics)
    }
}

impl<const N: usize> From<[(TopicPartition, Committed); N]> for GroupOffsets {
    fn from(offsets: [(TopicPartition, Committed); N]) -> GroupOffsets {
        offsets.into_iter().collect()
    }
}

/// What to grant when a group's (or one partition's) committed offsets were
/// refused, when there is something to grant.
pub fn advice(code: ErrorCode) -> Option<&'static str> {
    Some(match code {
        ErrorCode::GROUP_AUTHORIZATION_FAILED => {
            "OffsetFetch needs DESCRIBE on the group: grant it to this principal (kafka-acls.sh \
             --add --allow-principal <principal> --operation Describe --group <group>); without \
             it ListGroups also leaves the group out of a whole-cluster scan"
        }
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
            "OffsetFetch needs DESCRIBE on the topic: grant it to this principal (kafka-acls.sh \
             --add --allow-principal <principal> --operation Describe --topic <topic>)"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_none_or_the_partitions_error() {
        assert_eq!(Committed::of(40, ErrorCode::NONE), Committed::At(40));
        assert_eq!(Committed::of(-1, ErrorCode::NONE), Committed::Nothing);
        assert_eq!(
            Committed::of(40, ErrorCode::UNSTABLE_OFFSET_COMMIT),
            Committed::Failed(ErrorCode::UNSTABLE_OFFSET_COMMIT)
        );
    }

    /// The compact form answers as the map keyed by topic and partition
    /// it replaces: the same order, lookups, length and "the last of a
    /// partition given twice", whatever order the answer lists them in.
    #[test]
    fn the_compact_offsets_answer_as_a_map_does() {
        use std::collections::BTreeMap;
        // a small deterministic generator: many shapes, no new dependency
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let mut given: Vec<(TopicPartition, Committed)> = Vec::new();
            for _ in 0..next(40) {
                let topic = ["b", "a", "ab", "c", "a-1"][next(5) as usize].to_string();
                let partition = next(6) as i32 - 1;
                let c = match next(3) {
                    0 => Committed::At(next(1_000) as i64),
                    1 => Committed::Nothing,
                    _ => Committed::Failed(ErrorCode::UNSTABLE_OFFSET_COMMIT),
                };
                given.push(((topic, partition), c));
            }
            let map: BTreeMap<TopicPartition, Committed> = given.iter().cloned().collect();
            let compact: GroupOffsets = given.iter().cloned().collect();
            let listed: Vec<((&str, i32), &Committed)> = map
                .iter()
                .map(|((t, p), c)| ((t.as_str(), *p), c))
                .collect();
            assert_eq!(compact.iter().collect::<Vec<_>>(), listed);
            let mut each = Vec::new();
            compact.each(|tp, c| each.push((tp.clone(), *c)));
            assert_eq!(each, map.clone().into_iter().collect::<Vec<_>>());
            assert_eq!(
                (compact.len(), compact.is_empty()),
                (map.len(), map.is_empty())
            );
            for t in ["a", "b", "ab", "c", "a-1", "d"] {
                assert_eq!(compact.has_topic(t), map.keys().any(|(k, _)| k == t));
                for p in -1..6 {
                    assert_eq!(compact.get(t, p), map.get(&(t.to_string(), p)));
                }
            }
            // each topic with its partitions' count; a wave keeps some topics
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for (t, _) in map.keys() {
                *counts.entry(t.as_str()).or_default() += 1;
            }
            assert_eq!(
                compact.topics().collect::<Vec<_>>(),
                counts.into_iter().collect::<Vec<_>>()
            );
            let mut first = compact.clone();
            first.keep_first();
            assert_eq!(
                first.iter().collect::<Vec<_>>(),
                listed.iter().take(1).cloned().collect::<Vec<_>>()
            );
            let mut kept = compact.clone();
            kept.retain_topics(|t| t.starts_with('a'));
            assert_eq!(
                kept.iter().collect::<Vec<_>>(),
                listed
                    .iter()
                    .filter(|((t, _), _)| t.starts_with('a'))
                    .cloned()
                    .collect::<Vec<_>>()
            );
            // inserted one by one, in the order given: the same again
            let mut inserted = GroupOffsets::new();
            let mut replaced = BTreeMap::new();
            for (tp, c) in given {
                assert_eq!(inserted.insert(tp.clone(), c), replaced.insert(tp, c));
            }
            assert_eq!(inserted, compact);
        }
    }

    #[test]
    fn an_answers_topics_are_taken_as_they_come() {
        let o = GroupOffsets::of_topics([
            (
                "t".to_string(),
                vec![(2, Committed::At(7)), (0, Committed::Nothing)],
            ),
            ("empty".to_string(), vec![]),
            ("s".to_string(), vec![(0, Committed::At(1))]),
            ("t".to_string(), vec![(2, Committed::At(9))]),
        ]);
        let listed: Vec<_> = o.iter().map(|((t, p), c)| (t.to_string(), p, *c)).collect();
        assert_eq!(
            listed,
            vec![
                ("s".to_string(), 0, Committed::At(1)),
                ("t".to_string(), 0, Committed::Nothing),
                ("t".to_string(), 2, Committed::At(9)),
            ]
        );
        assert!(!o.has_topic("empty"));
    }

    #[test]
    fn a_refused_group_names_the_acl_it_needs() {
        let hint = advice(ErrorCode::GROUP_AUTHORIZATION_FAILED).unwrap();
        assert!(hint.contains("--operation Describe --group"), "{hint}");
        let hint = advice(ErrorCode::TOPIC_AUTHORIZATION_FAILED).unwrap();
        assert!(hint.contains("--operation Describe --topic"), "{hint}");
        assert_eq!(advice(ErrorCode::NOT_COORDINATOR), None);
    }
}
