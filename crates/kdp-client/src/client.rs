//! A client for a whole cluster: bootstrap, metadata, one lazy connection
//! per broker.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use kdp_wire::messages::{MetadataRequest, MetadataRequestTopic, MetadataResponse};
use kdp_wire::view::Received;
use kdp_wire::Request;

use crate::bound::TimeBound;
use crate::connection::{Connection, ConnectionConfig};
use crate::error::{Error, Result};
use crate::metadata::{BrokerInfo, ClusterMetadata};
use crate::retry::{OnRetry, Retrying};
use crate::transport::{BrokerAddress, Connector, TcpConnector};

/// A client shared between tasks, as the admin driver takes it.
pub type SharedClient = Arc<Client>;

/// Responses that carry a ThrottleTimeMs, which the client honours.
pub trait ThrottleTime {
    /// The throttle time the broker asked for, in ms (0: none).
    fn throttle_time_ms(&self) -> i32;
}

/// Every declared message knows its own ThrottleTimeMs (0 when its schema
/// has none).
impl<M: kdp_wire::Message> ThrottleTime for M {
    fn throttle_time_ms(&self) -> i32 {
        kdp_wire::Message::throttle_time_ms(self)
    }
}

/// Client settings.
#[derive(Clone)]
pub struct ClientConfig {
    /// Settings of each broker connection.
    pub connection: ConnectionConfig,
    /// Bound on opening one stream (all resolved addresses of one broker).
    pub connect_timeout: Duration,
    /// Opens streams: [`TcpConnector`] (PLAINTEXT) by default.
    pub connector: Arc<dyn Connector>,
    /// How long [`Client::connect`] keeps trying the bootstrap list: a
    /// broker that starts listening later within this time is found.
    pub bootstrap_timeout: Duration,
    /// At most this many passes over the bootstrap list (default: no limit
    /// but `bootstrap_timeout`).
    pub bootstrap_passes: u32,
    /// Pause between two passes over the bootstrap list, doubled each time
    /// up to `reconnect_backoff_max` (Kafka's `reconnect.backoff.ms` and
    /// `reconnect.backoff.max.ms`; a request's retries follow the
    /// [`TimeBound`]'s [`RetryPolicy`](crate::bound::RetryPolicy)).
    pub reconnect_backoff: Duration,
    /// The longest pause between two passes.
    pub reconnect_backoff_max: Duration,
    /// Told once per operation what is being retried (bootstrap, an admin
    /// request), so a terminal can say it; `None`: nobody is told.
    pub on_retry: Option<OnRetry>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connection: ConnectionConfig::default(),
            connect_timeout: Duration::from_secs(10),
            connector: Arc::new(TcpConnector),
            bootstrap_timeout: Duration::from_secs(30),
            bootstrap_passes: u32::MAX,
            reconnect_backoff: Duration::from_millis(100),
            reconnect_backoff_max: Duration::from_secs(1),
            on_retry: None,
        }
    }
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("connection", &self.connection)
            .field("connect_timeout", &self.connect_timeout)
            .field("bootstrap_timeout", &self.bootstrap_timeout)
            .field("bootstrap_passes", &self.bootstrap_passes)
            .field("reconnect_backoff", &self.reconnect_backoff)
            .field("reconnect_backoff_max", &self.reconnect_backoff_max)
            .field("on_retry", &self.on_retry.is_some())
            .finish_non_exhaustive()
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

