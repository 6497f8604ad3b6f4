//! When a partition's count needs no read: a proof, from the broker's
//! producer state and the log's timestamps, that no transaction marker and
//! no transactional record lies in [start, high watermark), so that every
//! offset there is a record both isolations deliver (docs/LAG.md section
//! 11 has the argument and its Kafka sources).
//!
//! In short: DescribeProducers forgets a producer `producer.id.expiration.ms`
//! after its entry's last timestamp, and a marker sets that timestamp to
//! the broker's time. On a `LogAppendTime` topic every later batch of the
//! producer carries a later broker time too, so an entry that received a
//! marker stays listed, with a coordinator epoch, for the expiration after
//! it. The log's offsets follow append order, so if ListOffsets finds a
//! record appended at or after `now − expiration + margin` at or below the
//! range's start, every marker the range could hold would still be listed;
//! a leader listing no producer with a coordinator epoch or an open
//! transaction then proves the range holds none. On a `CreateTime` topic a
//! producer can lower its entry's timestamp after its marker (a later
//! non-transactional batch with an old timestamp, or none: the broker
//! checks no bound on timestamp -1), so there is no proof.

use crate::lag::position::Bounds;
use crate::lag::tally::Tally;
use crate::severity::Severity;

/// What the proof allows for clocks: kdp's and every broker's clock within
/// a quarter of it of true time (a marker's time is its leader's clock, its
/// expiry the current leader's, the window kdp's; docs/LAG.md section 11).
pub const CLOCK_MARGIN_MS: i64 = 5 * 60 * 1000;

/// A topic's `message.timestamp.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampType {
    /// The producer's timestamps, within the topic's bounds.
    CreateTime,
    /// The leader's clock when it appended the batch.
    LogAppendTime,
}

impl TimestampType {
    /// The config value as Kafka spells it; `None` for anything else.
    pub fn parse(value: &str) -> Option<TimestampType> {
        match value.trim() {
            "CreateTime" => Some(TimestampType::CreateTime),
            "LogAppendTime" => Some(TimestampType::LogAppendTime),
            _ => None,
        }
    }
}

/// Whether a topic's `cleanup.policy` (a comma-separated list) includes
/// `compact`: compaction leaves offsets without records.
pub fn compacted(cleanup_policy: &str) -> bool {
    cleanup_policy.split(',').any(|v| v.trim() == "compact")
}

/// What the leader's DescribeProducers listed, after the bounds were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProducersSeen {
    /// Producers with a coordinator epoch (0 or more): each wrote or
    /// received a transaction marker.
    pub with_markers: usize,
    /// Producers with an open transaction (`CurrentTxnStartOffset` ≥ 0).
    pub open: usize,
}

impl ProducersSeen {
    /// Counts `(coordinator_epoch, current_txn_start_offset)` of each
    /// listed producer.
    pub fn of(producers: impl IntoIterator<Item = (i32, i64)>) -> ProducersSeen {
        let mut seen = ProducersSeen::default();
        for (coordinator_epoch, txn_start) in producers {
            if coordinator_epoch >= 0 {
                seen.with_markers += 1;
            }
            if txn_start >= 0 {
                seen.open += 1;
            }
        }
        seen
    }
}

/// Everything the proof of one partition rests on; `None`: not read (a
/// request failed, or an earlier fact already ruled the proof out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProofFacts {
    /// Whether `cleanup.policy` includes `compact`.
    pub compacted: Option<bool>,
    /// The topic's `message.timestamp.type`.
    pub timestamp_type: Option<TimestampType>,
    /// The smallest `producer.id.expiration.ms` among the brokers.
    pub expiration_ms: Option<i64>,
    /// The leader's producers, described after the bounds were read.
    pub producers: Option<ProducersSeen>,
    /// The window's first offset: ListOffsets' answer (read_uncommitted)
    /// for [`window_since`], asked after the producers were described
    /// (-1: no record at or after it below the high watermark).
    pub window_offset: Option<i64>,
}

/// Why a partition's count was not proven (it is read instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unproven {
    /// An open transaction holds the LSO below the high watermark.
    Unstable,
    /// The topic is compacted: compaction leaves offsets without records.
    Compacted,
    /// The topic uses producers' timestamps, which can hide a marker.
    CreateTime,
    /// A topic or broker setting could not be read.
    ConfigUnknown,
    /// `producer.id.expiration.ms` is not longer than [`CLOCK_MARGIN_MS`].
    WindowTooShort,
    /// DescribeProducers failed.
    ProducersUnknown,
    /// A producer with a coordinator epoch is listed: it wrote a marker.
    Transactional,
    /// A producer has an open transaction.
    OpenTransaction,
    /// ListOffsets by timestamp failed.
    WindowUnknown,
    /// The range starts before the last expiration's worth of appends: a
    /// producer forgotten since could have written a marker there.
    BeforeWindow,
}

