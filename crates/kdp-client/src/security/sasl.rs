//! SASL authentication as a [`ConnectionSetup`]: SaslHandshake v1, then
//! SaslAuthenticate rounds (v0-2, whatever the broker has) for PLAIN,
//! SCRAM-SHA-256/512 and OAUTHBEARER.
//!
//! Re-authentication (KIP-368): when the broker gives the session a
//! lifetime, the connection is retired at a random 85-95% of it
//! ([`Connection::retire_at`]): requests already in flight finish on it and
//! new ones go to a freshly authenticated connection. kdp's commands are
//! short, so this costs at most one extra handshake per broker and never
//! interleaves a re-authentication with requests in flight.

use std::time::Duration;

use kdp_wire::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kdp_wire::ErrorCode;

use super::config::{SaslConfig, TokenSource};
use super::oauth::{self, TokenCache};
use super::scram::ScramClient;
use super::secret::SecretBytes;
use crate::connection::Connection;
use crate::connection::{ConnectionSetup, SetupFuture};
use crate::error::{Error, Result};

/// Authenticates every new connection with one SASL configuration.
#[derive(Debug)]
pub struct SaslSetup {
    config: SaslConfig,
    tokens: TokenCache,
}

impl SaslSetup {
    /// A setup that runs SaslHandshake and SaslAuthenticate with `config` on each connection.
    pub fn new(config: SaslConfig) -> Self {
        SaslSetup {
            config,
            tokens: TokenCache::default(),
        }
    }
}

impl ConnectionSetup for SaslSetup {
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(async move {
            let lifetime = authenticate(self, conn).await?;
            if let Some(life) = lifetime {
                let retire = conn_lifetime_share(life);
                tracing::debug!(addr = conn.addr(), ?life, ?retire, "SASL session lifetime");
                conn.retire_at(tokio::time::Instant::now() + retire);
            }
            Ok(())
        })
    }
}

/// A random 85-95% of the session's lifetime, so that many connections made
/// together do not all renew at once.
fn conn_lifetime_share(life: Duration) -> Duration {
    let mut b = [0u8; 2];
    let r = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
        .map(|_| u16::from_le_bytes(b))
        .unwrap_or(u16::MAX / 2);
    life.mul_f64(0.85 + 0.10 * f64::from(r) / f64::from(u16::MAX))
}

struct Session<'a> {
    conn: &'a Connection,
    mechanism: &'static str,
    version: i16,
    lifetime_ms: i64,
}

impl Session<'_> {
    fn fail(&self, error_code: ErrorCode, message: impl Into<String>) -> Error {
        Error::Authentication {
            addr: self.conn.addr().to_string(),
            mechanism: self.mechanism,
            error_code,
            message: message.into(),
        }
    }

    /// One SaslAuthenticate round trip; a broker error fails the session
    /// with the broker's message.
    async fn round(&mut self, token: &SecretBytes) -> Result<Vec<u8>> {
        let req = SaslAuthenticateRequest {
            auth_bytes: token.expose().to_vec(),
            ..Default::default()
        };
        let resp = self.conn.send(&req, self.version).await?;
        if resp.error_code != ErrorCode::NONE {
            let msg = resp
                .error_message
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| resp.error_code.to_string());
            return Err(self.fail(
                resp.error_code,
                format!("{}: {msg}", resp.error_code.name().unwrap_or("error")),
            ));
        }
        self.lifetime_ms = resp.session_lifetime_ms;
        Ok(resp.auth_bytes)
    }
}

/// The whole exchange; returns the session's lifetime if the broker set one.
async fn authenticate(setup: &SaslSetup, conn: &Connection) -> Result<Option<Duration>> {
    let mechanism = setup.config.mechanism();
    let handshake_version = conn.version_for::<SaslHandshakeRequest>()?;
    let mut session = Session {
        conn,
        mechanism,
        version: 0,
        lifetime_ms: 0,
    };
    if handshake_version < 1 {
        // v0 sends the tokens raw on the socket, which only brokers older than 1.0 need
        return Err(session.fail(
            ErrorCode::UNSUPPORTED_VERSION,
            "the broker lacks SaslHandshake v1 (Kafka 1.0 or newer is needed)",
        ));
    }
    let hs = conn
        .send(
            &SaslHandshakeRequest {
                mechanism: mechanism.to_string(),
                ..Default::default()
            },
            handshake_version,
        )
        .await?;
    if hs.error_code != ErrorCode::NONE {
        let enabled = if hs.mechanisms.is_empty() {
            "none".to_string()
        } else {
            hs.mechanisms.join(", ")
        };
        return Err(session.fail(
            hs.error_code,
            format!(
                "{}: the listener does not enable {mechanism} (it enables: {enabled})",
                hs.error_code.name().unwrap_or("error")
            ),
        ));
    }
    session.version = conn.version_for::<SaslAuthenticateRequest>()?;
    match &setup.config {
        SaslConfig::Plain { username, password } => {
            let token =
                SecretBytes::new(format!("\0{username}\0{}", password.expose()).into_bytes());
            session.round(&token).await?;
        }
        SaslConfig::Scram {
            mechanism: m,
            username,
            password,
        } => {
            let mut scram = ScramClient::new(*m, username, password.clone())
                .map_err(|e| session.fail(ErrorCode::SASL_AUTHENTICATION_FAILED, e.0))?;
            let server_first = session.round(&SecretBytes::new(scram.first())).await?;
            let client_final = scram
                .respond(&server_first)
                .map_err(|e| session.fail(ErrorCode::SASL_AUTHENTICATION_FAILED, e.0))?;
            let server_final = session.round(&client_final).await?;
            scram
                .verify(&server_final)
                .map_err(|e| session.fail(ErrorCode::SASL_AUTHENTICATION_FAILED, e.0))?;
        }
        SaslConfig::OAuthBearer(o) => {
            let token = setup.tokens.get(&o.token).await.map_err(|e| {
                let what = match o.token {
                    TokenSource::File(_) => "no token",
                    TokenSource::ClientCredentials { .. } => "no token from the token endpoint",
                };
                session.fail(
                    ErrorCode::SASL_AUTHENTICATION_FAILED,
                    format!("{what}: {e}"),
                )
            })?;
            let challenge = session.round(&oauth::initial_response(&token)).await?;
            if !challenge.is_empty() {
                // RFC 7628 3.2.2: an error challenge (JSON status, no secret);
                // the client acknowledges with %x01 and the broker then fails
                let status = String::from_utf8_lossy(&challenge).into_owned();
                let ack = session.round(&SecretBytes::new(vec![1])).await;
                return Err(match ack {
                    Err(e @ Error::Authentication { .. }) => e,
                    _ => session.fail(
                        ErrorCode::SASL_AUTHENTICATION_FAILED,
                        format!("the broker rejected the token: {status}"),
                    ),
                });
            }
        }
    }
    tracing::debug!(addr = conn.addr(), mechanism, "SASL authenticated");
    Ok((session.lifetime_ms > 0).then(|| Duration::from_millis(session.lifetime_ms as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retirement_falls_in_the_window() {
        let life = Duration::from_secs(1000);
        for _ in 0..100 {
            let r = conn_lifetime_share(life);
            assert!(
                r >= Duration::from_secs(850) && r <= Duration::from_secs(950),
                "{r:?}"
            );
        }
    }
}
