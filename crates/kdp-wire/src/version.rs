//! [`Version`]: the version a body is encoded in and whether it is
//! flexible, which every declared codec (owned, view, random) is driven by.

use crate::message::Message;

/// The version a body is encoded in, and whether that version is flexible
/// (compact strings and arrays, tagged fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// The message version.
    pub version: i16,
    /// Whether `version` is flexible for the message's API.
    pub flexible: bool,
}

impl Version {
    /// `version` of message `M`, flexible as its API key's table says.
    #[inline]
    pub fn of<M: Message>(version: i16) -> Self {
        Version {
            version,
            flexible: M::is_flexible(version),
        }
    }
}
