//! `kdp exporter`: scans the cluster on an interval and serves what it found
//! as Prometheus metrics.
//!
//! - [`scan`]: the scan loop (one task: scans never overlap).
//! - [`aggregate`]: one scan folded per topic (or partition) as it streams.
//! - [`diagnosis`]: what a diagnosis found (hanging, stuck, unknown,
//!   fenced, diverged, blocked) and the [`diagnosis::Diagnose`] sources.
//! - [`findings`]: the real diagnosis, from the scan's own answers.
//! - [`groups`]: consumer groups held back by open transactions, per group.
//! - [`lag`]: consumer lag in records beside Kafka's offset lag, per
//!   group and topic (`--lag`).
//! - [`metrics`]: the metric catalogue (names, types, help) and snapshots.
//! - [`pressure`]: producer-id pressure per broker and topic
//!   (`--producer-ids`: every replica asked).
//! - [`exposition`]: content negotiation and the two text formats.
//! - [`shared`]: what the scan loop and the HTTP server share.
//! - [`http`]: `/metrics`, `/healthz`, `/readyz`, bounded against hostile
//!   clients by [`slots`] (eviction of the least recently active) and
//!   [`stall`] (write timeouts).

pub mod aggregate;
pub mod diagnosis;
pub mod exposition;
pub mod findings;
pub mod groups;
pub mod http;
pub mod lag;
pub mod metrics;
pub mod owners;
pub mod pressure;
pub mod scan;
pub mod shared;
pub mod slots;
pub mod stall;

use std::net::SocketAddr;

use kdp_client::BrokerAddress;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

use diagnosis::Diagnose;
use metrics::Health;
use scan::ScanConfig;
use shared::Shared;

/// Everything `kdp exporter` needs.
pub struct Config {
    pub scan: ScanConfig,
    /// Where to serve; bound as given (no other address).
    pub listen: BrokerAddress,
    pub diagnose: Arc<dyn Diagnose>,
}

/// Why the exporter could not start.
#[derive(Debug)]
pub enum StartError {
    /// `--listen` could not be bound (in use, not a local address, not
    /// permitted): a usage error, found before the cluster is asked anything.
    Listen(std::io::Error),
    /// The process could not start its HTTP thread or runtime.
    Runtime(std::io::Error),
}

/// Binds, reports the bound address through `bound`, then scans and serves
/// until `stop` resolves (a signal); then both stop cleanly. Nothing is sent
/// to the cluster before `--listen` is bound.
///
/// The HTTP server runs on its own thread and runtime: decoding a scan's
/// responses is CPU work on the main runtime, and a scrape must not queue
/// behind it.
pub async fn run(
    config: Config,
    bound: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), StartError> {
    let health = Health::new(config.scan.interval.as_secs_f64());
    let shared = Arc::new(Shared::new(health, config.scan.per_partition));
    let (stop_tx, stop_rx) = watch::channel(false);
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let server = {
        let (shared, stop_rx, listen) = (shared.clone(), stop_rx.clone(), config.listen);
        std::thread::Builder::new()
            .name("kdp-http".into())
            .spawn(move || serve_on_own_runtime(listen, shared, stop_rx, bound_tx))
            .map_err(StartError::Runtime)?
    };
    let addr = match bound_rx.await {
        Ok(Ok(addr)) => addr,
        Ok(Err(e)) => {
            let _ = tokio::task::spawn_blocking(move || server.join()).await;
            return Err(e);
        }
        Err(_) => {
            return Err(StartError::Runtime(std::io::Error::other(
                "the HTTP server thread ended early",
            )))
        }
    };
    bound(addr);
    let scanner = tokio::spawn(scan::run(config.scan, shared, config.diagnose, stop_rx));
    stop.await;
    let _ = stop_tx.send(true);
    let _ = scanner.await;
    let _ = tokio::task::spawn_blocking(move || server.join()).await;
    Ok(())
}

fn serve_on_own_runtime(
    listen: BrokerAddress,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
    bound: tokio::sync::oneshot::Sender<Result<SocketAddr, StartError>>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = bound.send(Err(StartError::Runtime(e)));
            return;
        }
    };
    rt.block_on(async move {
        let listener = match TcpListener::bind((listen.host.as_str(), listen.port)).await {
            Ok(l) => l,
            Err(e) => {
                let _ = bound.send(Err(StartError::Listen(e)));
                return;
            }
        };
        match listener.local_addr() {
            Ok(addr) => {
                let _ = bound.send(Ok(addr));
            }
            Err(e) => {
                let _ = bound.send(Err(StartError::Listen(e)));
                return;
            }
        }
        http::serve(listener, shared, stop).await;
    });
}
