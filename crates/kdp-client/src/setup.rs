//! The step between ApiVersions and a connection's first use.
//!
//! SASL authentication goes here: it needs the negotiated versions (of
//! SaslHandshake and SaslAuthenticate) and must finish before any other
//! request is sent. A connection whose setup fails is not used.

use std::future::Future;
use std::pin::Pin;

use crate::connection::Connection;
use crate::error::Result;

/// The future a [`ConnectionSetup`] returns.
pub type SetupFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// Runs on every new connection after ApiVersions, before anything else is
/// sent on it. An error fails the connection attempt with that error.
pub trait ConnectionSetup: Send + Sync + 'static {
    /// Prepares `conn` for use, e.g. by authenticating.
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a>;
}

/// The default: nothing to do (PLAINTEXT without SASL).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSetup;

impl ConnectionSetup for NoSetup {
    fn setup<'a>(&'a self, _conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(std::future::ready(Ok(())))
    }
}
