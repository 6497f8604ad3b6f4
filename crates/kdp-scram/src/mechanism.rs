//! The two SCRAM mechanisms Kafka offers, by hash function.

use ring::{digest, hmac, pbkdf2};

/// Kafka's bounds on the iteration count (`ScramMechanism.minIterations` and
/// `maxIterations`): fewer is weak, more lets a hostile server burn a
/// client's CPU.
pub const MIN_ITERATIONS: u32 = 4096;
/// See [`MIN_ITERATIONS`].
pub const MAX_ITERATIONS: u32 = 16384;

/// The SCRAM variant of `sasl.mechanism` (RFC 5802 / RFC 7677), by hash function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// `SCRAM-SHA-256`.
    Sha256,
    /// `SCRAM-SHA-512`.
    Sha512,
}

impl Mechanism {
    /// Both, in the order Kafka lists them.
    pub const ALL: [Mechanism; 2] = [Mechanism::Sha256, Mechanism::Sha512];

    /// The mechanism name sent in SaslHandshake, as written in `sasl.mechanism`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "SCRAM-SHA-256",
            Self::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism a SaslHandshake names; `None` for any other name.
    pub fn from_name(name: &str) -> Option<Mechanism> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Bytes of the hash (and of every key and signature).
    pub fn hash_len(self) -> usize {
        match self {
            Self::Sha256 => 32,
            Self::Sha512 => 64,
        }
    }

    pub(crate) fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Self::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Self::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    pub(crate) fn hmac(self) -> hmac::Algorithm {
        match self {
            Self::Sha256 => hmac::HMAC_SHA256,
            Self::Sha512 => hmac::HMAC_SHA512,
        }
    }

    pub(crate) fn digest(self) -> &'static digest::Algorithm {
        match self {
            Self::Sha256 => &digest::SHA256,
            Self::Sha512 => &digest::SHA512,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::from_name(m.name()), Some(m));
        }
        assert_eq!(Mechanism::from_name("scram-sha-256"), None);
        assert_eq!(Mechanism::from_name("PLAIN"), None);
    }
}
