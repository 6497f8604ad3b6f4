//! What every renderer shares: `--output`, the buffer output goes through,
//! and the time formats (RFC 3339, ages).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The buffer every output is written through: rows are serialized into
/// it and stdout gets one `write(2)` per buffer (stdout alone is
/// line-buffered: a write per line).
pub const BUFFER: usize = 1 << 16;

/// `--output`: how results are printed on stdout.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Aligned columns fitted to the terminal's width (least important columns left out first).
    Table,
    /// The table with every column in full, whatever the width.
    Wide,
    /// One JSON document.
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// A known time that formats as RFC 3339 in UTC with milliseconds, e.g.
/// `2026-11-29T12:00:00.123Z`, on the stack: serialized (a JSON string) or displayed straight into the output,
/// without a `String` per value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rfc3339(SystemTime);

impl Rfc3339 {
    /// `ms` since the epoch; `None` for an unknown time (0 or below: see
    /// [`kdp_domain::time`]).
    pub fn at(ms: i64) -> Option<Rfc3339> {
        let ms = u64::try_from(kdp_domain::time::known_ms(ms)?).ok()?;
        UNIX_EPOCH
            .checked_add(Duration::from_millis(ms))
            .map(Rfc3339)
    }
}

impl std::fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        humantime::format_rfc3339_millis(self.0).fmt(f)
    }
}

impl serde::Serialize for Rfc3339 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // serde_json writes a Display into its output (escaped) without
        // collecting it into a String first
        s.collect_str(self)
    }
}

/// How long ago `ms` was: `850ms ago`, `12s ago`, `3m12s ago`, `2h5m ago`,
/// `4d3h ago`; `-` for an unknown time (0 or below).
pub fn age(ms: i64, now_ms: i64) -> String {
    let Some(diff) = kdp_domain::time::age_ms(ms, now_ms) else {
        return "-".into();
    };
    let (d, suffix_future) = if diff < 0 {
        (-diff, true)
    } else {
        (diff, false)
    };
    let d = d as u64;
    let s = d / 1000;
    let text = if s == 0 {
        format!("{d}ms")
    } else if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}d{}h", s / 86_400, s % 86_400 / 3600)
    };
    if suffix_future {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rfc3339(ms: i64) -> Option<String> {
        Rfc3339::at(ms).map(|t| t.to_string())
    }

    #[test]
    fn timestamps_and_ages() {
        assert_eq!(rfc3339(-1), None);
        // 0 is no moment in 1970: a producer without timestamps
        assert_eq!(rfc3339(0), None);
        assert_eq!(rfc3339(1).as_deref(), Some("1970-01-01T00:00:00.001Z"));
        assert_eq!(
            rfc3339(1_795_953_600_123).as_deref(),
            Some("2026-11-29T12:00:00.123Z")
        );
        // the serialized form is the same text, as a JSON string
        assert_eq!(
            serde_json::to_string(&Rfc3339::at(1_795_953_600_123)).unwrap(),
            "\"2026-11-29T12:00:00.123Z\""
        );
        assert_eq!(Rfc3339::at(0), None);
        let now = 1_000_000_000;
        assert_eq!(age(now - 192_000, now), "3m12s ago");
        assert_eq!(age(now - 850, now), "850ms ago");
        assert_eq!(age(now - 7_500_000, now), "2h5m ago");
        assert_eq!(age(now - 4 * 86_400_000 - 3 * 3_600_000, now), "4d3h ago");
        assert_eq!(age(now + 3_000, now), "in 3s");
        assert_eq!(age(-1, now), "-");
        assert_eq!(age(0, now), "-");
    }
}
