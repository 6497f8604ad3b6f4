//! One connection to one broker, with many requests in flight.
//!
//! The stream is split in two. A writer task owns the write half and writes
//! whole frames from a queue, so a caller that gives up (timeout, drop) can
//! never leave half a frame on the socket. A reader task owns the read half:
//! it splits frames with kdp-wire's [`FrameReader`] (size prefix checked
//! against the maximum response size before any buffer exists), and routes
//! each by correlation id to the caller waiting for it. Kafka answers in
//! order on a connection, but routing is by id anyway; an id nobody is
//! waiting for is a protocol violation and fails the connection, unless its
//! caller gave up recently (a late answer). A caller that gives up frees its
//! slot at once. When the connection fails, every request in flight gets the
//! same error, and so does every later request.
//!
//! Between ApiVersions and its first use, a connection runs its
//! [`ConnectionSetup`] (SASL authentication; nothing for PLAINTEXT).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use kdp_wire::frame::io::{self, ReadFrameError};
use kdp_wire::frame::{encode_request_frame, FrameReader, DEFAULT_MAX_FRAME_SIZE};
use kdp_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kdp_wire::view::Received;
use kdp_wire::ErrorCode;
use kdp_wire::{api, DecodeError, Message, Reader, Request, RequestHeader};
use kdp_wire::{decode_exact, ResponseHeader};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::transport::{AsyncStream, BrokerAddress, Connector};
use crate::versions::ApiVersionsTable;

/// Per-connection settings.
#[derive(Clone)]
pub struct ConnectionConfig {
    /// The request header's client id (Kafka's `client.id`).
    pub client_id: Option<String>,
    /// How long [`Connection::send`] waits for a response.
    pub request_timeout: Duration,
    /// Responses whose size prefix is larger are refused before any allocation.
    pub max_response_size: usize,
    /// Runs after ApiVersions, before the connection's first use (where SASL
    /// plugs in); [`NoSetup`] by default.
    pub setup: Arc<dyn ConnectionSetup>,
}

impl std::fmt::Debug for ConnectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionConfig")
            .field("client_id", &self.client_id)
            .field("request_timeout", &self.request_timeout)
            .field("max_response_size", &self.max_response_size)
            .finish_non_exhaustive()
    }
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            client_id: Some("kdp".into()),
            request_timeout: Duration::from_secs(30),
            max_response_size: DEFAULT_MAX_FRAME_SIZE,
            setup: Arc::new(NoSetup),
        }
    }
}

/// The read buffer: bytes are read in steps of at most this much and handed
/// to the frame reader, whose buffer grows only with what arrived.
const READ_CHUNK: usize = 64 * 1024;

/// How many abandoned correlation ids a connection remembers, so that a late
/// answer to one is dropped rather than taken for a protocol violation.
/// Bounded: a broker that never answers must not grow the connection.
const ABANDONED_MEMORY: usize = 256;

struct State {
    /// Requests waiting for their response, by correlation id.
    pending: HashMap<i32, oneshot::Sender<Result<Bytes>>>,
    /// The latest requests whose callers gave up, oldest first.
    abandoned: VecDeque<i32>,
    failed: Option<Error>,
}

struct Shared {
    addr: String,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent data (plain inserts
        // and removes), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks the connection failed and hands `err` to every waiting request.
    fn fail(&self, err: Error) {
        let drained: Vec<_> = {
            let mut st = self.lock();
            if st.failed.is_none() {
                st.failed = Some(err.clone());
            }
            st.abandoned.clear();
            st.pending.drain().map(|(_, s)| s).collect()
        };
        for tx in drained {
            let _ = tx.send(Err(err.clone()));
        }
    }

    fn failure(&self) -> Error {
        self.lock()
            .failed
            .clone()
            .unwrap_or_else(|| Error::Shutdown {
                addr: self.addr.clone(),
            })
    }

    /// Forgets `id` if it was abandoned: its late answer is expected once.
    fn was_abandoned(&self, id: i32) -> bool {
        let mut st = self.lock();
        match st.abandoned.iter().position(|a| *a == id) {
            Some(i) => {
                st.abandoned.remove(i);
                true
            }
            None => false,
        }
    }
}

/// Frees a request's slot when its caller stops waiting (timeout, drop)
/// before the answer, so an unanswered request leaves nothing behind but its
/// id in the bounded abandoned list.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: i32,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        if st.pending.remove(&self.id).is_some() {
            if st.abandoned.len() == ABANDONED_MEMORY {
                st.abandoned.pop_front();
            }
            st.abandoned.push_back(self.id);
        }
    }
}

