//! DescribeTransactions (`KafkaApis.handleDescribeTransactionsRequest`,
//! `TransactionCoordinator.handleDescribeTransactions`), one answer per
//! requested id, in order: DESCRIBE denied ->
//! TRANSACTIONAL_ID_AUTHORIZATION_FAILED; an empty id -> INVALID_REQUEST;
//! this broker is not the id's coordinator -> NOT_COORDINATOR; unknown or
//! Dead -> TRANSACTIONAL_ID_NOT_FOUND; else the coordinator's entry, its
//! Topics holding the transaction's partitions minus topics the caller may
//! not DESCRIBE.

use kdp_wire::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, TopicData, TransactionState,
};
use kdp_wire::ErrorCode;

use kdp_wire::wire::{Version, Wire};

use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::TxnIdOperation;
use crate::budget::Budget;
use crate::budget::TooLarge;
use crate::cluster::Cluster;
use crate::txn::TxnState;

/// Answers a DescribeTransactions request from this broker's coordinator state, for any size of answer.
pub fn describe_transactions(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeTransactionsRequest,
) -> DescribeTransactionsResponse {
    match describe_transactions_within(cluster, caller, req, usize::MAX) {
        Ok(resp) => resp,
        // Nothing is larger than usize::MAX bytes.
        Err(e) => unreachable!("{e}"),
    }
}

/// As [`describe_transactions`], but refuses as soon as the answer is
/// certainly larger than `limit` bytes: a small request can name a
/// transaction with many partitions many times over.
pub fn describe_transactions_within(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeTransactionsRequest,
    limit: usize,
) -> Result<DescribeTransactionsResponse, TooLarge> {
    // Each id is answered once, with at least its name echoed.
    let v = Version::of::<DescribeTransactionsResponse>(0);
    let each = TransactionState::min_len(v);
    Budget::new(limit).precheck_each(
        req.transactional_ids
            .iter()
            .map(|id| each.saturating_add(id.len())),
    )?;
    let mut at_least = 0usize;
    let mut states = Vec::with_capacity(req.transactional_ids.len().min(1024));
    for id in &req.transactional_ids {
        let state = describe_one(cluster, caller, id);
        at_least = at_least.saturating_add(lower_bound(&state));
        if at_least > limit {
            return Err(TooLarge { at_least, limit });
        }
        states.push(state);
    }
    Ok(DescribeTransactionsResponse {
        transaction_states: states,
        ..Default::default()
    })
}

/// Bytes `state` certainly takes on the wire (strings and fixed fields).
fn lower_bound(state: &TransactionState) -> usize {
    let topics: usize = state
        .topics
        .iter()
        .map(|t| {
            t.topic
                .len()
                .saturating_add(t.partitions.len().saturating_mul(4))
        })
        .fold(0, usize::saturating_add);
    // ErrorCode, TransactionTimeoutMs, TransactionStartTimeMs, ProducerId,
    // ProducerEpoch.
    (2 + 4 + 8 + 8 + 2) + state.transactional_id.len() + state.transaction_state.len() + topics
}

