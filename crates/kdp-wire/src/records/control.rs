//! Control records: the one record of a control batch. Its key says which
//! control it is (version int16, type int16); a transaction marker's value
//! is the EndTxnMarker (version int16, CoordinatorEpoch int32).

use std::borrow::Cow;

use super::record::Record;

/// The control type of a control record's key (Kafka's `ControlRecordType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlType {
    /// A transaction's abort marker.
    Abort,
    /// A transaction's commit marker.
    Commit,
    /// KRaft: a new quorum leader.
    LeaderChange,
    /// KRaft: a snapshot's first record.
    SnapshotHeader,
    /// KRaft: a snapshot's last record.
    SnapshotFooter,
    /// KRaft: the kraft.version feature.
    KraftVersion,
    /// KRaft: the voter set.
    KraftVoters,
    /// A type Kafka does not define (Kafka's `UNKNOWN`, which consumers skip).
    Unknown(i16),
}

impl ControlType {
    /// The type of an id.
    pub fn from_id(id: i16) -> ControlType {
        match id {
            0 => ControlType::Abort,
            1 => ControlType::Commit,
            2 => ControlType::LeaderChange,
            3 => ControlType::SnapshotHeader,
            4 => ControlType::SnapshotFooter,
            5 => ControlType::KraftVersion,
            6 => ControlType::KraftVoters,
            other => ControlType::Unknown(other),
        }
    }

    /// The id in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
            ControlType::LeaderChange => 2,
            ControlType::SnapshotHeader => 3,
            ControlType::SnapshotFooter => 4,
            ControlType::KraftVersion => 5,
            ControlType::KraftVoters => 6,
            ControlType::Unknown(id) => id,
        }
    }

    /// Kafka's name, as `kafka-dump-log.sh` prints it: `ABORT`, `COMMIT`, ...
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Abort => "ABORT",
            ControlType::Commit => "COMMIT",
            ControlType::LeaderChange => "LEADER_CHANGE",
            ControlType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlType::KraftVersion => "KRAFT_VERSION",
            ControlType::KraftVoters => "KRAFT_VOTERS",
            ControlType::Unknown(_) => "UNKNOWN",
        }
    }

    /// Whether this ends a transaction (commit or abort).
    pub fn is_transaction_marker(self) -> bool {
        matches!(self, ControlType::Abort | ControlType::Commit)
    }
}

/// A transaction marker's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTxnMarker {
    /// The value's version (0).
    pub version: i16,
    /// The epoch of the coordinator that wrote the marker.
    pub coordinator_epoch: i32,
}

/// A control record, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord {
    /// The key's version (0; Kafka reads other versions as 0).
    pub key_version: i16,
    /// Which control.
    pub control_type: ControlType,
    /// For a commit or abort: the marker's value.
    pub marker: Option<EndTxnMarker>,
}

fn i16_at(bytes: &[u8], at: usize) -> Option<i16> {
    bytes
        .get(at..)?
        .first_chunk::<2>()
        .map(|b| i16::from_be_bytes(*b))
}

impl ControlRecord {
    /// Parses a control batch's record as Kafka's `ControlRecordType.parse`
    /// and `EndTransactionMarker.deserialize` do: a key of at least 4 bytes
    /// with a version that is not negative; for markers, a value of at least
    /// 6 bytes with a version that is not negative. Bytes past those are
    /// ignored, as Kafka ignores them.
    pub fn parse(record: &Record<'_>) -> Result<ControlRecord, &'static str> {
        let key = record.key.as_deref().ok_or("the key is null")?;
        let (Some(key_version), Some(type_id)) = (i16_at(key, 0), i16_at(key, 2)) else {
            return Err("the key is shorter than 4 bytes");
        };
        if key_version < 0 {
            return Err("the key's version is negative");
        }
        let control_type = ControlType::from_id(type_id);
        let marker = if control_type.is_transaction_marker() {
            let value = record
                .value
                .as_deref()
                .ok_or("the marker's value is null")?;
            let version = i16_at(value, 0).ok_or("the marker's value is shorter than 6 bytes")?;
            let epoch = value
                .get(2..)
                .and_then(<[u8]>::first_chunk::<4>)
                .ok_or("the marker's value is shorter than 6 bytes")?;
            if version < 0 {
                return Err("the marker's version is negative");
            }
            Some(EndTxnMarker {
                version,
                coordinator_epoch: i32::from_be_bytes(*epoch),
            })
        } else {
            None
        };
        Ok(ControlRecord {
            key_version,
            control_type,
            marker,
        })
    }

    /// The record of a commit or abort marker, as a coordinator writes it
    /// (key and value version 0; offset and timestamp deltas 0).
    pub fn marker_record(commit: bool, coordinator_epoch: i32) -> Record<'static> {
        let control_type = if commit {
            ControlType::Commit
        } else {
            ControlType::Abort
        };
        let mut key = vec![0, 0];
        key.extend_from_slice(&control_type.id().to_be_bytes());
        let mut value = vec![0, 0];
        value.extend_from_slice(&coordinator_epoch.to_be_bytes());
        Record {
            key: Some(Cow::Owned(key)),
            value: Some(Cow::Owned(value)),
            ..Record::default()
        }
    }
}