/// A cluster client. Share it behind an `Arc` or by reference; every method
/// takes `&self`.
pub struct Client {
    config: ClientConfig,
    bootstrap_servers: Vec<BrokerAddress>,
    /// The connection bootstrap succeeded on; used for metadata while it lives.
    bootstrap_conn: Mutex<Option<Arc<Connection>>>,
    /// The brokers of the latest metadata.
    brokers: RwLock<BTreeMap<i32, BrokerInfo>>,
    /// One lazily opened connection per broker id.
    pool: Mutex<HashMap<i32, Slot>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Client {
    /// Connects to the first bootstrap server that accepts and answers
    /// ApiVersions, trying the list in order, pass after pass with a growing
    /// pause, until `bootstrap_timeout` (or `bootstrap_passes`) runs out.
    /// Fails with [`Error::Bootstrap`] listing the last pass's failures.
    pub async fn connect(
        bootstrap_servers: Vec<BrokerAddress>,
        config: ClientConfig,
    ) -> Result<Self> {
        let bound = TimeBound::after(config.bootstrap_timeout)
            .with_request_timeout(config.connection.request_timeout);
        Client::connect_within(bootstrap_servers, config, &bound).await
    }

    /// [`Client::connect`] within `bound` (a command's) instead of
    /// `bootstrap_timeout`: each server tried waits at most
    /// [`TimeBound::attempt_limit`], all of them no longer than the
    /// deadline. Stops at the first error no retry can fix
    /// ([`Error::is_retriable`]); tells `on_retry` once when the first pass
    /// failed and passes go on.
    pub async fn connect_within(
        bootstrap_servers: Vec<BrokerAddress>,
        config: ClientConfig,
        bound: &TimeBound,
    ) -> Result<Self> {
        let client = Client {
            config,
            bootstrap_servers,
            bootstrap_conn: Mutex::new(None),
            brokers: RwLock::new(BTreeMap::new()),
            pool: Mutex::new(HashMap::new()),
        };
        let conn = client.connect_bootstrap(bound).await?;
        *lock(&client.bootstrap_conn) = Some(conn);
        Ok(client)
    }

    async fn connect_bootstrap(&self, bound: &TimeBound) -> Result<Arc<Connection>> {
        let deadline = bound.deadline();
        // the last complete pass's failures (what the error reports)
        let mut attempts: Vec<Error> = Vec::new();
        let mut backoff = self.config.reconnect_backoff;
        for pass in 0..self.config.bootstrap_passes.max(1) {
            if pass > 0 {
                if pass == 1 {
                    self.tell(&Retrying::Bootstrap {
                        failures: attempts.clone(),
                        left: deadline.remaining(),
                    });
                }
                tokio::time::sleep(deadline.bound(backoff)).await;
                if deadline.is_past() {
                    break;
                }
                backoff = backoff
                    .saturating_mul(2)
                    .min(self.config.reconnect_backoff_max);
            }
            let mut this_pass = Vec::new();
            for addr in &self.bootstrap_servers {
                let started = Instant::now();
                // a server that stalls costs a third of the budget, not all of it
                let open = self.open_within(addr, bound.attempt_limit());
                match tokio::time::timeout_at(deadline.at(), open).await {
                    Ok(Ok(c)) => return Ok(c),
                    Ok(Err(e)) if !e.is_retriable() => {
                        // wrong trust, identity, credentials or protocol: no pass will do better
                        return Err(Error::Bootstrap { attempts: vec![e] });
                    }
                    Ok(Err(e)) => {
                        tracing::debug!(%addr, pass, error = %e, "bootstrap server failed");
                        this_pass.push(e);
                    }
                    Err(_) => {
                        // cut short: the servers it reached, else the last
                        // pass, and the one it was connecting to
                        if !this_pass.is_empty() {
                            attempts = this_pass;
                        }
                        if !attempts.iter().any(|e| names(e, addr)) {
                            attempts.push(Error::ConnectTimeout {
                                addr: addr.to_string(),
                                timeout: started.elapsed(),
                            });
                        }
                        attempts.push(deadline.expired("connecting to the bootstrap servers"));
                        return Err(Error::Bootstrap { attempts });
                    }
                }
            }
            attempts = this_pass;
        }
        if deadline.is_past() {
            attempts.push(deadline.expired("connecting to the bootstrap servers"));
        }
        Err(Error::Bootstrap { attempts })
    }

    /// Tells the configured watcher what is being retried.
    pub(crate) fn tell(&self, what: &Retrying) {
        tracing::debug!(%what, "retrying");
        if let Some(f) = &self.config.on_retry {
            f(what);
        }
    }

    /// Opens a connection whose TCP connect and each request of its setup
    /// (ApiVersions, SASL) wait at most `limit` (and their configured bounds).
    async fn open_within(&self, addr: &BrokerAddress, limit: Duration) -> Result<Arc<Connection>> {
        let mut connection = self.config.connection.clone();
        connection.request_timeout = connection.request_timeout.min(limit);
        let conn = Connection::connect(
            addr,
            &*self.config.connector,
            connection,
            self.config.connect_timeout.min(limit),
        )
        .await?;
        Ok(Arc::new(conn))
    }

    /// The settings the client was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The bootstrap list, parsed.
    pub fn bootstrap_servers(&self) -> &[BrokerAddress] {
        &self.bootstrap_servers
    }

    /// The brokers of the latest metadata.
    pub fn brokers(&self) -> BTreeMap<i32, BrokerInfo> {
        self.brokers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Fetches metadata for `topics` (`None`: every topic, internal ones
    /// included) from any broker that answers, never creating topics. The
    /// broker list is updated for [`Client::broker`].
    pub async fn metadata(&self, topics: Option<&[String]>) -> Result<ClusterMetadata> {
        self.metadata_within(topics, self.config.connection.request_timeout)
            .await
    }

    /// [`Client::metadata`], each broker asked waiting at most `timeout`; a
    /// broker whose live connection timed out is not asked again on a new one.
    pub async fn metadata_within(
        &self,
        topics: Option<&[String]>,
        timeout: Duration,
    ) -> Result<ClusterMetadata> {
        let req = MetadataRequest {
            topics: topics.map(|ts| {
                ts.iter()
                    .map(|t| MetadataRequestTopic {
                        name: Some(t.clone()),
                        ..Default::default()
                    })
                    .collect()
            }),
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        let mut last_err = None;
        let mut silent: Vec<String> = Vec::new();
        // live connections first, then new ones to known brokers, then bootstrap
        let mut live: Vec<Arc<Connection>> = Vec::new();
        if let Some(c) = lock(&self.bootstrap_conn).clone() {
            live.push(c);
        }
        for slot in lock(&self.pool).values() {
            if let Ok(g) = slot.try_lock() {
                if let Some(c) = g.as_ref() {
                    live.push(c.clone());
                }
            }
        }
        live.retain(|c| c.is_usable());
        // the bootstrap connection may also be a broker's pooled one
        let mut unique: Vec<Arc<Connection>> = Vec::new();
        for c in live {
            if !unique.iter().any(|u| Arc::ptr_eq(u, &c)) {
                unique.push(c);
            }
        }
        let live = unique;
        for conn in live {
            match self.send_on(&conn, &req, timeout).await {
                Ok(resp) => return Ok(self.absorb(&resp)),
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => {
                    if matches!(e, Error::RequestTimeout { .. }) {
                        silent.push(conn.addr().to_string());
                    }
                    last_err = Some(e);
                }
            }
        }
        let mut addrs: Vec<BrokerAddress> =
            self.brokers().values().map(|b| b.addr.clone()).collect();
        for a in &self.bootstrap_servers {
            if !addrs.contains(a) {
                addrs.push(a.clone());
            }
        }
        addrs.retain(|a| !silent.contains(&a.to_string()));
        for addr in addrs {
            let result = async {
                let conn = self.open_within(&addr, timeout).await?;
                let resp = self.send_on(&conn, &req, timeout).await?;
                *lock(&self.bootstrap_conn) = Some(conn);
                Ok::<_, Error>(resp)
            }
            .await;
            match result {
                Ok(resp) => return Ok(self.absorb(&resp)),
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => {
                    tracing::debug!(%addr, error = %e, "metadata failed");
                    last_err = Some(e);
                }
            }
        }
        Err(last_err.unwrap_or(Error::Bootstrap { attempts: vec![] }))
    }

    fn absorb(&self, resp: &MetadataResponse) -> ClusterMetadata {
        let md = ClusterMetadata::from_response(resp);
        if !md.brokers.is_empty() {
            *self.brokers.write().unwrap_or_else(|p| p.into_inner()) = md.brokers.clone();
        }
        md
    }

    /// The connection to broker `id`, opened (and ApiVersions negotiated) on
    /// first use or after the previous one failed.
    pub async fn broker(&self, id: i32) -> Result<Arc<Connection>> {
        self.broker_within(id, Duration::MAX).await
    }

    /// [`Client::broker`], a new connection's setup requests each waiting at
    /// most `limit`.
    pub async fn broker_within(&self, id: i32, limit: Duration) -> Result<Arc<Connection>> {
        let info = self
            .brokers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or(Error::UnknownBroker(id))?;
        let addr = info.addr.to_string();
        let slot = lock(&self.pool).entry(id).or_default().clone();
        let mut guard = slot.lock().await;
        if let Some(c) = guard.as_ref() {
            if c.is_usable() && c.addr() == addr {
                return Ok(c.clone());
            }
        }
        // the bootstrap connection may already be to this broker
        let reuse = lock(&self.bootstrap_conn)
            .clone()
            .filter(|c| c.is_usable() && c.addr() == addr);
        let conn = match reuse {
            Some(c) => c,
            None => self.open_within(&info.addr, limit).await?,
        };
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// Sends `req` to broker `id` at the newest common version, honouring
    /// the throttle time of the response; opening the connection first, if
    /// needed, waits at most `timeout` per setup request too.
    pub async fn send_to<R>(&self, id: i32, req: &R, timeout: Duration) -> Result<R::Response>
    where
        R: Request,
        R::Response: ThrottleTime,
    {
        let conn = self.broker_within(id, timeout).await?;
        self.send_on(&conn, req, timeout).await
    }

    /// Sends `req` on `conn` at the newest common version and notes the
    /// response's throttle time on the connection.
    pub async fn send_on<R>(
        &self,
        conn: &Connection,
        req: &R,
        timeout: Duration,
    ) -> Result<R::Response>
    where
        R: Request,
        R::Response: ThrottleTime,
    {
        let version = conn.version_for::<R>()?;
        let resp = conn.send_with_timeout(req, version, timeout).await?;
        conn.throttle(ThrottleTime::throttle_time_ms(&resp));
        Ok(resp)
    }

    /// [`Client::send_to`], the response taken as `A`: the owned message,
    /// or [`Validated`](kdp_wire::view::Validated) for a large or frequent
    /// response read through its view (validated once, then borrowed).
    pub async fn receive_from<R, A>(&self, id: i32, req: &R, timeout: Duration) -> Result<A>
    where
        R: Request,
        A: Received<Message = R::Response>,
    {
        let conn = self.broker_within(id, timeout).await?;
        let version = conn.version_for::<R>()?;
        let resp: A = conn.receive(req, version, timeout).await?;
        conn.throttle(Received::throttle_time_ms(&resp));
        Ok(resp)
    }
}

/// Whether `e` is about the server at `addr`.
fn names(e: &Error, addr: &BrokerAddress) -> bool {
    let a = addr.to_string();
    match e {
        Error::Resolve { addr, .. }
        | Error::Connect { addr, .. }
        | Error::ConnectTimeout { addr, .. }
        | Error::Closed { addr }
        | Error::Io { addr, .. }
        | Error::RequestTimeout { addr, .. } => *addr == a,
        _ => false,
    }
}
