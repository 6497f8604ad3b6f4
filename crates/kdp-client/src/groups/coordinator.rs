//! FindCoordinator for group ids (key type 0): the [`CoordinatorLookup`]
//! the driver's coordinator strategy uses. From v4 one request carries many
//! keys; an older broker gets one request per key.

use std::collections::BTreeMap;
use std::time::Duration;

use kdp_wire::messages::find_coordinator::KEY_TYPE_GROUP;
use kdp_wire::messages::FindCoordinatorRequest;
use kdp_wire::ErrorCode;

use crate::admin::{CoordinatorFuture, CoordinatorLookup, KeyError};
use crate::client::Client;
use crate::error::{Error, Result};

/// Finds group coordinators, asking the lowest broker id the client knows.
#[derive(Debug, Default, Clone, Copy)]
pub struct GroupCoordinators;

type Found = std::result::Result<i32, KeyError>;

fn found(code: ErrorCode, message: Option<String>, node: i32) -> Found {
    if code == ErrorCode::NONE {
        Ok(node)
    } else {
        Err(KeyError::broker(code, message))
    }
}

async fn find(
    client: &Client,
    keys: &[String],
    timeout: Duration,
) -> Result<BTreeMap<String, Found>> {
    let id = match client.brokers().keys().next() {
        Some(id) => *id,
        None => {
            let md = client.metadata_within(Some(&[]), timeout).await?;
            *md.brokers.keys().next().ok_or(Error::NoBrokers)?
        }
    };
    let conn = client.broker(id).await?;
    let version = conn.version_for::<FindCoordinatorRequest>()?;
    let mut out = BTreeMap::new();
    if version >= 4 {
        let req = FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
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
                key_type: KEY_TYPE_GROUP,
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

impl CoordinatorLookup<String> for GroupCoordinators {
    fn find<'a>(
        &'a self,
        client: &'a Client,
        keys: &'a [String],
        timeout: Duration,
    ) -> CoordinatorFuture<'a, String> {
        Box::pin(find(client, keys, timeout))
    }
}
