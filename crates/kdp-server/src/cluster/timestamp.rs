//! Times in the cluster file: milliseconds since the epoch, `"now"`,
//! `"now-<duration>"` or RFC 3339, resolved against the moment the file is
//! loaded.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// Milliseconds since the epoch of `now` (0 before it, `i64::MAX` past it).
pub(super) fn now_ms(now: SystemTime) -> i64 {
    now.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `LastTimestamp`: milliseconds since the epoch, `"now"`, `"now-<duration>"`
/// (humantime: `"90s"`, `"2h 5m"`), or an RFC 3339 time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timestamp {
    Absolute(i64),
    Ago(Duration),
}

impl Default for Timestamp {
    fn default() -> Self {
        Timestamp::Absolute(-1)
    }
}

impl Timestamp {
    pub(super) fn resolve(self, now_ms: i64) -> i64 {
        match self {
            Timestamp::Absolute(ms) => ms,
            Timestamp::Ago(d) => {
                now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            }
        }
    }

    pub(super) fn parse(s: &str) -> Result<Timestamp, String> {
        let t = s.trim();
        if t == "now" {
            return Ok(Timestamp::Ago(Duration::ZERO));
        }
        if let Some(rest) = t.strip_prefix("now-") {
            return humantime::parse_duration(rest.trim())
                .map(Timestamp::Ago)
                .map_err(|e| format!("bad duration in {s:?}: {e}"));
        }
        humantime::parse_rfc3339_weak(t)
            .map(|st| Timestamp::Absolute(now_ms(st)))
            .map_err(|_| {
                format!(
                    "{s:?} is not a timestamp: use milliseconds since the epoch, \"now\", \
                     \"now-<duration>\" (e.g. \"now-15m\") or RFC 3339"
                )
            })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("milliseconds since the epoch, \"now\", \"now-<duration>\" or RFC 3339")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Timestamp, E> {
                Ok(Timestamp::Absolute(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Timestamp, E> {
                i64::try_from(v)
                    .map(Timestamp::Absolute)
                    .map_err(|_| E::custom(format!("{v} does not fit an int64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}
