//! FindCoordinator: the [`CoordinatorLookup`] the driver's coordinator
//! strategy uses for transactional ids, and the one lookup for every key
//! type (`find`; groups use it too). From v4 one request carries many
//! keys; an older broker gets one request per key.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kdp_wire::messages::find_coordinator::KEY_TYPE_TRANSACTION;
use kdp_wire::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
use kdp_wire::view::Validated;
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

/// Keys in one batched FindCoordinator (v4+) at most: a listing of
/// 300,000 ids is asked in pieces, so neither side holds one huge request
/// and answer at once.
const MAX_KEYS_PER_FIND: usize = 10_000;

/// The coordinators of `keys` of `key_type` (`KEY_TYPE_TRANSACTION`,
/// `KEY_TYPE_GROUP`), asked of the lowest broker id the client knows. A
/// batched answer is read through its view: only the keys asked are kept
/// (the caller's, cloned), nothing of the answer is copied.
pub(crate) async fn find<K>(
    client: &Client,
    key_type: i8,
    keys: &[K],
    timeout: Duration,
) -> Result<BTreeMap<K, Found>>
where
    K: AsRef<str> + Ord + Clone,
{
    let id = any_broker(client, timeout).await?;
    let conn = client.broker(id).await?;
    let version = conn.version_for::<FindCoordinatorRequest>()?;
    let mut out = BTreeMap::new();
    if version >= 4 {
        for chunk in keys.chunks(MAX_KEYS_PER_FIND) {
            let req = FindCoordinatorRequest {
                key_type,
                coordinator_keys: chunk.iter().map(|k| k.as_ref().to_owned()).collect(),
                ..Default::default()
            };
            let resp: Validated<FindCoordinatorResponse> =
                client.receive_from(id, &req, timeout).await?;
            drop(req);
            // a map: a linear search per answered key is quadratic in the keys
            let asked: HashMap<&str, &K> = chunk.iter().map(|k| (k.as_ref(), k)).collect();
            for c in resp.view().coordinators() {
                if let Some(&key) = asked.get(c.key()) {
                    let message = c.error_message().map(str::to_owned);
                    out.insert(key.clone(), found(c.error_code(), message, c.node_id()));
                }
            }
        }
    } else {
        for key in keys {
            let req = FindCoordinatorRequest {
                key: key.as_ref().to_owned(),
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

impl<K> CoordinatorLookup<K> for TransactionCoordinators
where
    K: AsRef<str> + Ord + Clone + Send + Sync,
{
    fn find<'a>(
        &'a self,
        client: &'a Client,
        keys: &'a [K],
        timeout: Duration,
    ) -> CoordinatorFuture<'a, K> {
        Box::pin(find(client, KEY_TYPE_TRANSACTION, keys, timeout))
    }
}
