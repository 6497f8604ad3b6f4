//! The admin-request driver: one loop for every per-key admin API.
//!
//! After Kafka's `AdminApiDriver` and franz-go's sharder. Keys are routed by a
//! [`LookupStrategy`], grouped by broker, split into requests of at most
//! `max_keys_per_request` keys, and sent, brokers in parallel (at most
//! `max_concurrent_brokers` at once) and each broker's requests in turn. Each
//! response is checked against the keys that broker was asked (anything else
//! in it is logged and ignored), the [`AdminHandler`] turns it into one
//! outcome per key, and finished keys go to the sink as each response
//! arrives.
//!
//! Keys to retry wait for the next round: exponential backoff, a refresh of
//! the strategy (metadata, coordinators) if any of them asked for one, and
//! routing again. A request that fails (connection lost, no answer) has its
//! keys re-routed, if the strategy can route elsewhere. Time is the run's
//! [`TimeBound`] (a command's whole budget, shared with the steps around
//! the run): each request waits at most [`TimeBound::request_timeout`] (a
//! third of the budget at most: a broker that stops answering leaves time
//! to ask the new leader), rounds follow its [`RetryPolicy`], and nothing
//! runs past its deadline: keys still open then are reported with their
//! last error, or REQUEST_TIMED_OUT. An error no retry can fix
//! ([`Error::is_retriable`]) is the answer at once. The client's retry
//! watcher is told once per run what is retried.
//!
//! [`RetryPolicy`]: crate::bound::RetryPolicy

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use kdp_wire::api::ApiKey;
use kdp_wire::view::Received;
use kdp_wire::ErrorCode;
use kdp_wire::Request;
use tokio::sync::{mpsc, Semaphore};
use tokio::time::Instant;

use kdp_domain::key_error::KeyError;

use crate::admin::lookup::{LookupStrategy, Route};
use crate::bound::TimeBound;
use crate::client::Client;
use crate::deadline::Deadline;
use crate::error::{fmt_duration, Error, Result};
use crate::retry::Retrying;

/// What became of one key in one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyOutcome<V> {
    /// The key's answer.
    Done(V),
    /// Ask again in the next round; `refresh`: look the key up again first
    /// (its leader or coordinator moved). `reason` is the answer if time or
    /// rounds run out.
    Retry {
        /// What the key ends with if it is not retried.
        reason: KeyError,
        /// Look the key up again before asking.
        refresh: bool,
    },
    /// The key's answer is this error; not retried.
    Failed(KeyError),
    /// Nothing to report (e.g. a partition deleted during a scan).
    Dropped,
}

impl<V> KeyOutcome<V> {
    /// Kafka's default rule for a key's error code: none is done, a
    /// retriable one is retried after a refresh, any other is the answer.
    pub fn from_code(code: ErrorCode, message: Option<String>, value: impl FnOnce() -> V) -> Self {
        if code == ErrorCode::NONE {
            KeyOutcome::Done(value())
        } else if code.is_retriable() {
            KeyOutcome::Retry {
                reason: KeyError::broker(code, message),
                refresh: true,
            }
        } else {
            KeyOutcome::Failed(KeyError::broker(code, message))
        }
    }
}

/// One admin API: how to ask a broker about a batch of keys and what its
/// answer means for each key.
pub trait AdminHandler {
    /// What is asked about: a partition, a transactional id, a broker.
    type Key: Clone + Ord + Hash + Debug + Send + Sync + 'static;
    /// The answer for one key.
    type Value;
    /// The request sent to each broker.
    type Request: Request + Send + Sync + 'static;
    /// How its response is taken: the owned message, or
    /// [`Validated`](kdp_wire::view::Validated) for a hot response read
    /// through its view without building owned values.
    type Response: Received<Message = <Self::Request as Request>::Response> + Send + 'static;

    /// The request for `keys`, all routed to `broker`.
    fn build_request(&self, broker: i32, keys: &[Self::Key]) -> Self::Request;

    /// One outcome per key answered; keys left out are asked again.
    fn handle_response(
        &self,
        broker: i32,
        keys: &[Self::Key],
        response: Self::Response,
    ) -> Vec<(Self::Key, KeyOutcome<Self::Value>)>;

