//! Lookup strategies: which broker a key's request goes to.
//!
//! As in Kafka's Admin client: each partition's leader (from metadata), one
//! broker chosen by id, every broker, or the coordinator of a key (found by
//! FindCoordinator, supplied through [`CoordinatorLookup`]). A strategy is
//! refreshed before a round of requests whenever a key needs re-routing.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kdp_wire::api::ApiKey;
use kdp_wire::ErrorCode;

use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;

use crate::client::Client;
use crate::error::Result;
use crate::metadata::ClusterMetadata;

/// Where a key goes, as of the strategy's last refresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Send it to this broker.
    Broker(i32),
    /// Not now (no leader yet): refresh and try again; the error is the
    /// answer if time runs out.
    Retry(KeyError),
    /// Never: the answer is this error.
    Fail(KeyError),
    /// The lookup says the key does not exist (a partition or topic not in
    /// metadata); the handler decides what that means.
    Missing(KeyError),
}

/// Finds the broker for each key. `refresh` brings the strategy's view up to
/// date for the keys still to route, each request it sends bounded by
/// `timeout`; `route` answers from that view.
pub trait LookupStrategy<K>: Send {
    /// Brings the view up to date for `keys`, each request bounded by
    /// `timeout`. Borrowed: most strategies need no key, or only a part of
    /// each (a topic), so the driver copies none for them.
    fn refresh<'a>(
        &'a mut self,
        client: &'a Client,
        keys: &'a [&'a K],
        timeout: Duration,
    ) -> impl Future<Output = Result<()>> + Send + 'a;

    /// Where `key` goes now, from the last refresh.
    fn route(&self, key: &K) -> Route;

    /// The request `refresh` sends: what to name when it does not answer.
    fn api(&self) -> ApiKey {
        ApiKey::METADATA
    }

    /// Whether a connection failure or timeout is worth a re-lookup: not when
    /// the broker is fixed (the same broker would be asked again).
    fn reroutes(&self) -> bool {
        true
    }
}

/// Each partition's leader, or one chosen broker for every partition that
/// exists (a follower answers from its own state).
#[derive(Debug, Default)]
pub struct PartitionLeader {
    metadata: ClusterMetadata,
    /// Metadata given at the start that the first refresh may use as is.
    seeded: bool,
    chosen: Option<i32>,
}

impl PartitionLeader {
    /// Routes each partition to its leader.
    pub fn new() -> Self {
        PartitionLeader::default()
    }

    /// Ask broker `id` for every partition instead of the leaders.
    pub fn chosen_broker(id: i32) -> Self {
        PartitionLeader {
            chosen: Some(id),
            ..Default::default()
        }
    }

    /// Starts from metadata the caller already has (saves one request).
    pub fn with_metadata(mut self, metadata: ClusterMetadata) -> Self {
        self.metadata = metadata;
        self.seeded = true;
        self
    }

    /// The metadata of the last refresh.
    pub fn metadata(&self) -> &ClusterMetadata {
        &self.metadata
    }

    /// The metadata of the last refresh, taken.
    pub fn into_metadata(self) -> ClusterMetadata {
        self.metadata
    }
}

impl LookupStrategy<TopicPartition> for PartitionLeader {
    async fn refresh(
        &mut self,
        client: &Client,
        keys: &[&TopicPartition],
        timeout: Duration,
    ) -> Result<()> {
        if std::mem::take(&mut self.seeded) {
            return Ok(());
        }
        let mut topics: Vec<String> = keys.iter().map(|(t, _)| t.clone()).collect();
        topics.sort();
        topics.dedup();
        self.metadata = client.metadata_within(Some(&topics), timeout).await?;
        Ok(())
    }

