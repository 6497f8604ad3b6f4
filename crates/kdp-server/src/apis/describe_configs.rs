//! DescribeConfigs (`KafkaApis.handleDescribeConfigsRequest`,
//! `ConfigHelper.describeConfigs`) for BROKER, TOPIC and GROUP resources. A broker
//! describes its own configuration only: a BROKER resource named with
//! another broker id is INVALID_REQUEST ("Unexpected broker id, expected N
//! or empty string, but received M"), one that is not a number likewise;
//! the empty name (cluster-wide dynamic defaults) has no entries here.
//! DESCRIBE_CONFIGS on the cluster is checked first
//! (CLUSTER_AUTHORIZATION_FAILED). ConfigurationKeys null means all.
//! The mock's broker configuration is [`Cluster::broker_configs`]: the
//! transaction settings with Kafka's defaults (DEFAULT_CONFIG) unless the
//! file sets them (STATIC_BROKER_CONFIG), plus anything else the file sets.
//! A topic answers with its own settings (the file's `configs`,
//! DYNAMIC_TOPIC_CONFIG) and `cleanup.policy` always: `compact` for the
//! internal topics (created with it, DYNAMIC_TOPIC_CONFIG), else Kafka's
//! default `delete` (DEFAULT_CONFIG); an unknown topic answers
//! UNKNOWN_TOPIC_OR_PARTITION without a message (as
//! `ConfigHelper.describeConfigs` at apache/kafka 1eb7644). A group (Kafka
//! 4.x, GROUP = 32) answers the configs its file sets (GROUP_CONFIG) and
//! `share.isolation.level` always, Kafka's default `read_uncommitted`
//! (DEFAULT_CONFIG) when unset, whether or not the group exists (group
//! configs outlive groups); the mock checks DESCRIBE on the group
//! (GROUP_AUTHORIZATION_FAILED).

use std::collections::HashSet;

use kdp_wire::messages::describe_configs::{
    RESOURCE_TYPE_BROKER, RESOURCE_TYPE_GROUP, RESOURCE_TYPE_TOPIC,
};
use kdp_wire::messages::{
    DescribeConfigsRequest, DescribeConfigsResourceResult, DescribeConfigsResponse,
    DescribeConfigsResult, DescribeConfigsSynonym,
};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};

use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::ClusterOperation;
use crate::budget::Budget;
use crate::budget::TooLarge;
use crate::cluster::{Cluster, ConfigSource, CONFIG_TYPE_STRING};
use crate::group::SHARE_ISOLATION_LEVEL;

/// `cleanup.policy`, reported for every topic.
const CLEANUP_POLICY: &str = "cleanup.policy";
/// DescribeConfigs ConfigType LIST (`cleanup.policy`'s type).
const CONFIG_TYPE_LIST: i8 = 7;

/// Answers a DescribeConfigs request on this broker, for any size of answer.
pub fn describe_configs(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeConfigsRequest,
    version: i16,
) -> DescribeConfigsResponse {
    match describe_configs_within(cluster, caller, req, version, usize::MAX) {
        Ok(resp) => resp,
        // Nothing is larger than usize::MAX bytes.
        Err(e) => unreachable!("{e}"),
    }
}

/// As [`describe_configs`], but refuses as soon as the answer is certainly
/// larger than `limit` bytes (a request can name the broker many times).
pub fn describe_configs_within(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeConfigsRequest,
    version: i16,
    limit: usize,
) -> Result<DescribeConfigsResponse, TooLarge> {
    // Each resource is answered once, with at least its name echoed.
    let v = Version::of::<DescribeConfigsResponse>(version);
    let each = DescribeConfigsResult::min_len(v);
    Budget::new(limit).precheck_each(
        req.resources
            .iter()
            .map(|r| each.saturating_add(r.resource_name.len())),
    )?;
    let mut at_least = 0usize;
    let mut results = Vec::with_capacity(req.resources.len().min(1024));
    for result in req.resources.iter().map(|r| {
        let mut result = DescribeConfigsResult {
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            ..Default::default()
        };
        let answer = match r.resource_type {
            RESOURCE_TYPE_BROKER => broker(cluster, caller, &r.resource_name),
            RESOURCE_TYPE_TOPIC => topic(cluster, caller, &r.resource_name),
            RESOURCE_TYPE_GROUP => group(cluster, caller, &r.resource_name),
            t => Err((
                ErrorCode::INVALID_REQUEST,
                Some(format!("Unsupported resource type: {t}")),
            )),
        };
        match answer {
            Ok(entries) => {
                // A set, so that many keys cost one look-up per entry, not a scan.
                let keys: Option<HashSet<&str>> = r
                    .configuration_keys
                    .as_ref()
                    .map(|keys| keys.iter().map(String::as_str).collect());
                result.configs = entries
                    .into_iter()
                    .filter(|e| {
                        keys.as_ref()
                            .is_none_or(|keys| keys.contains(e.name.as_str()))
                    })
                    .map(|mut e| {
                        if !req.include_synonyms {
                            e.synonyms.clear();
                        }
                        if version < 3 || !req.include_documentation {
                            e.documentation = None;
                        }
                        e
                    })
                    .collect();
            }
            Err((code, message)) => {
                result.error_code = code;
                result.error_message = message;
            }
        }
        result
    }) {
        let bytes = result
            .configs
            .iter()
            .map(|c| {
                let synonyms: usize = c
                    .synonyms
                    .iter()
                    .map(|s| s.name.len() + s.value.as_ref().map_or(0, String::len))
                    .fold(0, usize::saturating_add);
                c.name.len() + c.value.as_ref().map_or(0, String::len) + synonyms
            })
            .fold(result.resource_name.len(), usize::saturating_add);
        at_least = at_least.saturating_add(bytes);
        if at_least > limit {
            return Err(TooLarge { at_least, limit });
        }
        results.push(result);
    }
    Ok(DescribeConfigsResponse {
        results,
        ..Default::default()
    })
}