    /// A key the lookup says does not exist. Default: that is the answer.
    fn missing(&self, _key: &Self::Key, error: KeyError) -> KeyOutcome<Self::Value> {
        KeyOutcome::Failed(error)
    }
}

/// How a driver run batches: what goes in one request and how many brokers
/// are asked at once. Time is the run's [`TimeBound`], not an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverOptions {
    /// Keys in one request at most; more are split over several requests.
    pub max_keys_per_request: usize,
    /// Brokers asked at once at most.
    pub max_concurrent_brokers: usize,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            max_keys_per_request: 10_000,
            max_concurrent_brokers: 8,
        }
    }
}

impl DriverOptions {
    /// These options with one key per request (an API whose request
    /// carries one key).
    pub fn one_key_per_request(self) -> DriverOptions {
        DriverOptions {
            max_keys_per_request: 1,
            ..self
        }
    }
}

/// The final answer for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyResult<K, V> {
    /// The key.
    pub key: K,
    /// The broker that answered (or was asked last); `None` when no broker
    /// was asked (the lookup settled it).
    pub broker: Option<i32>,
    /// Its value, or why there is none.
    pub result: std::result::Result<V, KeyError>,
}

/// Final answers from one response, or settled without a broker.
#[derive(Debug, Clone)]
pub struct Batch<K, V> {
    /// The broker that answered; `None` for keys settled without one.
    pub broker: Option<i32>,
    /// The response's `ThrottleTimeMs` (0 without a broker).
    pub throttle_time_ms: i32,
    /// One final answer per key.
    pub results: Vec<KeyResult<K, V>>,
}

/// Counts over a finished run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Rounds of requests sent.
    pub rounds: u32,
    /// Keys the handler dropped without an answer.
    pub dropped: usize,
}

struct Open<K> {
    /// `None` while it is in flight: the key is moved into its request and
    /// comes back with the answer, so no key is copied to be asked.
    key: Option<K>,
    /// Boxed: a slot per key, and most keys never fail.
    last_error: Option<Box<KeyError>>,
    broker: Option<i32>,
}

/// The keys still open and what the next round needs. Keys are numbered
/// once per run: everything after works on their index, so the per-key
/// cost of routing and bookkeeping is a vector slot, not a map of owned
/// keys (a large scan spent more in those maps than in decoding). Answers
/// are matched against the keys their own request asked, so no index of
/// every key outlives the start of the run.
struct State<K> {
    /// By index: the key while it is open, `None` once settled.
    open: Vec<Option<Open<K>>>,
    open_count: usize,
    stats: DriverStats,
    /// Some key asked for a new lookup before the next round.
    refresh: bool,
}

impl<K: Clone + Hash + Eq> State<K> {
    fn new(keys: Vec<K>) -> Self {
        // the first of equal keys is kept; no key is cloned
        let first: Vec<bool> = {
            let mut seen = HashSet::with_capacity(keys.len());
            keys.iter().map(|k| seen.insert(k)).collect()
        };
        let unique = first.iter().filter(|&&f| f).count().min(u32::MAX as usize);
        let mut open = Vec::with_capacity(unique);
        let keys = keys
            .into_iter()
            .zip(first)
            .filter_map(|(k, f)| f.then_some(k));
        open.extend(keys.take(unique).map(|key| {
            Some(Open {
                key: Some(key),
                last_error: None,
                broker: None,
            })
        }));
        State {
            open_count: open.len(),
            open,
            stats: DriverStats::default(),
            refresh: true,
        }
    }

    fn open_mut(&mut self, at: u32) -> Option<&mut Open<K>> {
        self.open.get_mut(at as usize).and_then(Option::as_mut)
    }

    fn take(&mut self, at: u32) -> Option<Open<K>> {
        let o = self.open.get_mut(at as usize).and_then(Option::take);
        if o.is_some() {
            self.open_count -= 1;
        }
        o
    }

    fn open_keys(&self) -> impl Iterator<Item = (u32, &Open<K>)> {
        self.open
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((i as u32, o.as_ref()?)))
    }

    /// Every open key, settled: for the end of a run.
    fn drain(&mut self) -> impl Iterator<Item = Open<K>> + '_ {
        self.open_count = 0;
        self.open.iter_mut().filter_map(Option::take)
    }
}

