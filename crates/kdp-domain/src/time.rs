//! Kafka's timestamps as kdp reads them. Brokers send -1 for "none", and a
//! producer whose batches carried no timestamp (or a zeroed clock) shows 0:
//! neither is a moment in 1970, so every time at or before the epoch is
//! unknown, and so is any age computed from it.

/// `ms` (since the epoch) when it is a real moment; `None` for 0 and below.
pub fn known_ms(ms: i64) -> Option<i64> {
    (ms > 0).then_some(ms)
}

/// How long before `now_ms` the moment `ms` was, when `ms` is known
/// (negative when `ms` is in the future: a broker clock ahead of ours).
pub fn age_ms(ms: i64, now_ms: i64) -> Option<i64> {
    known_ms(ms).map(|ms| now_ms.saturating_sub(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_negative_times_have_no_age() {
        let now = 1_800_000_000_000;
        for unknown in [0, -1, i64::MIN] {
            assert_eq!(known_ms(unknown), None);
            assert_eq!(age_ms(unknown, now), None);
        }
        assert_eq!(known_ms(1), Some(1));
        assert_eq!(age_ms(now - 5_000, now), Some(5_000));
        assert_eq!(age_ms(now + 5_000, now), Some(-5_000));
    }
}
