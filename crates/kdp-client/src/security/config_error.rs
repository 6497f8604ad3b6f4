//! A client property that cannot be used, and why: named by its key,
//! never quoting its value (it may be a secret).

use std::fmt;

/// A property that cannot be used, and why. Names the key, never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The Kafka property at fault, e.g. `sasl.mechanism` or `ssl.truststore.location`.
    pub key: String,
    /// What is wrong with it and how to fix it; never quotes the value.
    pub message: String,
}

impl ConfigError {
    /// An error about property `key`; `message` must not contain the property's value.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}
