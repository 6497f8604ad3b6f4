//! DescribeConfigs of brokers (the settings the diagnosis depends on), of
//! topics (whether a log is compacted, for the lag's counts) and of groups
//! (a share group's `share.isolation.level`): one handler, generic over
//! the resource.

use std::collections::BTreeMap;

use kdp_wire::messages::describe_configs::{
    RESOURCE_TYPE_BROKER, RESOURCE_TYPE_GROUP, RESOURCE_TYPE_TOPIC,
};
use kdp_wire::messages::{
    DescribeConfigsRequest, DescribeConfigsResource, DescribeConfigsResponse,
};

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, AllBrokers, ChosenBroker, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::error::Result;
use kdp_domain::key_error::KeyError;

/// `transaction.max.timeout.ms`: the longest timeout a producer may ask for.
pub const TRANSACTION_MAX_TIMEOUT_MS: &str = "transaction.max.timeout.ms";
/// `producer.id.expiration.ms`: how long an idle producer's state is kept.
pub const PRODUCER_ID_EXPIRATION_MS: &str = "producer.id.expiration.ms";
/// `transactional.id.expiration.ms`: how long an idle transactional id is kept.
pub const TRANSACTIONAL_ID_EXPIRATION_MS: &str = "transactional.id.expiration.ms";

/// `cleanup.policy`: `delete`, `compact` or both; a compacted log can
/// lose records it held.
pub const CLEANUP_POLICY: &str = "cleanup.policy";
/// A topic's `message.timestamp.type`: `CreateTime` or `LogAppendTime`.
pub const MESSAGE_TIMESTAMP_TYPE: &str = "message.timestamp.type";

/// `share.isolation.level`: a share group's isolation (group config,
/// Kafka 4.x; unset means read_uncommitted).
pub const SHARE_ISOLATION_LEVEL: &str = "share.isolation.level";

/// One broker's values (null for a sensitive or unset key).
pub type BrokerConfig = BTreeMap<String, Option<String>>;

/// One topic's values (null for a sensitive or unset key).
pub type TopicConfig = BTreeMap<String, Option<String>>;

/// One group's values (null for a sensitive or unset key).
pub type GroupConfig = BTreeMap<String, Option<String>>;

/// What names a DescribeConfigs resource: a broker's id or a topic's name.
trait Resource: Clone + Ord + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static {
    /// Kafka's resource type for it.
    const TYPE: i8;
    /// The resource name on the wire.
    fn name(&self) -> String;
    /// The key a resource name in the answer stands for, if it parses.
    fn from_name(name: String) -> Option<Self>;
}

impl Resource for i32 {
    const TYPE: i8 = RESOURCE_TYPE_BROKER;
    fn name(&self) -> String {
        self.to_string()
    }
    fn from_name(name: String) -> Option<Self> {
        name.parse().ok()
    }
}

impl Resource for String {
    const TYPE: i8 = RESOURCE_TYPE_TOPIC;
    fn name(&self) -> String {
        self.clone()
    }
    fn from_name(name: String) -> Option<Self> {
        Some(name)
    }
}

/// A group id as a DescribeConfigs resource (a topic is a plain string).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct GroupId(String);

impl Resource for GroupId {
    const TYPE: i8 = RESOURCE_TYPE_GROUP;
    fn name(&self) -> String {
        self.0.clone()
    }
    fn from_name(name: String) -> Option<Self> {
        Some(GroupId(name))
    }
}

/// DescribeConfigs of resources of one type, each asking `keys`.
struct Handler<'a, K> {
    keys: &'a [&'a str],
    resource: std::marker::PhantomData<fn() -> K>,
}

impl<'a, K> Handler<'a, K> {
    fn new(keys: &'a [&'a str]) -> Self {
        Handler {
            keys,
            resource: std::marker::PhantomData,
        }
    }
}