struct Reply<K, Resp> {
    broker: i32,
    ids: Vec<u32>,
    keys: Vec<K>,
    result: Result<Resp>,
}

/// Runs `handler` for `keys` until each has an answer, the rounds of
/// `bound`'s retry policy run out, or its deadline passes. Every key is
/// reported exactly once (or dropped, if the handler says so); results go
/// to `sink` as each response arrives.
pub async fn drive<H, S, F>(
    client: &Arc<Client>,
    handler: &H,
    strategy: &mut S,
    keys: Vec<H::Key>,
    opts: &DriverOptions,
    bound: &TimeBound,
    mut sink: F,
) -> DriverStats
where
    H: AdminHandler,
    S: LookupStrategy<H::Key>,
    F: FnMut(Batch<H::Key, H::Value>),
{
    let budget = bound.deadline();
    let deadline = budget.at();
    let retry = bound.retry();
    let api = kdp_wire::api::name(<H::Request as kdp_wire::Message>::API_KEY)
        .unwrap_or(<H::Request as kdp_wire::Message>::NAME);
    let mut told = false;
    let mut st = State::new(keys);
    let mut backoff = retry.backoff;
    for attempt in 0..retry.attempts() {
        if st.open_count == 0 {
            break;
        }
        if attempt > 0 {
            if Instant::now() + backoff >= deadline {
                break;
            }
            if !std::mem::replace(&mut told, true) {
                if let Some(reason) = st
                    .open_keys()
                    .find_map(|(_, o)| o.last_error.as_deref().cloned())
                {
                    client.tell(&Retrying::Requests {
                        api,
                        keys: st.open_count,
                        reason,
                        left: budget.remaining(),
                    });
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = retry.next_backoff(backoff);
        }
        st.stats.rounds = attempt + 1;

        // 1. look up again if a key asked for it
        if std::mem::take(&mut st.refresh) {
            // every key is home between rounds: borrowed, the strategy
            // copies what it needs
            let pending: Vec<&H::Key> =
                st.open_keys().filter_map(|(_, o)| o.key.as_ref()).collect();
            let refresh = strategy.refresh(client, &pending, bound.request_timeout());
            match tokio::time::timeout_at(deadline, refresh).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "lookup failed");
                    let mut err = e.key_error();
                    if err.code == ErrorCode::REQUEST_TIMED_OUT {
                        // the lookup, not the key's own request, did not answer
                        err.stalled = Some(strategy.api());
                    }
                    if !e.is_retriable() {
                        // no later round would do better: that is the answer
                        let results = st
                            .drain()
                            .filter_map(|o| {
                                Some(KeyResult {
                                    key: o.key?,
                                    broker: o.broker,
                                    result: Err(err.clone()),
                                })
                            })
                            .collect();
                        emit(&mut sink, None, 0, results);
                        return st.stats;
                    }
                    for o in st.open.iter_mut().flatten() {
                        o.last_error = Some(Box::new(err.clone()));
                    }
                    st.refresh = true;
                    continue;
                }
                Err(_) => {
                    // the deadline passed in the lookup: that is the step that stalled
                    let api = strategy.api();
                    let err = KeyError::stalled(
                        api,
                        format!(
                            "{} did not answer within the timeout ({})",
                            api.name().unwrap_or("the lookup"),
                            fmt_duration(budget.budget())
                        ),
                    );
                    for o in st.open.iter_mut().flatten() {
                        o.last_error = Some(Box::new(err.clone()));
                    }
                    break;
                }
            }
        }

        // 2. route
        let mut routes: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
        let mut settled = Vec::new();
        for (at, o) in st.open.iter_mut().enumerate() {
            let Some(o) = o else { continue };
            let Some(key) = &o.key else { continue };
            let at = at as u32;
            let outcome = match strategy.route(key) {
                Route::Broker(b) => {
                    o.broker = Some(b);
                    routes.entry(b).or_default().push(at);
                    continue;
                }
                Route::Retry(e) => {
                    o.last_error = Some(Box::new(e));
                    st.refresh = true;
                    continue;
                }
                Route::Fail(e) => KeyOutcome::Failed(e),
                Route::Missing(e) => handler.missing(key, e),
            };
            settled.push((at, outcome));
        }
        let mut done = Vec::new();
        for (at, outcome) in settled {
            let broker = st.open_mut(at).and_then(|o| o.broker);
            settle(&mut st, &mut done, at, broker, outcome, None);
        }
        emit(&mut sink, None, 0, done);
        if routes.is_empty() {
            continue;
        }

        // 3. send, and take answers as they come; each request is built
        // just before it is sent (a broker's later batches are not held
        // built while its first is in flight), so the senders borrow the
        // handler and run in this task. The keys are moved into their
        // requests, not copied, and come back with the answers (every
        // sender replies for every request it was given)
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sem = Arc::new(Semaphore::new(opts.max_concurrent_brokers.max(1)));
        let chunk = opts.max_keys_per_request.max(1);
        let request_timeout = bound.request_timeout();
        let mut senders = Vec::with_capacity(routes.len());
        for (broker, ids) in routes {
            let asked: Vec<Asked<H::Key>> = ids
                .chunks(chunk)
                .map(|chunk| {
                    let (ids, keys) = chunk
                        .iter()
                        .filter_map(|&at| Some((at, st.open_mut(at)?.key.take()?)))
                        .unzip();
                    Asked { ids, keys }
                })
                .collect();
            senders.push(send_all(
                client.clone(),
                handler,
                broker,
                asked,
                sem.clone(),
                tx.clone(),
                budget,
                request_timeout,
            ));
        }
        drop(tx);
        let reroutes = strategy.reroutes();
        let answers = async {
            while let Some(reply) = rx.recv().await {
                absorb(handler, reroutes, &mut st, &mut sink, reply);
            }
        };
        tokio::join!(join_all(senders), answers);
        if Instant::now() >= deadline {
            break;
        }
    }

    // out of rounds or time: what is left, with its last error
    let timeout = budget.budget();
    let results = st
        .drain()
        .filter_map(|o| {
            Some(KeyResult {
                key: o.key?,
                broker: o.broker,
                result: Err(o.last_error.map(|e| *e).unwrap_or_else(|| {
                    KeyError::stalled(
                        ApiKey(<H::Request as kdp_wire::Message>::API_KEY),
                        format!("no answer within the timeout ({})", fmt_duration(timeout)),
                    )
                })),
            })
        })
        .collect();
    emit(&mut sink, None, 0, results);
    st.stats
}

