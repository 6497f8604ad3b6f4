//! Test support shared by kdp's crates: a cluster of kdp-server (its demo
//! cluster, a cluster file, or partitions placed by a test), answered by
//! kdp-server's own request handling (every API kdp speaks) behind
//! in-memory streams, with faults injected per API and per broker.
//!
//! A fault is one of [`Fault`]: a stall (the request is read and never
//! answered, as a broker that hangs in that code path), a frozen broker, a
//! delay before the answer, a cut connection, or an error code in the
//! answer. Beyond faults a test can refuse connections to a broker, change
//! the cluster after an answer (a leader moving), edit answers of one API
//! ([`StallCluster::edit`]) or replace them with raw bytes
//! ([`StallCluster::answer_raw`]: malformed, truncated or oversized frames,
//! a wrong correlation id), hold pipelined requests and answer them out of
//! order ([`StallCluster::hold`]), and read what each broker was asked. On
//! tokio's paused clock every deadline is then exact. It is kdp's one
//! in-memory test broker; kdp-server's mock is the one over TCP.

mod fault;
mod recode;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kdp_client::{BoxStream, BrokerAddress, Client, ClientConfig, ConnectFuture, Connector};
use kdp_server::broker::{handle_request, Advertised, Shared};
use kdp_server::responder::AllowAll;
use kdp_server::{Cluster, ClusterError};
use kdp_wire::api::ApiKey;
use kdp_wire::frame::io::read_frame;
use kdp_wire::frame::FrameReader;
use kdp_wire::Request;
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream};

use fault::FaultKey;
pub use fault::{Fault, Raw};
use recode::EditFn;

/// Largest request and response frame (Kafka's `socket.request.max.bytes`).
const MAX_FRAME: usize = kdp_wire::frame::DEFAULT_MAX_FRAME_SIZE;

/// What a broker sends instead of an answer ([`StallCluster::answer_raw`]).
type RawFn = dyn Fn(i32, &[u8], &[u8]) -> Raw + Send + Sync;

/// Run after a broker answered a request of one API, with the cluster and
/// how many requests of that API were answered so far (1-based).
type AfterFn = Box<dyn FnMut(&mut Cluster, usize) + Send>;

/// One request a broker received, answered or not.
struct Asked {
    broker: i32,
    api_key: i16,
    /// The frame's payload: header and body.
    payload: Vec<u8>,
}

/// What a test set, and what the brokers saw.
#[derive(Default)]
struct Knobs {
    faults: HashMap<FaultKey, Fault>,
    /// Brokers whose connections are refused.
    refused: HashSet<i32>,
    /// Brokers that answer nothing more ([`Fault::Freeze`]).
    frozen: HashSet<i32>,
    edits: HashMap<i16, Arc<EditFn>>,
    raw: HashMap<i16, Arc<RawFn>>,
    /// How many requests of an API a connection holds ([`StallCluster::hold`]).
    held: HashMap<i16, usize>,
    after: HashMap<i16, AfterFn>,
    answered: HashMap<i16, usize>,
    asked: Vec<Asked>,
}

/// A kdp-server cluster behind in-memory streams, as a [`Connector`]:
/// broker `id` is reached as `b{id}:9092` ([`StallCluster::address`]).
#[derive(Clone)]
pub struct StallCluster {
    shared: Arc<Shared>,
    knobs: Arc<Mutex<Knobs>>,
}

impl StallCluster {
    /// kdp-server's demo cluster.
    ///
    /// # Panics
    /// If kdp-server's demo cluster does not build (a bug in kdp-server).
    pub fn demo() -> Self {
        StallCluster::new(kdp_server::demo::cluster().expect("demo cluster"))
    }

    /// A cluster of kdp-server's model.
    pub fn new(cluster: Cluster) -> Self {
        let advertised = cluster
            .brokers
            .iter()
            .map(|b| Advertised {
                id: b.id,
                host: format!("b{}", b.id),
                port: 9092,
            })
            .collect();
        StallCluster {
            shared: Arc::new(Shared::new(
                cluster,
                advertised,
                Arc::new(AllowAll),
                MAX_FRAME,
            )),
            knobs: Arc::default(),
        }
    }

    /// A cluster from a cluster file's text (kdp-server's format).
    pub fn from_json(text: &str) -> Result<Self, ClusterError> {
        Cluster::from_json(text).map(StallCluster::new)
    }

