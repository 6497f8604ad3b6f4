//! DescribeTransactions, batched per coordinator (found with
//! FindCoordinator). NOT_COORDINATOR and the coordinator-loading errors are
//! retried after a new lookup; TRANSACTIONAL_ID_NOT_FOUND and authorization
//! errors are the answer.

use std::collections::BTreeMap;

use kdp_wire::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, TransactionState,
};
use kdp_wire::ErrorCode;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, Coordinator, DriverOptions, KeyOutcome};
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

struct Handler;

impl AdminHandler for Handler {
    type Key = String;
    type Value = TransactionState;
    type Request = DescribeTransactionsRequest;

    fn build_request(&self, _broker: i32, keys: &[String]) -> DescribeTransactionsRequest {
        DescribeTransactionsRequest {
            transactional_ids: keys.to_vec(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[String],
        resp: DescribeTransactionsResponse,
    ) -> Vec<(String, KeyOutcome<TransactionState>)> {
        // a set: a linear search per answered id is quadratic in the ids
        let asked: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
        resp.transaction_states
            .into_iter()
            .filter(|t| asked.contains(t.transactional_id.as_str()))
            .map(|t| {
                let id = t.transactional_id.clone();
                let outcome = match t.error_code {
                    ErrorCode::NOT_COORDINATOR
                    | ErrorCode::COORDINATOR_NOT_AVAILABLE
                    | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS => KeyOutcome::Retry {
                        reason: KeyError::broker(t.error_code, None),
                        refresh: true,
                    },
                    code => KeyOutcome::from_code(code, None, || t),
                };
                (id, outcome)
            })
            .collect()
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
    let mut strategy = Coordinator::new(TransactionCoordinators);
    drive(
        client,
        &Handler,
        &mut strategy,
        ids,
        opts,
        bound,
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