impl Unproven {
    /// A short name for the reason.
    pub fn label(self) -> &'static str {
        match self {
            Unproven::Unstable => "open transaction below the high watermark",
            Unproven::Compacted => "compacted topic",
            Unproven::CreateTime => "CreateTime topic",
            Unproven::ConfigUnknown => "configs unknown",
            Unproven::WindowTooShort => "producer.id.expiration.ms too short",
            Unproven::ProducersUnknown => "producers unknown",
            Unproven::Transactional => "transactional producer listed",
            Unproven::OpenTransaction => "open transaction listed",
            Unproven::WindowUnknown => "window unknown",
            Unproven::BeforeWindow => "range older than the expiration window",
        }
    }

    /// Not a problem: the partition is read, as without the proof.
    pub fn severity(self) -> Severity {
        Severity::Ok
    }
}

/// The proof's verdict for one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// Every offset of [start, high watermark) is a record: the count is
    /// exact without a read.
    Proven,
    /// Read it.
    Unproven(Unproven),
}

impl Proof {
    /// A short name.
    pub fn label(self) -> &'static str {
        match self {
            Proof::Proven => "proven without a read",
            Proof::Unproven(u) => u.label(),
        }
    }

    /// Either way fine.
    pub fn severity(self) -> Severity {
        Severity::Ok
    }
}

/// The timestamp ListOffsets is asked for, read on kdp's clock once the
/// producers are described: `now − expiration + margin`; `None` when the
/// expiration leaves no window.
pub fn window_since(now_ms: i64, expiration_ms: i64) -> Option<i64> {
    if expiration_ms <= CLOCK_MARGIN_MS {
        return None;
    }
    now_ms
        .checked_sub(expiration_ms)?
        .checked_add(CLOCK_MARGIN_MS)
        .filter(|&t| t >= 0)
}

/// Whether what `facts` say proves [`start`, high watermark) of a
/// partition with `bounds` free of markers and transactional records.
/// Facts are checked in the order they are gathered, so that the first
/// missing one names why.
pub fn prove(start: i64, bounds: &Bounds, facts: &ProofFacts) -> Proof {
    use Unproven::*;
    let no = Proof::Unproven;
    if bounds.last_stable_offset != bounds.high_watermark {
        return no(Unstable);
    }
    match facts.compacted {
        Some(true) => return no(Compacted),
        None => return no(ConfigUnknown),
        Some(false) => {}
    }
    match facts.timestamp_type {
        Some(TimestampType::CreateTime) => return no(CreateTime),
        None => return no(ConfigUnknown),
        Some(TimestampType::LogAppendTime) => {}
    }
    match facts.expiration_ms {
        None => return no(ConfigUnknown),
        Some(ms) if ms <= CLOCK_MARGIN_MS => return no(WindowTooShort),
        Some(_) => {}
    }
    match facts.producers {
        None => return no(ProducersUnknown),
        Some(p) if p.open > 0 => return no(OpenTransaction),
        Some(p) if p.with_markers > 0 => return no(Transactional),
        Some(_) => {}
    }
    match facts.window_offset {
        None => no(WindowUnknown),
        // no record appended in the window below the high watermark
        Some(o) if o < 0 => no(BeforeWindow),
        // below the log start the range starts at the log start anyway
        Some(o) if o > start.max(bounds.log_start.unwrap_or(start)) => no(BeforeWindow),
        Some(_) => Proof::Proven,
    }
}

