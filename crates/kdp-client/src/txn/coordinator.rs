//! FindCoordinator: the [`CoordinatorLookup`] the driver's coordinator
//! strategy uses for transactional ids, and the one lookup for every key
//! type (`find`; groups use it too). From v4 one request carries many
//! keys; an older broker gets one request per key.

use std::collections::BTreeMap;
use std::time::Duration;

use kdp_wire::messages::find_coordinator::KEY_TYPE_TRANSACTION;
use kdp_wire::messages::FindCoordinatorRequest;
use kdp_wire::ErrorCode;

use crate::admin::{CoordinatorFuture, CoordinatorLookup};
use crate::client::Client;
use crate::error::Result;
use kdp_domain::key_error::KeyError;

/// Finds transaction coordinators, asking any broker the client knows.
#[derive(Debug, Default, Clone, Copy)]
pub struct TransactionCoordinators;

/// One key's answer.
pub(crate) type Found = std::result::Result<i32, KeyError>;

fn found(code: ErrorCode, message: Option<String>, node: i32) -> Found {
    if code == ErrorCode::NONE {
        Ok(node)
    } else {
        Err(KeyError::broker(code, message))
    }
}

/// The coordinators of `keys` of `key_type` (`KEY_TYPE_TRANSACTION`,
/// `KEY_TYPE_GROUP`), asked of the lowest broker id the client knows.
pub(crate) async fn find(
    client: &Client,
    key_type: i8,
    keys: &[String],
    timeout: Duration,
) -> Result<BTreeMap<String, Found>> {
    let id = any_broker(client, timeout).await?;
    let conn = client.broker(id).await?;
    let version = conn.version_for::<FindCoordinatorRequest>()?;
    let mut out = BTreeMap::new();
    if version >= 4 {
        let req = FindCoordinatorRequest {
            key_type,
            coordinator_keys: keys.to_vec(),
            ..Default::default()
        };
        let resp = client.send_to(id, &req, timeout).await?;
        // a set: a linear search per answered key is quadratic in the keys
        let asked: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
        for c in resp.coordinators {
            if asked.contains(c.key.as_str()) {
                out.insert(c.key, found(c.error_code, c.error_message, c.node_id));
            }
        }
    } else {
        for key in keys {
            let req = FindCoordinatorRequest {
                key: key.clone(),
                key_type,
                ..Default::default()
            };
            let resp = client.send_to(id, &req, timeout).await?;
            out.insert(
                key.clone(),
                found(resp.error_code, resp.error_message, resp.node_id),
            );
        }
    }
    Ok(out)
}

/// The broker to ask: the lowest id the client knows (metadata is fetched
/// if it knows none).
async fn any_broker(client: &Client, timeout: Duration) -> Result<i32> {
    if let Some(id) = client.brokers().keys().next() {
        return Ok(*id);
    }
    let md = client.metadata_within(Some(&[]), timeout).await?;
    md.brokers
        .keys()
        .next()
        .copied()
        .ok_or(crate::error::Error::NoBrokers)
}

impl CoordinatorLookup<String> for TransactionCoordinators {
    fn find<'a>(
        &'a self,
        client: &'a Client,
        keys: &'a [String],
        timeout: Duration,
    ) -> CoordinatorFuture<'a, String> {
        Box::pin(find(client, KEY_TYPE_TRANSACTION, keys, timeout))
    }
}