    fn route(&self, (topic, partition): &TopicPartition) -> Route {
        let md = &self.metadata;
        if let Some(b) = self.chosen {
            if !md.brokers.contains_key(&b) {
                let ids: Vec<String> = md.brokers.keys().map(ToString::to_string).collect();
                return Route::Fail(KeyError::client(
                    ErrorCode::BROKER_NOT_AVAILABLE,
                    format!(
                        "broker {b} is not in the cluster metadata (brokers: {})",
                        ids.join(", ")
                    ),
                ));
            }
        }
        let Some(info) = md.partition(topic, *partition) else {
            return Route::Missing(match md.topic(topic) {
                Some(t) if t.error_code == ErrorCode::NONE => {
                    missing_partition(topic, *partition, t.partitions.len())
                }
                Some(t) if t.error_code != ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                    KeyError::client(
                        t.error_code,
                        format!("metadata lookup failed for topic {topic:?}"),
                    )
                }
                _ => unknown_topic(topic),
            });
        };
        if let Some(b) = self.chosen {
            return Route::Broker(b);
        }
        if info.leader < 0 || !md.brokers.contains_key(&info.leader) {
            let code = if info.error_code != ErrorCode::NONE {
                info.error_code
            } else {
                ErrorCode::LEADER_NOT_AVAILABLE
            };
            return Route::Retry(KeyError::client(
                code,
                "metadata: the partition has no available leader",
            ));
        }
        Route::Broker(info.leader)
    }

    fn reroutes(&self) -> bool {
        self.chosen.is_none()
    }
}

/// One broker chosen by id, for keys that are not partitions.
#[derive(Debug)]
pub struct ChosenBroker {
    id: i32,
    known: Option<bool>,
}

impl ChosenBroker {
    /// Routes every key to broker `id`, once metadata shows it exists.
    pub fn new(id: i32) -> Self {
        ChosenBroker { id, known: None }
    }
}

impl<K: Sync> LookupStrategy<K> for ChosenBroker {
    async fn refresh(&mut self, client: &Client, _keys: &[&K], timeout: Duration) -> Result<()> {
        let md = client.metadata_within(Some(&[]), timeout).await?;
        self.known = Some(md.brokers.contains_key(&self.id));
        Ok(())
    }

    fn route(&self, _key: &K) -> Route {
        match self.known {
            Some(false) => Route::Fail(KeyError::client(
                ErrorCode::BROKER_NOT_AVAILABLE,
                format!("broker {} is not in the cluster metadata", self.id),
            )),
            _ => Route::Broker(self.id),
        }
    }

    fn reroutes(&self) -> bool {
        false
    }
}

/// Every broker: the keys are broker ids (as Kafka's AllBrokersStrategy),
/// listed by [`AllBrokers::keys`] from metadata.
#[derive(Debug, Default)]
pub struct AllBrokers {
    brokers: Vec<i32>,
}

impl AllBrokers {
    /// The brokers of the cluster, to use as the keys.
    pub async fn keys(client: &Client) -> Result<Vec<i32>> {
        let timeout = client.config().connection.request_timeout;
        AllBrokers::keys_within(client, timeout).await
    }

    /// [`AllBrokers::keys`], each broker asked waiting at most `timeout`.
    pub async fn keys_within(client: &Client, timeout: Duration) -> Result<Vec<i32>> {
        let md = client.metadata_within(Some(&[]), timeout).await?;
        Ok(md.brokers.keys().copied().collect())
    }
}

impl LookupStrategy<i32> for AllBrokers {
    async fn refresh(&mut self, client: &Client, _keys: &[&i32], timeout: Duration) -> Result<()> {
        self.brokers = AllBrokers::keys_within(client, timeout).await?;
        Ok(())
    }

    fn route(&self, id: &i32) -> Route {
        if self.brokers.contains(id) {
            Route::Broker(*id)
        } else {
            // a broker that left the cluster since it was listed
            Route::Missing(KeyError::client(
                ErrorCode::BROKER_NOT_AVAILABLE,
                format!("broker {id} is not in the cluster metadata"),
            ))
        }
    }
}

/// The future a [`CoordinatorLookup`] returns: each key's coordinator id, or
/// why it has none (e.g. COORDINATOR_NOT_AVAILABLE, retriable).
pub type CoordinatorFuture<'a, K> = Pin<
    Box<dyn Future<Output = Result<BTreeMap<K, std::result::Result<i32, KeyError>>>> + Send + 'a>,
