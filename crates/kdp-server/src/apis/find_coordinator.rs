//! FindCoordinator (`KafkaApis.handleFindCoordinatorRequest` and
//! `getCoordinator`): a transactional id or group is placed on a partition
//! of its internal topic by `Utils.abs(key.hashCode) % partitions`; the
//! coordinator is that partition's leader. DESCRIBE on the key is checked
//! first (TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
//! GROUP_AUTHORIZATION_FAILED); a leaderless partition is
//! COORDINATOR_NOT_AVAILABLE, with `Node.noNode()` (-1, "", -1). Below v4
//! one key, and an error answers with the code's default message
//! (`prepareOldResponse`); from v4 a batch of keys, each with its own code
//! and no message.
//!
//! A missing internal topic is asked for (`AutoTopicCreationManager`, see
//! [`crate::cluster::internal`]) and the key answers
//! COORDINATOR_NOT_AVAILABLE: the topic is made once the answer is built,
//! so every key of the request that asked answers so, and a later request
//! finds the coordinator (or, when the topic cannot be made, asks again).
//! A key whose DESCRIBE is denied asks for nothing; the caller needs no
//! CREATE, since the broker asks on its own behalf. A transactional id the
//! cluster file gives a `coordinator` is answered with that broker.

use kdp_wire::messages::find_coordinator::{KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION};
use kdp_wire::messages::{Coordinator, FindCoordinatorRequest, FindCoordinatorResponse};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};

use super::handler::{Call, Caller, Handler, Invalid, Refusal};
use crate::acls::TxnIdOperation;
use crate::budget::Budget;
use crate::cluster::{Cluster, GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC};
pub use crate::shared::Addresses;

/// KeyType SHARE (share groups): never coordinated by the mock.
const KEY_TYPE_SHARE: i8 = 2;

/// An answer, and the internal topic a key found missing (made once the
/// answer is built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What the request is answered.
    pub response: FindCoordinatorResponse,
    /// The internal topic to make, if a key asked for it.
    pub create: Option<&'static str>,
}

/// Answers FindCoordinator with each key's coordinator, then makes the
/// internal topic a key found missing; an unknown KeyType is `Err`,
/// closing the connection.
pub fn find_coordinator(
    cluster: &mut Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    req: &FindCoordinatorRequest,
    version: i16,
) -> Result<FindCoordinatorResponse, Invalid> {
    let found = match find_coordinator_within(
        cluster,
        caller,
        addresses,
        req,
        version,
        &mut Budget::unlimited(),
    ) {
        Ok(found) => found,
        Err(Refusal::Invalid(e)) => return Err(e),
        // Nothing is larger than usize::MAX bytes.
        Err(Refusal::TooLarge(e)) => unreachable!("{e}"),
    };
    if let Some(topic) = found.create {
        // Refused when the brokers are too few: asked again next time.
        let _ = cluster.create_internal_topic(topic, caller.broker_id);
    }
    Ok(found.response)
}

/// As [`find_coordinator`], within `budget`, and without making the
/// topic: a v4+ request of many keys (500,000 empty ones are 500 KB) is
/// refused from its count before one entry of the answer is built, and
/// what is built is charged as it grows (each entry carries the
/// coordinator's host).
pub fn find_coordinator_within(
    cluster: &Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    req: &FindCoordinatorRequest,
    version: i16,
    budget: &mut Budget,
) -> Result<Found, Refusal> {
    let key_type = if version >= 1 {
        req.key_type
    } else {
        KEY_TYPE_GROUP
    };
    if !matches!(
        key_type,
        KEY_TYPE_GROUP | KEY_TYPE_TRANSACTION | KEY_TYPE_SHARE
    ) {
        return Err(Invalid(format!("Unknown coordinator type received: {key_type}")).into());
    }
    let mut create = None;
    let mut lookup = |key: &str| {
        let (answer, missing) = coordinator(cluster, caller, addresses, key_type, key);
        create = create.or(missing);
        answer
    };
    if version < 4 {
        let (code, node_id, host, port) = lookup(&req.key);
        let response = FindCoordinatorResponse {
            error_code: code,
            error_message: Some(default_message(code)),
            node_id,
            host,
            port,
            ..Default::default()
        };
        return Ok(Found { response, create });
    }
    let v = Version::of::<FindCoordinatorResponse>(version);
    let each = Coordinator::min_len(v);
    budget.precheck_each(
        req.coordinator_keys
            .iter()
            .map(|key| each.saturating_add(key.len())),
    )?;
    let mut coordinators = Vec::with_capacity(req.coordinator_keys.len().min(1024));
    for key in &req.coordinator_keys {
        let (code, node_id, host, port) = lookup(key);
        let entry = Coordinator {
            key: key.clone(),
            node_id,
            host,
            port,
            error_code: code,
            error_message: None,
            unknown_tagged_fields: Default::default(),
        };
        budget.charge(&entry, v)?;
        coordinators.push(entry);
    }
    let response = FindCoordinatorResponse {
        coordinators,
        ..Default::default()
    };
    Ok(Found { response, create })
}

