//! One budget for a whole operation: a [`Deadline`] is fixed once (a
//! command's `--timeout`, from its start) and every I/O step after it draws
//! on what is left (bootstrap, metadata, version checks, each driver run,
//! each phase of a join), so the steps together never take longer than the
//! budget, however many there are.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, Result};

/// An instant by which an operation must be done, with the budget it was
/// given (for error messages). On tokio's clock, so tests can pause it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    /// `budget` from now on.
    pub fn after(budget: Duration) -> Self {
        Deadline {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// The deadline `at`, given as a budget of `budget` (what errors say).
    pub fn new(at: Instant, budget: Duration) -> Self {
        Deadline { at, budget }
    }

    /// When time runs out.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// The whole budget, as given.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// What is left of the budget now (zero once it has run out).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether time has run out.
    pub fn is_past(&self) -> bool {
        Instant::now() >= self.at
    }

    /// `limit`, but no more than what is left.
    pub fn bound(&self, limit: Duration) -> Duration {
        limit.min(self.remaining())
    }

    /// The error for `what` (an API or a step) not done in time.
    pub fn expired(&self, what: &'static str) -> Error {
        Error::Deadline {
            what,
            timeout: self.budget,
            started: true,
        }
    }

    /// Runs `step` until it ends or time runs out; then it is dropped and
    /// the answer is [`Error::Deadline`] naming `what`.
    pub async fn run<T>(
        &self,
        what: &'static str,
        step: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        // a step that can answer at once still does, even with no time left
        let started = !self.is_past();
        match tokio::time::timeout_at(self.at, step).await {
            Ok(r) => r,
            Err(_) => Err(Error::Deadline {
                what,
                timeout: self.budget,
                started,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_step_past_the_deadline_is_cut_and_named() {
        let d = Deadline::after(Duration::from_secs(3));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(d.remaining(), Duration::from_secs(2));
        assert_eq!(d.bound(Duration::from_secs(10)), Duration::from_secs(2));
        let start = Instant::now();
        let r: Result<()> = d.run("Metadata", std::future::pending()).await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert!(d.is_past());
        let e = r.unwrap_err();
        assert!(
            matches!(
                e,
                Error::Deadline {
                    what: "Metadata",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(e.to_string(), "Metadata did not finish within 3s");
        // the next step never began: it is not named as stalled
        let next: Result<()> = d.run("ListGroups", std::future::pending()).await;
        assert_eq!(
            next.unwrap_err().to_string(),
            "ListGroups not started: the steps before it spent the 3s budget"
        );
    }
}