/// The entries, or an error code and its ErrorMessage.
type Answer = Result<Vec<DescribeConfigsResourceResult>, (ErrorCode, Option<String>)>;

fn default_message(code: ErrorCode) -> String {
    code.message().unwrap_or_default().to_string()
}

fn broker(cluster: &Cluster, caller: &Caller<'_>, name: &str) -> Answer {
    if !caller.may_cluster(cluster, ClusterOperation::DescribeConfigs) {
        let code = ErrorCode::CLUSTER_AUTHORIZATION_FAILED;
        return Err((code, Some(default_message(code))));
    }
    if name.is_empty() {
        return Ok(Vec::new());
    }
    let id: i32 = name.parse().map_err(|_| {
        (
            ErrorCode::INVALID_REQUEST,
            Some(format!("Broker id must be an integer, but it is: {name}")),
        )
    })?;
    if id != caller.broker_id {
        return Err((
            ErrorCode::INVALID_REQUEST,
            Some(format!(
                "Unexpected broker id, expected {} or empty string, but received {name}",
                caller.broker_id
            )),
        ));
    }
    Ok(cluster
        .broker_configs(id)
        .into_iter()
        .map(|c| {
            let mut synonyms = vec![DescribeConfigsSynonym {
                name: c.name.clone(),
                value: Some(c.value.clone()),
                source: c.source as i8,
                unknown_tagged_fields: Default::default(),
            }];
            if let (ConfigSource::Static, Some(d)) = (c.source, c.default) {
                synonyms.push(DescribeConfigsSynonym {
                    name: c.name.clone(),
                    value: Some(d.to_string()),
                    source: ConfigSource::Default as i8,
                    unknown_tagged_fields: Default::default(),
                });
            }
            DescribeConfigsResourceResult {
                name: c.name,
                value: Some(c.value),
                // Static broker settings; not changed at run time here.
                read_only: true,
                config_source: c.source as i8,
                is_sensitive: false,
                synonyms,
                config_type: c.config_type,
                documentation: None,
                unknown_tagged_fields: Default::default(),
            }
        })
        .collect())
}

/// One entry with itself as its only synonym.
fn entry(
    name: &str,
    value: &str,
    source: ConfigSource,
    config_type: i8,
) -> DescribeConfigsResourceResult {
    DescribeConfigsResourceResult {
        name: name.to_string(),
        value: Some(value.to_string()),
        read_only: false,
        config_source: source as i8,
        is_sensitive: false,
        synonyms: vec![DescribeConfigsSynonym {
            name: name.to_string(),
            value: Some(value.to_string()),
            source: source as i8,
            unknown_tagged_fields: Default::default(),
        }],
        config_type,
        documentation: None,
        unknown_tagged_fields: Default::default(),
    }
}

fn group(cluster: &Cluster, caller: &Caller<'_>, name: &str) -> Answer {
    if !caller.may_describe_group(cluster, name) {
        let code = ErrorCode::GROUP_AUTHORIZATION_FAILED;
        return Err((code, Some(default_message(code))));
    }
    let set = cluster.group(name).map(|g| &g.configs);
    let mut entries: Vec<_> = set
        .into_iter()
        .flatten()
        .map(|(k, v)| entry(k, v, ConfigSource::DynamicGroup, CONFIG_TYPE_STRING))
        .collect();
    if !set.is_some_and(|c| c.contains_key(SHARE_ISOLATION_LEVEL)) {
        entries.push(entry(
            SHARE_ISOLATION_LEVEL,
            "read_uncommitted",
            ConfigSource::Default,
            CONFIG_TYPE_STRING,
        ));
    }
    Ok(entries)
}

