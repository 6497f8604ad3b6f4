//! The shapes the frameworks give their transactional ids (docs/OWNERS.md),
//! read from the right, as the frameworks build them. A shape alone names
//! no framework: [`attribute`](mod@super::attribute) confirms each one by its group or its
//! siblings.

use std::fmt;

/// A Kafka Streams process id (`java.util.UUID`), as 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcessId(pub [u8; 16]);

impl ProcessId {
    /// Reads Java's `UUID.toString()` form: 36 characters, 8-4-4-4-12
    /// hex digits (either case; Java writes lower case).
    pub fn parse(text: &str) -> Option<ProcessId> {
        let b = text.as_bytes();
        if b.len() != 36 {
            return None;
        }
        let mut out = [0u8; 16];
        let mut nibbles = 0usize;
        for (i, &c) in b.iter().enumerate() {
            if matches!(i, 8 | 13 | 18 | 23) {
                if c != b'-' {
                    return None;
                }
                continue;
            }
            let v = (c as char).to_digit(16)? as u8;
            let byte = out.get_mut(nibbles / 2)?;
            *byte = (*byte << 4) | v;
            nibbles += 1;
        }
        Some(ProcessId(out))
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// `<application.id>-<processId>-<threadIndex>` (Streams exactly_once_v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsShape {
    /// The application id (also the group id); any dashes, digits or
    /// UUIDs it holds are kept.
    pub application_id: String,
    /// The instance's process id.
    pub process_id: ProcessId,
    /// The stream thread's index, from 1.
    pub thread: u32,
}

/// `<transactionalIdPrefix>-<subtaskIndex>-<counter>` (Flink KafkaSink).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlinkShape {
    /// The sink's prefix, every dash and digit before the last two fields.
    pub prefix: String,
    /// The writer's subtask index.
    pub subtask: u32,
    /// The checkpoint (INCREMENTING) or pool offset (POOLING).
    pub counter: u64,
}

/// `<group.id>-<connector>-<task>` (Connect exactly-once source tasks),
/// once the Connect group is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectShape {
    /// The Connect cluster's group id.
    pub group_id: String,
    /// The connector's name.
    pub connector: String,
    /// The task number.
    pub task: u32,
}

/// A decimal without sign or leading zero ("0" itself is one).
fn decimal<T: std::str::FromStr>(s: &str) -> Option<T> {
    let canonical =
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

/// The id read as a Streams id: ends in `-<UUID>-<n>` (`n` ≥ 1) with a
/// non-empty application id before it.
pub fn streams(id: &str) -> Option<StreamsShape> {
    let (rest, thread) = id.rsplit_once('-')?;
    let thread: u32 = decimal(thread).filter(|n| *n >= 1)?;
    // the UUID is the last 36 characters before `-<n>`, after a dash
    let cut = rest.len().checked_sub(36)?;
    let uuid = rest.get(cut..)?;
    let app = rest.get(..cut)?.strip_suffix('-')?;
    if app.is_empty() {
        return None;
    }
    Some(StreamsShape {
        application_id: app.to_string(),
        process_id: ProcessId::parse(uuid)?,
        thread,
    })
}

/// The id read as a Flink KafkaSink id: the last two dash-separated fields
/// decimal, a non-empty prefix before them.
pub fn flink(id: &str) -> Option<FlinkShape> {
    let (rest, counter) = id.rsplit_once('-')?;
    let (prefix, subtask) = rest.rsplit_once('-')?;
    if prefix.is_empty() {
        return None;
    }
    Some(FlinkShape {
        prefix: prefix.to_string(),
        subtask: decimal(subtask)?,
        counter: decimal(counter)?,
    })
}

/// The id read as a Connect task's id of one of `connect_groups`: the
/// longest group id `g` with the id `g-<connector>-<n>`, `connector`
/// non-empty.
pub fn connect<'g>(
    id: &str,
    connect_groups: impl IntoIterator<Item = &'g str>,
) -> Option<ConnectShape> {
    let (rest, task) = id.rsplit_once('-')?;
    let task: u32 = decimal(task)?;
    connect_groups
        .into_iter()
        .filter_map(|g| {
            let connector = rest.strip_prefix(g)?.strip_prefix('-')?;
            (!connector.is_empty()).then_some((g, connector))
        })
        .max_by_key(|(g, _)| g.len())
        .map(|(g, connector)| ConnectShape {
            group_id: g.to_string(),
            connector: connector.to_string(),
            task,
        })
}

