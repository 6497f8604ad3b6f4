//! FindCoordinator (`KafkaApis.handleFindCoordinatorRequest` and
//! `getCoordinator`): a transactional id or group is placed on a partition
//! of its internal topic by `Utils.abs(key.hashCode) % partitions`; the
//! coordinator is that partition's leader. DESCRIBE on the key is checked
//! first (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED); a missing internal topic
//! or a leaderless partition is COORDINATOR_NOT_AVAILABLE, with
//! `Node.noNode()` (-1, "", -1). Below v4 one key, and an error answers with
//! the code's default message (`prepareOldResponse`); from v4 a batch of
//! keys, each with its own code and no message.

use kdp_wire::messages::find_coordinator::{KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION};
use kdp_wire::messages::{Coordinator, FindCoordinatorRequest, FindCoordinatorResponse};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};

use super::{Call, Caller, Handler, Invalid, Refusal};
use crate::acls::TxnIdOperation;
use crate::budget::Budget;
use crate::cluster::Cluster;
pub use crate::shared::Addresses;

/// KeyType SHARE (share groups): never coordinated by the mock.
const KEY_TYPE_SHARE: i8 = 2;

/// Answers FindCoordinator with each key's coordinator; an unknown KeyType is `Err`, closing the connection.
pub fn find_coordinator(
    cluster: &Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    req: &FindCoordinatorRequest,
    version: i16,
) -> Result<FindCoordinatorResponse, Invalid> {
    match find_coordinator_within(
        cluster,
        caller,
        addresses,
        req,
        version,
        &mut Budget::unlimited(),
    ) {
        Ok(resp) => Ok(resp),
        Err(Refusal::Invalid(e)) => Err(e),
        // Nothing is larger than usize::MAX bytes.
        Err(Refusal::TooLarge(e)) => unreachable!("{e}"),
    }
}

/// As [`find_coordinator`], within `budget`: a v4+ request of many keys
/// (500,000 empty ones are 500 KB) is refused from its count before one
/// entry of the answer is built, and what is built is charged as it grows
/// (each entry carries the coordinator's host).
pub fn find_coordinator_within(
    cluster: &Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    req: &FindCoordinatorRequest,
    version: i16,
    budget: &mut Budget,
) -> Result<FindCoordinatorResponse, Refusal> {
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
    let lookup = |key: &str| coordinator(cluster, caller, addresses, key_type, key);
    if version < 4 {
        let (code, node_id, host, port) = lookup(&req.key);
        return Ok(FindCoordinatorResponse {
            error_code: code,
            error_message: Some(default_message(code)),
            node_id,
            host,
            port,
            ..Default::default()
        });
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
    Ok(FindCoordinatorResponse {
        coordinators,
        ..Default::default()
    })
}

/// `Errors.message()`: the default message, or the name for NONE.
fn default_message(code: ErrorCode) -> String {
    if code == ErrorCode::NONE {
        return "NONE".into();
    }
    code.message().unwrap_or_default().to_string()
}

fn coordinator(
    cluster: &Cluster,
    caller: &Caller<'_>,
    addresses: &dyn Addresses,
    key_type: i8,
    key: &str,
) -> (ErrorCode, i32, String, i32) {
    let no_node = |code| (code, -1, String::new(), -1);
    let leader = match key_type {
        KEY_TYPE_TRANSACTION => {
            if !caller.may_transactional_id(cluster, TxnIdOperation::Describe, key) {
                return no_node(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            }
            cluster.transaction_coordinator(key)
        }
        KEY_TYPE_GROUP => {
            if !caller.may_describe_group(cluster, key) {
                return no_node(ErrorCode::GROUP_AUTHORIZATION_FAILED);
            }
            cluster.group_coordinator(key)
        }
        // Share groups: the mock runs no share coordinator.
        _ => return no_node(ErrorCode::INVALID_REQUEST),
    };
    match leader.and_then(|id| addresses.address(id).map(|(h, p)| (id, h, p))) {
        Some((id, host, port)) => (ErrorCode::NONE, id, host, port),
        None => no_node(ErrorCode::COORDINATOR_NOT_AVAILABLE),
    }
}

impl Handler for FindCoordinatorRequest {
    fn handle(&self, call: &Call<'_>) -> Result<FindCoordinatorResponse, Refusal> {
        find_coordinator_within(
            &call.shared.read(),
            &call.caller,
            call.shared,
            self,
            call.version,
            &mut Budget::new(call.limit),
        )
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

    fn batched(c: &Cluster, keys: &[&str]) -> Vec<(ErrorCode, i32, i32)> {
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
        let c = cluster(TXN_CLUSTER);
        // "hello".hashCode() = 99162322; % 3 = 1: partition 1, led by 2.
        assert_eq!(
            batched(&c, &["app-a", "app-d", "hello", "secret-c"]),
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
        let c = cluster(
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "__transaction_state",
                "partitions": [{"partition": 0, "leader": -1, "replicas": [1]}]}]}"#,
        );
        assert_eq!(
            batched(&c, &["x"]),
            vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
        );
        let c = cluster(r#"{"brokers": [{"id": 1}]}"#);
        assert_eq!(
            batched(&c, &["x"]),
            vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
        );
    }

    #[test]
    fn old_versions_answer_one_key_with_a_message() {
        let c = cluster(TXN_CLUSTER);
        let req = |key: &str| FindCoordinatorRequest {
            key: key.into(),
            key_type: KEY_TYPE_TRANSACTION,
            ..Default::default()
        };
        let ok = find_coordinator(&c, &caller(1), &Ports, &req("app-d"), 3).unwrap();
        assert_eq!(
            (ok.error_code, ok.node_id, ok.port),
            (ErrorCode::NONE, 2, 9002)
        );
        assert_eq!(ok.error_message.as_deref(), Some("NONE"));
        let denied = find_coordinator(&c, &caller(1), &Ports, &req("secret-c"), 1).unwrap();
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
        // v0 has no key type: a group. No __consumer_offsets here.
        let group = find_coordinator(&c, &caller(1), &Ports, &req("g"), 0).unwrap();
        assert_eq!(group.error_code, ErrorCode::COORDINATOR_NOT_AVAILABLE);
    }

    #[test]
    fn groups_by_hash_and_acl() {
        let c = cluster(GROUP_CLUSTER);
        let req = FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
            coordinator_keys: vec!["reports".into(), "etl".into(), "hidden-x".into()],
            ..Default::default()
        };
        let resp = find_coordinator(&c, &caller(3), &Ports, &req, 4).unwrap();
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
        let c = cluster(TXN_CLUSTER);
        let req = FindCoordinatorRequest {
            key_type: 7,
            ..Default::default()
        };
        assert!(find_coordinator(&c, &caller(1), &Ports, &req, 4).is_err());
    }
}
