//! InitProducerId with producer id and epoch -1 at a transactional id's
//! coordinator, as `Admin.fenceProducers` and `forceTerminateTransaction`
//! send it: the coordinator bumps the epoch, aborts the open transaction
//! (writing the markers itself) and fences the previous instance.
//! CONCURRENT_TRANSACTIONS and COORDINATOR_LOAD_IN_PROGRESS are retried
//! within the deadline, as FenceProducersHandler does: the first call may
//! only start the abort.

use std::collections::BTreeMap;

use kdp_domain::key_error::KeyError;
use kdp_domain::repair::levers::Terminated;
use kdp_wire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kdp_wire::ErrorCode;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, Coordinator, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::txn::coordinator::TransactionCoordinators;

struct TerminateHandler {
    transaction_timeout_ms: i32,
}

impl AdminHandler for TerminateHandler {
    type Key = String;
    type Value = Terminated;
    type Request = InitProducerIdRequest;
    type Response = InitProducerIdResponse;

    fn build_request(&self, _broker: i32, keys: &[String]) -> InitProducerIdRequest {
        // one id per request: the driver is run with max_keys_per_request 1
        InitProducerIdRequest {
            transactional_id: keys.first().cloned(),
            transaction_timeout_ms: self.transaction_timeout_ms,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        keys: &[String],
        resp: InitProducerIdResponse,
    ) -> Vec<(String, KeyOutcome<Terminated>)> {
        let Some(key) = keys.first() else {
            return Vec::new();
        };
        vec![(key.clone(), terminate_outcome(&resp))]
    }
}

/// FenceProducersHandler's rule.
fn terminate_outcome(resp: &InitProducerIdResponse) -> KeyOutcome<Terminated> {
    match resp.error_code {
        ErrorCode::NONE => KeyOutcome::Done(Terminated {
            producer_id: resp.producer_id,
            producer_epoch: resp.producer_epoch,
        }),
        // the coordinator is still ending the transaction (or loading): ask again
        code @ (ErrorCode::CONCURRENT_TRANSACTIONS | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS) => {
            KeyOutcome::Retry {
                reason: KeyError::broker(code, None),
                refresh: false,
            }
        }
        code @ (ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE) => {
            KeyOutcome::Retry {
                reason: KeyError::broker(code, None),
                refresh: true,
            }
        }
        code => KeyOutcome::Failed(KeyError::broker(code, None)),
    }
}

/// Force-terminates each transactional id at its coordinator.
/// `transaction_timeout_ms` is what the coordinator records with the new
/// epoch (Kafka's Admin uses its request timeout).
pub async fn force_terminate(
    client: &SharedClient,
    ids: Vec<String>,
    transaction_timeout_ms: i32,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<String, std::result::Result<Terminated, KeyError>> {
    // one id per request: InitProducerId carries one transactional id
    let opts = opts.one_key_per_request();
    let mut results = Vec::new();
    drive(
        client,
        &TerminateHandler {
            transaction_timeout_ms,
        },
        &mut Coordinator::new(TransactionCoordinators),
        ids,
        &opts,
        bound,
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_transactions_is_asked_again_at_the_same_coordinator() {
        let resp = InitProducerIdResponse {
            error_code: ErrorCode::CONCURRENT_TRANSACTIONS,
            ..Default::default()
        };
        assert!(matches!(
            terminate_outcome(&resp),
            KeyOutcome::Retry { refresh: false, .. }
        ));
        let resp = InitProducerIdResponse {
            error_code: ErrorCode::NOT_COORDINATOR,
            ..Default::default()
        };
        assert!(matches!(
            terminate_outcome(&resp),
            KeyOutcome::Retry { refresh: true, .. }
        ));
    }
}
