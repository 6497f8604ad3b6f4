//! A share group's progress on its partitions (KIP-932), as
//! DescribeShareGroupOffsets gives it: the share-partition start offset,
//! below which every record is acknowledged or archived, and (v1, KIP-1226)
//! the coordinator's own lag figure.

use std::collections::BTreeMap;

use kdp_wire::ErrorCode;

use crate::groups::offsets::Committed;
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

#[cfg(test)]
mod tests {
    use super::*;

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