fn topic(cluster: &Cluster, caller: &Caller<'_>, name: &str) -> Answer {
    if !caller.may_describe_topic(cluster, name) {
        let code = ErrorCode::TOPIC_AUTHORIZATION_FAILED;
        return Err((code, Some(default_message(code))));
    }
    match cluster.topic(name) {
        Some(t) => {
            let mut entries: Vec<_> = t
                .configs
                .iter()
                .map(|(k, v)| {
                    let ty = if k == CLEANUP_POLICY {
                        CONFIG_TYPE_LIST
                    } else {
                        CONFIG_TYPE_STRING
                    };
                    entry(k, v, ConfigSource::DynamicTopic, ty)
                })
                .collect();
            if !t.configs.contains_key(CLEANUP_POLICY) {
                let (value, source) = if t.internal {
                    ("compact", ConfigSource::DynamicTopic)
                } else {
                    ("delete", ConfigSource::Default)
                };
                entries.push(entry(CLEANUP_POLICY, value, source, CONFIG_TYPE_LIST));
            }
            Ok(entries)
        }
        // ConfigHelper sets only the code here.
        None => Err((ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, None)),
    }
}

impl Handler for DescribeConfigsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<DescribeConfigsResponse, Refusal> {
        Ok(describe_configs_within(
            &call.shared.read(),
            &call.caller,
            self,
            call.version,
            call.limit,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::DescribeConfigsResource;

    fn ask(
        c: &Cluster,
        broker: i32,
        name: &str,
        keys: Option<Vec<&str>>,
        synonyms: bool,
    ) -> DescribeConfigsResult {
        let req = DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type: RESOURCE_TYPE_BROKER,
                resource_name: name.into(),
                configuration_keys: keys.map(|k| k.into_iter().map(String::from).collect()),
                ..Default::default()
            }],
            include_synonyms: synonyms,
            ..Default::default()
        };
        describe_configs(c, &caller(broker), &req, 4)
            .results
            .remove(0)
    }

    #[test]
    fn a_broker_reports_file_values_and_defaults() {
        let c = cluster(TXN_CLUSTER);
        let r = ask(&c, 1, "1", None, true);
        assert_eq!(r.error_code, ErrorCode::NONE);
        let got: Vec<(&str, Option<&str>, i8, usize)> = r
            .configs
            .iter()
            .map(|e| {
                (
                    e.name.as_str(),
                    e.value.as_deref(),
                    e.config_source,
                    e.synonyms.len(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("offsets.topic.num.partitions", Some("50"), 5, 1),
                ("offsets.topic.replication.factor", Some("3"), 5, 1),
                ("producer.id.expiration.ms", Some("86400000"), 5, 1),
                ("transaction.max.timeout.ms", Some("120000"), 4, 2),
                ("transaction.state.log.num.partitions", Some("50"), 5, 1),
                ("transaction.state.log.replication.factor", Some("3"), 5, 1),
                ("transactional.id.expiration.ms", Some("604800000"), 5, 1),
            ]
        );
        // Replication factors are Kafka's SHORT, partition counts INT.
        let types: Vec<i8> = r.configs.iter().map(|e| e.config_type).collect();
        assert_eq!(types, [3, 4, 3, 3, 3, 4, 3]);
        // Broker 2 sets nothing: the default.
        let r = ask(&c, 2, "2", Some(vec!["transaction.max.timeout.ms"]), false);
        assert_eq!(r.configs.len(), 1);
        assert_eq!(r.configs[0].value.as_deref(), Some("900000"));
        assert_eq!(r.configs[0].config_source, 5);
        assert!(r.configs[0].synonyms.is_empty());
    }

    #[test]
    fn a_small_request_for_a_huge_answer_is_refused_early() {
        let c = cluster(TXN_CLUSTER);
        let one = DescribeConfigsResource {
            resource_type: RESOURCE_TYPE_BROKER,
            resource_name: "1".into(),
            configuration_keys: None,
            ..Default::default()
        };
        let req = DescribeConfigsRequest {
            resources: vec![one; 1000],
            include_synonyms: true,
            ..Default::default()
        };
        let full = describe_configs(&c, &caller(1), &req, 4);
        let size = kdp_wire::Message::encoded_len(&full, 4);
        let within = describe_configs_within(&c, &caller(1), &req, 4, size);
        assert!(within.is_ok_and(|r| r == full));
        let e = describe_configs_within(&c, &caller(1), &req, 4, size / 10).unwrap_err();
        assert!(e.at_least > size / 10 && e.at_least < size / 5, "{e}");
    }

    #[test]
    fn another_brokers_id_is_invalid() {
        let c = cluster(TXN_CLUSTER);
        let r = ask(&c, 1, "2", None, false);
        assert_eq!(r.error_code, ErrorCode::INVALID_REQUEST);
        assert_eq!(
            r.error_message.as_deref(),
            Some("Unexpected broker id, expected 1 or empty string, but received 2")
        );
        assert_eq!(
            ask(&c, 1, "x", None, false).error_code,
            ErrorCode::INVALID_REQUEST
        );
        let r = ask(&c, 1, "", None, false);
        assert_eq!((r.error_code, r.configs.len()), (ErrorCode::NONE, 0));
    }

    #[test]
    fn topics_answer_their_cleanup_policy_and_unknown_ones_no_message() {
        let mut c = cluster(TXN_CLUSTER);
        let topic = |name: &str| DescribeConfigsResource {
            resource_type: RESOURCE_TYPE_TOPIC,
            resource_name: name.into(),
            configuration_keys: None,
            ..Default::default()
        };
        let req = DescribeConfigsRequest {
            resources: vec![topic("orders"), topic("nope"), topic("__transaction_state")],
            ..Default::default()
        };
        let entries = |r: &DescribeConfigsResult| {
            let e: Vec<_> = r
                .configs
                .iter()
                .map(|c| {
                    let v = c.value.clone();
                    (c.name.clone(), v, c.config_source, c.config_type)
                })
                .collect();
            (r.error_code, e)
        };
        let policy = |v: &str, source: i8| {
            let e = vec![("cleanup.policy".to_string(), Some(v.to_string()), source, 7)];
            (ErrorCode::NONE, e)
        };
        let r = describe_configs(&c, &caller(1), &req, 4);
        // Kafka's default for a topic, the internal topics' own setting
        assert_eq!(entries(&r.results[0]), policy("delete", 5));
        assert_eq!(
            r.results[1].error_code,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        );
        assert_eq!(r.results[1].error_message, None);
        assert_eq!(entries(&r.results[2]), policy("compact", 1));
        // a topic's own setting from the file
        c.topics
            .iter_mut()
            .filter(|t| t.name == "orders")
            .for_each(|t| {
                t.configs
                    .insert("cleanup.policy".into(), "compact,delete".into());
            });
        let r = describe_configs(&c, &caller(1), &req, 4);
        assert_eq!(entries(&r.results[0]), policy("compact,delete", 1));
    }

    #[test]
    fn a_group_answers_its_isolation_set_or_kafkas_default_whether_or_not_it_exists() {
        let mut c = cluster(TXN_CLUSTER);
        let group = |name: &str| DescribeConfigsResource {
            resource_type: RESOURCE_TYPE_GROUP,
            resource_name: name.into(),
            configuration_keys: Some(vec![SHARE_ISOLATION_LEVEL.into()]),
            ..Default::default()
        };
        let req = DescribeConfigsRequest {
            resources: vec![group("nobody")],
            ..Default::default()
        };
        let level = |r: &DescribeConfigsResponse| {
            let e = &r.results[0];
            let c = e.configs.first();
            (
                e.error_code,
                c.and_then(|c| c.value.clone()),
                c.map(|c| c.config_source),
            )
        };
        let r = describe_configs(&c, &caller(1), &req, 4);
        assert_eq!(
            level(&r),
            (ErrorCode::NONE, Some("read_uncommitted".into()), Some(5))
        );
        // the demo's share group sets it in its file
        c = crate::demo::lag_cluster().expect("the demo cluster");
        let req = DescribeConfigsRequest {
            resources: vec![group("payouts")],
            ..Default::default()
        };
        let r = describe_configs(&c, &caller(1), &req, 4);
        // GROUP_CONFIG (8), Kafka's DescribeConfigsResponse.ConfigSource
        assert_eq!(
            level(&r),
            (ErrorCode::NONE, Some("read_committed".into()), Some(8))
        );
    }

    #[test]
    fn denied_describe_configs_is_a_cluster_authorization_failure() {
        let mut c = cluster(TXN_CLUSTER);
        c.acls.cluster_deny.push(ClusterOperation::DescribeConfigs);
        let r = ask(&c, 1, "1", None, false);
        assert_eq!(r.error_code, ErrorCode::CLUSTER_AUTHORIZATION_FAILED);
        assert!(r.configs.is_empty());
    }
}
