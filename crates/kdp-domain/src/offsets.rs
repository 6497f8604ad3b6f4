//! A partition's high watermark and last stable offset (ListOffsets at
//! READ_UNCOMMITTED and READ_COMMITTED): the records between them are what
//! an open transaction holds back from every read_committed consumer.

/// A partition's high watermark and LSO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offsets {
    /// The high watermark.
    pub high_watermark: i64,
    /// The last stable offset.
    pub last_stable_offset: i64,
}

impl Offsets {
    /// Records between the LSO and the high watermark.
    pub fn blocked(&self) -> i64 {
        self.high_watermark
            .saturating_sub(self.last_stable_offset)
            .max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_records_are_between_the_lso_and_the_high_watermark() {
        let o = |hw, lso| Offsets {
            high_watermark: hw,
            last_stable_offset: lso,
        };
        assert_eq!(o(100, 40).blocked(), 60);
        assert_eq!(o(40, 40).blocked(), 0);
        // a broker answering an LSO past its high watermark blocks nothing
        assert_eq!(o(40, 41).blocked(), 0);
    }
}