>;

/// Finds the coordinator of keys (a transactional id, a group id): what a
/// FindCoordinator user implements.
pub trait CoordinatorLookup<K>: Send + Sync {
    /// Each request it sends waits at most `timeout`.
    fn find<'a>(
        &'a self,
        client: &'a Client,
        keys: &'a [K],
        timeout: Duration,
    ) -> CoordinatorFuture<'a, K>;
}

/// The coordinator of each key, as `L` finds it; looked up again for keys
/// that need re-routing (NOT_COORDINATOR, a coordinator that went away).
#[derive(Debug)]
pub struct Coordinator<K, L> {
    lookup: L,
    /// Boxed errors: a slot per key, and most keys have a coordinator.
    found: BTreeMap<K, std::result::Result<i32, Box<KeyError>>>,
    /// Coordinators known before the first lookup: it asks only for the
    /// other keys.
    seeded: bool,
}

impl<K, L> Coordinator<K, L> {
    /// Routes keys to the coordinators `lookup` finds.
    pub fn new(lookup: L) -> Self {
        Coordinator {
            lookup,
            found: BTreeMap::new(),
            seeded: false,
        }
    }

    /// Starts from coordinators the caller already knows (a group's is the
    /// broker that listed it); the first lookup asks only for the keys not
    /// among them, and a key whose coordinator moved (NOT_COORDINATOR) is
    /// looked up as usual.
    pub fn with_known(lookup: L, known: impl IntoIterator<Item = (K, i32)>) -> Self
    where
        K: Ord,
    {
        Coordinator {
            lookup,
            found: known.into_iter().map(|(k, id)| (k, Ok(id))).collect(),
            seeded: true,
        }
    }
}

impl<K, L> LookupStrategy<K> for Coordinator<K, L>
where
    K: Ord + Clone + Send + Sync,
    L: CoordinatorLookup<K>,
{
    async fn refresh(&mut self, client: &Client, keys: &[&K], timeout: Duration) -> Result<()> {
        // the lookup is asked by owned key (its answers are kept by key):
        // copied here, where they are asked about, and only those
        let seeded = std::mem::take(&mut self.seeded);
        let keys: Vec<K> = keys
            .iter()
            .filter(|k| !seeded || !matches!(self.found.get(**k), Some(Ok(_))))
            .map(|k| (*k).clone())
            .collect();
        if seeded && keys.is_empty() {
            return Ok(());
        }
        let found = self.lookup.find(client, &keys, timeout).await?;
        // requests go by broker id: the client must know where each one is
        let known = client.brokers();
        if found
            .values()
            .any(|r| r.as_ref().is_ok_and(|id| !known.contains_key(id)))
        {
            client.metadata_within(Some(&[]), timeout).await?;
        }
        self.found
            .extend(found.into_iter().map(|(k, r)| (k, r.map_err(Box::new))));
        Ok(())
    }

    fn route(&self, key: &K) -> Route {
        match self.found.get(key) {
            Some(Ok(id)) => Route::Broker(*id),
            Some(Err(e)) if e.code.is_retriable() => Route::Retry(KeyError::clone(e)),
            Some(Err(e)) => Route::Fail(KeyError::clone(e)),
            None => Route::Retry(KeyError::client(
                ErrorCode::COORDINATOR_NOT_AVAILABLE,
                "no coordinator found yet",
            )),
        }
    }

    fn api(&self) -> ApiKey {
        ApiKey::FIND_COORDINATOR
    }
}

pub(crate) fn unknown_topic(topic: &str) -> KeyError {
    KeyError::client(
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
        format!("topic {topic:?} does not exist (metadata)"),
    )
}

pub(crate) fn missing_partition(topic: &str, partition: i32, count: usize) -> KeyError {
    let have = match count {
        0 => "no partitions".to_string(),
        1 => "1 partition (0)".to_string(),
        n => format!("{n} partitions (0-{})", n - 1),
    };
    KeyError::client(
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
        format!("partition {partition} does not exist: topic {topic:?} has {have}"),
    )
}