/// `Errors.message()`: the default message, or the name for NONE.
fn default_message(code: ErrorCode) -> String {
    if code == ErrorCode::NONE {
        return "NONE".into();
    }
    code.message().unwrap_or_default().to_string()
}

/// One key's answer (code, node, host, port), and the internal topic it
/// found missing.
fn coordinator(
    cluster: &Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    key_type: i8,
    key: &str,
) -> ((ErrorCode, i32, String, i32), Option<&'static str>) {
    let no_node = |code| (code, -1, String::new(), -1);
    let (topic, leader) = match key_type {
        KEY_TYPE_TRANSACTION => {
            if !caller.may_transactional_id(cluster, TxnIdOperation::Describe, key) {
                return (
                    no_node(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                    None,
                );
            }
            (
                TRANSACTION_STATE_TOPIC,
                cluster.transaction_coordinator(key),
            )
        }
        KEY_TYPE_GROUP => {
            if !caller.may_describe_group(cluster, key) {
                return (no_node(ErrorCode::GROUP_AUTHORIZATION_FAILED), None);
            }
            (GROUP_METADATA_TOPIC, cluster.group_coordinator(key))
        }
        // Share groups: the mock runs no share coordinator.
        _ => return (no_node(ErrorCode::INVALID_REQUEST), None),
    };
    // The file's `coordinator` of a transactional id needs no topic.
    if leader.is_none() && cluster.topic(topic).is_none() {
        return (no_node(ErrorCode::COORDINATOR_NOT_AVAILABLE), Some(topic));
    }
    let answer = match leader.and_then(|id| addresses.address(id).map(|(h, p)| (id, h, p))) {
        Some((id, host, port)) => (ErrorCode::NONE, id, host, port),
        None => no_node(ErrorCode::COORDINATOR_NOT_AVAILABLE),
    };
    (answer, None)
}

impl Handler for FindCoordinatorRequest {
    fn handle(&self, call: &Call<'_>) -> Result<FindCoordinatorResponse, Refusal> {
        let found = find_coordinator_within(
            &call.shared.read(),
            &call.caller,
            call.shared,
            self,
            call.version,
            &mut Budget::new(call.limit),
        )?;
        if let Some(topic) = found.create {
            // As the broker's request to the controller: made for the
            // next FindCoordinator, or refused (too few brokers) and asked
            // for again then.
            let _ = call
                .shared
                .write()
                .create_internal_topic(topic, call.caller.broker_id);
        }
        Ok(found.response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    struct Ports;
    impl Addresses for Ports {
        fn address(&self, id: i32) -> Option<(String, i32)> {
            Some(("127.0.0.1".into(), 9000 + id))
        }
    }

    fn batched(c: &mut Cluster, keys: &[&str]) -> Vec<(ErrorCode, i32, i32)> {
        let req = FindCoordinatorRequest {
            key_type: KEY_TYPE_TRANSACTION,
            coordinator_keys: keys.iter().map(|k| k.to_string()).collect(),
            ..Default::default()
        };
        let resp = find_coordinator(c, &caller(3), &Ports, &req, 4).unwrap();
        resp.coordinators
            .iter()
            .zip(keys)
            .map(|(co, k)| {
                assert_eq!(co.key, *k);
                assert_eq!(co.error_message, None);
                (co.error_code, co.node_id, co.port)
            })
            .collect()
    }

    #[test]
    fn transactional_ids_by_override_hash_and_acl() {
        let mut c = cluster(TXN_CLUSTER);
        // "hello".hashCode() = 99162322; % 3 = 1: partition 1, led by 2.
        assert_eq!(
            batched(&mut c, &["app-a", "app-d", "hello", "secret-c"]),
            vec![
                (ErrorCode::NONE, 1, 9001),
                (ErrorCode::NONE, 2, 9002),
                (ErrorCode::NONE, 2, 9002),
                (ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1)
            ]
        );
    }

    #[test]
    fn leaderless_or_missing_state_topic_is_not_available() {
        let mut c = cluster(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "__transaction_state",
                "partitions": [{"partition": 0, "leader": -1, "replicas": [1]}]}]}"#,
        );
        assert_eq!(
            batched(&mut c, &["x"]),
            vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
        );
        // One broker, Kafka's replication factor of 3: never made.
        let mut c = cluster(r#"{"brokers": [{"id": 1}]}"#);
        assert_eq!(
            batched(&mut c, &["x"]),
            vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
        );
        assert!(c.topic(TRANSACTION_STATE_TOPIC).is_none());
        assert_eq!(
            batched(&mut c, &["x"]),
            vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
        );
    }

    #[test]
    fn old_versions_answer_one_key_with_a_message() {
        let mut c = cluster(TXN_CLUSTER);
        let req = |key: &str| FindCoordinatorRequest {
            key: key.into(),
            key_type: KEY_TYPE_TRANSACTION,
            ..Default::default()
        };
        let ok = find_coordinator(&mut c, &caller(1), &Ports, &req("app-d"), 3).unwrap();
        assert_eq!(
            (ok.error_code, ok.node_id, ok.port),
            (ErrorCode::NONE, 2, 9002)
        );
        assert_eq!(ok.error_message.as_deref(), Some("NONE"));
        let denied = find_coordinator(&mut c, &caller(1), &Ports, &req("secret-c"), 1).unwrap();
        assert_eq!(
            denied.error_code,
            ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        );
        assert_eq!(
            denied.error_message.as_deref(),
            Some("Transactional Id authorization failed.")
        );
        assert_eq!(
            (denied.node_id, denied.host.as_str(), denied.port),
            (-1, "", -1)
        );
        // v0 has no key type: a group. No __consumer_offsets here: asked
        // for, then found ("g".hashCode() = 103, % 50 = 3: led by broker 1).
        let group = find_coordinator(&mut c, &caller(1), &Ports, &req("g"), 0).unwrap();
        assert_eq!(group.error_code, ErrorCode::COORDINATOR_NOT_AVAILABLE);
        assert_eq!(
            group.error_message.as_deref(),
            Some("The coordinator is not available.")
        );
        let group = find_coordinator(&mut c, &caller(1), &Ports, &req("g"), 0).unwrap();
        assert_eq!((group.error_code, group.node_id), (ErrorCode::NONE, 1));
    }

    #[test]
    fn groups_by_hash_and_acl() {
        let mut c = cluster(GROUP_CLUSTER);
        let req = FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
            coordinator_keys: vec!["reports".into(), "etl".into(), "hidden-x".into()],
            ..Default::default()
        };
        let resp = find_coordinator(&mut c, &caller(3), &Ports, &req, 4).unwrap();
        let got: Vec<(ErrorCode, i32)> = resp
            .coordinators
            .iter()
            .map(|co| (co.error_code, co.node_id))
            .collect();
        assert_eq!(
            got,
            vec![
                (ErrorCode::NONE, 1),
                (ErrorCode::NONE, 2),
                (ErrorCode::GROUP_AUTHORIZATION_FAILED, -1)
            ]
        );
    }

    #[test]
    fn unknown_key_type_is_invalid() {
        let mut c = cluster(TXN_CLUSTER);
        let req = FindCoordinatorRequest {
            key_type: 7,
            ..Default::default()
        };
        assert!(find_coordinator(&mut c, &caller(1), &Ports, &req, 4).is_err());
    }

    fn keys(key_type: i8, keys: &[&str]) -> FindCoordinatorRequest {
        FindCoordinatorRequest {
            key_type,
            coordinator_keys: keys.iter().map(|k| k.to_string()).collect(),
            ..Default::default()
        }
    }

    fn answers(resp: &FindCoordinatorResponse) -> Vec<(ErrorCode, i32)> {
        resp.coordinators
            .iter()
            .map(|c| (c.error_code, c.node_id))
            .collect()
    }

    const THREE: &str = r#"{"brokers": [{"id": 1}, {"id": 2}, {"id": 3}]}"#;

    #[test]
    fn a_missing_internal_topic_is_made_for_the_next_request() {
        // "g-0".hashCode() = 100426, "g-1" = 100427, "g-2" = 100428: % 50 =
        // 26, 27, 28, led by 3, 1, 2 (partition p by broker p % 3 + 1).
        for (key_type, topic, ks) in [
            (KEY_TYPE_GROUP, GROUP_METADATA_TOPIC, ["g-0", "g-1", "g-2"]),
            (
                KEY_TYPE_TRANSACTION,
                TRANSACTION_STATE_TOPIC,
                ["g-0", "g-1", "g-2"],
            ),
        ] {
            let mut c = cluster(THREE);
            let req = keys(key_type, &ks);
            // Every key of the first request answers "not available".
            let first = find_coordinator(&mut c, &caller(2), &Ports, &req, 4).unwrap();
            assert_eq!(
                answers(&first),
                vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1); 3],
                "{topic}"
            );
            let t = c.topic(topic).expect("made");
            assert!(t.internal);
            assert_eq!(t.partitions.len(), 50);
            assert!(t.partitions.iter().all(|p| p.replicas.len() == 3));
            let second = find_coordinator(&mut c, &caller(2), &Ports, &req, 4).unwrap();
            assert_eq!(
                answers(&second),
                vec![
                    (ErrorCode::NONE, 3),
                    (ErrorCode::NONE, 1),
                    (ErrorCode::NONE, 2)
                ],
                "{topic}"
            );
            // The other internal topic was not made.
            let other = if topic == GROUP_METADATA_TOPIC {
                TRANSACTION_STATE_TOPIC
            } else {
                GROUP_METADATA_TOPIC
            };
            assert!(c.topic(other).is_none(), "{other}");
        }
    }

    #[test]
    fn the_asking_brokers_settings_make_the_topic() {
        let mut c = cluster(
            r#"{"brokers": [{"id": 1}, {"id": 2, "configs": {
                "offsets.topic.num.partitions": "3", "offsets.topic.replication.factor": "2"}}]}"#,
        );
        let req = keys(KEY_TYPE_GROUP, &["reports"]);
        // Broker 1 asks with Kafka's 3 replicas: 2 brokers cannot hold them.
        for _ in 0..2 {
            let r = find_coordinator(&mut c, &caller(1), &Ports, &req, 4).unwrap();
            assert_eq!(answers(&r), [(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1)]);
            assert!(c.topic(GROUP_METADATA_TOPIC).is_none());
        }
        // Broker 2 asks with its own settings: 3 partitions, 2 replicas.
        let r = find_coordinator(&mut c, &caller(2), &Ports, &req, 4).unwrap();
        assert_eq!(answers(&r), [(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1)]);
        let t = c.topic(GROUP_METADATA_TOPIC).unwrap();
        let replicas: Vec<Vec<i32>> = t.partitions.iter().map(|p| p.replicas.clone()).collect();
        assert_eq!(replicas, [vec![1, 2], vec![2, 1], vec![1, 2]]);
        // "reports".hashCode() = 1094603199, % 3 = 0: led by broker 1.
        let r = find_coordinator(&mut c, &caller(1), &Ports, &req, 4).unwrap();
        assert_eq!(answers(&r), [(ErrorCode::NONE, 1)]);
    }

    #[test]
    fn a_denied_key_asks_for_nothing_and_no_create_acl_is_needed() {
        let mut c = cluster(
            r#"{"brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
                "acls": {"group_describe_deny": ["hidden-*"],
                         "principals": {"User:bare": {
                            "cluster_deny": ["ALTER", "CLUSTER_ACTION", "DESCRIBE_CONFIGS"],
                            "topic_describe_deny": ["*"], "topic_read_deny": ["*"],
                            "group_describe_deny": ["hidden-*"]}}}}"#,
        );
        let hidden = keys(KEY_TYPE_GROUP, &["hidden-a", "hidden-b"]);
        let r = find_coordinator(&mut c, &caller(1), &Ports, &hidden, 4).unwrap();
        assert_eq!(
            answers(&r),
            vec![(ErrorCode::GROUP_AUTHORIZATION_FAILED, -1); 2]
        );
        assert!(c.topic(GROUP_METADATA_TOPIC).is_none());
        // A principal denied every cluster operation and every topic asks
        // for the topic with a key it may describe.
        let ctx = crate::responder::RequestContext {
            principal: "User:bare".into(),
            ..Default::default()
        };
        let bare = Caller {
            request: &ctx,
            ..caller(3)
        };
        let mixed = keys(KEY_TYPE_GROUP, &["hidden-a", "visible"]);
        let r = find_coordinator(&mut c, &bare, &Ports, &mixed, 4).unwrap();
        assert_eq!(
            answers(&r),
            [
                (ErrorCode::GROUP_AUTHORIZATION_FAILED, -1),
                (ErrorCode::COORDINATOR_NOT_AVAILABLE, -1)
            ]
        );
        assert!(c.topic(GROUP_METADATA_TOPIC).is_some());
    }

    #[test]
    fn a_transactional_id_the_file_places_needs_no_topic() {
        // Two brokers cannot hold Kafka's 3 replicas: the topic is never
        // made, and the file's coordinator answers.
        let mut c = cluster(
            r#"{"brokers": [{"id": 1}, {"id": 2}], "transactions": [
                {"transactional_id": "placed", "producer_id": 7, "state": "Empty", "coordinator": 2}]}"#,
        );
        let req = keys(KEY_TYPE_TRANSACTION, &["placed", "other"]);
        let r = find_coordinator(&mut c, &caller(1), &Ports, &req, 4).unwrap();
        assert_eq!(
            answers(&r),
            [
                (ErrorCode::NONE, 2),
                (ErrorCode::COORDINATOR_NOT_AVAILABLE, -1)
            ]
        );
        assert!(c.topic(TRANSACTION_STATE_TOPIC).is_none());
    }
}
