//! A sorted set of producer ids kept between scans in a few bytes per id
//! (the exporter's churn counters compare each broker's ids with its last
//! answer, a million ids and more on a large cluster).
//!
//! Each id is stored as the LEB128 varint of its distance from the one
//! before (the first from 0): the ids a broker holds for a topic are
//! allocated in blocks and sorted, so the distances are small and most ids
//! take one or two bytes instead of eight. Wrapping arithmetic keeps any
//! sorted `i64` sequence exact, negative ids included (a hostile broker's
//! are no worse than ten bytes each).

/// Sorted, repeat-free producer ids, delta-encoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdSet {
    bytes: Box<[u8]>,
    len: usize,
}

impl IdSet {
    /// The set of `ids`, which must be sorted without repeats (as
    /// [`Pressure::held`](super::pressure::Pressure::held)'s lists are).
    pub fn from_sorted(ids: &[i64]) -> IdSet {
        Self::encode(ids.iter().copied(), ids.len() + 8)
    }

    /// The union of `sets`, each id once: a merge of their ids in order,
    /// never decoded into a list (how a scan joins the sets of a topic's
    /// partitions into the one a broker holds for the topic).
    pub fn union(sets: &[IdSet]) -> IdSet {
        if let [one] = sets {
            return one.clone();
        }
        let capacity = sets.iter().map(IdSet::heap_bytes).sum::<usize>() + 8;
        Self::encode(Union::of(sets.iter().map(IdSet::iter)), capacity)
    }

    /// Encodes ascending, repeat-free `ids`.
    fn encode(ids: impl Iterator<Item = i64>, capacity: usize) -> IdSet {
        let mut bytes = Vec::with_capacity(capacity);
        let mut prev = 0i64;
        let mut len = 0;
        for id in ids {
            let mut gap = id.wrapping_sub(prev) as u64;
            prev = id;
            len += 1;
            while gap >= 0x80 {
                bytes.push((gap as u8) | 0x80);
                gap >>= 7;
            }
            bytes.push(gap as u8);
        }
        IdSet {
            bytes: bytes.into_boxed_slice(),
            len,
        }
    }

    /// How many ids it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes it takes beside the struct itself.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The ids, ascending.
    pub fn iter(&self) -> Ids<'_> {
        Ids {
            bytes: &self.bytes,
            prev: 0,
        }
    }

    /// How many of the sorted, repeat-free `now` it does not hold: the new
    /// ids of a scan against the last one ([`super::pressure::count_missing`]
    /// with this set as the earlier list).
    pub fn count_missing_from(&self, now: &[i64]) -> u64 {
        self.count_missing(now.iter().copied())
    }

    /// [`IdSet::count_missing_from`] for a scan's ids kept as a set too.
    pub fn count_missing_from_set(&self, now: &IdSet) -> u64 {
        self.count_missing(now.iter())
    }

    fn count_missing(&self, now: impl Iterator<Item = i64>) -> u64 {
        let mut before = self.iter().peekable();
        let mut n = 0u64;
        for id in now {
            while before.next_if(|&b| b < id).is_some() {}
            if before.next_if_eq(&id).is_none() {
                n += 1;
            }
        }
        n
    }
}

/// Distinct ids over several ascending, repeat-free sets (a merge: nothing
/// is allocated per id).
pub fn count_distinct<'a>(sets: impl IntoIterator<Item = &'a IdSet>) -> u64 {
    Union::of(sets.into_iter().map(IdSet::iter)).count() as u64
}

/// The ids of several ascending, repeat-free iterators, ascending, each once.
struct Union<I: Iterator<Item = i64>> {
    heads: Vec<(i64, I)>,
}

impl<I: Iterator<Item = i64>> Union<I> {
    fn of(iters: impl IntoIterator<Item = I>) -> Self {
        let heads = iters
            .into_iter()
            .filter_map(|mut it| it.next().map(|first| (first, it)))
            .collect();
        Union { heads }
    }
}

impl<I: Iterator<Item = i64>> Iterator for Union<I> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        let min = self.heads.iter().map(|h| h.0).min()?;
        // every list at the smallest id steps past it; the emptied leave
        self.heads.retain_mut(|(head, rest)| {
            if *head != min {
                return true;
            }
            match rest.next() {
                Some(next) => {
                    *head = next;
                    true
                }
                None => false,
            }
        });
        Some(min)
    }
}

/// The ids of an [`IdSet`], ascending.
#[derive(Debug, Clone)]
pub struct Ids<'a> {
    bytes: &'a [u8],
    prev: i64,
}

impl Iterator for Ids<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        let mut gap = 0u64;
        let mut shift = 0u32;
        loop {
            let (&b, rest) = self.bytes.split_first()?;
            self.bytes = rest;
            // written by from_sorted: at most ten bytes, the last below 0x80
            gap |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        self.prev = self.prev.wrapping_add(gap as i64);
        Some(self.prev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::pressure::count_missing;

    #[test]
    fn round_trips_any_sorted_ids_and_is_small_for_close_ones() {
        let lists: [&[i64]; 6] = [
            &[],
            &[0],
            &[i64::MIN, -5, -1, 0, 1, 127, 128, 16_383, 16_384, i64::MAX],
            &[i64::MIN, i64::MAX],
            &[10_001, 10_002, 10_003, 10_050, 11_000],
            &[1 << 40, (1 << 40) + 1],
        ];
        for ids in lists {
            let s = IdSet::from_sorted(ids);
            assert_eq!(s.iter().collect::<Vec<_>>(), ids);
            assert_eq!(s.len(), ids.len());
        }
        // a block of consecutive ids: one byte each after the first
        let block: Vec<i64> = (1_000_000..1_001_000).collect();
        let s = IdSet::from_sorted(&block);
        assert_eq!(s.heap_bytes(), 3 + 999);
    }

    #[test]
    fn a_union_holds_every_id_of_its_sets_once() {
        let parts: [&[i64]; 4] = [&[5, 9, 12], &[1, 9, 40], &[], &[i64::MIN, 12, i64::MAX]];
        let sets: Vec<IdSet> = parts.iter().map(|p| IdSet::from_sorted(p)).collect();
        let mut all: Vec<i64> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        let u = IdSet::union(&sets);
        assert_eq!(u.iter().collect::<Vec<_>>(), all);
        assert_eq!(u.len(), all.len());
        assert_eq!(
            u,
            IdSet::from_sorted(&all),
            "the same bytes as encoded at once"
        );
        assert_eq!(count_distinct(&sets), all.len() as u64);
        assert_eq!(IdSet::union(&sets[..1]), sets[0]);
        assert!(IdSet::union(&[]).is_empty());
        assert_eq!(count_distinct(&[]), 0);
    }

    #[test]
    fn counts_what_count_missing_counts() {
        let cases: [(&[i64], &[i64]); 6] = [
            (&[1, 2, 5, 9], &[2, 3, 9]),
            (&[], &[1]),
            (&[4], &[]),
            (&[-3, 0, 7], &[-3, 7, 8]),
            (&[i64::MIN, i64::MAX], &[i64::MAX]),
            (&[1, 2, 3], &[1, 2, 3]),
        ];
        for (now, before) in cases {
            assert_eq!(
                IdSet::from_sorted(before).count_missing_from(now),
                count_missing(now, before),
                "{now:?} against {before:?}"
            );
            assert_eq!(
                IdSet::from_sorted(before).count_missing_from_set(&IdSet::from_sorted(now)),
                count_missing(now, before),
                "{now:?} against {before:?}, as sets"
            );
        }
    }
}
