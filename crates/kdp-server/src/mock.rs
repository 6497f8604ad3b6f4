//! The mock cluster: every broker of a cluster file in one process, one TCP
//! listener each, serving what [`crate::broker`] handles.
//!
//! Robustness: the size prefix is checked against the maximum before any
//! buffer exists, and the body buffer grows only as bytes arrive, so a
//! client announcing 100 MiB and sending nothing costs nothing; a connection
//! idle for longer than the idle timeout (waiting for a request, inside a
//! request, or not reading its responses) is closed; the number of
//! connections is capped; requests of a connection are handled in order
//! (pipelined requests get their responses in order); a malformed or
//! unsupported request closes its connection only, and is logged.
//!
//! Security: with [`MockConfig::tls`] every listener speaks TLS (the
//! handshake runs in the connection's own task, bounded by the idle
//! timeout); with users in the cluster file every connection must
//! authenticate with SASL first ([`crate::sasl`]), and its requests are
//! then judged by the file's ACLs for its principal.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kdp_wire::frame::io::{read_frame_idle, ReadFrameError};
use kdp_wire::frame::{FrameReader, DEFAULT_MAX_FRAME_SIZE};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::timeout;
use tracing::{debug, info, warn};

use crate::broker::{handle_request_as, Advertised, Handled, Reject, Shared};
use crate::clock::{Clock, SystemClock};
use crate::cluster::Cluster;
use crate::responder::{AllowAll, Authorizer};
use crate::sasl::{SaslGate, Verdict};

/// Kafka's `connections.max.idle.ms` default (10 minutes).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Default largest response frame: what kdp's client accepts by default
/// (Kafka's `socket.request.max.bytes`, 100 MiB), so a kdp client is never
/// sent a frame it refuses.
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = DEFAULT_MAX_FRAME_SIZE;
/// Default cap on concurrent connections (all brokers together).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Requests larger than this are handled on tokio's blocking pool. Handling
/// costs time in proportion to the request (decoding, name checks, set
/// lookups, one answer entry per named partition: a Metadata request naming
/// 30,000 topics is a few hundred KB), and a runtime worker busy with one
/// connection's request serves no other connection meanwhile. Smaller
/// requests stay inline: their work is small, and a thread hand-off would
/// cost more than it. (Answers that are large for a small request are
/// bounded by `max_response_size`.)
const INLINE_REQUEST_MAX: usize = 16 * 1024;
/// Responses are flushed when no further request is buffered or when this
/// many bytes are waiting.
const FLUSH_AT: usize = 64 * 1024;

/// How to run a mock cluster.
#[derive(Clone)]
pub struct MockConfig {
    /// Host (name or address) to listen on; also advertised, unless it is an
    /// unspecified address (then 127.0.0.1 or ::1) or the broker sets `host`.
    pub host: String,
    /// Port of the first broker; the others take the next ports. 0: every
    /// broker gets a free port from the system.
    pub port: u16,
    /// Largest request (size prefix) accepted; larger ones close the connection.
    pub max_request_size: usize,
    /// Largest response (size prefix) sent; a request whose answer would be
    /// larger is logged and its connection closed, before the answer is
    /// built where possible.
    pub max_response_size: usize,
    /// A connection with no request for this long is closed (Kafka's `connections.max.idle.ms`).
    pub idle_timeout: Duration,
    /// Connections open at once over all brokers; more are refused.
    pub max_connections: usize,
    /// Decides READ on topics for DescribeProducers.
    pub authorizer: Arc<dyn Authorizer>,
    /// If set, every listener speaks TLS with this configuration (see [`crate::tls::server_config`]).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// What "now" is for the brokers ([`crate::clock::SystemClock`] unless a
    /// test moves time itself with [`crate::clock::ManualClock`]).
    pub clock: Arc<dyn Clock>,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            host: "127.0.0.1".to_string(),
            port: 9092,
            max_request_size: DEFAULT_MAX_FRAME_SIZE,
            max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            authorizer: Arc::new(AllowAll),
            tls: None,
            clock: Arc::new(SystemClock),
        }
    }
}

impl std::fmt::Debug for MockConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("max_request_size", &self.max_request_size)
            .field("max_response_size", &self.max_response_size)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

/// One running broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerListener {
    /// The broker's `NodeId`.
    pub id: i32,
    /// The socket address the listener is bound to.
    pub local_addr: SocketAddr,
    /// `host:port` as Metadata advertises it.
    pub advertised: String,
}