impl<K: Resource> AdminHandler for Handler<'_, K> {
    type Key = K;
    type Value = BTreeMap<String, Option<String>>;
    type Request = DescribeConfigsRequest;
    type Response = DescribeConfigsResponse;

    fn build_request(&self, _broker: i32, resources: &[K]) -> DescribeConfigsRequest {
        DescribeConfigsRequest {
            resources: resources
                .iter()
                .map(|r| DescribeConfigsResource {
                    resource_type: K::TYPE,
                    resource_name: r.name(),
                    configuration_keys: Some(self.keys.iter().map(|k| k.to_string()).collect()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[K],
        resp: DescribeConfigsResponse,
    ) -> Vec<(K, KeyOutcome<Self::Value>)> {
        resp.results
            .into_iter()
            .filter(|r| r.resource_type == K::TYPE)
            .filter_map(|r| {
                let key = K::from_name(r.resource_name)?;
                keys.contains(&key).then(|| {
                    let outcome = KeyOutcome::from_code(r.error_code, r.error_message, || {
                        r.configs.into_iter().map(|c| (c.name, c.value)).collect()
                    });
                    (key, outcome)
                })
            })
            .collect()
    }
}

/// Each broker's values of `keys`, asked of the broker itself.
pub async fn broker_configs(
    client: &SharedClient,
    keys: &[&str],
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<i32, std::result::Result<BrokerConfig, KeyError>>> {
    let brokers = bound
        .run(
            "Metadata",
            AllBrokers::keys_within(client, bound.request_timeout()),
        )
        .await?;
    let mut results = Vec::new();
    let opts = opts.one_key_per_request();
    drive(
        client,
        &Handler::<i32>::new(keys),
        &mut AllBrokers::default(),
        brokers,
        &opts,
        bound,
        collect(&mut results),
    )
    .await;
    Ok(results.into_iter().map(|(k, _, r)| (k, r)).collect())
}

/// Each topic's values of `keys`, asked of one broker (any broker
/// describes every topic): the lowest id in the metadata.
pub async fn topic_configs(
    client: &SharedClient,
    topics: Vec<String>,
    keys: &[&str],
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<TopicConfig, KeyError>>> {
    any_broker_configs(client, topics, keys, opts, bound).await
}

/// Each group's values of `keys` (group configs, resource type GROUP,
/// Kafka 4.x), asked of one broker as for topics: group configs live in
/// the cluster's metadata, which every broker holds.
pub async fn group_configs(
    client: &SharedClient,
    groups: Vec<String>,
    keys: &[&str],
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<GroupConfig, KeyError>>> {
    let ids = groups.into_iter().map(GroupId).collect();
    let got = any_broker_configs(client, ids, keys, opts, bound).await?;
    Ok(got.into_iter().map(|(g, r)| (g.0, r)).collect())
}

/// DescribeConfigs of `resources` at the lowest broker id in the metadata.
async fn any_broker_configs<K: Resource>(
    client: &SharedClient,
    resources: Vec<K>,
    keys: &[&str],
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<K, std::result::Result<BTreeMap<String, Option<String>>, KeyError>>> {
    let brokers = bound
        .run(
            "Metadata",
            AllBrokers::keys_within(client, bound.request_timeout()),
        )
        .await?;
    let broker = brokers.into_iter().min().unwrap_or(-1);
    let mut results = Vec::new();
    drive(
        client,
        &Handler::<K>::new(keys),
        &mut ChosenBroker::new(broker),
        resources,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    Ok(results.into_iter().map(|(k, _, r)| (k, r)).collect())
}

/// The largest value of a millisecond setting over the brokers that
/// answered, if any did.
pub fn max_ms(
    configs: &BTreeMap<i32, std::result::Result<BrokerConfig, KeyError>>,
    key: &str,
) -> Option<i64> {
    configs
        .values()
        .filter_map(|c| c.as_ref().ok()?.get(key)?.as_deref()?.parse::<i64>().ok())
        .max()
}
