//! ListTransactions (`KafkaApis.handleListTransactionsRequest`,
//! `TransactionStateManager.listTransactionStates`): a broker lists only the
//! transactional ids it coordinates. Dead transactions are never listed.
//! A state filter Kafka does not know is echoed in UnknownStateFilters and
//! matches nothing (so filters made only of unknown names list nothing).
//! The producer-id filter keeps listed producer ids; DurationFilter (v1+)
//! keeps transactions running longer than it (`now - start > duration`);
//! TransactionalIdPattern (v2+, Kafka 4.1) keeps ids the regular expression
//! matches whole, and an invalid expression is INVALID_REGULAR_EXPRESSION.
//! Last, ids the caller may not DESCRIBE are silently left out.

use std::collections::HashSet;

use kdp_wire::messages::{ListTransactionsRequest, ListTransactionsResponse, ListedTransaction};
use kdp_wire::ErrorCode;

use super::handler::{Call, Caller, Handler, Refusal};
use crate::acls::TxnIdOperation;
use crate::cluster::Cluster;
use crate::txn::TxnState;

/// Longest TransactionalIdPattern compiled; a longer one is refused as
/// invalid rather than costing the broker a large automaton.
const MAX_PATTERN_LEN: usize = 4096;

/// Answers ListTransactions with the transactional ids this broker coordinates that pass the filters.
pub fn list_transactions(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &ListTransactionsRequest,
    version: i16,
) -> ListTransactionsResponse {
    let mut resp = ListTransactionsResponse::default();
    let pattern = match req.transactional_id_pattern.as_deref() {
        Some(p) if version >= 2 && !p.is_empty() => match full_match(p) {
            Some(re) => Some(re),
            None => {
                resp.error_code = ErrorCode::INVALID_REGULAR_EXPRESSION;
                return resp;
            }
        },
        _ => None,
    };
    let mut states = HashSet::new();
    for name in &req.state_filters {
        match TxnState::from_name(name) {
            Some(s) => {
                states.insert(s);
            }
            None => resp.unknown_state_filters.push(name.clone()),
        }
    }
    let producer_ids: HashSet<i64> = req.producer_id_filters.iter().copied().collect();
    let duration = if version >= 1 {
        req.duration_filter
    } else {
        -1
    };
    for t in &cluster.transactions {
        let include = t.state != TxnState::Dead
            && cluster.transaction_coordinator(&t.transactional_id) == Some(caller.broker_id)
            && (producer_ids.is_empty() || producer_ids.contains(&t.producer_id))
            && (req.state_filters.is_empty() || states.contains(&t.state))
            && (duration < 0 || caller.now_ms.saturating_sub(t.start_time_ms) > duration)
            && pattern
                .as_ref()
                .is_none_or(|re| re.is_match(&t.transactional_id))
            && caller.may_transactional_id(cluster, TxnIdOperation::Describe, &t.transactional_id);
        if include {
            resp.transaction_states.push(ListedTransaction {
                transactional_id: t.transactional_id.clone(),
                producer_id: t.producer_id,
                transaction_state: t.state.name().to_string(),
                unknown_tagged_fields: Default::default(),
            });
        }
    }
    resp
}

/// The pattern anchored at both ends (Java's `Matcher.matches`).
fn full_match(pattern: &str) -> Option<regex::Regex> {
    if pattern.len() > MAX_PATTERN_LEN {
        return None;
    }
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(1 << 20)
        .build()
        .ok()
}

