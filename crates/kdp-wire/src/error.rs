//! Decode errors: what went wrong, at which byte, in which field.
//!
//! The field path is collected while the error unwinds (each level adds its
//! field name or array index), so the happy path never builds strings.

use std::fmt;

/// One step of a field path: a schema field name or an array index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment {
    Field(&'static str),
    Index(u32),
}

/// Why a decode failed, without the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    #[error("{what} needs {needed} bytes but only {left} are left")]
    Truncated {
        what: &'static str,
        needed: usize,
        left: usize,
    },
    #[error("{what} is longer than {max} bytes")]
    VarintTooLong { what: &'static str, max: usize },
    /// A varint with a redundant trailing zero group (e.g. `80 00` for 0).
    /// Every Kafka encoder writes the shortest form, and accepting another
    /// would break the decoder's promise that what it accepts re-encodes
    /// byte for byte.
    #[error("{what} is not in its shortest form ({len} bytes, last one 0x00)")]
    VarintNotMinimal { what: &'static str, len: usize },
    #[error("{what} length {len} exceeds the {left} bytes left")]
    LengthExceedsInput {
        what: &'static str,
        len: u64,
        left: usize,
    },
    #[error("{what} count {count} needs at least {needed} bytes but only {left} are left")]
    CountExceedsInput {
        what: &'static str,
        count: u64,
        needed: u64,
        left: usize,
    },
    #[error("{what} has negative length {len}")]
    NegativeLength { what: &'static str, len: i64 },
    #[error("{what} is null, which the schema does not allow here")]
    UnexpectedNull { what: &'static str },
    #[error("string is not valid UTF-8 (bad byte at string offset {valid_up_to})")]
    InvalidUtf8 { valid_up_to: usize },
    #[error("{count} trailing bytes after the end of the message")]
    TrailingBytes { count: usize },
    #[error("tag {tag} does not come after tag {previous} (tags must ascend)")]
    TagOrder { tag: u32, previous: u32 },
    #[error("tagged field {tag} has {left} unread bytes")]
    TaggedFieldNotConsumed { tag: u32, left: usize },
    #[error("boolean byte is {value}, not 0 or 1")]
    InvalidBool { value: u8 },
    #[error("{api} version {version} is not supported (supported: {min} to {max})")]
    UnsupportedVersion {
        api: &'static str,
        version: i16,
        min: i16,
        max: i16,
    },
    #[error("api key {found} does not match the expected {expected}")]
    ApiKeyMismatch { expected: i16, found: i16 },
    #[error("frame size {size} is invalid ({reason})")]
    InvalidFrameSize { size: i64, reason: &'static str },
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
