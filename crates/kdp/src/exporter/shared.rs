//! What the scan loop and the HTTP server share: the last published
//! snapshot, health, readiness, and the stop signal.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::registry::Registry;
use tokio::sync::watch;

use super::metrics::{self, Health};

/// State shared by the scan loop and the HTTP server.
pub struct Shared {
    pub health: Health,
    /// The last published snapshot; the lock is held only to clone or swap.
    snapshot: Mutex<Arc<Registry>>,
    ready: AtomicBool,
    pub(super) scans_in_flight: AtomicUsize,
}

impl Shared {
    pub fn new(health: Health, per_partition: bool) -> Shared {
        let empty = metrics::snapshot(&BTreeMap::new(), None, per_partition, 0, &health);
        Shared {
            health,
            snapshot: Mutex::new(Arc::new(empty)),
            ready: AtomicBool::new(false),
            scans_in_flight: AtomicUsize::new(0),
        }
    }

    /// Replaces the snapshot; ready from the first one on.
    pub fn publish(&self, registry: Registry) {
        let new = Arc::new(registry);
        let old = std::mem::replace(
            &mut *self.snapshot.lock().unwrap_or_else(PoisonError::into_inner),
            new,
        );
        // the old snapshot is freed outside the lock (a scrape may still hold it)
        drop(old);
        self.ready.store(true, Ordering::Release);
    }

    pub fn current(&self) -> Arc<Registry> {
        self.snapshot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
