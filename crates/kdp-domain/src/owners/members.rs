//! What a group member's protocol bytes say about its owner, read totally
//! (a member's bytes come from a broker, i.e. from any client that joined):
//!
//! - a Kafka Streams member of a classic group: its metadata is a
//!   `ConsumerProtocolSubscription` whose user data is Streams'
//!   `SubscriptionInfo`, which carries the instance's process id;
//! - a Connect worker: its metadata (`ConnectProtocol` /
//!   `IncrementalCooperativeConnectProtocol`) may carry its previous
//!   assignment, and its assignment the connectors and tasks it was given
//!   (under the incremental protocol, what changed: given and revoked).

use std::collections::BTreeSet;

use kdp_wire::{Context, DecodeError, DecodeErrorKind, Reader};

use super::scheme::ProcessId;

fn field<T>(r: Result<T, DecodeError>, name: &'static str) -> Result<T, DecodeError> {
    r.field(name)
}

fn in_field(name: &'static str) -> impl Fn(DecodeError) -> DecodeError {
    move |e| e.in_field(name)
}

/// A classic string (int16 length, not null).
fn string(r: &mut Reader<'_>, name: &'static str) -> Result<String, DecodeError> {
    field(r.string(), name)
}

/// A classic array count (int32; -1 null reads as empty), checked against
/// the bytes left at `min` bytes an element.
fn count(r: &mut Reader<'_>, min: usize, name: &'static str) -> Result<usize, DecodeError> {
    let at = r.offset();
    let n = field(r.i32(), name)?;
    let Ok(n) = usize::try_from(n) else {
        return Ok(0);
    };
    if n.saturating_mul(min) > r.remaining() {
        let e = DecodeError::new(
            at,
            DecodeErrorKind::CountExceedsInput {
                what: "array",
                count: n as u64,
                needed: (n as u64).saturating_mul(min as u64),
                left: r.remaining(),
            },
        );
        return Err(e.in_field(name));
    }
    Ok(n)
}

/// The process id a Kafka Streams member of a classic group announces:
/// `ConsumerProtocolSubscription` (any version: version, topics, user
/// data come first) whose user data is `SubscriptionInfo` (version 1+:
/// version, from 3 the latest supported version, then the process id).
pub fn streams_process_id(metadata: &[u8]) -> Result<ProcessId, DecodeError> {
    let mut r = Reader::new(metadata);
    field(r.i16(), "Version")?;
    let topics = count(&mut r, 2, "Topics")?;
    for i in 0..topics {
        r.string().map_err(|e| e.at_index(i).in_field("Topics"))?;
    }
    let at = r.offset();
    let user_data = field(r.nullable_byte_slice_v(false), "UserData")?.ok_or_else(|| {
        DecodeError::new(at, DecodeErrorKind::UnexpectedNull { what: "bytes" }).in_field("UserData")
    })?;
    let mut u = Reader::with_base(user_data, at + 4);
    let version = field(u.i32(), "UserData.Version")?;
    if version < 1 {
        let e = u.error(DecodeErrorKind::UnsupportedVersion {
            api: "SubscriptionInfo",
            version: version.clamp(i16::MIN.into(), i16::MAX.into()) as i16,
            min: 1,
            max: i16::MAX,
        });
        return Err(e.in_field("UserData.Version"));
    }
    if version >= 3 {
        field(u.i32(), "UserData.LatestSupportedVersion")?;
    }
    let id = field(u.take(16, "uuid"), "UserData.ProcessId")?;
    let mut out = [0u8; 16];
    out.copy_from_slice(id);
    Ok(ProcessId(out))
}

/// A connector's instance (`-1`, Connect's `CONNECTOR_TASK`) or a task.
pub const CONNECTOR_INSTANCE: i32 = -1;

/// The connectors and tasks of one Connect assignment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectAssignment {
    /// Given: (connector, task), the task `-1` for the connector itself.
    pub assigned: BTreeSet<(String, i32)>,
    /// Revoked (incremental protocol, version 1+).
    pub revoked: BTreeSet<(String, i32)>,
}

