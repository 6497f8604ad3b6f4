//! DescribeTransactions, batched per coordinator (found with
//! FindCoordinator). NOT_COORDINATOR and the coordinator-loading errors are
//! retried after a new lookup; TRANSACTIONAL_ID_NOT_FOUND and authorization
//! errors are the answer.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

use kdp_wire::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, TransactionState,
    TransactionStateView,
};
use kdp_wire::view::Validated;
use kdp_wire::ErrorCode;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, Batch, Coordinator, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::txn::coordinator::TransactionCoordinators;
use kdp_domain::key_error::KeyError;

/// One id's description: the coordinator that answered, and its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The coordinator's broker id.
    pub coordinator: Option<i32>,
    /// Its answer, or why there is none.
    pub result: std::result::Result<TransactionState, KeyError>,
}

/// A transactional id as the driver keys it: a `String`, or a shared
/// `Arc<str>` that a caller holding many ids hands in without a copy.
pub trait TxnId: AsRef<str> + Clone + Ord + Hash + Debug + Send + Sync + 'static {}

impl<K: AsRef<str> + Clone + Ord + Hash + Debug + Send + Sync + 'static> TxnId for K {}

struct Handler<K, F> {
    fold: F,
    key: PhantomData<fn(K)>,
}

impl<K, T, F> AdminHandler for Handler<K, F>
where
    K: TxnId,
    F: Fn(TransactionStateView<'_>) -> T,
{
    type Key = K;
    type Value = T;
    type Request = DescribeTransactionsRequest;
    type Response = Validated<DescribeTransactionsResponse>;

    fn build_request(&self, _broker: i32, keys: &[K]) -> DescribeTransactionsRequest {
        DescribeTransactionsRequest {
            transactional_ids: keys.iter().map(|k| k.as_ref().to_owned()).collect(),
            ..Default::default()
        }
    }

    /// Read through the view: each answered id is matched to the key asked
    /// (an id not asked is left out), and its state folded as the caller
    /// keeps it.
    fn handle_response(
        &self,
        _broker: i32,
        keys: &[K],
        resp: Validated<DescribeTransactionsResponse>,
    ) -> Vec<(K, KeyOutcome<T>)> {
        // a map: a linear search per answered id is quadratic in the ids
        let asked: HashMap<&str, &K> = keys.iter().map(|k| (k.as_ref(), k)).collect();
        let view = resp.view();
        let mut out = Vec::with_capacity(view.transaction_states().len().min(keys.len()));
        for t in view.transaction_states() {
            let Some(&key) = asked.get(t.transactional_id()) else {
                continue;
            };
            let outcome = match t.error_code() {
                ErrorCode::NOT_COORDINATOR
                | ErrorCode::COORDINATOR_NOT_AVAILABLE
                | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS => KeyOutcome::Retry {
                    reason: KeyError::broker(t.error_code(), None),
                    refresh: true,
                },
                code => KeyOutcome::from_code(code, None, || (self.fold)(t)),
            };
            out.push((key.clone(), outcome));
        }
        out
    }
}

/// Describes transactional ids at their coordinators.
pub async fn describe_transactions(
    client: &SharedClient,
    ids: Vec<String>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<String, Described> {
    let mut results = Vec::new();
    describe_transactions_with(
        client,
        ids,
        Vec::new(),
        opts,
        bound,
        |t| t.into_owned(),
        collect(&mut results),
    )
    .await;
    results
        .into_iter()
        .map(|(id, coordinator, result)| {
            (
                id,
                Described {
                    coordinator,
                    result,
                },
            )
        })
        .collect()
}

/// [`describe_transactions`], each answer read through the response's view
/// and kept as `fold` makes it, the results streamed to `sink` as each
/// coordinator answers (every id exactly once, as the driver reports).
///
/// `known`: coordinators the caller already has, e.g. the broker that
/// listed an id (ListTransactions lists the ids whose coordinator
/// partitions the broker leads): those ids are not looked up
/// (FindCoordinator) unless their coordinator answers NOT_COORDINATOR.
#[allow(clippy::too_many_arguments)]
pub async fn describe_transactions_with<K, T, F, S>(
    client: &SharedClient,
    ids: Vec<K>,
    known: Vec<(K, i32)>,
    opts: &DriverOptions,
    bound: &TimeBound,
    fold: F,
    sink: S,
) where
    K: TxnId,
    F: Fn(TransactionStateView<'_>) -> T,
    S: FnMut(Batch<K, T>),
{
    let mut strategy = if known.is_empty() {
        Coordinator::new(TransactionCoordinators)
    } else {
        Coordinator::with_known(TransactionCoordinators, known)
    };
    let handler = Handler {
        fold,
        key: PhantomData,
    };
    drive(client, &handler, &mut strategy, ids, opts, bound, sink).await;
}
