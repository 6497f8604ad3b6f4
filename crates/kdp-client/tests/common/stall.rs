//! The demo cluster of kdp-server, answered by its own request handling
//! (every API kdp speaks) behind in-memory streams, with stalls injected
//! per API and per broker: a stalled API is read and never answered, as a
//! broker that hangs in that code path. On tokio's paused clock every
//! deadline is then exact.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use kdp_client::{BoxStream, BrokerAddress, ConnectFuture, Connector};
use kdp_server::broker::{handle_request, Advertised, Shared};
use kdp_server::responder::AllowAll;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Where a stall applies: one broker, or every broker.
type StallKey = (Option<i32>, i16);

#[derive(Clone)]
pub struct StallCluster {
    shared: Arc<Shared>,
    stalls: Arc<Mutex<HashSet<StallKey>>>,
    /// Requests received (answered or not): broker and API key.
    asked: Arc<Mutex<Vec<(i32, i16)>>>,
}

impl StallCluster {
    /// kdp-server's demo cluster; broker `id` is reached as `b{id}:9092`.
    pub fn demo() -> Self {
        let cluster = kdp_server::demo::cluster().expect("demo cluster");
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
                100 * 1024 * 1024,
            )),
            stalls: Arc::default(),
            asked: Arc::default(),
        }
    }

    pub fn bootstrap(&self) -> Vec<BrokerAddress> {
        vec![BrokerAddress::new("b1", 9092)]
    }

    /// Every broker stops answering `api_key` (requests are still read).
    pub fn stall(&self, api_key: i16) {
        self.stalls.lock().unwrap().insert((None, api_key));
    }

    /// Broker `broker` stops answering `api_key`.
    pub fn stall_on(&self, broker: i32, api_key: i16) {
        self.stalls.lock().unwrap().insert((Some(broker), api_key));
    }

    /// How many `api_key` requests the brokers received.
    pub fn asked(&self, api_key: i16) -> usize {
        let asked = self.asked.lock().unwrap();
        asked.iter().filter(|(_, k)| *k == api_key).count()
    }

    /// The cluster's state (to check what a write did, or did not, change).
    pub fn cluster(&self) -> std::sync::RwLockReadGuard<'_, kdp_server::Cluster> {
        self.shared.read()
    }

    fn stalled(&self, broker: i32, api_key: i16) -> bool {
        let stalls = self.stalls.lock().unwrap();
        stalls.contains(&(None, api_key)) || stalls.contains(&(Some(broker), api_key))
    }

    async fn serve(self, id: i32, mut s: DuplexStream) {
        loop {
            let mut size = [0u8; 4];
            if s.read_exact(&mut size).await.is_err() {
                return;
            }
            let Ok(len) = usize::try_from(i32::from_be_bytes(size)) else {
                return;
            };
            let mut payload = vec![0u8; len];
            if s.read_exact(&mut payload).await.is_err() {
                return;
            }
            let Some(key) = payload.first_chunk::<2>().map(|k| i16::from_be_bytes(*k)) else {
                return;
            };
            self.asked.lock().unwrap().push((id, key));
            if self.stalled(id, key) {
                continue;
            }
            let Ok(handled) = handle_request(&self.shared, id, &payload, None) else {
                return;
            };
            if s.write_all(&handled.response).await.is_err() {
                return;
            }
        }
    }
}

impl Connector for StallCluster {
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(async move {
            let id: i32 = addr.host.trim_start_matches('b').parse().unwrap();
            let (client, server) = tokio::io::duplex(1024 * 1024);
            tokio::spawn(self.clone().serve(id, server));
            Ok(Box::new(client) as BoxStream)
        })
    }
}
