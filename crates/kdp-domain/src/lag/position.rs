//! Where a group's committed offset stands on a partition, against the
//! partition's log start, last stable offset (LSO) and high watermark:
//! the one model `kdp lag` and `kdp blocked` both judge from. Blocked is
//! this model seen from the open transaction: the positions
//! [`At::Lso`] of a partition whose LSO is below its high watermark.

/// A partition's bounds, as ListOffsets gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The log start offset (ListOffsets earliest); `None` when not read
    /// (`kdp blocked` does not need it).
    pub log_start: Option<i64>,
    /// The last stable offset (ListOffsets latest, READ_COMMITTED).
    pub last_stable_offset: i64,
    /// The high watermark (ListOffsets latest, READ_UNCOMMITTED).
    pub high_watermark: i64,
}

impl Bounds {
    /// Offsets held back from every read_committed consumer: [LSO, HWM).
    pub fn held_back(&self) -> i64 {
        self.high_watermark
            .saturating_sub(self.last_stable_offset)
            .max(0)
    }
}

/// Where a committed offset stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// No committed offset.
    Nothing,
    /// Below the log start: the records in between are gone; its consumer
    /// applies `auto.offset.reset`.
    BeforeLogStart {
        /// Offsets lost (log start − committed).
        lost: i64,
    },
    /// Below the LSO: a read_committed consumer has records (or markers,
    /// or aborted records) to read before it reaches the LSO.
    BelowLso {
        /// Offsets up to the LSO (LSO − committed).
        offsets: i64,
    },
    /// At the LSO: a read_committed consumer has read all it can.
    Lso,
    /// Above the LSO: only a read_uncommitted consumer gets there.
    PastLso,
}

/// A group's committed offset on a partition with its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The committed offset (`None`: nothing committed).
    pub committed: Option<i64>,
    /// The partition's bounds.
    pub bounds: Bounds,
}

impl Position {
    /// Where the committed offset stands.
    pub fn at(&self) -> At {
        let lso = self.bounds.last_stable_offset;
        match self.committed {
            None => At::Nothing,
            Some(c) => match self.bounds.log_start {
                Some(start) if c < start => At::BeforeLogStart {
                    lost: start.saturating_sub(c),
                },
                _ if c < lso => At::BelowLso {
                    offsets: lso.saturating_sub(c),
                },
                _ if c == lso => At::Lso,
                _ => At::PastLso,
            },
        }
    }

    /// Kafka's offset lag, as `kafka-consumer-groups.sh` prints it: high
    /// watermark − committed, in offsets (markers, aborted records and
    /// everything above the LSO included); `None` without an offset.
    pub fn offset_lag(&self) -> Option<i64> {
        self.committed
            .map(|c| self.bounds.high_watermark.saturating_sub(c))
    }

    /// Whether an open transaction holds this position: at the LSO with
    /// offsets above it. `kdp blocked`'s groups are exactly these (and the
    /// ones below the LSO that will reach it).
    pub fn is_held(&self) -> bool {
        self.at() == At::Lso && self.bounds.held_back() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(c: Option<i64>, start: Option<i64>, lso: i64, hwm: i64) -> Position {
        Position {
            committed: c,
            bounds: Bounds {
                log_start: start,
                last_stable_offset: lso,
                high_watermark: hwm,
            },
        }
    }

    #[test]
    fn a_committed_offset_stands_against_log_start_lso_and_hwm() {
        assert_eq!(pos(None, Some(0), 27, 36).at(), At::Nothing);
        assert_eq!(
            pos(Some(3), Some(8), 16, 16).at(),
            At::BeforeLogStart { lost: 5 }
        );
        assert_eq!(
            pos(Some(9), Some(0), 27, 36).at(),
            At::BelowLso { offsets: 18 }
        );
        assert_eq!(pos(Some(27), Some(0), 27, 36).at(), At::Lso);
        assert_eq!(pos(Some(30), Some(0), 27, 36).at(), At::PastLso);
        // without a log start (blocked does not read it) nothing is lost
        assert_eq!(
            pos(Some(3), None, 16, 16).at(),
            At::BelowLso { offsets: 13 }
        );
    }

    #[test]
    fn kafkas_offset_lag_is_hwm_minus_committed_and_held_is_at_a_pinned_lso() {
        assert_eq!(pos(Some(7), Some(0), 8, 8).offset_lag(), Some(1));
        assert_eq!(pos(None, Some(0), 8, 8).offset_lag(), None);
        assert!(pos(Some(27), Some(0), 27, 36).is_held());
        assert!(!pos(Some(8), Some(0), 8, 8).is_held());
        assert!(!pos(Some(26), Some(0), 27, 36).is_held());
    }
}