/// The Connect group whose leader writes the config topic under this id
/// (`connect-cluster-<group.id>`), when it is one of `connect_groups`.
pub fn connect_leader<'g>(
    id: &str,
    connect_groups: impl IntoIterator<Item = &'g str>,
) -> Option<String> {
    let group = id.strip_prefix("connect-cluster-")?;
    connect_groups
        .into_iter()
        .any(|g| g == group)
        .then(|| group.to_string())
}

/// A prefix and a decimal counter with no separator required (Spring's
/// `prefix + suffix` and many others): reported, never attributed.
pub fn counter_tail(id: &str) -> Option<(&str, u64)> {
    let digits = id.bytes().rev().take_while(u8::is_ascii_digit).count();
    let cut = id.len().checked_sub(digits)?;
    let (prefix, tail) = (id.get(..cut)?, id.get(cut..)?);
    if prefix.is_empty() || tail.is_empty() {
        return None;
    }
    Some((prefix, tail.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "7a6b3d01-4179-4b52-810e-eec29c97bef5";

    #[test]
    fn a_process_id_reads_and_prints_as_java_does() {
        let p = ProcessId::parse(P).unwrap();
        assert_eq!(p.to_string(), P);
        assert_eq!(ProcessId::parse(&P.to_uppercase()), Some(p));
        for bad in [
            "",
            "7a6b3d01-4179-4b52-810e-eec29c97bef",
            "7a6b3d01-4179-4b52-810e-eec29c97bef5a",
            "7a6b3d0104179-4b52-810e-eec29c97bef5",
            "7a6b3d01-4179-4b52-810e-eec29c97beg5",
            "7a6b3d01-4179-4b52-810e-eec29c97be€",
        ] {
            assert_eq!(ProcessId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_streams_id_keeps_every_dash_and_uuid_of_its_application_id() {
        let app = format!("orders-{P}-v2");
        let s = streams(&format!("{app}-{P}-12")).unwrap();
        assert_eq!(s.application_id, app);
        assert_eq!((s.process_id.to_string(), s.thread), (P.to_string(), 12));
        for not in [
            format!("{P}-1"),   // no application id
            format!("-{P}-1"),  // an empty one
            format!("a-{P}-0"), // threads count from 1
            format!("a-{P}-01"),
            format!("a-{P}"),
            format!("a{P}-1"), // no dash before the UUID
            "a-b-1".to_string(),
        ] {
            assert_eq!(streams(&not), None, "{not}");
        }
    }

    #[test]
    fn a_flink_id_is_cut_at_its_last_two_fields() {
        let f = flink("ingest-sink-3-1-5").unwrap();
        assert_eq!(
            (f.prefix.as_str(), f.subtask, f.counter),
            ("ingest-sink-3", 1, 5)
        );
        assert_eq!(flink("p-0-0").unwrap().counter, 0);
        for not in ["0-1", "-0-1", "p-01-1", "p-1-+1", "p-1-", "p--1", "p-1"] {
            assert_eq!(flink(not), None, "{not}");
        }
        // a Streams id whose process id ends in 12 decimal digits is not
        // Flink-shaped: a subtask index is a Java int
        let shaped = "app-7a6b3d01-4179-4b52-810e-123456789012-1";
        assert!(streams(shaped).is_some() && flink(shaped).is_none());
        // but a Connect id of a connector ending in `-<int>` is
        assert!(flink("connect-group-orders-2-0").is_some());
    }

    #[test]
    fn a_connect_id_takes_the_longest_connect_group_that_prefixes_it() {
        let groups = ["kdp-connect", "kdp-connect-7-a1", "other"];
        let c = connect("kdp-connect-7-a1-ticks-2024-v2-0", groups).unwrap();
        assert_eq!(
            (c.group_id.as_str(), c.connector.as_str(), c.task),
            ("kdp-connect-7-a1", "ticks-2024-v2", 0)
        );
        assert_eq!(connect("kdp-connect-7-a1-0", ["kdp-connect-7-a1"]), None);
        assert_eq!(connect("elsewhere-c-0", groups), None);
        assert_eq!(
            connect_leader("connect-cluster-kdp-connect-7-a1", groups).as_deref(),
            Some("kdp-connect-7-a1")
        );
        assert_eq!(connect_leader("connect-cluster-nope", groups), None);
    }

    #[test]
    fn a_counter_tail_needs_a_prefix_and_digits() {
        assert_eq!(counter_tail("tx-orders.17"), Some(("tx-orders.", 17)));
        assert_eq!(counter_tail("tx"), None);
        assert_eq!(counter_tail("42"), None);
        assert_eq!(counter_tail("€9"), Some(("€", 9)));
        assert_eq!(counter_tail("t99999999999999999999999"), None);
    }
}