/// A connection to one broker. Cheap to share behind an `Arc`; every method
/// takes `&self`, and any number of requests may be in flight at once.
pub struct Connection {
    addr: String,
    config: ConnectionConfig,
    shared: Arc<Shared>,
    next_correlation_id: AtomicI32,
    writer: mpsc::UnboundedSender<Bytes>,
    throttled_until: Mutex<Option<Instant>>,
    versions: OnceLock<ApiVersionsTable>,
    /// When the connection stops being handed out (a SASL session's end).
    retire_at: Mutex<Option<Instant>>,
    tasks: [AbortHandle; 2],
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.addr)
            .field("usable", &self.is_usable())
            .finish()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Connection {
    /// Starts a connection over an open stream, without ApiVersions (see
    /// [`Connection::establish`]). `addr` names the peer in errors. Must be
    /// called inside a tokio runtime.
    pub fn new<S: AsyncStream>(
        stream: S,
        addr: impl Into<String>,
        config: ConnectionConfig,
    ) -> Self {
        let addr = addr.into();
        let shared = Arc::new(Shared {
            addr: addr.clone(),
            state: Mutex::new(State {
                pending: HashMap::new(),
                abandoned: VecDeque::new(),
                failed: None,
            }),
        });
        let (rd, wr) = tokio::io::split(stream);
        let (tx, rx) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(rd, shared.clone(), config.max_response_size));
        let writer = tokio::spawn(write_loop(wr, rx, shared.clone()));
        Connection {
            addr,
            config,
            shared,
            next_correlation_id: AtomicI32::new(0),
            writer: tx,
            throttled_until: Mutex::new(None),
            versions: OnceLock::new(),
            retire_at: Mutex::new(None),
            tasks: [reader.abort_handle(), writer.abort_handle()],
        }
    }

    /// Starts a connection, negotiates API versions on it, then runs the
    /// configured [`ConnectionSetup`] before handing it out.
    pub async fn establish<S: AsyncStream>(
        stream: S,
        addr: impl Into<String>,
        config: ConnectionConfig,
    ) -> Result<Self> {
        let setup = config.setup.clone();
        let conn = Connection::new(stream, addr, config);
        conn.negotiate().await?;
        setup.setup(&conn).await?;
        Ok(conn)
    }

    /// Opens a stream with `connector` (bounded by `connect_timeout`), then
    /// negotiates API versions (bounded by the request timeout).
    pub async fn connect(
        addr: &BrokerAddress,
        connector: &dyn Connector,
        config: ConnectionConfig,
        connect_timeout: Duration,
    ) -> Result<Self> {
        let stream = tokio::time::timeout(connect_timeout, connector.connect(addr))
            .await
            .map_err(|_| Error::ConnectTimeout {
                addr: addr.to_string(),
                timeout: connect_timeout,
            })??;
        Connection::establish(stream, addr.to_string(), config).await
    }

    /// The peer, as given when the connection was made.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The settings the connection was made with.
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    /// False once the connection has failed (closed, I/O error, protocol
    /// violation); every request then fails with [`Connection::failure`].
    pub fn is_usable(&self) -> bool {
        let retired = self
            .retire_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| Instant::now() >= at);
        !retired && self.shared.lock().failed.is_none()
    }

    /// From `at` on, [`Connection::is_usable`] is false, so that pools open a
    /// fresh connection; requests already sent on this one still complete.
    /// SASL sets it before the broker's session lifetime ends (KIP-368).
    pub fn retire_at(&self, at: Instant) {
        *self.retire_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
    }

    /// Why the connection failed, if it did.
    pub fn failure(&self) -> Option<Error> {
        self.shared.lock().failed.clone()
    }

    /// Requests waiting for an answer on this connection (for tests: a
    /// request that timed out or was dropped must not stay counted).
    #[doc(hidden)]
    pub fn pending_requests(&self) -> usize {
        self.shared.lock().pending.len()
    }

    /// The broker's API versions, once negotiated.
    pub fn api_versions(&self) -> Option<&ApiVersionsTable> {
        self.versions.get()
    }

    /// The newest version of `R` that both kdp and the broker support.
    pub fn version_for<R: Message>(&self) -> Result<i16> {
        let client = (R::LOWEST_VERSION, R::HIGHEST_VERSION);
        let unsupported = |broker| Error::UnsupportedApi {
            addr: self.addr.clone(),
            api: api::name(R::API_KEY).unwrap_or(R::NAME),
            api_key: R::API_KEY,
            client,
            broker,
        };
        let table = self.versions.get().ok_or_else(|| unsupported(None))?;
        table
            .pick(R::API_KEY, client.0, client.1)
            .ok_or_else(|| unsupported(table.range(R::API_KEY)))
    }

    /// Sends `req` at `version` and waits (up to the request timeout) for its response.
    pub async fn send<R: Request>(&self, req: &R, version: i16) -> Result<R::Response> {
        self.send_with_timeout(req, version, self.config.request_timeout)
            .await
    }

    /// Sends `req` at the negotiated version ([`Connection::version_for`]).
    pub async fn request<R: Request>(&self, req: &R) -> Result<R::Response> {
        let version = self.version_for::<R>()?;
        self.send(req, version).await
    }

    /// [`Connection::send`] with an explicit timeout. A throttle delay the
    /// broker asked for ([`Connection::throttle`]) is waited out first and
    /// counts toward the timeout.
    pub async fn send_with_timeout<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response> {
        self.receive::<R, R::Response>(req, version, timeout).await
    }

    /// [`Connection::send_with_timeout`], the response taken as `A`: the
    /// owned message, or [`Validated`](kdp_wire::view::Validated) (checked
    /// once with the decoder's errors, then read in place: the frame's
    /// bytes are kept, nothing else is allocated).
    pub async fn receive<R, A>(&self, req: &R, version: i16, timeout: Duration) -> Result<A>
    where
        R: Request,
        A: Received<Message = R::Response>,
    {
        let payload = self.round_trip(req, version, timeout).await?;
        A::from_payload(payload, version)
            .map(|(_, body)| body)
            .map_err(|source| Error::Decode {
                addr: self.addr.clone(),
                api: R::Response::NAME,
                version,
                source,
            })
    }

    /// Stops sending to this broker for `throttle_time_ms` (a response's
    /// ThrottleTimeMs: since KIP-219 the client must hold back itself).
    pub fn throttle(&self, throttle_time_ms: i32) {
        if throttle_time_ms <= 0 {
            return;
        }
        let until = Instant::now() + Duration::from_millis(throttle_time_ms as u64);
        let mut t = self
            .throttled_until
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if t.is_none_or(|cur| cur < until) {
            *t = Some(until);
        }
    }

    /// When the broker's throttle delay ends, if one is pending.
    pub fn throttled_until(&self) -> Option<Instant> {
        let t = *self
            .throttled_until
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        t.filter(|t| *t > Instant::now())
    }

    /// Sends a request and returns the raw response payload (correlation id,
    /// rest of the header, body).
    async fn round_trip<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<Bytes> {
        let api = R::NAME;
        let deadline = Instant::now() + timeout;
        let timed_out = || Error::RequestTimeout {
            addr: self.addr.clone(),
            api,
            timeout,
        };
        if let Some(until) = self.throttled_until() {
            if until >= deadline {
                tokio::time::sleep_until(deadline).await;
                return Err(timed_out());
            }
            tracing::debug!(addr = %self.addr, "throttled by the broker; waiting");
            tokio::time::sleep_until(until).await;
        }

        let id = self.next_correlation_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.shared.lock();
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            st.pending.insert(id, tx);
        }
        let _guard = PendingGuard {
            shared: &self.shared,
            id,
        };
        let header = RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: id,
            client_id: self.config.client_id.clone(),
            ..Default::default()
        };
        let mut frame = Vec::new();
        encode_request_frame(&mut frame, &header, req);
        tracing::trace!(addr = %self.addr, api, version, correlation_id = id, bytes = frame.len(), "send");
        if self.writer.send(Bytes::from(frame)).is_err() {
            return Err(self.shared.failure());
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(self.shared.failure()),
            Err(_) => Err(timed_out()),
        }
    }

    /// ApiVersions: asks at the newest version kdp knows; a broker that does
    /// not know it answers UNSUPPORTED_VERSION in v0 with its own range, and
    /// kdp asks again at the broker's newest (as Kafka's NetworkClient does).
    pub async fn negotiate(&self) -> Result<&ApiVersionsTable> {
        if let Some(t) = self.versions.get() {
            return Ok(t);
        }
        let req = ApiVersionsRequest {
            client_software_name: "kdp".into(),
            client_software_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        };
        let mut version = ApiVersionsRequest::HIGHEST_VERSION;
        loop {
            let payload = self
                .round_trip(&req, version, self.config.request_timeout)
                .await?;
            let resp = decode_api_versions(&self.addr, &payload, version)?;
            if resp.error_code == ErrorCode::NONE {
                tracing::debug!(addr = %self.addr, version, apis = resp.api_keys.len(), "ApiVersions");
                let table = ApiVersionsTable::new(&resp, version);
                return Ok(self.versions.get_or_init(|| table));
            }
            if resp.error_code == ErrorCode::UNSUPPORTED_VERSION && version > 0 {
                let broker_max = resp.range(api::API_VERSIONS).map_or(0, |r| r.1);
                // strictly lower each time, so this ends
                let next = broker_max.clamp(0, version - 1);
                tracing::debug!(addr = %self.addr, version, next, "ApiVersions version not supported by the broker; retrying");
                version = next;
                continue;
            }
            return Err(Error::ApiVersions {
                addr: self.addr.clone(),
                error_code: resp.error_code,
            });
        }
    }
}