/// Counters, for tests and logs.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests read.
    pub requests: AtomicU64,
    /// Requests that closed their connection (malformed, too large, unsupported).
    pub rejected_requests: AtomicU64,
    /// Connections refused at `max_connections`.
    pub refused_connections: AtomicU64,
}

/// A running mock cluster. Dropping it without [`MockCluster::shutdown`]
/// also stops the listeners (their tasks notice the closed channel).
pub struct MockCluster {
    listeners: Vec<BrokerListener>,
    shutdown_tx: watch::Sender<bool>,
    done_rx: mpsc::Receiver<()>,
    stats: Arc<Stats>,
    shared: Arc<Shared>,
}

impl MockCluster {
    /// Binds one listener per broker and starts serving (on the current
    /// tokio runtime).
    pub async fn start(cluster: Cluster, config: MockConfig) -> io::Result<MockCluster> {
        let mut bound = Vec::with_capacity(cluster.brokers.len());
        for (i, b) in cluster.brokers.iter().enumerate() {
            let port = if config.port == 0 {
                0
            } else {
                u16::try_from(usize::from(config.port) + i).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("no port left for broker {} after {}", b.id, config.port),
                    )
                })?
            };
            let listener = TcpListener::bind((config.host.as_str(), port))
                .await
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "broker {}: cannot listen on {}:{port}: {e}",
                            b.id, config.host
                        ),
                    )
                })?;
            let local = listener.local_addr()?;
            let host = match &b.host {
                Some(h) => h.clone(),
                None => advertised_host(&config.host, local),
            };
            bound.push((b.id, listener, local, host));
        }
        let advertised: Vec<Advertised> = bound
            .iter()
            .map(|(id, _, local, host)| Advertised {
                id: *id,
                host: host.clone(),
                port: local.port(),
            })
            .collect();
        let listeners: Vec<BrokerListener> = bound
            .iter()
            .map(|(id, _, local, host)| BrokerListener {
                id: *id,
                local_addr: *local,
                advertised: join_host_port(host, local.port()),
            })
            .collect();
        let shared = Arc::new(
            Shared::new(
                cluster,
                advertised,
                config.authorizer.clone(),
                config.max_response_size,
            )
            .with_clock(config.clock.clone()),
        );
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (done_tx, done_rx) = mpsc::channel::<()>(1);
        let stats = Arc::new(Stats::default());
        let limit = Arc::new(Semaphore::new(config.max_connections));
        let conn = Arc::new(ConnConfig {
            max_request_size: config.max_request_size,
            idle_timeout: config.idle_timeout,
            tls: config.tls.clone().map(tokio_rustls::TlsAcceptor::from),
        });
        for (id, listener, local, _) in bound {
            info!(broker = id, addr = %local, "listening");
            tokio::spawn(accept_loop(
                id,
                listener,
                shared.clone(),
                conn.clone(),
                limit.clone(),
                stats.clone(),
                shutdown_rx.clone(),
                done_tx.clone(),
            ));
        }
        Ok(MockCluster {
            listeners,
            shutdown_tx,
            done_rx,
            stats,
            shared,
        })
    }

    /// Every broker's listener, in the cluster file's order.
    pub fn listeners(&self) -> &[BrokerListener] {
        &self.listeners
    }

    /// The bootstrap list: every broker's advertised `host:port`, comma-separated.
    pub fn bootstrap(&self) -> String {
        self.listeners
            .iter()
            .map(|l| l.advertised.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The advertised `host:port` of broker `id`.
    pub fn broker_addr(&self, id: i32) -> Option<&str> {
        self.listeners
            .iter()
            .find(|l| l.id == id)
            .map(|l| l.advertised.as_str())
    }

    /// Counters since start.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The cluster as it is now: the file's, plus what WriteTxnMarkers and
    /// InitProducerId changed since.
    pub fn cluster(&self) -> Cluster {
        self.shared.read().clone()
    }

    /// Changes the cluster while it serves, between two requests: a leader
    /// election, a producer appearing. What `f` returns is returned.
    pub fn update<R>(&self, f: impl FnOnce(&mut Cluster) -> R) -> R {
        f(&mut self.shared.write())
    }

    /// Stops accepting, lets each connection finish the request it is
    /// handling, closes them, and waits (at most `grace`) until all are gone.
    pub async fn shutdown_within(mut self, grace: Duration) {
        let _ = self.shutdown_tx.send(true);
        // Every listener and connection task holds a sender; recv() returns
        // None once all are dropped.
        if timeout(grace, self.done_rx.recv()).await.is_err() {
            warn!("connections still open after {grace:?}; leaving them");
        }
    }

    /// [`MockCluster::shutdown_within`] with 5 seconds of grace.
    pub async fn shutdown(self) {
        self.shutdown_within(Duration::from_secs(5)).await;
    }
}

fn advertised_host(listen_host: &str, local: SocketAddr) -> String {
    match listen_host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
    {
        Ok(ip) if ip.is_unspecified() => {
            if local.is_ipv4() {
                "127.0.0.1".into()
            } else {
                "::1".into()
            }
        }
        Ok(ip) => ip.to_string(),
        Err(_) => listen_host.to_string(),
    }
}

fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

struct ConnConfig {
    max_request_size: usize,
    idle_timeout: Duration,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

#[allow(clippy::too_many_arguments)]
async fn accept_loop(
    broker_id: i32,
    listener: TcpListener,
    shared: Arc<Shared>,
    conn: Arc<ConnConfig>,
    limit: Arc<Semaphore>,
    stats: Arc<Stats>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) {
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = shutdown.changed() => break,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // EMFILE and the like: back off instead of spinning.
                warn!(broker = broker_id, "accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = limit.clone().try_acquire_owned() else {
            stats.refused_connections.fetch_add(1, Ordering::Relaxed);
            warn!(broker = broker_id, %peer, "too many connections; closing this one");
            drop(stream);
            continue;
        };
        stats.connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let conn = conn.clone();
        let stats = stats.clone();
        let shutdown = shutdown.clone();
        let done = done.clone();
        tokio::spawn(async move {
            debug!(broker = broker_id, %peer, "connection opened");
            let why = match &conn.tls {
                None => {
                    serve_connection(
                        stream, peer, broker_id, None, &shared, &conn, &stats, shutdown,
                    )
                    .await
                }
                Some(acceptor) => match timeout(conn.idle_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(tls)) => {
                        // Kafka's SSL principal: the client certificate's subject.
                        let principal = tls
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|chain| chain.first())
                            .and_then(|cert| crate::cert_principal::principal(cert));
                        serve_connection(
                            tls, peer, broker_id, principal, &shared, &conn, &stats, shutdown,
                        )
                        .await
                    }
                    Ok(Err(e)) => Closed::Rejected(format!("TLS handshake failed: {e}")),
                    Err(_) => Closed::Idle,
                },
            };
            match why {
                Closed::ByClient => {
                    debug!(broker = broker_id, %peer, "connection closed by client")
                }
                Closed::Shutdown => {
                    debug!(broker = broker_id, %peer, "connection closed: shutting down")
                }
                Closed::Idle => info!(broker = broker_id, %peer, "connection closed: idle"),
                Closed::Io(e) => info!(broker = broker_id, %peer, "connection closed: {e}"),
                Closed::Rejected(reason) => {
                    warn!(broker = broker_id, %peer, "closing connection: {reason}")
                }
            }
            drop(permit);
            drop(done);
        });
    }
    debug!(broker = broker_id, "listener stopped");
}

