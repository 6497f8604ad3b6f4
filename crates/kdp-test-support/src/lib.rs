//! Test support shared by kdp's crates: the demo cluster of kdp-server,
//! answered by its own request handling (every API kdp speaks) behind
//! in-memory streams, with faults injected per API and per broker.
//!
//! A fault is one of [`Fault`]: a stall (the request is read and never
//! answered, as a broker that hangs in that code path), a delay before the
//! answer, or a cut connection. On tokio's paused clock every deadline is
//! then exact.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kdp_client::{BoxStream, BrokerAddress, ConnectFuture, Connector};
use kdp_server::broker::{handle_request, Advertised, Shared};
use kdp_server::responder::AllowAll;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// What a broker does with a request of a faulted API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Read the request and never answer it (the connection stays open).
    Stall,
    /// Answer after this long.
    Delay(Duration),
    /// Close the connection instead of answering.
    Cut,
}

/// Where a fault applies: one broker, or every broker (`None`), and the API key.
type FaultKey = (Option<i32>, i16);

/// kdp-server's demo cluster behind in-memory streams, as a [`Connector`].
#[derive(Clone)]
pub struct StallCluster {
    shared: Arc<Shared>,
    faults: Arc<Mutex<HashMap<FaultKey, Fault>>>,
    /// Requests received (answered or not): broker and API key.
    asked: Arc<Mutex<Vec<(i32, i16)>>>,
}

impl StallCluster {
    /// kdp-server's demo cluster; broker `id` is reached as `b{id}:9092`.
    ///
    /// # Panics
    /// If kdp-server's demo cluster does not build (a bug in kdp-server).
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
            faults: Arc::default(),
            asked: Arc::default(),
        }
    }

    /// The bootstrap server: broker 1.
    pub fn bootstrap(&self) -> Vec<BrokerAddress> {
        vec![BrokerAddress::new("b1", 9092)]
    }

    /// Every broker applies `fault` to `api_key` requests.
    pub fn fault(&self, api_key: i16, fault: Fault) {
        self.faults().insert((None, api_key), fault);
    }

    /// Broker `broker` applies `fault` to `api_key` requests.
    pub fn fault_on(&self, broker: i32, api_key: i16, fault: Fault) {
        self.faults().insert((Some(broker), api_key), fault);
    }

    /// Every broker stops answering `api_key` (requests are still read).
    pub fn stall(&self, api_key: i16) {
        self.fault(api_key, Fault::Stall);
    }

    /// Broker `broker` stops answering `api_key`.
    pub fn stall_on(&self, broker: i32, api_key: i16) {
        self.fault_on(broker, api_key, Fault::Stall);
    }

    /// How many `api_key` requests the brokers received.
    pub fn asked(&self, api_key: i16) -> usize {
        let asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        asked.iter().filter(|(_, k)| *k == api_key).count()
    }

    /// The cluster's state (to check what a write did, or did not, change).
    pub fn cluster(&self) -> std::sync::RwLockReadGuard<'_, kdp_server::Cluster> {
        self.shared.read()
    }

    fn faults(&self) -> std::sync::MutexGuard<'_, HashMap<FaultKey, Fault>> {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fault for `api_key` on `broker`: the broker's own, else everyone's.
    fn fault_for(&self, broker: i32, api_key: i16) -> Option<Fault> {
        let faults = self.faults();
        faults
            .get(&(Some(broker), api_key))
            .or_else(|| faults.get(&(None, api_key)))
            .copied()
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
            self.asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((id, key));
            match self.fault_for(id, key) {
                Some(Fault::Stall) => continue,
                Some(Fault::Cut) => return,
                Some(Fault::Delay(d)) => tokio::time::sleep(d).await,
                None => {}
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
            let Ok(id) = addr.host.trim_start_matches('b').parse::<i32>() else {
                return Err(kdp_client::Error::Connect {
                    addr: format!("{}:{}", addr.host, addr.port),
                    source: Arc::new(std::io::ErrorKind::NotFound.into()),
                });
            };
            let (client, server) = tokio::io::duplex(1024 * 1024);
            tokio::spawn(self.clone().serve(id, server));
            Ok(Box::new(client) as BoxStream)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_client::{Client, ClientConfig};
    use kdp_wire::api;

    async fn client(cluster: &StallCluster) -> Arc<Client> {
        let config = ClientConfig {
            connector: Arc::new(cluster.clone()),
            ..Default::default()
        };
        Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_delay_answers_late_and_a_cut_fails_the_request() {
        let cluster = StallCluster::demo();
        let c = client(&cluster).await;
        cluster.fault(api::METADATA, Fault::Delay(Duration::from_secs(3)));
        let start = tokio::time::Instant::now();
        c.metadata(None).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3));

        cluster.fault(api::METADATA, Fault::Cut);
        assert!(c.metadata(None).await.is_err());
        assert!(cluster.asked(api::METADATA) >= 2);
    }
}
