//! What every broker of one mock cluster shares: the cluster behind its
//! lock, how each broker is reached, the authorizer hook, the clock, and
//! the coordinators' periodic work (expiring transactional ids, aborting
//! timed-out transactions, bringing generated producers to the present),
//! run by whichever request comes when it is due.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::clock::{Clock, SystemClock};
use crate::cluster::Cluster;
use crate::coordinator::{abort_timed_out_transactions, TimeoutScans};
use crate::responder::Authorizer;

/// A broker's address as Metadata advertises it.
pub trait Addresses {
    /// `(host, port)` of broker `id`, if it is alive.
    fn address(&self, id: i32) -> Option<(String, i32)>;
}

/// How a broker is reached, as Metadata advertises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    /// The broker's `NodeId`.
    pub id: i32,
    /// `Host` in Metadata.
    pub host: String,
    /// `Port` in Metadata.
    pub port: u16,
}

/// Kafka's `transactions.remove.expired.transaction.cleanup.interval.ms`
/// default (1 hour): how often expired transactional ids are removed.
pub const TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS: i64 = 3_600_000;

/// What every broker of one mock cluster shares.
pub struct Shared {
    /// The cluster's state. WriteTxnMarkers and InitProducerId change it;
    /// everything else only reads, so readers proceed side by side.
    pub cluster: RwLock<Cluster>,
    /// One entry per broker of the cluster, in the cluster file's order.
    pub advertised: Vec<Advertised>,
    /// Decides READ on topics for DescribeProducers.
    pub authorizer: Arc<dyn Authorizer>,
    /// Largest response frame (its size prefix) sent; a request whose answer
    /// would be larger closes its connection instead.
    pub max_response_size: usize,
    /// What "now" is (marker timestamps, durations, transactional-id expiry).
    pub clock: Arc<dyn Clock>,
    /// When expired transactional ids were last removed (ms since the epoch).
    pub(crate) last_cleanup_ms: AtomicI64,
    /// When the cluster's generated producers change next (ms since the
    /// epoch; `i64::MIN`: not known yet, `i64::MAX`: never).
    pub(crate) generators_due_ms: AtomicI64,
    /// When a coordinator's scan for timed-out transactions is due next
    /// (ms since the epoch; `i64::MIN`: not known yet, `i64::MAX`: never).
    pub(crate) timeouts_due_ms: AtomicI64,
    /// Each coordinator's scan schedule (taken under the cluster's write
    /// lock only).
    pub(crate) timeout_scans: Mutex<TimeoutScans>,
    /// Position in `advertised` by broker id (the first, if one repeats).
    pub(crate) address_index: HashMap<i32, usize>,
}

impl Shared {
    /// What the brokers of a cluster share, with the system clock.
    pub fn new(
        cluster: Cluster,
        advertised: Vec<Advertised>,
        authorizer: Arc<dyn Authorizer>,
        max_response_size: usize,
    ) -> Shared {
        let mut address_index = HashMap::with_capacity(advertised.len());
        for (i, a) in advertised.iter().enumerate() {
            address_index.entry(a.id).or_insert(i);
        }
        Shared {
            cluster: RwLock::new(cluster),
            advertised,
            authorizer,
            max_response_size,
            clock: Arc::new(SystemClock),
            last_cleanup_ms: AtomicI64::new(i64::MIN),
            generators_due_ms: AtomicI64::new(i64::MIN),
            timeouts_due_ms: AtomicI64::new(i64::MIN),
            timeout_scans: Mutex::new(TimeoutScans::default()),
            address_index,
        }
    }

    /// The same, with `clock` for "now".
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Shared {
        self.clock = clock;
        self
    }

    /// Removes expired transactional ids once per
    /// [`TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS`], as the coordinator's
    /// periodic task does; a request between two runs costs a comparison.
    /// Returns how many were removed.
    pub fn remove_expired_transactional_ids(&self, now_ms: i64) -> usize {
        let last = self.last_cleanup_ms.load(Ordering::Relaxed);
        if last != i64::MIN && now_ms.saturating_sub(last) < TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS {
            return 0;
        }
        // One request runs the cleanup; the others go on.
        if self
            .last_cleanup_ms
            .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return 0;
        }
        self.write().expire_transactional_ids(now_ms)
    }

    /// Brings generated producers (`producer_generators`) to `now_ms` when
    /// something about them changed since the last time; a request between
    /// two changes costs a comparison.
    pub fn advance_generators(&self, now_ms: i64) {
        let due = self.generators_due_ms.load(Ordering::Relaxed);
        if now_ms < due {
            return;
        }
        // One request brings them on; the others go on with what is there.
        if self
            .generators_due_ms
            .compare_exchange(due, i64::MAX, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let next = self.write().advance_generators(now_ms).unwrap_or(i64::MAX);
        self.generators_due_ms.store(next, Ordering::Relaxed);
    }

    /// Runs the coordinators' scans for timed-out transactions that are due
    /// by `now_ms` (only brokers whose configuration asks for them, see
    /// [`crate::coordinator`]); a request between two scans costs a
    /// comparison. Returns how many transactions were aborted.
    pub fn abort_timed_out_transactions(&self, now_ms: i64) -> usize {
        let due = self.timeouts_due_ms.load(Ordering::Relaxed);
        if now_ms < due {
            return 0;
        }
        if self
            .timeouts_due_ms
            .compare_exchange(due, i64::MAX, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return 0;
        }
        let mut cluster = self.write();
        let mut scans = self
            .timeout_scans
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (aborted, next) = abort_timed_out_transactions(&mut cluster, &mut scans, now_ms);
        self.timeouts_due_ms
            .store(next.unwrap_or(i64::MAX), Ordering::Relaxed);
        aborted
    }

    /// The cluster, for reading. A panic while it was written (none is
    /// known) leaves a consistent value: each change is made in one step.
    pub fn read(&self) -> RwLockReadGuard<'_, Cluster> {
        self.cluster.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cluster, for changing (WriteTxnMarkers, InitProducerId); poisoning is ignored as in [`Shared::read`].
    pub fn write(&self) -> RwLockWriteGuard<'_, Cluster> {
        self.cluster.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Addresses for Shared {
    fn address(&self, id: i32) -> Option<(String, i32)> {
        // Indexed: FindCoordinator asks once per key.
        self.address_index
            .get(&id)
            .and_then(|&i| self.advertised.get(i))
            .map(|a| (a.host.clone(), i32::from(a.port)))
    }
}