fn connector_tasks(
    r: &mut Reader<'_>,
    name: &'static str,
) -> Result<BTreeSet<(String, i32)>, DecodeError> {
    let mut out = BTreeSet::new();
    let n = count(r, 6, name)?;
    for i in 0..n {
        let at = |e: DecodeError| e.at_index(i).in_field(name);
        let connector = string(r, "Connector").map_err(at)?;
        let tasks = count(r, 4, "Tasks").map_err(at)?;
        for _ in 0..tasks {
            let task = field(r.i32(), "Tasks").map_err(at)?;
            out.insert((connector.clone(), task));
        }
    }
    Ok(out)
}

/// A Connect assignment: version (0 eager, 1-2 incremental), error,
/// leader, leader url, config offset, the assignment, then from version 1
/// the revoked ones and the delay.
pub fn connect_assignment(bytes: &[u8]) -> Result<ConnectAssignment, DecodeError> {
    assignment_at(Reader::new(bytes))
}

fn assignment_at(mut r: Reader<'_>) -> Result<ConnectAssignment, DecodeError> {
    let version = field(r.i16(), "Version")?;
    field(r.i16(), "Error")?;
    string(&mut r, "Leader")?;
    string(&mut r, "LeaderUrl")?;
    field(r.i64(), "ConfigOffset")?;
    let assigned = connector_tasks(&mut r, "Assignment")?;
    let revoked = if version >= 1 {
        connector_tasks(&mut r, "Revoked")?
    } else {
        BTreeSet::new()
    };
    Ok(ConnectAssignment { assigned, revoked })
}

/// A Connect worker's metadata: version, url, config offset, and from
/// version 1 its previous assignment (nullable bytes, an assignment).
pub fn connect_previous(metadata: &[u8]) -> Result<Option<ConnectAssignment>, DecodeError> {
    let mut r = Reader::new(metadata);
    let version = field(r.i16(), "Version")?;
    string(&mut r, "Url")?;
    field(r.i64(), "ConfigOffset")?;
    if version < 1 {
        return Ok(None);
    }
    let at = r.offset() + 4;
    match field(r.nullable_byte_slice_v(false), "Allocation")? {
        None => Ok(None),
        Some(b) => assignment_at(Reader::with_base(b, at))
            .map(Some)
            .map_err(in_field("Allocation")),
    }
}

/// What a Connect worker runs after its last assignment: its previous
/// allocation, plus what it was given, less what was revoked.
pub fn connect_tasks(
    metadata: &[u8],
    assignment: &[u8],
) -> Result<BTreeSet<(String, i32)>, DecodeError> {
    let now = connect_assignment(assignment)?;
    let mut tasks = connect_previous(metadata)?
        .map(|p| p.assigned)
        .unwrap_or_default();
    tasks.extend(now.assigned);
    for r in &now.revoked {
        tasks.remove(r);
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::hex;

    // From vectors/owners/streams-4.4.0.json (a classic Streams member, SubscriptionInfo v11).
    const STREAMS: &str = "000300000001000f6f776e6572732d696e2d3633303834000000290000000b0000000bc64c5f99f79b4139b9eb3ace5599ac75000000000000000006000000000000000000000001000f6f776e6572732d696e2d3633303834000000010000000000000004ffff";

    fn bytes(h: &str) -> Vec<u8> {
        hex::decode(h).unwrap()
    }

    #[test]
    fn a_streams_member_announces_its_process_id() {
        let id = streams_process_id(&bytes(STREAMS)).unwrap();
        assert_eq!(id.to_string(), "c64c5f99-f79b-4139-b9eb-3ace5599ac75");
    }

    #[test]
    fn every_truncation_of_a_member_is_an_error_not_a_panic() {
        let b = bytes(STREAMS);
        // the process id ends 8 + 4 + 2 + 15 + 4 + 24 bytes in
        for n in 0..57 {
            let e = streams_process_id(&b[..n]).unwrap_err();
            assert!(e.to_string().contains("at byte"), "{n}: {e}");
        }
        // a plain consumer's subscription: no user data
        let mut plain = b[..25].to_vec();
        plain.extend([0xff, 0xff, 0xff, 0xff]);
        let e = streams_process_id(&plain).unwrap_err();
        assert!(e.to_string().contains("UserData"), "{e}");
    }

    #[test]
    fn a_huge_array_count_is_refused_before_anything_is_read() {
        let e = streams_process_id(&[0, 3, 0x7f, 0xff, 0xff, 0xff, 0, 1]).unwrap_err();
        assert!(e.to_string().contains("Topics"), "{e}");
        assert!(connect_assignment(&[
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 0
        ])
        .is_err());
    }
}
