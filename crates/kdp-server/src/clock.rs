//! The mock's wall clock, injectable: what handlers call "now" (marker
//! timestamps, transaction durations, transactional-id expiry), so tests can
//! move time on without waiting.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as the mock sees them.
pub trait Clock: Send + Sync {
    /// The current time, in milliseconds since the epoch.
    fn now_ms(&self) -> i64;
}

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `now_ms`.
    pub fn at(now_ms: i64) -> ManualClock {
        ManualClock(AtomicI64::new(now_ms))
    }

    /// Moves the clock on by `by`.
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(ms))
            });
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_when_told() {
        let c = ManualClock::at(1_000);
        assert_eq!(c.now_ms(), 1_000);
        c.advance(Duration::from_secs(2));
        assert_eq!(c.now_ms(), 3_000);
        assert!(SystemClock.now_ms() > 1_600_000_000_000);
    }
}
