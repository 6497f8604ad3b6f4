//! Why one key of an admin request (a partition, a transactional id, a
//! group, a broker) has no answer: a broker's error code, or a failure kdp
//! saw itself expressed as the closest Kafka error code, so that every
//! layer reports both the same way.

use std::collections::HashMap;

use kdp_wire::api::ApiKey;
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
    /// The request that did not answer in time, when that is why (e.g.
    /// FindCoordinator, before the key's own request could be sent).
    pub stalled: Option<ApiKey>,
}

impl KeyError {
    /// A broker's error code and message.
    pub fn broker(code: ErrorCode, message: Option<String>) -> Self {
        KeyError {
            code,
            message,
            client_side: false,
            stalled: None,
        }
    }

    /// An error kdp itself produced, as the closest Kafka error code.
    pub fn client(code: ErrorCode, message: impl Into<String>) -> Self {
        KeyError {
            code,
            message: Some(message.into()),
            client_side: true,
            stalled: None,
        }
    }

    /// `api`'s request did not answer in time (REQUEST_TIMED_OUT).
    pub fn stalled(api: ApiKey, message: impl Into<String>) -> Self {
        KeyError {
            stalled: Some(api),
            ..KeyError::client(ErrorCode::REQUEST_TIMED_OUT, message)
        }
    }

    /// Kafka's name of the code, e.g. `NOT_LEADER_OR_FOLLOWER`.
    pub fn name(&self) -> &'static str {
        self.code.label()
    }
}

/// Keys that failed, one entry per cause: keys that failed alike (the
/// same error code, from the same side, the same request stalled) are one
/// cause however many they are, so a report says each cause once with a
/// count, never once per key.
#[derive(Debug, Clone)]
pub struct Failures<K> {
    causes: Vec<Failure<K>>,
    index: HashMap<(ErrorCode, bool, Option<ApiKey>), usize>,
}

/// One cause and the keys it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<K> {
    /// The first key's error: the cause, with its message.
    pub error: KeyError,
    /// Every key it failed, in the order they were added.
    pub keys: Vec<K>,
}

impl<K> Default for Failures<K> {
    fn default() -> Self {
        Failures {
            causes: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K> Failures<K> {
    /// No failure yet.
    pub fn new() -> Self {
        Failures::default()
    }

    /// `key` failed with `error`.
    pub fn add(&mut self, key: K, error: &KeyError) {
        let cause = (error.code, error.client_side, error.stalled);
        match self.index.get(&cause) {
            Some(&i) => self.causes[i].keys.push(key),
            None => {
                self.index.insert(cause, self.causes.len());
                self.causes.push(Failure {
                    error: error.clone(),
                    keys: vec![key],
                });
            }
        }
    }

    /// The causes, most keys first (the first seen among equals).
    pub fn causes(&self) -> Vec<&Failure<K>> {
        let mut c: Vec<&Failure<K>> = self.causes.iter().collect();
        c.sort_by_key(|f| std::cmp::Reverse(f.keys.len()));
        c
    }

    /// How many keys failed.
    pub fn len(&self) -> usize {
        self.causes.iter().map(|c| c.keys.len()).sum()
    }

    /// Whether no key failed.
    pub fn is_empty(&self) -> bool {
        self.causes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_failed_alike_are_one_cause_counted() {
        let mut f = Failures::new();
        let refused = KeyError::broker(ErrorCode::COORDINATOR_NOT_AVAILABLE, None);
        let stalled = KeyError::stalled(ApiKey::FIND_COORDINATOR, "no answer");
        for i in 0..300_000 {
            f.add(i, &refused);
        }
        f.add(-1, &stalled);
        // the same code with another message is the same cause
        f.add(
            300_000,
            &KeyError::broker(ErrorCode::COORDINATOR_NOT_AVAILABLE, Some("other".into())),
        );
        let causes = f.causes();
        assert_eq!(causes.len(), 2);
        assert_eq!(f.len(), 300_002);
        assert_eq!(causes[0].error, refused);
        assert_eq!(causes[0].keys.len(), 300_001);
        assert_eq!(&causes[0].keys[..3], &[0, 1, 2]);
        assert_eq!(causes[1].error.stalled, Some(ApiKey::FIND_COORDINATOR));
        assert_eq!(causes[1].keys, [-1]);
    }

    #[test]
    fn a_key_error_is_named_by_its_kafka_code_and_says_who_produced_it() {
        let e = KeyError::client(ErrorCode::REQUEST_TIMED_OUT, "no answer");
        assert_eq!(e.name(), "REQUEST_TIMED_OUT");
        assert!(e.client_side);
        let b = KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None);
        assert_eq!((b.name(), b.client_side), ("NOT_LEADER_OR_FOLLOWER", false));
    }
}
