//! The HTTP side: `/metrics`, `/healthz`, `/readyz`, on hyper's HTTP/1.
//!
//! A scrape clones the current snapshot's `Arc` (a lock held for that only)
//! and encodes it: it never waits for a scan. Connections are capped, and a
//! new one past the cap closes the least recently active ([`super::slots`]),
//! so idle or stalled clients cannot lock scrapes out; a client that does
//! not send its request headers in time, or does not read its answer, is
//! dropped ([`super::stall`]); on shutdown open connections finish their
//! request and close.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::exposition::{self, Format};
use super::shared::{stopped, Shared};
use super::slots::{EvictionLog, Slots};
use super::stall::Watched;

/// Connections served at once; a new one past this evicts the least
/// recently active (Prometheus needs one).
const MAX_CONNECTIONS: usize = 64;
/// A client must send its request headers within this.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A write that makes no progress for this long ends its connection (a
/// client that sends requests and never reads the answers).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections get to finish on shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Slots::new(MAX_CONNECTIONS));
    let mut evictions = EvictionLog::default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // e.g. out of file descriptors: wait instead of spinning
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stopped(&mut shutdown) => break,
        };
        let (admitted, evicted) = slots.admit();
        if evicted {
            if let Some(n) = evictions.evicted() {
                tracing::warn!(
                    evicted = n,
                    max = MAX_CONNECTIONS,
                    "too many connections: closed the least recently active to make room (at most one such line per {:?})",
                    super::slots::LOG_EVERY
                );
            }
        }
        let shared = shared.clone();
        let service = service_fn(move |req| {
            let response = respond(&shared, &req);
            async move { Ok::<_, Infallible>(response) }
        });
        let io = Watched::new(stream, admitted.progress, WRITE_TIMEOUT);
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        let slots = slots.clone();
        let (id, evicted) = (admitted.id, admitted.evicted);
        tokio::spawn(async move {
            tokio::select! {
                ended = conn => {
                    if let Err(e) = ended {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                }
                // dropping the connection closes it
                _ = evicted => tracing::debug!(%peer, "connection evicted"),
            }
            slots.leave(id);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; leaving them");
    }
}

fn respond(shared: &Shared, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if !matches!(path, "/metrics" | "/healthz" | "/readyz") {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: try /metrics, /healthz or /readyz\n",
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match path {
        "/healthz" => plain(StatusCode::OK, "ok\n"),
        "/readyz" if shared.is_ready() => plain(StatusCode::OK, "ready\n"),
        "/readyz" => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: no scan has reached the cluster yet\n",
        ),
        _ => {
            let accept = req.headers().get(ACCEPT).and_then(|v| v.to_str().ok());
            let format = Format::negotiate(accept);
            let registry = shared.current();
            match exposition::encode(&registry, format) {
                Ok(body) => {
                    let mut r = Response::new(Full::new(Bytes::from(body)));
                    r.headers_mut().insert(
                        CONTENT_TYPE,
                        HeaderValue::from_static(format.content_type()),
                    );
                    r
                }
                Err(_) => plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "cannot encode the metrics\n",
                ),
            }
        }
    }
}

fn plain(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}
