//! One bound on time for a whole command, or one exporter scan: the
//! [`Deadline`] every step draws on, how long one request may wait, and how
//! often and how patiently a step is tried again. Made once, where the
//! command (or the scan) starts, and passed by reference through every
//! driver run and every workflow, so that option structs say only what to
//! select and how to batch, and no step invents a deadline of its own.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::deadline::Deadline;
use crate::error::Result;

/// How often and how patiently a step is tried again (Kafka's
/// `retry.backoff.ms` and `retry.backoff.max.ms`), within the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Rounds at most (the first included): of requests, or of metadata
    /// lookups resolving a selection.
    pub max_attempts: u32,
    /// Pause before the second round, doubled each round after.
    pub backoff: Duration,
    /// The longest pause between rounds.
    pub backoff_max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 10,
            backoff: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// Rounds at most, at least one.
    pub fn attempts(&self) -> u32 {
        self.max_attempts.max(1)
    }

    /// The pause after `pause`: doubled, at most [`RetryPolicy::backoff_max`].
    pub fn next_backoff(&self, pause: Duration) -> Duration {
        pause.saturating_mul(2).min(self.backoff_max)
    }
}

/// One bound on time: the deadline, the request timeout and the retry
/// policy of a command (or one scan). Cheap to copy; pass it by reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBound {
    deadline: Deadline,
    request_timeout: Duration,
    retry: RetryPolicy,
}

impl TimeBound {
    /// A request's bound when none is configured (Kafka's
    /// `request.timeout.ms` default).
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

    /// A bound ending at `deadline`, with the default request timeout and
    /// retry policy.
    pub fn new(deadline: Deadline) -> Self {
        TimeBound {
            deadline,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            retry: RetryPolicy::default(),
        }
    }

    /// A bound of `budget` from now on.
    pub fn after(budget: Duration) -> Self {
        TimeBound::new(Deadline::after(budget))
    }

    /// The same bound with `timeout` as one request's bound (Kafka's
    /// `request.timeout.ms`; see [`TimeBound::request_timeout`]).
    pub fn with_request_timeout(self, timeout: Duration) -> Self {
        TimeBound {
            request_timeout: timeout,
            ..self
        }
    }

    /// The same bound with `retry` as its retry policy.
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        TimeBound { retry, ..self }
    }

    /// The deadline every step draws on.
    pub fn deadline(&self) -> Deadline {
        self.deadline
    }

    /// The retry policy.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The request timeout as configured (`request.timeout.ms`), before
    /// the budget bounds it: what a force-terminate asks the coordinator to
    /// record as the transaction timeout, as Kafka's Admin does.
    pub fn request_timeout_setting(&self) -> Duration {
        self.request_timeout
    }

    /// What one attempt (a request, opening a connection) may take at
    /// most: a third of the budget, so that a broker that stops answering
    /// costs a third of the time, not all of it, and leaves time to ask
    /// another (Kafka's Admin client likewise keeps `request.timeout.ms`
    /// below `default.api.timeout.ms`).
    pub fn attempt_limit(&self) -> Duration {
        self.deadline.budget() / 3
    }

    /// One request's bound: the request timeout, at most
    /// [`TimeBound::attempt_limit`].
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout.min(self.attempt_limit())
    }

    /// What a request sent now may wait: [`TimeBound::request_timeout`],
    /// and never past the deadline.
    pub fn request_limit(&self) -> Duration {
        self.deadline.bound(self.request_timeout())
    }

    /// What is left of the budget now.
    pub fn remaining(&self) -> Duration {
        self.deadline.remaining()
    }

    /// Whether time has run out.
    pub fn is_past(&self) -> bool {
        self.deadline.is_past()
    }

    /// Runs `step` until it ends or the deadline passes (then it is
    /// dropped and the answer is [`Error::Deadline`](crate::Error::Deadline)
    /// naming `what`).
    pub async fn run<T>(
        &self,
        what: &'static str,
        step: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        self.deadline.run(what, step).await
    }

    /// A sub-bound for one phase of a step: it ends once `numerator` /
    /// `denominator` of what is left now has passed (never after this
    /// bound's deadline), and keeps this bound's budget (what errors say,
    /// and the request timeout it allows) and retry policy. E.g. half of
    /// what is left for a phase whose failure must leave time for the next.
    pub fn share(&self, numerator: u32, denominator: u32) -> TimeBound {
        let part = self
            .remaining()
            .mul_f64(f64::from(numerator) / f64::from(denominator.max(1)));
        let at = (Instant::now() + part).min(self.deadline.at());
        TimeBound {
            deadline: Deadline::new(at, self.deadline.budget()),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_request_waits_a_third_of_the_budget_at_most_and_never_past_the_deadline() {
        let bound = TimeBound::after(Duration::from_secs(30));
        assert_eq!(bound.request_timeout(), Duration::from_secs(10));
        let short = bound.with_request_timeout(Duration::from_secs(4));
        assert_eq!(short.request_timeout(), Duration::from_secs(4));
        assert_eq!(short.request_timeout_setting(), Duration::from_secs(4));
        tokio::time::sleep(Duration::from_secs(28)).await;
        assert_eq!(bound.request_limit(), Duration::from_secs(2));
        assert_eq!(bound.remaining(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_ends_early_and_keeps_the_budget() {
        let bound = TimeBound::after(Duration::from_secs(20));
        tokio::time::sleep(Duration::from_secs(4)).await;
        let half = bound.share(1, 2);
        assert_eq!(half.remaining(), Duration::from_secs(8));
        assert_eq!(half.deadline().budget(), Duration::from_secs(20));
        assert_eq!(half.request_timeout(), bound.request_timeout());
        assert_eq!(half.retry(), bound.retry());
        // never past the bound it came from
        assert_eq!(bound.share(3, 1).deadline().at(), bound.deadline().at());
    }

    #[test]
    fn backoff_doubles_up_to_its_maximum() {
        let r = RetryPolicy::default();
        assert_eq!(r.next_backoff(r.backoff), Duration::from_millis(200));
        assert_eq!(r.next_backoff(Duration::from_millis(1500)), r.backoff_max);
        let once = RetryPolicy {
            max_attempts: 0,
            ..r
        };
        assert_eq!(once.attempts(), 1);
    }
}