/// A sink that collects every key's result of a driver run into `into`:
/// the key, the broker that answered, and the answer.
pub fn collect<K, V>(
    into: &mut Vec<(K, Option<i32>, Result<V, KeyError>)>,
) -> impl FnMut(Batch<K, V>) + '_ {
    move |batch| {
        for r in batch.results {
            into.push((r.key, r.broker, r.result));
        }
    }
}

/// Settles the key at index `at` with `outcome`, if it is still open;
/// `back` is the key itself when it was in flight (a key left open is put
/// back for the next round).
fn settle<K: Clone + Hash + Eq, V>(
    st: &mut State<K>,
    done: &mut Vec<KeyResult<K, V>>,
    at: u32,
    broker: Option<i32>,
    outcome: KeyOutcome<V>,
    back: Option<K>,
) {
    let result = match outcome {
        KeyOutcome::Done(v) => Ok(v),
        KeyOutcome::Failed(e) => Err(e),
        KeyOutcome::Retry { reason, refresh } => {
            if let Some(o) = st.open_mut(at) {
                o.last_error = Some(Box::new(reason));
                if o.key.is_none() {
                    o.key = back;
                }
                st.refresh |= refresh;
            }
            return;
        }
        KeyOutcome::Dropped => {
            if st.take(at).is_some() {
                st.stats.dropped += 1;
            }
            return;
        }
    };
    if let Some(key) = st.take(at).and_then(|o| o.key.or(back)) {
        done.push(KeyResult {
            key,
            broker,
            result,
        });
    }
}

fn emit<K, V, F: FnMut(Batch<K, V>)>(
    sink: &mut F,
    broker: Option<i32>,
    throttle_time_ms: i32,
    results: Vec<KeyResult<K, V>>,
) {
    if !results.is_empty() {
        sink(Batch {
            broker,
            throttle_time_ms,
            results,
        });
    }
}