impl Handler for ListTransactionsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ListTransactionsResponse, Refusal> {
        Ok(list_transactions(
            &call.shared.read(),
            &call.caller,
            self,
            call.version,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use crate::responder::RequestContext;

    fn ids(c: &Cluster, broker: i32, req: ListTransactionsRequest, v: i16) -> Vec<String> {
        let r = list_transactions(c, &caller(broker), &req, v);
        assert_eq!(r.error_code, ErrorCode::NONE);
        r.transaction_states
            .into_iter()
            .map(|t| {
                format!(
                    "{}:{}:{}",
                    t.transactional_id, t.producer_id, t.transaction_state
                )
            })
            .collect()
    }

    #[test]
    fn each_broker_lists_what_it_coordinates_minus_dead_and_hidden() {
        let c = cluster(TXN_CLUSTER);
        // secret-c is coordinated by 1 but may not be described; gone is Dead.
        assert_eq!(
            ids(&c, 1, Default::default(), 0),
            vec!["app-a:10:Ongoing", "app-b:11:PrepareCommit"]
        );
        assert_eq!(
            ids(&c, 2, Default::default(), 0),
            vec!["app-d:13:CompleteCommit"]
        );
        assert!(ids(&c, 3, Default::default(), 0).is_empty());
    }

    #[test]
    fn filters() {
        let c = cluster(TXN_CLUSTER);
        let by_pid = ListTransactionsRequest {
            producer_id_filters: vec![11, 99],
            ..Default::default()
        };
        assert_eq!(ids(&c, 1, by_pid, 0), vec!["app-b:11:PrepareCommit"]);
        // app-a started an hour ago, app-b two minutes ago.
        let long = ListTransactionsRequest {
            duration_filter: 10 * 60 * 1000,
            ..Default::default()
        };
        assert_eq!(ids(&c, 1, long.clone(), 1), vec!["app-a:10:Ongoing"]);
        // v0 has no duration filter.
        assert_eq!(ids(&c, 1, long, 0).len(), 2);
        let pattern = |p: &str| ListTransactionsRequest {
            transactional_id_pattern: Some(p.into()),
            ..Default::default()
        };
        assert_eq!(ids(&c, 1, pattern("app-.*"), 2).len(), 2);
        // Whole-id match: "app" alone matches nothing.
        assert!(ids(&c, 1, pattern("app"), 2).is_empty());
        assert_eq!(ids(&c, 1, pattern(""), 2).len(), 2);
        let bad = list_transactions(&c, &caller(1), &pattern("app-(["), 2);
        assert_eq!(bad.error_code, ErrorCode::INVALID_REGULAR_EXPRESSION);
        assert!(bad.transaction_states.is_empty());
    }

    #[test]
    fn unknown_state_filters_are_echoed_and_match_nothing() {
        let c = cluster(TXN_CLUSTER);
        let req = |names: &[&str]| ListTransactionsRequest {
            state_filters: names.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let r = list_transactions(&c, &caller(1), &req(&["Ongoing", "Hanging"]), 0);
        assert_eq!(r.unknown_state_filters, vec!["Hanging"]);
        assert_eq!(r.transaction_states.len(), 1);
        assert_eq!(r.transaction_states[0].transactional_id, "app-a");
        let r = list_transactions(&c, &caller(1), &req(&["ongoing"]), 0);
        assert_eq!(r.unknown_state_filters, vec!["ongoing"]);
        assert!(r.transaction_states.is_empty());
    }

    #[test]
    fn each_principal_sees_what_its_rules_let_it_describe() {
        // The general rules hide secret-*; admin's own rules hide nothing,
        // and app-reader's allow only app-a.
        let text = TXN_CLUSTER.replace(
            r#""acls": {"#,
            r#""acls": {"principals": {"User:admin": {},
                "User:app-reader": {"transactional_id_describe_allow": ["app-a"]}}, "#,
        );
        let c = cluster(&text);
        let as_ = |principal: &str| {
            let ctx = RequestContext {
                principal: principal.into(),
                ..RequestContext::default()
            };
            let who = Caller {
                request: &ctx,
                ..caller(1)
            };
            let r = list_transactions(&c, &who, &Default::default(), 0);
            r.transaction_states
                .into_iter()
                .map(|t| t.transactional_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(as_("User:ANONYMOUS"), vec!["app-a", "app-b"]);
        assert_eq!(as_("User:alice"), vec!["app-a", "app-b"]);
        assert_eq!(as_("User:admin"), vec!["app-a", "app-b", "secret-c"]);
        assert_eq!(as_("User:app-reader"), vec!["app-a"]);
    }
}
