//! Secured connections: Kafka client properties ([`SecurityConfig`]), TLS
//! ([`tls::TlsConnector`]) and SASL ([`sasl::SaslSetup`]).
//!
//! The properties are the ones `kafka-transactions.sh --command-config`
//! reads, plus the names librdkafka users bring (`ssl.ca.location`,
//! `sasl.username`, ...). Secret values live in [`Secret`]s and never reach
//! an error, a log line or `Debug` output.

mod config;
mod config_error;
mod encrypted_key;
pub mod jaas;
pub mod oauth;
mod pbe_sha1_3des;
pub mod sasl;
pub mod scram;
pub mod secret;
pub mod tls;
pub mod tls_words;

use std::sync::Arc;

pub use config::{
    is_security_property, Identity, OAuthConfig, SaslConfig, ScramMechanism, SecurityConfig,
    SecurityProtocol, TlsConfig, TokenSource, Trust,
};
pub use config_error::ConfigError;
pub use secret::{Secret, SecretBytes};

use crate::client::ClientConfig;
use crate::connection::NoSetup;
use crate::transport::TcpConnector;

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