fn absorb<H, F>(
    handler: &H,
    reroutes: bool,
    st: &mut State<H::Key>,
    sink: &mut F,
    reply: Reply<H::Key, H::Response>,
) where
    H: AdminHandler,
    F: FnMut(Batch<H::Key, H::Value>),
{
    let broker = reply.broker;
    let mut done = Vec::new();
    match reply.result {
        Ok(resp) => {
            let throttle = resp.throttle_time_ms();
            // what this request asked, by key: an answer for anything else
            // is a stray, and each key counts once
            let asked: HashMap<&H::Key, usize> =
                reply.keys.iter().enumerate().map(|(j, k)| (k, j)).collect();
            let mut answered = vec![false; reply.ids.len()];
            for (key, outcome) in handler.handle_response(broker, &reply.keys, resp) {
                let Some(&j) = asked.get(&key) else {
                    tracing::debug!(
                        broker,
                        ?key,
                        "answer for a key this broker was not asked; ignored"
                    );
                    continue;
                };
                let (Some(seen), Some(&at)) = (answered.get_mut(j), reply.ids.get(j)) else {
                    continue;
                };
                if std::mem::replace(seen, true) {
                    continue;
                }
                // the handler's key is the one asked (equal): it settles
                // the key, or goes back for the next round
                settle(st, &mut done, at, Some(broker), outcome, Some(key));
            }
            drop(asked);
            for ((&at, key), _) in reply
                .ids
                .iter()
                .zip(reply.keys)
                .zip(&answered)
                .filter(|(_, &a)| !a)
            {
                if let Some(o) = st.open_mut(at) {
                    o.key = Some(key);
                    o.last_error = Some(Box::new(KeyError::client(
                        ErrorCode::UNKNOWN_SERVER_ERROR,
                        format!("broker {broker} did not answer for this key"),
                    )));
                    st.refresh = true;
                }
            }
            emit(sink, Some(broker), throttle, done);
        }
        Err(e) => {
            let mut err = e.key_error();
            if err.code == ErrorCode::REQUEST_TIMED_OUT {
                err.stalled = Some(ApiKey(<H::Request as kdp_wire::Message>::API_KEY));
            }
            let retry = reroutes
                && e.is_retriable()
                && (e.is_connection_error() || matches!(e, Error::UnknownBroker(_)));
            tracing::debug!(broker, error = %e, retry, "request failed");
            for (at, key) in reply.ids.into_iter().zip(reply.keys) {
                let outcome = if retry {
                    KeyOutcome::Retry {
                        reason: err.clone(),
                        refresh: true,
                    }
                } else {
                    KeyOutcome::Failed(err.clone())
                };
                settle(st, &mut done, at, Some(broker), outcome, Some(key));
            }
            emit(sink, Some(broker), 0, done);
        }
    }
}

/// One request's keys (by index, and the keys themselves for the
/// handler).
struct Asked<K> {
    ids: Vec<u32>,
    keys: Vec<K>,
}

/// Sends one broker's requests in turn, each built as its turn comes, under
/// a permit of the semaphore; a connection failure is not waited for again
/// on the next request.
#[allow(clippy::too_many_arguments)]
async fn send_all<H: AdminHandler>(
    client: Arc<Client>,
    handler: &H,
    broker: i32,
    asked: Vec<Asked<H::Key>>,
    sem: Arc<Semaphore>,
    tx: mpsc::UnboundedSender<Reply<H::Key, H::Response>>,
    deadline: Deadline,
    request_timeout: Duration,
) {
    let Ok(_permit) = sem.acquire_owned().await else {
        return;
    };
    let mut broken: Option<Error> = None;
    for Asked { ids, keys } in asked {
        let result = match &broken {
            Some(e) => Err(e.clone()),
            None => {
                let request = handler.build_request(broker, &keys);
                let timeout = deadline.bound(request_timeout);
                let what = kdp_wire::api::name(<H::Request as kdp_wire::Message>::API_KEY)
                    .unwrap_or(<H::Request as kdp_wire::Message>::NAME);
                let r = deadline
                    .run(
                        what,
                        client.receive_from::<H::Request, H::Response>(broker, &request, timeout),
                    )
                    .await;
                if let Err(e) = &r {
                    if e.is_connection_error() {
                        broken = Some(e.clone());
                    }
                }
                r
            }
        };
        if tx
            .send(Reply {
                broker,
                ids,
                keys,
                result,
            })
            .is_err()
        {
            return;
        }
    }
}
