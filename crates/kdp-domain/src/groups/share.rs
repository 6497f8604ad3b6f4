//! A share group's progress on its partitions (KIP-932), as
//! DescribeShareGroupOffsets gives it: the share-partition start offset,
//! below which every record is acknowledged or archived, and (v1, KIP-1226)
//! the coordinator's own lag figure; and the group's `share.isolation.level`
//! (a group config, DescribeConfigs on resource type GROUP).

use std::collections::BTreeMap;

use kdp_wire::ErrorCode;

use crate::groups::offsets::Committed;
use crate::key_error::KeyError;
use crate::partition::TopicPartition;

/// One share-partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareStart {
    /// The start offset, as a committed offset is read: an offset, none
    /// (-1: the group has no state there), or the partition's error.
    pub start: Committed,
    /// Kafka's lag for the share-partition (v1+), `None` when the broker
    /// gave none (-1, or v0).
    pub kafka_lag: Option<i64>,
}

impl ShareStart {
    /// A partition of a DescribeShareGroupOffsets answer: its `StartOffset`,
    /// `Lag` and `ErrorCode`.
    pub fn of(start_offset: i64, lag: i64, code: ErrorCode) -> ShareStart {
        ShareStart {
            start: Committed::of(start_offset, code),
            kafka_lag: (code == ErrorCode::NONE && lag >= 0).then_some(lag),
        }
    }
}

/// One share group's start offsets, by partition.
pub type ShareOffsets = BTreeMap<TopicPartition, ShareStart>;

/// The group config `share.isolation.level`: which records a share group
/// delivers. Kafka's default (unset) is read_uncommitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Every record up to the high watermark, aborted ones included
    /// (markers are never delivered).
    #[default]
    ReadUncommitted,
    /// Only committed records, up to the last stable offset.
    ReadCommitted,
}

impl Isolation {
    /// The config's value as DescribeConfigs gives it (`None`: not set,
    /// Kafka's default); `None` for a value Kafka does not accept.
    pub fn of_config(value: Option<&str>) -> Option<Isolation> {
        match value {
            None => Some(Isolation::default()),
            Some("read_uncommitted") => Some(Isolation::ReadUncommitted),
            Some("read_committed") => Some(Isolation::ReadCommitted),
            Some(_) => None,
        }
    }

    /// Kafka's name of the level.
    pub fn name(&self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read_uncommitted",
            Isolation::ReadCommitted => "read_committed",
        }
    }
}

/// What one read of a share group found: its start offsets and its
/// isolation, each or why it is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRead {
    /// DescribeShareGroupOffsets' answer.
    pub offsets: Result<ShareOffsets, KeyError>,
    /// `share.isolation.level` (DescribeConfigs, resource type GROUP).
    pub isolation: Result<Isolation, KeyError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_isolation_is_kafkas_default_when_unset_and_unknown_when_not_a_level() {
        assert_eq!(Isolation::of_config(None), Some(Isolation::ReadUncommitted));
        assert_eq!(
            Isolation::of_config(Some("read_committed")),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(
            Isolation::of_config(Some("read_uncommitted")),
            Some(Isolation::ReadUncommitted)
        );
        assert_eq!(Isolation::of_config(Some("READ_COMMITTED")), None);
        assert_eq!(Isolation::ReadCommitted.name(), "read_committed");
    }

    #[test]
    fn a_start_offset_none_or_the_partitions_error_with_kafkas_lag_when_given() {
        let s = ShareStart::of(40, 3, ErrorCode::NONE);
        assert_eq!((s.start, s.kafka_lag), (Committed::At(40), Some(3)));
        let s = ShareStart::of(40, -1, ErrorCode::NONE);
        assert_eq!((s.start, s.kafka_lag), (Committed::At(40), None));
        let s = ShareStart::of(-1, -1, ErrorCode::NONE);
        assert_eq!(s.start, Committed::Nothing);
        let s = ShareStart::of(0, 0, ErrorCode::TOPIC_AUTHORIZATION_FAILED);
        assert_eq!(
            (s.start, s.kafka_lag),
            (
                Committed::Failed(ErrorCode::TOPIC_AUTHORIZATION_FAILED),
                None
            )
        );
    }
}
