//! Secured connections: Kafka client properties ([`SecurityConfig`]), TLS
//! ([`tls::TlsConnector`]) and SASL ([`sasl::SaslSetup`]).
//!
//! The properties are the ones `kafka-transactions.sh --command-config`
//! reads, plus the names librdkafka users bring (`ssl.ca.location`,
//! `sasl.username`, ...). Secret values live in [`Secret`]s and never reach
//! an error, a log line or `Debug` output.

mod config;
mod encrypted_key;
pub mod jaas;
pub mod oauth;
mod pbe_sha1_3des;
pub mod sasl;
pub mod scram;
pub mod secret;
pub mod tls;

use std::fmt;
use std::sync::Arc;

pub use config::{
    is_security_property, Identity, OAuthConfig, SaslConfig, ScramMechanism, SecurityConfig,
    SecurityProtocol, TlsConfig, TokenSource, Trust,
};
pub use secret::{Secret, SecretBytes};

use crate::client::ClientConfig;
use crate::setup::NoSetup;
use crate::transport::TcpConnector;

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

impl SecurityConfig {
    /// Sets `client`'s connector (TCP or TLS) and connection setup (SASL or
    /// none) to implement this configuration.
    pub fn apply(&self, client: &mut ClientConfig) -> Result<(), ConfigError> {
        client.connector = match &self.tls {
            Some(tls) => Arc::new(tls::TlsConnector::new(tls)?),
            None => Arc::new(TcpConnector),
        };
        client.connection.setup = match &self.sasl {
            Some(sasl) => Arc::new(sasl::SaslSetup::new(sasl.clone())),
            None => Arc::new(NoSetup),
        };
        Ok(())
    }
}