/// ApiVersions responses always carry header v0. The body is read at the
/// requested version, and at v0 if that fails: a broker that does not know
/// the requested version answers in v0 (Kafka's ApiVersionsResponse.parse).
fn decode_api_versions(addr: &str, payload: &[u8], version: i16) -> Result<ApiVersionsResponse> {
    let err = |source: DecodeError, v| Error::Decode {
        addr: addr.to_string(),
        api: ApiVersionsResponse::NAME,
        version: v,
        source,
    };
    let mut r = Reader::new(payload);
    ResponseHeader::decode(&mut r, 0).map_err(|e| err(e.in_field("Header"), version))?;
    let body = &payload[r.offset()..];
    match decode_exact::<ApiVersionsResponse>(body, version) {
        Ok(b) => Ok(b),
        Err(e) if version == 0 => Err(err(e, 0)),
        Err(e) => decode_exact::<ApiVersionsResponse>(body, 0).map_err(|_| err(e, version)),
    }
}

/// Reads one frame with kdp-wire's frame loop ([`io::read_frame`]): the
/// size prefix is checked against `max_size` (and must hold a correlation
/// id) before anything is allocated, and the payload buffer grows only with
/// the bytes that arrive.
async fn read_frame<R: AsyncBufRead + Unpin>(
    rd: &mut R,
    frames: &mut FrameReader,
    addr: &str,
) -> Result<Bytes> {
    io::read_frame(rd, frames)
        .await
        .map(Bytes::from)
        .map_err(|e| match e {
            ReadFrameError::Closed => Error::Closed {
                addr: addr.to_string(),
            },
            ReadFrameError::Truncated { received, expected } => Error::Truncated {
                addr: addr.to_string(),
                read: received,
                expected: expected.unwrap_or(4),
            },
            ReadFrameError::Refused(source) => Error::Frame {
                addr: addr.to_string(),
                source,
            },
            ReadFrameError::Io(e) => Error::io(addr, e),
            // no idle bound here: the request timeout is the caller's
            ReadFrameError::Idle(d) => Error::io(
                addr,
                std::io::Error::new(std::io::ErrorKind::TimedOut, format!("idle for {d:?}")),
            ),
        })
}

