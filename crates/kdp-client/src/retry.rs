//! What the client is retrying, told to whoever watches
//! ([`ClientConfig::on_retry`](crate::ClientConfig::on_retry)): once per
//! operation, when its first attempt failed and it keeps trying until its
//! deadline, so a terminal is not left blank and not flooded either.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{fmt_duration, Error};
use kdp_domain::key_error::KeyError;

/// Something the client is about to try again.
#[derive(Debug, Clone)]
pub enum Retrying {
    /// No bootstrap server could be reached in the first pass over the
    /// list; passes go on until the deadline.
    Bootstrap {
        /// Why each server failed in the first pass.
        failures: Vec<Error>,
        /// What is left of the deadline.
        left: Duration,
    },
    /// Some keys of an admin request are asked again in a later round.
    Requests {
        /// The API, e.g. `ListTransactions`.
        api: &'static str,
        /// Keys still without an answer.
        keys: usize,
        /// The error of one of them.
        reason: KeyError,
        /// What is left of the deadline.
        left: Duration,
    },
}

/// A watcher of retries (the CLI prints one line on stderr).
pub type OnRetry = Arc<dyn Fn(&Retrying) + Send + Sync>;

impl fmt::Display for Retrying {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Retrying::Bootstrap { failures, left } => {
                let why: Vec<String> = failures.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "no bootstrap server answered yet ({}); retrying for up to {}",
                    why.join("; "),
                    fmt_duration(*left)
                )
            }
            Retrying::Requests {
                api,
                keys,
                reason,
                left,
            } => {
                let what = if *keys == 1 { "key" } else { "keys" };
                write!(
                    f,
                    "{api}: no answer yet for {keys} {what} ({}",
                    reason.name()
                )?;
                if let Some(m) = &reason.message {
                    write!(f, ": {m}")?;
                }
                write!(f, "); retrying for up to {}", fmt_duration(*left))
            }
        }
    }
}