enum Closed {
    ByClient,
    Shutdown,
    Idle,
    Io(io::Error),
    Rejected(String),
}

#[allow(clippy::too_many_arguments)]
async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    peer: SocketAddr,
    broker_id: i32,
    certificate_principal: Option<String>,
    shared: &Arc<Shared>,
    conn: &ConnConfig,
    stats: &Stats,
    mut shutdown: watch::Receiver<bool>,
) -> Closed {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut rd = BufReader::with_capacity(16 * 1024, rd);
    let mut out: Vec<u8> = Vec::new();
    let mut gate =
        SaslGate::new(&shared.read().users).with_certificate_principal(certificate_principal);
    loop {
        let max = gate.max_frame(conn.max_request_size);
        let frame = tokio::select! {
            f = read_frame(&mut rd, max, conn.idle_timeout) => f,
            _ = shutdown.changed() => return Closed::Shutdown,
        };
        let payload = match frame {
            Ok(Some(p)) => p,
            Ok(None) => return Closed::ByClient,
            Err(c) => return c,
        };
        stats.requests.fetch_add(1, Ordering::Relaxed);
        let verdict = if gate.passes() {
            Verdict::Serve
        } else {
            gate.on_frame(&shared.read().users, &payload)
        };
        match verdict {
            Verdict::Serve => {}
            Verdict::Answer(frame) => {
                out.extend_from_slice(&frame);
                if let Err(c) = write_out(&mut wr, &mut out, conn.idle_timeout).await {
                    return c;
                }
                continue;
            }
            Verdict::AnswerAndClose(frame, reason) => {
                stats.rejected_requests.fetch_add(1, Ordering::Relaxed);
                out.extend_from_slice(&frame);
                let _ = write_out(&mut wr, &mut out, conn.idle_timeout).await;
                return Closed::Rejected(reason);
            }
            Verdict::Close(reason) => {
                stats.rejected_requests.fetch_add(1, Ordering::Relaxed);
                let _ = write_out(&mut wr, &mut out, conn.idle_timeout).await;
                return Closed::Rejected(reason);
            }
        }
        match handle(shared, broker_id, payload, peer, gate.principal()).await {
            Ok(handled) => {
                debug!(
                    broker = broker_id,
                    %peer,
                    api_key = handled.header.request_api_key,
                    api_version = handled.header.request_api_version,
                    correlation_id = handled.header.correlation_id,
                    "request"
                );
                if out.is_empty() {
                    // No copy of a large answer.
                    out = handled.response;
                } else {
                    out.extend_from_slice(&handled.response);
                }
            }
            Err(reject) => {
                stats.rejected_requests.fetch_add(1, Ordering::Relaxed);
                // Answer what came before, then close.
                let _ = write_out(&mut wr, &mut out, conn.idle_timeout).await;
                return Closed::Rejected(reject.0);
            }
        }
        if rd.buffer().is_empty() || out.len() >= FLUSH_AT {
            if let Err(c) = write_out(&mut wr, &mut out, conn.idle_timeout).await {
                return c;
            }
        }
    }
}