/// Whether `first` (the first bytes the peer sent) is a TLS record header:
/// a content type (change_cipher_spec 0x14, alert 0x15, handshake 0x16,
/// application_data 0x17) and major version 3. Read as a Kafka size prefix
/// that is 335 MB or more, never the answer to a first request (ApiVersions).
fn is_tls_record(first: &[u8]) -> bool {
    matches!(first, [0x14..=0x17, 0x03, ..])
}

async fn read_loop<R: AsyncRead + Unpin>(rd: R, shared: Arc<Shared>, max_size: usize) {
    let addr = shared.addr.clone();
    let mut rd = BufReader::with_capacity(READ_CHUNK, rd);
    let mut frames = FrameReader::new(max_size).with_min_size(4);
    // A TLS listener answers plaintext with an alert record: say so at once
    // instead of reading its header as a frame size.
    match rd.fill_buf().await {
        Ok(first) if is_tls_record(first) => {
            tracing::debug!(%addr, "a TLS record where a Kafka response was expected");
            shared.fail(Error::TlsListener { addr });
            return;
        }
        Ok(_) => {}
        Err(e) => {
            let e = Error::io(&addr, e);
            tracing::debug!(%addr, error = %e, "connection failed");
            shared.fail(e);
            return;
        }
    }
    let err = loop {
        let payload = match read_frame(&mut rd, &mut frames, &addr).await {
            Ok(p) => p,
            Err(e) => break e,
        };
        // the reader refuses frames under 4 bytes; a short one would still
        // be a protocol error here, never a panic.
        let Some(&cid) = payload.first_chunk::<4>() else {
            break Error::Truncated {
                addr: addr.to_string(),
                read: payload.len(),
                expected: 4,
            };
        };
        let correlation_id = i32::from_be_bytes(cid);
        let slot = shared.lock().pending.remove(&correlation_id);
        match slot {
            Some(tx) => {
                tracing::trace!(%addr, correlation_id, bytes = payload.len(), "response");
                let _ = tx.send(Ok(payload));
            }
            None if shared.was_abandoned(correlation_id) => {
                tracing::debug!(%addr, correlation_id, "late response to an abandoned request dropped");
            }
            None => {
                break Error::UnknownCorrelationId {
                    addr: addr.clone(),
                    correlation_id,
                }
            }
        }
    };
    match &err {
        Error::Closed { .. } => tracing::debug!(%addr, "connection closed by the peer"),
        e => tracing::debug!(%addr, error = %e, "connection failed"),
    }
    shared.fail(err);
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut wr: W,
    mut rx: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
) {
    while let Some(frame) = rx.recv().await {
        let mut result = wr.write_all(&frame).await;
        // flush once the queue is drained (a TLS stream buffers)
        if result.is_ok() && rx.is_empty() {
            result = wr.flush().await;
        }
        if let Err(e) = result {
            shared.fail(Error::io(&shared.addr, e));
            return;
        }
    }
    let _ = wr.shutdown().await;
}

// The step between ApiVersions and a connection's first use. SASL
// authentication goes here: it needs the negotiated versions (of
// SaslHandshake and SaslAuthenticate) and must finish before any other
// request is sent. A connection whose setup fails is not used.

/// The future a [`ConnectionSetup`] returns.
pub type SetupFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// Runs on every new connection after ApiVersions, before anything else is
/// sent on it. An error fails the connection attempt with that error.
pub trait ConnectionSetup: Send + Sync + 'static {
    /// Prepares `conn` for use, e.g. by authenticating.
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a>;
}

/// The default: nothing to do (PLAINTEXT without SASL).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSetup;

impl ConnectionSetup for NoSetup {
    fn setup<'a>(&'a self, _conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::is_tls_record;

    #[test]
    fn tls_records_are_told_from_kafka_frames() {
        // a TLS 1.2 alert and a handshake record
        assert!(is_tls_record(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(is_tls_record(&[0x16, 0x03, 0x01]));
        // a Kafka response of 300 bytes, and of 16 MiB
        assert!(!is_tls_record(&[0x00, 0x00, 0x01, 0x2c]));
        assert!(!is_tls_record(&[0x01, 0x00, 0x00, 0x00]));
        assert!(!is_tls_record(&[0x16]));
    }
}
