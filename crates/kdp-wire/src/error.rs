//! Decode errors: what went wrong, at which byte, in which field.
//!
//! The field path is collected while the error unwinds (each level adds its
//! field name or array index), so the happy path never builds strings.

use std::fmt;

/// One step of a field path: a schema field name or an array index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment {
    /// A schema field name, e.g. `ErrorMessage`.
    Field(&'static str),
    /// A position in an array.
    Index(u32),
}

/// Why a decode failed, without the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended inside a value.
    #[error("{what} needs {needed} bytes but only {left} are left")]
    Truncated {
        /// The wire type being read.
        what: &'static str,
        /// Bytes the value needs.
        needed: usize,
        /// Bytes that were left.
        left: usize,
    },
    /// A varint with more bytes than its width allows.
    #[error("{what} is longer than {max} bytes")]
    VarintTooLong {
        /// The wire type being read.
        what: &'static str,
        /// The most bytes that width allows.
        max: usize,
    },
    /// A varint with a redundant trailing zero group (e.g. `80 00` for 0).
    /// Every Kafka encoder writes the shortest form, and accepting another
    /// would break the decoder's promise that what it accepts re-encodes
    /// byte for byte.
    #[error("{what} is not in its shortest form ({len} bytes, last one 0x00)")]
    VarintNotMinimal {
        /// The wire type being read.
        what: &'static str,
        /// Bytes the varint took.
        len: usize,
    },
    /// A length prefix larger than the input that is left.
    #[error("{what} length {len} exceeds the {left} bytes left")]
    LengthExceedsInput {
        /// The string, bytes or section the length belongs to.
        what: &'static str,
        /// The length as read.
        len: u64,
        /// Bytes that were left.
        left: usize,
    },
    /// An array count whose smallest elements could not fit in the input
    /// left; rejected before anything is allocated.
    #[error("{what} count {count} needs at least {needed} bytes but only {left} are left")]
    CountExceedsInput {
        /// The array being read.
        what: &'static str,
        /// The count as read.
        count: u64,
        /// Bytes the count needs at the least.
        needed: u64,
        /// Bytes that were left.
        left: usize,
    },
    /// A negative length other than the null marker -1.
    #[error("{what} has negative length {len}")]
    NegativeLength {
        /// The string, bytes or array the length belongs to.
        what: &'static str,
        /// The length as read.
        len: i64,
    },
    /// Null where the schema does not make the field nullable.
    #[error("{what} is null, which the schema does not allow here")]
    UnexpectedNull {
        /// The wire type being read.
        what: &'static str,
    },
    /// A string that is not UTF-8.
    #[error("string is not valid UTF-8 (bad byte at string offset {valid_up_to})")]
    InvalidUtf8 {
        /// Offset of the first bad byte within the string.
        valid_up_to: usize,
    },
    /// Bytes left over after a whole message.
    #[error("{count} trailing bytes after the end of the message")]
    TrailingBytes {
        /// How many bytes were left over.
        count: usize,
    },
    /// Tagged fields out of order or repeated.
    #[error("tag {tag} does not come after tag {previous} (tags must ascend)")]
    TagOrder {
        /// The tag read.
        tag: u32,
        /// The tag before it.
        previous: u32,
    },
    /// A known tagged field whose declared size holds more than its value.
    #[error("tagged field {tag} has {left} unread bytes")]
    TaggedFieldNotConsumed {
        /// The tag of the field.
        tag: u32,
        /// Bytes its value did not use.
        left: usize,
    },
    /// A `boolean` byte other than 0 or 1.
    #[error("boolean byte is {value}, not 0 or 1")]
    InvalidBool {
        /// The byte read.
        value: u8,
    },
    /// The presence byte of a nullable struct other than -1 (null) or 1.
    #[error("struct presence byte is {value}, not -1 or 1")]
    InvalidStructMarker {
        /// The byte read.
        value: i8,
    },
    /// A version outside the message's schema range.
    #[error("{api} version {version} is not supported (supported: {min} to {max})")]
    UnsupportedVersion {
        /// The message name.
        api: &'static str,
        /// The version asked for.
        version: i16,
        /// The lowest version the schema has.
        min: i16,
        /// The highest version the schema has.
        max: i16,
    },
    /// A frame whose header names another API than the one the caller decodes.
    #[error("api key {found} does not match the expected {expected}")]
    ApiKeyMismatch {
        /// The API key the caller decodes.
        expected: i16,
        /// The API key in the header.
        found: i16,
    },
    /// A frame size prefix that is negative or above the accepted maximum.
    #[error("frame size {size} is invalid ({reason})")]
    InvalidFrameSize {
        /// The size prefix as read.
        size: i64,
        /// Why it cannot be a frame.
        reason: &'static str,
    },
}

/// A decode failure: the kind, the absolute byte offset where the failing
/// value starts, and the schema path of the field.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    offset: usize,
    kind: DecodeErrorKind,
    /// Innermost segment first; reversed when printed.
    path: Vec<PathSegment>,
}

impl DecodeError {
    /// An error at `offset` with an empty path.
    pub fn new(offset: usize, kind: DecodeErrorKind) -> Self {
        DecodeError(Box::new(Inner {
            offset,
            kind,
            path: Vec::new(),
        }))
    }

    /// The absolute byte offset in the input where the failing value starts.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.0.kind
    }

    /// The field path, outermost first, e.g. `Topics[0].Partitions[2].ErrorMessage`.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.0.path.iter().rev() {
            match seg {
                PathSegment::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// Adds an enclosing field name to the path (called while unwinding).
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.0.path.push(PathSegment::Field(name));
        self
    }

    /// Adds an enclosing array index to the path (called while unwinding).
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        self.0.path.push(PathSegment::Index(index));
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            write!(f, "at byte {}: {}", self.0.offset, self.0.kind)
        } else {
            write!(f, "at byte {} ({}): {}", self.0.offset, path, self.0.kind)
        }
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecodeError({self})")
    }
}

impl std::error::Error for DecodeError {}

/// Adds path context to a decode result.
pub trait Context<T> {
    /// Names the field this result decoded.
    fn field(self, name: &'static str) -> Result<T, DecodeError>;
}

impl<T> Context<T> for Result<T, DecodeError> {
    #[inline]
    fn field(self, name: &'static str) -> Result<T, DecodeError> {
        self.map_err(|e| e.in_field(name))
    }
}