fn describe_one(cluster: &Cluster, caller: &Caller<'_>, id: &str) -> TransactionState {
    let error = |code| TransactionState {
        error_code: code,
        transactional_id: id.to_string(),
        ..Default::default()
    };
    if !caller.may_transactional_id(cluster, TxnIdOperation::Describe, id) {
        return error(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    }
    if id.is_empty() {
        return error(ErrorCode::INVALID_REQUEST);
    }
    if cluster.transaction_coordinator(id) != Some(caller.broker_id) {
        return error(ErrorCode::NOT_COORDINATOR);
    }
    let Some(t) = cluster
        .transaction(id)
        .filter(|t| t.state != TxnState::Dead)
    else {
        return error(ErrorCode::TRANSACTIONAL_ID_NOT_FOUND);
    };
    TransactionState {
        error_code: ErrorCode::NONE,
        transactional_id: id.to_string(),
        transaction_state: t.state.name().to_string(),
        transaction_timeout_ms: t.timeout_ms,
        transaction_start_time_ms: t.start_time_ms,
        producer_id: t.producer_id,
        producer_epoch: t.producer_epoch,
        topics: t
            .partitions
            .iter()
            .filter(|(topic, _)| caller.may_describe_topic(cluster, topic))
            .map(|(topic, partitions)| TopicData {
                topic: topic.clone(),
                partitions: partitions.clone(),
                unknown_tagged_fields: Default::default(),
            })
            .collect(),
        unknown_tagged_fields: Default::default(),
    }
}

impl Handler for DescribeTransactionsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<DescribeTransactionsResponse, Refusal> {
        Ok(describe_transactions_within(
            &call.shared.read(),
            &call.caller,
            self,
            call.limit,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    fn describe(c: &Cluster, broker: i32, ids: &[&str]) -> Vec<TransactionState> {
        let req = DescribeTransactionsRequest {
            transactional_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let r = describe_transactions(c, &caller(broker), &req);
        assert_eq!(r.transaction_states.len(), ids.len());
        r.transaction_states
    }

    #[test]
    fn the_coordinator_describes_its_transactions() {
        let c = cluster(TXN_CLUSTER);
        let [a, b] = <[_; 2]>::try_from(describe(&c, 1, &["app-a", "app-b"])).unwrap();
        assert_eq!(
            (
                a.error_code,
                a.transaction_state.as_str(),
                a.producer_id,
                a.producer_epoch,
                a.transaction_timeout_ms,
                a.transaction_start_time_ms
            ),
            (ErrorCode::NONE, "Ongoing", 10, 3, 60000, NOW - 3_600_000)
        );
        assert_eq!(a.topics.len(), 1);
        assert_eq!(
            (a.topics[0].topic.as_str(), a.topics[0].partitions.clone()),
            ("orders", vec![0])
        );
        assert_eq!(b.transaction_state, "PrepareCommit");
        // The file's default timeout: the Java producer's 60 s.
        assert_eq!(b.transaction_timeout_ms, 60000);
    }

    #[test]
    fn errors_in_kafkas_order() {
        let c = cluster(TXN_CLUSTER);
        let codes: Vec<(String, ErrorCode)> =
            describe(&c, 1, &["secret-c", "app-d", "ghost", "gone", ""])
                .into_iter()
                .map(|t| (t.transactional_id, t.error_code))
                .collect();
        // "ghost" hashes onto partition 0 (led by 1).
        assert_eq!(c.transaction_coordinator("ghost"), Some(1));
        assert_eq!(
            codes,
            vec![
                (
                    "secret-c".into(),
                    ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                ),
                ("app-d".into(), ErrorCode::NOT_COORDINATOR),
                ("ghost".into(), ErrorCode::TRANSACTIONAL_ID_NOT_FOUND),
                ("gone".into(), ErrorCode::TRANSACTIONAL_ID_NOT_FOUND),
                (String::new(), ErrorCode::INVALID_REQUEST),
            ]
        );
    }

    #[test]
    fn a_small_request_for_a_huge_answer_is_refused_early() {
        let c = cluster(TXN_CLUSTER);
        let req = DescribeTransactionsRequest {
            transactional_ids: vec!["app-a".into(); 1000],
            ..Default::default()
        };
        let full = describe_transactions(&c, &caller(1), &req);
        let size = kdp_wire::Message::encoded_len(&full, 0);
        let within = describe_transactions_within(&c, &caller(1), &req, size);
        assert!(within.is_ok_and(|r| r == full));
        let e = describe_transactions_within(&c, &caller(1), &req, size / 10).unwrap_err();
        assert!(e.at_least > size / 10 && e.at_least < size / 5, "{e}");
    }

    #[test]
    fn topics_the_caller_may_not_describe_are_dropped() {
        struct NoOrders;
        impl crate::responder::Authorizer for NoOrders {
            fn authorize_read_topic(&self, _: &crate::RequestContext, _: &str) -> bool {
                true
            }
            fn authorize_describe_topic(&self, _: &crate::RequestContext, t: &str) -> bool {
                t != "orders"
            }
        }
        let c = cluster(TXN_CLUSTER);
        let ctx = crate::RequestContext::default();
        let caller = Caller {
            authorizer: &NoOrders,
            request: &ctx,
            ..caller(1)
        };
        let req = DescribeTransactionsRequest {
            transactional_ids: vec!["app-a".into()],
            ..Default::default()
        };
        let r = describe_transactions(&c, &caller, &req);
        assert_eq!(r.transaction_states[0].error_code, ErrorCode::NONE);
        assert!(r.transaction_states[0].topics.is_empty());
    }
}