/// The count a proof gives: every offset of [`start`, `end`) a record.
pub fn proven_tally(start: i64, end: i64) -> Tally {
    Tally::proven(start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;
    const DAY: i64 = 86_400_000;

    fn bounds() -> Bounds {
        Bounds {
            log_start: Some(0),
            high_watermark: 100,
            last_stable_offset: 100,
        }
    }

    fn facts() -> ProofFacts {
        ProofFacts {
            compacted: Some(false),
            timestamp_type: Some(TimestampType::LogAppendTime),
            expiration_ms: Some(DAY),
            producers: Some(ProducersSeen::of([(-1, -1), (-1, -1)])),
            window_offset: Some(40),
        }
    }

    #[test]
    fn all_facts_together_prove_it() {
        assert_eq!(prove(40, &bounds(), &facts()), Proof::Proven);
        assert_eq!(prove(70, &bounds(), &facts()), Proof::Proven);
    }

    #[test]
    fn each_fact_failing_alone_leaves_it_unproven() {
        let b = bounds();
        let cases: Vec<(ProofFacts, Unproven)> = vec![
            (
                ProofFacts {
                    compacted: Some(true),
                    ..facts()
                },
                Unproven::Compacted,
            ),
            (
                ProofFacts {
                    compacted: None,
                    ..facts()
                },
                Unproven::ConfigUnknown,
            ),
            (
                ProofFacts {
                    timestamp_type: Some(TimestampType::CreateTime),
                    ..facts()
                },
                Unproven::CreateTime,
            ),
            (
                ProofFacts {
                    timestamp_type: None,
                    ..facts()
                },
                Unproven::ConfigUnknown,
            ),
            (
                ProofFacts {
                    expiration_ms: None,
                    ..facts()
                },
                Unproven::ConfigUnknown,
            ),
            (
                ProofFacts {
                    expiration_ms: Some(CLOCK_MARGIN_MS),
                    ..facts()
                },
                Unproven::WindowTooShort,
            ),
            (
                ProofFacts {
                    producers: None,
                    ..facts()
                },
                Unproven::ProducersUnknown,
            ),
            (
                ProofFacts {
                    producers: Some(ProducersSeen::of([(-1, -1), (0, -1)])),
                    ..facts()
                },
                Unproven::Transactional,
            ),
            (
                ProofFacts {
                    producers: Some(ProducersSeen::of([(-1, 12)])),
                    ..facts()
                },
                Unproven::OpenTransaction,
            ),
            (
                ProofFacts {
                    window_offset: None,
                    ..facts()
                },
                Unproven::WindowUnknown,
            ),
            (
                ProofFacts {
                    window_offset: Some(-1),
                    ..facts()
                },
                Unproven::BeforeWindow,
            ),
            (
                ProofFacts {
                    window_offset: Some(41),
                    ..facts()
                },
                Unproven::BeforeWindow,
            ),
        ];
        for (f, why) in cases {
            assert_eq!(prove(40, &b, &f), Proof::Unproven(why), "{f:?}");
        }
        let unstable = Bounds {
            last_stable_offset: 90,
            ..b
        };
        assert_eq!(
            prove(40, &unstable, &facts()),
            Proof::Unproven(Unproven::Unstable)
        );
    }

    #[test]
    fn a_start_below_the_log_start_counts_from_the_log_start() {
        let b = Bounds {
            log_start: Some(40),
            ..bounds()
        };
        assert_eq!(prove(10, &b, &facts()), Proof::Proven);
        let moved = Bounds {
            log_start: Some(39),
            ..bounds()
        };
        assert_eq!(
            prove(10, &moved, &facts()),
            Proof::Unproven(Unproven::BeforeWindow)
        );
    }

    #[test]
    fn the_window_starts_an_expiration_less_the_margin_ago() {
        assert_eq!(window_since(NOW, DAY), Some(NOW - DAY + CLOCK_MARGIN_MS));
        assert_eq!(window_since(NOW, CLOCK_MARGIN_MS), None);
        assert_eq!(window_since(NOW, i64::MAX), None);
        assert_eq!(window_since(i64::MIN, DAY), None);
    }

    #[test]
    fn timestamp_types_parse_as_kafka_spells_them() {
        assert_eq!(
            TimestampType::parse("LogAppendTime"),
            Some(TimestampType::LogAppendTime)
        );
        assert_eq!(
            TimestampType::parse("CreateTime"),
            Some(TimestampType::CreateTime)
        );
        assert_eq!(TimestampType::parse("logappendtime"), None);
        assert_eq!(TimestampType::parse(""), None);
    }

    #[test]
    fn a_proven_count_is_exact_and_done_without_a_read() {
        let t = proven_tally(40, 100);
        assert!(t.is_done() && t.is_proven());
        assert_eq!(t.records_from(40), crate::lag::Records::Exact(60));
        assert_eq!(t.records_from(90), crate::lag::Records::Exact(10));
        assert_eq!(t.dense_to(), Some(100));
    }
}