    /// Brokers `1..=brokers`; each `(topic, partition, leader)` has a
    /// replica on every broker, and the replica on broker `b` holds one
    /// producer, id `b * 100 + partition`, so the answering broker shows in
    /// a DescribeProducers result. Partitions of a topic must be numbered
    /// from 0 without gaps.
    ///
    /// # Panics
    /// If the placement is not a valid cluster (a gap in a topic's
    /// partitions, a leader that is not a broker).
    pub fn placed(brokers: i32, leaders: &[(&str, i32, i32)]) -> Self {
        let ids: Vec<i32> = (1..=brokers).collect();
        let mut topics: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
        for (topic, p, leader) in leaders {
            let replica_producers: serde_json::Map<String, serde_json::Value> = ids
                .iter()
                .map(|b| {
                    let producer = serde_json::json!([{ "ProducerId": i64::from(b * 100 + p) }]);
                    (b.to_string(), producer)
                })
                .collect();
            let partition = serde_json::json!({
                "partition": p,
                "leader": leader,
                "replicas": ids,
                "replica_producers": replica_producers,
            });
            match topics.iter_mut().find(|(t, _)| t == topic) {
                Some((_, ps)) => ps.push(partition),
                None => topics.push((topic.to_string(), vec![partition])),
            }
        }
        let file = serde_json::json!({
            "brokers": ids.iter().map(|id| serde_json::json!({ "id": id })).collect::<Vec<_>>(),
            "topics": topics
                .into_iter()
                .map(|(name, partitions)| serde_json::json!({ "name": name, "partitions": partitions }))
                .collect::<Vec<_>>(),
        });
        StallCluster::from_json(&file.to_string()).expect("a valid placement")
    }

