//! The HTTP server's connection slots. When every slot is taken, the
//! connection that moved bytes least recently is closed to make room for
//! the new one: idle or stalled clients cannot lock scrapes out, and a
//! scraper that keeps its connection busy is never the one closed. Evictions
//! are logged at a bounded rate (one line per [`LOG_EVERY`], counting the
//! rest), so a flood of connections does not flood the log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::stall::Progress;

/// At most one eviction line in this long.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

struct Slot {
    progress: Arc<Progress>,
    evict: oneshot::Sender<()>,
}

/// The open connections, at most `max`.
pub struct Slots {
    max: usize,
    base: Instant,
    open: Mutex<(u64, HashMap<u64, Slot>)>,
}

/// A connection admitted: its id (to leave), what it records its progress
/// in, and what tells it that it was evicted.
pub struct Admitted {
    pub id: u64,
    pub progress: Arc<Progress>,
    pub evicted: oneshot::Receiver<()>,
}

impl Slots {
    pub fn new(max: usize) -> Slots {
        Slots {
            max: max.max(1),
            base: Instant::now(),
            open: Mutex::new((0, HashMap::new())),
        }
    }

    /// Admits a new connection, evicting the least recently active one if
    /// every slot is taken; returns it and whether one was evicted.
    pub fn admit(&self) -> (Admitted, bool) {
        let mut guard = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (next, open) = &mut *guard;
        let mut evicted = false;
        if open.len() >= self.max {
            let stalest = open
                .iter()
                .min_by_key(|(id, s)| (s.progress.last_ms(), **id))
                .map(|(id, _)| *id);
            if let Some(slot) = stalest.and_then(|id| open.remove(&id)) {
                // the connection may have ended on its own meanwhile
                let _ = slot.evict.send(());
                evicted = true;
            }
        }
        let id = *next;
        *next += 1;
        let progress = Progress::new(self.base);
        let (tx, rx) = oneshot::channel();
        open.insert(
            id,
            Slot {
                progress: progress.clone(),
                evict: tx,
            },
        );
        (
            Admitted {
                id,
                progress,
                evicted: rx,
            },
            evicted,
        )
    }

    /// A connection ended: its slot is free.
    pub fn leave(&self, id: u64) {
        let mut guard = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        guard.1.remove(&id);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .len()
    }
}

/// Evictions, logged at most once per [`LOG_EVERY`].
#[derive(Default)]
pub struct EvictionLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl EvictionLog {
    /// Counts one eviction; returns how many to report now (this one and
    /// those not yet reported) when a line is due.
    pub fn evicted(&mut self) -> Option<u64> {
        self.unlogged += 1;
        let now = Instant::now();
        if self.last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_full_house_evicts_the_least_recently_active() {
        let slots = Slots::new(3);
        let (a, _) = slots.admit();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let (b, _) = slots.admit();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let (c, _) = slots.admit();
        assert_eq!(slots.len(), 3);
        // a moves bytes again: b is now the stalest
        tokio::time::sleep(Duration::from_millis(10)).await;
        a.progress.touch();
        let (_d, evicted) = slots.admit();
        assert!(evicted);
        let (mut a_rx, mut b_rx, mut c_rx) = (a.evicted, b.evicted, c.evicted);
        assert!(b_rx.try_recv().is_ok(), "b moved nothing since it opened");
        assert!(a_rx.try_recv().is_err());
        assert!(c_rx.try_recv().is_err());
        assert_eq!(slots.len(), 3);
        slots.leave(c.id);
        let (_e, evicted) = slots.admit();
        assert!(!evicted, "a free slot is used first");
        assert!(a_rx.try_recv().is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn evictions_are_logged_at_a_bounded_rate() {
        let mut log = EvictionLog::default();
        assert_eq!(log.evicted(), Some(1));
        for _ in 0..99 {
            assert_eq!(log.evicted(), None);
        }
        tokio::time::sleep(LOG_EVERY).await;
        assert_eq!(log.evicted(), Some(100), "the suppressed ones are counted");
    }
}
