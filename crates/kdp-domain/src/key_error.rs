//! Why one key of an admin request (a partition, a transactional id, a
//! group, a broker) has no answer: a broker's error code, or a failure kdp
//! saw itself expressed as the closest Kafka error code, so that every
//! layer reports both the same way.

use kdp_wire::ErrorCode;

/// Why a key could not be done: a broker's error code, or a client-side
/// failure expressed as the closest Kafka error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// The Kafka error code, e.g. `NOT_LEADER_OR_FOLLOWER`'s 6.
    pub code: ErrorCode,
    /// The broker's `ErrorMessage`, or what kdp saw go wrong.
    pub message: Option<String>,
    /// True when kdp, not a broker, produced this error (connection failure,
    /// timeout, metadata says the key does not exist, ...).
    pub client_side: bool,
}

impl KeyError {
    /// A broker's error code and message.
    pub fn broker(code: ErrorCode, message: Option<String>) -> Self {
        KeyError {
            code,
            message,
            client_side: false,
        }
    }

    /// An error kdp itself produced, as the closest Kafka error code.
    pub fn client(code: ErrorCode, message: impl Into<String>) -> Self {
        KeyError {
            code,
            message: Some(message.into()),
            client_side: true,
        }
    }

    /// Kafka's name of the code, e.g. `NOT_LEADER_OR_FOLLOWER`.
    pub fn name(&self) -> &'static str {
        self.code.label()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_error_is_named_by_its_kafka_code_and_says_who_produced_it() {
        let e = KeyError::client(ErrorCode::REQUEST_TIMED_OUT, "no answer");
        assert_eq!(e.name(), "REQUEST_TIMED_OUT");
        assert!(e.client_side);
        let b = KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None);
        assert_eq!((b.name(), b.client_side), ("NOT_LEADER_OR_FOLLOWER", false));
    }
}
