//! A batch's attributes (int16): its compression codec, timestamp type and
//! flags. Kafka reads only the low byte; the bits it does not use are kept
//! so that a batch re-encodes byte for byte.

use std::fmt;

/// The compression codec of a batch's records (attribute bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compression {
    /// Records stored as they are.
    None,
    /// gzip (RFC 1952), one member as Java's `GZIPOutputStream` writes.
    Gzip,
    /// Snappy in xerial's `SnappyOutputStream` framing, as Kafka's Java
    /// producer writes it (a bare snappy block is read too).
    Snappy,
    /// The LZ4 frame format (with the header checksum fixed by KAFKA-3160
    /// for every v2 batch).
    Lz4,
    /// Zstandard frames (KIP-110).
    Zstd,
}

impl Compression {
    /// Every codec, by id.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec of attribute bits 0-2, or `None` for the ids 5-7 that
    /// Kafka does not define.
    pub fn from_id(id: u8) -> Option<Compression> {
        Compression::ALL.get(usize::from(id)).copied()
    }

    /// The id in attribute bits 0-2.
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Kafka's name (`compression.type`, and what `kafka-dump-log.sh`
    /// prints): `none`, `gzip`, `snappy`, `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The codec named as Kafka names it.
    pub fn from_name(name: &str) -> Option<Compression> {
        Compression::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a batch's timestamps mean (attribute bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// Set by the producer.
    CreateTime,
    /// Set by the broker on append; every record's timestamp is then the
    /// batch's MaxTimestamp.
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's name: `CreateTime` or `LogAppendTime`.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// The attributes field of a batch, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attributes(pub i16);

const COMPRESSION_MASK: i16 = 0x07;
const TIMESTAMP_TYPE_MASK: i16 = 0x08;
const TRANSACTIONAL_MASK: i16 = 0x10;
const CONTROL_MASK: i16 = 0x20;
const DELETE_HORIZON_MASK: i16 = 0x40;

impl Attributes {
    /// The attributes Kafka's writers compute from these facts.
    pub fn new(
        compression: Compression,
        timestamp_type: TimestampType,
        transactional: bool,
        control: bool,
        delete_horizon: bool,
    ) -> Self {
        let mut bits = i16::from(compression.id());
        if timestamp_type == TimestampType::LogAppendTime {
            bits |= TIMESTAMP_TYPE_MASK;
        }
        if transactional {
            bits |= TRANSACTIONAL_MASK;
        }
        if control {
            bits |= CONTROL_MASK;
        }
        if delete_horizon {
            bits |= DELETE_HORIZON_MASK;
        }
        Attributes(bits)
    }

    /// The compression id in bits 0-2 (0-7).
    pub fn compression_id(self) -> u8 {
        (self.0 & COMPRESSION_MASK) as u8
    }

    /// The codec, or `None` when bits 0-2 hold an id Kafka does not define.
    pub fn compression(self) -> Option<Compression> {
        Compression::from_id(self.compression_id())
    }

    /// Bit 3.
    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & TIMESTAMP_TYPE_MASK == 0 {
            TimestampType::CreateTime
        } else {
            TimestampType::LogAppendTime
        }
    }

    /// Bit 4: written by a transactional producer.
    pub fn is_transactional(self) -> bool {
        self.0 & TRANSACTIONAL_MASK != 0
    }

    /// Bit 5: a control batch (a transaction marker, or KRaft's own).
    pub fn is_control(self) -> bool {
        self.0 & CONTROL_MASK != 0
    }

    /// Bit 6 (KIP-534): BaseTimestamp holds the delete horizon the log
    /// cleaner set for tombstones and markers.
    pub fn has_delete_horizon(self) -> bool {
        self.0 & DELETE_HORIZON_MASK != 0
    }
}