    /// A client configuration that reaches this cluster; the rest default.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            connector: Arc::new(self.clone()),
            ..Default::default()
        }
    }

    /// A client of this cluster with [`client_config`](Self::client_config).
    ///
    /// # Panics
    /// If the bootstrap fails (a fault placed before connecting).
    pub async fn client(&self) -> Arc<Client> {
        match Client::connect(self.bootstrap(), self.client_config()).await {
            Ok(c) => Arc::new(c),
            Err(e) => panic!("cannot connect to the in-memory cluster: {e}"),
        }
    }

    /// How broker `id` is reached.
    pub fn address(id: i32) -> BrokerAddress {
        BrokerAddress::new(format!("b{id}"), 9092)
    }

    /// The bootstrap server: the cluster's first broker.
    pub fn bootstrap(&self) -> Vec<BrokerAddress> {
        let first = self.shared.advertised.first().map_or(1, |a| a.id);
        vec![StallCluster::address(first)]
    }

    /// Every broker applies `fault` to `api_key` requests.
    pub fn fault(&self, api_key: i16, fault: Fault) {
        self.knobs().faults.insert((None, api_key), fault);
    }

    /// Broker `broker` applies `fault` to `api_key` requests.
    pub fn fault_on(&self, broker: i32, api_key: i16, fault: Fault) {
        self.knobs().faults.insert((Some(broker), api_key), fault);
    }

    /// Every broker stops answering `api_key` (requests are still read).
    pub fn stall(&self, api_key: i16) {
        self.fault(api_key, Fault::Stall);
    }

    /// Broker `broker` stops answering `api_key`.
    pub fn stall_on(&self, broker: i32, api_key: i16) {
        self.fault_on(broker, api_key, Fault::Stall);
    }

    /// Connections to `broker` are refused (`ConnectionRefused`) until
    /// [`StallCluster::listen`]; open ones stay open.
    pub fn refuse(&self, broker: i32) {
        self.knobs().refused.insert(broker);
    }

    /// `broker` accepts connections again.
    pub fn listen(&self, broker: i32) {
        self.knobs().refused.remove(&broker);
    }

    /// Answers of `R` pass through `f` (broker, request, answer) before
    /// they are sent; one edit per API, a later one replaces it.
    pub fn edit<R, F>(&self, f: F)
    where
        R: Request + 'static,
        F: Fn(i32, &R, &mut R::Response) + Send + Sync + 'static,
    {
        let mut knobs = self.knobs();
        knobs.raw.remove(&R::API_KEY);
        knobs
            .edits
            .insert(R::API_KEY, Arc::from(recode::typed_edit::<R, F>(f)));
    }

    /// Answers of `api` are replaced by what `f` makes of them: `f` gets
    /// the broker, the request's payload and kdp-server's answer (each
    /// frame's bytes after its size prefix) and says what goes on the wire
    /// instead ([`Raw`]): bytes no typed edit can make (a malformed or
    /// truncated answer, a wrong correlation id, a size prefix and
    /// nothing). Replaces the API's typed edit, and the other way round.
    pub fn answer_raw<F>(&self, api: ApiKey, f: F)
    where
        F: Fn(i32, &[u8], &[u8]) -> Raw + Send + Sync + 'static,
    {
        let mut knobs = self.knobs();
        knobs.edits.remove(&api.0);
        knobs.raw.insert(api.0, Arc::new(f));
    }

    /// The first `n` requests of `api` on a connection are held and then
    /// answered all at once, the last first (a broker answering pipelined
    /// requests out of order, as only correlation ids tell them apart).
    pub fn hold(&self, api: ApiKey, n: usize) {
        self.knobs().held.insert(api.0, n);
    }

    /// After each answer to an `api_key` request is built and before it is
    /// sent, `f` changes the cluster (a leader moving right after Metadata
    /// named it); `f` gets how many such requests were answered so far.
    pub fn after_answer(&self, api_key: i16, f: impl FnMut(&mut Cluster, usize) + Send + 'static) {
        self.knobs().after.insert(api_key, Box::new(f));
    }

    /// Changes the cluster now.
    pub fn update<T>(&self, f: impl FnOnce(&mut Cluster) -> T) -> T {
        f(&mut self.shared.write())
    }

    /// How many `api_key` requests the brokers received.
    pub fn asked(&self, api_key: i16) -> usize {
        self.knobs()
            .asked
            .iter()
            .filter(|a| a.api_key == api_key)
            .count()
    }

    /// The brokers that received `api_key` requests, in order of arrival.
    pub fn asked_by(&self, api_key: i16) -> Vec<i32> {
        self.knobs()
            .asked
            .iter()
            .filter(|a| a.api_key == api_key)
            .map(|a| a.broker)
            .collect()
    }

    /// The `R` requests the brokers received, decoded, with the broker each
    /// went to, in order of arrival. A request that does not decode as `R`
    /// is left out (it still counts in [`StallCluster::asked`]).
    pub fn requests<R: Request>(&self) -> Vec<(i32, R)> {
        self.knobs()
            .asked
            .iter()
            .filter(|a| a.api_key == R::API_KEY)
            .filter_map(|a| recode::decode_request::<R>(&a.payload).map(|(_, r)| (a.broker, r)))
            .collect()
    }

    /// The cluster's state (to check what a write did, or did not, change).
    pub fn cluster(&self) -> std::sync::RwLockReadGuard<'_, Cluster> {
        self.shared.read()
    }

    fn knobs(&self) -> MutexGuard<'_, Knobs> {
        self.knobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Logs the request; its fault, and whether the broker is frozen.
    fn received(&self, broker: i32, api_key: i16, payload: &[u8]) -> (Option<Fault>, bool) {
        let mut knobs = self.knobs();
        knobs.asked.push(Asked {
            broker,
            api_key,
            payload: payload.to_vec(),
        });
        // the broker's own fault, else everyone's
        let fault = knobs
            .faults
            .get(&(Some(broker), api_key))
            .or_else(|| knobs.faults.get(&(None, api_key)))
            .copied();
        if fault == Some(Fault::Freeze) {
            knobs.frozen.insert(broker);
        }
        (fault, knobs.frozen.contains(&broker))
    }

    /// kdp-server's answer, or `None` if it rejects the request (the
    /// connection is then closed, as the mock does).
    fn answer(&self, broker: i32, payload: &[u8], fault: Option<Fault>) -> Option<Vec<u8>> {
        let Some(Fault::Error(code)) = fault else {
            return handle_request(&self.shared, broker, payload, None)
                .ok()
                .map(|h| h.response);
        };
        // answered from a copy: an error answer changes nothing
        let scratch = Shared::new(
            self.shared.read().clone(),
            self.shared.advertised.clone(),
            Arc::new(AllowAll),
            MAX_FRAME,
        )
        .with_clock(self.shared.clock.clone());
        let handled = handle_request(&scratch, broker, payload, None).ok()?;
        let h = &handled.header;
        recode::with_error_code(
            h.request_api_key,
            h.request_api_version,
            &handled.response,
            code,
        )
    }

    /// Applies the API's edit and runs its after-answer change.
    fn finish(&self, broker: i32, api_key: i16, payload: &[u8], response: Vec<u8>) -> Vec<u8> {
        let (edit, after) = {
            let mut knobs = self.knobs();
            let n = knobs.answered.entry(api_key).or_default();
            *n += 1;
            let n = *n;
            (
                knobs.edits.get(&api_key).cloned(),
                knobs.after.remove(&api_key).map(|f| (f, n)),
            )
        };
        if let Some((mut f, n)) = after {
            f(&mut self.shared.write(), n);
            // put back unless the test set another meanwhile
            self.knobs().after.entry(api_key).or_insert(f);
        }
        match edit {
            Some(edit) => edit(broker, payload, &response).unwrap_or(response),
            None => response,
        }
    }

    async fn serve(self, id: i32, s: DuplexStream) {
        let mut s = BufReader::new(s);
        let mut frames = FrameReader::new(MAX_FRAME);
        // requests held for [`StallCluster::hold`], by API
        let mut holding: HashMap<i16, Vec<Vec<u8>>> = HashMap::new();
        loop {
            let Ok(payload) = read_frame(&mut s, &mut frames).await else {
                return;
            };
            let Some(key) = payload.first_chunk::<2>().map(|k| i16::from_be_bytes(*k)) else {
                return;
            };
            let (fault, frozen) = self.received(id, key, &payload);
            if frozen {
                continue;
            }
            match fault {
                Some(Fault::Stall) => continue,
                Some(Fault::Cut) => return,
                Some(Fault::Delay(d)) => tokio::time::sleep(d).await,
                Some(Fault::Freeze | Fault::Error(_)) | None => {}
            }
            let hold = self.knobs().held.get(&key).copied();
            let batch = match hold {
                Some(n) => {
                    let held = holding.entry(key).or_default();
                    held.push(payload.to_vec());
                    if held.len() < n {
                        continue;
                    }
                    self.knobs().held.remove(&key);
                    std::mem::take(held).into_iter().rev().collect()
                }
                None => vec![payload.to_vec()],
            };
            for payload in batch {
                let Some(response) = self.answer(id, &payload, fault) else {
                    return;
                };
                let response = self.finish(id, key, &payload, response);
                let raw = self.knobs().raw.get(&key).cloned();
                let (bytes, close) = match raw {
                    None => (response, false),
                    Some(f) => match f(id, &payload, response.get(4..).unwrap_or_default()) {
                        Raw::Frame(p) => (recode::prefixed(&p), false),
                        Raw::Bytes(b) => (b, false),
                        Raw::BytesThenClose(b) => (b, true),
                    },
                };
                if s.write_all(&bytes).await.is_err() || close {
                    return;
                }
            }
        }
    }
}

/// Moves `topic`-`partition`'s leadership to `leader` (a new leader
/// epoch, as an election makes); false if the cluster has no such partition.
pub fn elect(cluster: &mut Cluster, topic: &str, partition: i32, leader: i32) -> bool {
    let Some(p) = cluster.partition_mut(topic, partition) else {
        return false;
    };
    if p.leader != leader {
        p.leader = leader;
        p.leader_epoch = p.leader_epoch.saturating_add(1);
    }
    true
}

impl Connector for StallCluster {
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(async move {
            let refused = |kind: std::io::ErrorKind| kdp_client::Error::Connect {
                addr: format!("{}:{}", addr.host, addr.port),
                source: Arc::new(kind.into()),
            };
            let Ok(id) = addr.host.trim_start_matches('b').parse::<i32>() else {
                return Err(refused(std::io::ErrorKind::NotFound));
            };
            if self.knobs().refused.contains(&id) {
                return Err(refused(std::io::ErrorKind::ConnectionRefused));
            }
            let (client, server) = tokio::io::duplex(1024 * 1024);
            tokio::spawn(self.clone().serve(id, server));
            Ok(Box::new(client) as BoxStream)
        })
    }
}

#[cfg(test)]
mod tests;
