//! The connection cap of `kdp mock-broker` must fit under the open-file
//! limit, or it never applies: `accept` fails with EMFILE first (the usual
//! soft limit is 1024, the default cap 4096). At start the soft limit is
//! raised as far as the cap needs (up to the hard limit), and where even the
//! hard limit is too low, the cap is lowered to fit.

/// Descriptors kept for everything but client connections: stdio, the
/// runtime's poller and wakers, the cluster file, log files. The listeners
/// (one per broker) come on top.
const RESERVED: u64 = 64;

/// What to do about the open-file limit for a connection cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The soft limit already leaves room for the cap.
    Keep,
    /// Raise the soft limit to `soft`; the cap fits then.
    Raise { soft: u64 },
    /// The hard limit is too low for the cap: take all of it (`soft`) and
    /// lower the cap to `max_connections`.
    Clamp { soft: u64, max_connections: usize },
}

/// The plan for `max_connections` client connections beside `listeners`
/// listening sockets, under the limits `soft` and `hard`.
pub fn plan(max_connections: usize, listeners: usize, soft: u64, hard: u64) -> Plan {
    let reserved = reserved(listeners);
    let need = u64::try_from(max_connections)
        .unwrap_or(u64::MAX)
        .saturating_add(reserved);
    if soft >= need {
        Plan::Keep
    } else if hard >= need {
        Plan::Raise { soft: need }
    } else {
        Plan::Clamp {
            soft: hard.max(soft),
            max_connections: cap_under(hard.max(soft), reserved),
        }
    }
}

fn reserved(listeners: usize) -> u64 {
    RESERVED.saturating_add(u64::try_from(listeners).unwrap_or(u64::MAX))
}

/// The largest cap that leaves `reserved` descriptors under `limit` (at
/// least one connection, or nothing could be served at all).
fn cap_under(limit: u64, reserved: u64) -> usize {
    usize::try_from(limit.saturating_sub(reserved))
        .unwrap_or(usize::MAX)
        .max(1)
}

/// Applies [`plan`] to this process and returns the cap to use; logs what
/// it did.
#[cfg(unix)]
pub fn fit_connection_cap(max_connections: usize, listeners: usize) -> usize {
    use rlimit::Resource;
    let (soft, hard) = match Resource::NOFILE.get() {
        Ok(limits) => limits,
        Err(e) => {
            tracing::warn!("cannot read the open-file limit ({e}); --max-connections {max_connections} unchecked");
            return max_connections;
        }
    };
    match plan(max_connections, listeners, soft, hard) {
        Plan::Keep => {
            tracing::debug!(
                soft,
                hard,
                max_connections,
                "the open-file limit fits the connection cap"
            );
            max_connections
        }
        Plan::Raise { soft: raised } => match Resource::NOFILE.set(raised, hard) {
            Ok(()) => {
                tracing::info!(
                    "raised the open-file soft limit from {soft} to {raised} for --max-connections {max_connections}"
                );
                max_connections
            }
            Err(e) => {
                let cap = cap_under(soft, reserved(listeners));
                tracing::warn!(
                    "cannot raise the open-file soft limit from {soft} to {raised} ({e}); --max-connections {max_connections} lowered to {cap}"
                );
                cap
            }
        },
        Plan::Clamp {
            soft: raised,
            max_connections: cap,
        } => {
            let limit = if raised > soft && Resource::NOFILE.set(raised, hard).is_ok() {
                raised
            } else {
                soft
            };
            let cap = cap.min(cap_under(limit, reserved(listeners)));
            tracing::warn!(
                "--max-connections {max_connections} lowered to {cap}: the open-file limit is {limit} (hard limit {hard})"
            );
            cap
        }
    }
}

/// No open-file limit to fit under.
#[cfg(not(unix))]
pub fn fit_connection_cap(max_connections: usize, _listeners: usize) -> usize {
    max_connections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_soft_limit_with_room_is_kept() {
        assert_eq!(plan(100, 4, 1024, 4096), Plan::Keep);
        assert_eq!(plan(1024 - 64 - 4, 4, 1024, 1024), Plan::Keep);
    }

    #[test]
    fn the_soft_limit_is_raised_as_far_as_the_cap_needs() {
        // The default cap against the usual soft limit.
        assert_eq!(
            plan(4096, 4, 1024, 524_288),
            Plan::Raise {
                soft: 4096 + 64 + 4
            }
        );
        assert_eq!(
            plan(4096, 4, 1024, 4096 + 64 + 4),
            Plan::Raise {
                soft: 4096 + 64 + 4
            }
        );
        // Every listener counts.
        assert_eq!(
            plan(100, 1000, 1024, 4096),
            Plan::Raise {
                soft: 100 + 64 + 1000
            }
        );
    }

    #[test]
    fn the_cap_is_lowered_under_a_low_hard_limit() {
        assert_eq!(
            plan(4096, 4, 1024, 1024),
            Plan::Clamp {
                soft: 1024,
                max_connections: 1024 - 64 - 4
            }
        );
        assert_eq!(
            plan(4096, 4, 1024, 2048),
            Plan::Clamp {
                soft: 2048,
                max_connections: 2048 - 64 - 4
            }
        );
        // Absurdly low limits still leave one connection.
        assert_eq!(
            plan(10, 4, 16, 16),
            Plan::Clamp {
                soft: 16,
                max_connections: 1
            }
        );
        assert_eq!(
            plan(usize::MAX, 4, 1024, 1 << 20),
            Plan::Clamp {
                soft: 1 << 20,
                max_connections: (1 << 20) - 64 - 4
            }
        );
    }
}
