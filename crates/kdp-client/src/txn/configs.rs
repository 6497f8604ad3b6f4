//! DescribeConfigs of brokers (the settings the diagnosis depends on) and
//! of topics (whether a log is compacted, for the lag's counts).

use std::collections::BTreeMap;

use kdp_wire::messages::describe_configs::{RESOURCE_TYPE_BROKER, RESOURCE_TYPE_TOPIC};
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

/// One broker's values (null for a sensitive or unset key).
pub type BrokerConfig = BTreeMap<String, Option<String>>;

/// One topic's values (null for a sensitive or unset key).
pub type TopicConfig = BTreeMap<String, Option<String>>;

struct Handler<'a> {
    keys: &'a [&'a str],
}

impl AdminHandler for Handler<'_> {
    type Key = i32;
    type Value = BrokerConfig;
    type Request = DescribeConfigsRequest;
    type Response = DescribeConfigsResponse;

    fn build_request(&self, _broker: i32, brokers: &[i32]) -> DescribeConfigsRequest {
        DescribeConfigsRequest {
            resources: brokers
                .iter()
                .map(|b| DescribeConfigsResource {
                    resource_type: RESOURCE_TYPE_BROKER,
                    resource_name: b.to_string(),
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
        keys: &[i32],
        resp: DescribeConfigsResponse,
    ) -> Vec<(i32, KeyOutcome<BrokerConfig>)> {
        resp.results
            .into_iter()
            .filter_map(|r| {
                let id: i32 = r.resource_name.parse().ok()?;
                keys.contains(&id).then(|| {
                    let outcome = KeyOutcome::from_code(r.error_code, r.error_message, || {
                        r.configs.into_iter().map(|c| (c.name, c.value)).collect()
                    });
                    (id, outcome)
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
        &Handler { keys },
        &mut AllBrokers::default(),
        brokers,
        &opts,
        bound,
        collect(&mut results),
    )
    .await;
    Ok(results.into_iter().map(|(k, _, r)| (k, r)).collect())
}

struct TopicHandler<'a> {
    keys: &'a [&'a str],
}

impl AdminHandler for TopicHandler<'_> {
    type Key = String;
    type Value = TopicConfig;
    type Request = DescribeConfigsRequest;
    type Response = DescribeConfigsResponse;

    fn build_request(&self, _broker: i32, topics: &[String]) -> DescribeConfigsRequest {
        DescribeConfigsRequest {
            resources: topics
                .iter()
                .map(|t| DescribeConfigsResource {
                    resource_type: RESOURCE_TYPE_TOPIC,
                    resource_name: t.clone(),
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
        keys: &[String],
        resp: DescribeConfigsResponse,
    ) -> Vec<(String, KeyOutcome<TopicConfig>)> {
        resp.results
            .into_iter()
            .filter(|r| r.resource_type == RESOURCE_TYPE_TOPIC && keys.contains(&r.resource_name))
            .map(|r| {
                let outcome = KeyOutcome::from_code(r.error_code, r.error_message, || {
                    r.configs.into_iter().map(|c| (c.name, c.value)).collect()
                });
                (r.resource_name, outcome)
            })
            .collect()
    }
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
        &TopicHandler { keys },
        &mut ChosenBroker::new(broker),
        topics,
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