/// [`handle_request`], on the blocking pool if the request is large (see
/// [`INLINE_REQUEST_MAX`]).
async fn handle(
    shared: &Arc<Shared>,
    broker_id: i32,
    payload: Vec<u8>,
    peer: SocketAddr,
    principal: String,
) -> Result<Handled, Reject> {
    if payload.len() <= INLINE_REQUEST_MAX {
        return handle_request_as(shared, broker_id, &payload, Some(peer), principal);
    }
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        handle_request_as(&shared, broker_id, &payload, Some(peer), principal)
    })
    .await
    .unwrap_or_else(|e| Err(Reject(format!("handling the request failed: {e}"))))
}

async fn write_out<W: AsyncWrite + Unpin>(
    wr: &mut W,
    out: &mut Vec<u8>,
    idle: Duration,
) -> Result<(), Closed> {
    if out.is_empty() {
        return Ok(());
    }
    match timeout(idle, wr.write_all(out)).await {
        Ok(Ok(())) => {
            out.clear();
            if out.capacity() > 4 * FLUSH_AT {
                out.shrink_to(FLUSH_AT);
            }
            Ok(())
        }
        Ok(Err(e)) => Err(Closed::Io(e)),
        Err(_) => Err(Closed::Idle),
    }
}

/// Reads one frame's payload with kdp-wire's frame loop
/// ([`read_frame_idle`]), taking only the frame's bytes from the
/// buffered reader (pipelined requests stay buffered).
/// `Ok(None)`: the client closed the connection between requests.
async fn read_frame<R: AsyncBufRead + Unpin>(
    rd: &mut R,
    max_request_size: usize,
    idle_timeout: Duration,
) -> Result<Option<Vec<u8>>, Closed> {
    let mut frames = FrameReader::new(max_request_size);
    match read_frame_idle(rd, &mut frames, idle_timeout).await {
        Ok(payload) => Ok(Some(payload)),
        Err(ReadFrameError::Closed) => Ok(None),
        Err(ReadFrameError::Idle(_)) => Err(Closed::Idle),
        Err(ReadFrameError::Io(e)) => Err(Closed::Io(e)),
        Err(ReadFrameError::Truncated {
            received,
            expected: None,
        }) => Err(Closed::Rejected(format!(
            "connection ended inside a size prefix ({received} of 4 bytes)"
        ))),
        Err(ReadFrameError::Truncated {
            received,
            expected: Some(total),
        }) => Err(Closed::Rejected(format!(
            "connection ended inside a request ({} of {} bytes)",
            received.saturating_sub(4),
            total.saturating_sub(4)
        ))),
        Err(ReadFrameError::Refused(e)) => Err(Closed::Rejected(format!(
            "{e} (max.request.size here: {max_request_size} bytes)"
        ))),
    }
}
