//! kdp's one duration syntax: humantime (`500ms`, `30s`, `2m`, `1h 30m`) for
//! flags, and Kafka's whole milliseconds for `*.ms` client properties.

use std::time::Duration;

/// A positive humantime duration, as every `DURATION` flag takes (a zero
/// timeout would fail everything at once, so it is refused).
pub fn parse(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("{e} (examples: 500ms, 30s, 2m)"))?;
    if d.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(d)
}

/// A humantime duration where zero means "none" (an age threshold, not a
/// timeout); a bare `0` is accepted.
pub fn parse_age(s: &str) -> Result<Duration, String> {
    if s.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(s.trim()).map_err(|e| format!("{e} (examples: 0, 30s, 15m)"))
}

/// A flag that mirrors a Kafka flag counted in minutes (find-hanging's
/// `--max-transaction-timeout`): a bare number is minutes, as in
/// `kafka-transactions.sh`; a humantime duration (`90s`, `0`) is taken as it is.
pub fn parse_kafka_minutes(s: &str) -> Result<Duration, String> {
    if let Ok(minutes) = s.trim().parse::<u64>() {
        return minutes
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(|| "too large".to_string());
    }
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("{e} (a bare number is minutes, as in Kafka; or e.g. 90s, 15m)"))
}

/// A Kafka `*.ms` property value: whole milliseconds, as Java's `Long.parseLong`
/// reads them after trimming.
pub fn from_millis_property(key: &str, value: &str) -> Result<Duration, String> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| format!("{key}={value} is not a number of milliseconds"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humantime_flags() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse(" 1h 30m "), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("0s"), Err("must be more than zero".into()));
        let e = parse("soon").unwrap_err();
        assert!(e.ends_with("(examples: 500ms, 30s, 2m)"), "{e}");
        assert!(parse("30").is_err(), "a unit is required");
        assert_eq!(parse_age("0"), Ok(Duration::ZERO));
        assert_eq!(parse_age("15m"), Ok(Duration::from_secs(900)));
        assert!(parse_age("later").is_err());
        // kafka-transactions.sh reads --max-transaction-timeout in minutes
        assert_eq!(parse_kafka_minutes("15"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_kafka_minutes("0"), Ok(Duration::ZERO));
        assert_eq!(parse_kafka_minutes("90s"), Ok(Duration::from_secs(90)));
        let e = parse_kafka_minutes("soon").unwrap_err();
        assert!(e.contains("a bare number is minutes"), "{e}");
    }

    #[test]
    fn millisecond_properties() {
        let d = from_millis_property("request.timeout.ms", " 1500 ");
        assert_eq!(d, Ok(Duration::from_millis(1500)));
        let e = from_millis_property("request.timeout.ms", "1s").unwrap_err();
        assert_eq!(e, "request.timeout.ms=1s is not a number of milliseconds");
        assert!(from_millis_property("k", "-1").is_err());
    }
}
