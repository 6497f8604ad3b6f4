//! The one place kdp-workflows reads the wall clock: when a scan starts,
//! as the domain takes it (`now_ms`), so that every verdict of the scan is
//! judged against the same moment.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
