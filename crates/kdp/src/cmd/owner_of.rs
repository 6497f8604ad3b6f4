//! The owner of a transactional id where another command names one
//! (`find-hanging`, `blocked`, `describe --with-transactions`, `history`):
//! read once per run for the ids shown, with `kdp owners`' read and
//! verdicts, and the rule that kdp never suggests ending a live owner's
//! transaction.

use std::collections::BTreeMap;

use kdp_domain::owners::{Advice, Owner};
use kdp_domain::repair::{Action, Plan};
use kdp_workflows::clock::now_ms;
use kdp_workflows::owners::{read_owners_after, Scope};
use kdp_workflows::prior::Prior;

use crate::cmd::cluster::Connected;
use crate::output::colour::Style;
pub use crate::output::producers::OwnerField;
use crate::output::table::Cell;

/// The owners of `ids`, read at once; empty (said once on stderr) when
/// they could not be read: the column is then `-`, never a guess.
pub async fn owners(conn: &Connected, ids: Vec<String>) -> BTreeMap<String, Owner> {
    owners_after(conn, ids, Prior::default()).await
}

/// [`owners`] after the command's own read: what `prior` holds (its
/// transactions, its groups) is not asked again.
pub async fn owners_after(
    conn: &Connected,
    ids: Vec<String>,
    prior: Prior,
) -> BTreeMap<String, Owner> {
    if ids.is_empty() {
        return BTreeMap::new();
    }
    let scope = Scope {
        transactional_ids: ids,
        ..Scope::default()
    };
    let dopts = conn.describe_options(None, None).driver_options();
    match read_owners_after(&conn.client, &scope, now_ms(), prior, &dopts, &conn.bound).await {
        Ok(read) => read
            .judged
            .owners
            .into_iter()
            .map(|o| (o.transactional_id.clone(), o))
            .collect(),
        Err(e) => {
            eprintln!("kdp: owners not read (Owner is '-'): {e}");
            BTreeMap::new()
        }
    }
}

/// The JSON field of an owner.
pub fn field(o: Option<&Owner>) -> Option<OwnerField> {
    let o = o?;
    let a = o.attribution.as_ref();
    Some(OwnerField {
        framework: a.map(|a| a.framework.label()),
        application: a.map(|a| a.application.clone()),
        instance: a.and_then(|a| a.instance.clone()),
        task: a.map(|a| a.task.to_string()),
        verdict: o.verdict.label(),
        evidence: o.evidence.to_string(),
    })
}

/// The table cell: `orphaned: orders-app thread 1`, `unattributed`, `-`,
/// styled by the verdict's severity.
pub fn cell(o: Option<&Owner>) -> Cell {
    let Some(o) = o else {
        return "-".into();
    };
    let text = match &o.attribution {
        Some(a) => format!("{}: {} {}", o.verdict.label(), a.application, a.task),
        None => o.verdict.label().to_string(),
    };
    Cell::new(text, Style::from(o.verdict.severity()))
}

/// Why kdp does not suggest force-terminate for this owner's transaction,
/// if it does not.
pub fn spared(o: Option<&Owner>) -> Option<&'static str> {
    match o?.advice() {
        Advice::LeaveToWriter => Some("its writer is live (kdp owners): it ends it itself"),
        Advice::NewestCheckpoint => Some(
            "it is Flink's newest checkpoint (kdp owners): an abort discards data Flink \
             checkpointed and will try to commit",
        ),
        Advice::ForceTerminate | Advice::Nothing | Advice::Undecided => None,
    }
}

/// Drops from `plan` the force-terminate steps of live owners (said on
/// stderr with why), renumbering the rest.
pub fn spare_live(plan: &mut Plan, owners: &BTreeMap<String, Owner>) {
    plan.steps.retain(|s| match &s.action {
        Action::ForceTerminate { transactional_id } => match spared(owners.get(transactional_id)) {
            Some(why) => {
                eprintln!("kdp: not ending {transactional_id}: {why}");
                false
            }
            None => true,
        },
        _ => true,
    });
    for (i, s) in plan.steps.iter_mut().enumerate() {
        s.number = i + 1;
    }
}

#[cfg(test)]
mod tests {
    use kdp_domain::owners::{Evidence, Owner, TxnFacts, Verdict};
    use kdp_domain::repair::plan::{CoordinatorAnswer, Seen};
    use kdp_wire::messages::TransactionState;
    use kdp_wire::TxnState;

    use super::*;

    fn owner(id: &str, verdict: Verdict, newest_checkpoint: bool) -> Owner {
        Owner {
            transactional_id: id.into(),
            attribution: None,
            verdict,
            evidence: Evidence::NoScheme { counter_tail: None },
            txn: Ok(TxnFacts {
                state: Some(TxnState::Ongoing),
                state_name: "Ongoing".into(),
                producer_id: 1,
                producer_epoch: 0,
                timeout_ms: 60_000,
                start_ms: Some(1),
                partitions: vec![("t".into(), 0)],
                coordinator: Some(1),
            }),
            newest_checkpoint,
            groups_blocked: None,
        }
    }

    #[test]
    fn a_plan_never_ends_a_live_owners_transaction() {
        let mut plan = Plan::default();
        for id in ["live", "orphan", "newest", "nobody"] {
            plan.push(
                Action::ForceTerminate {
                    transactional_id: id.into(),
                },
                Seen {
                    producer_id: 1,
                    producer_epoch: 0,
                    partitions: Vec::new(),
                    coordinator: CoordinatorAnswer::Described(TransactionState::default()),
                },
            );
        }
        let owners = BTreeMap::from([
            ("live".to_string(), owner("live", Verdict::Live, false)),
            (
                "orphan".to_string(),
                owner("orphan", Verdict::Orphaned, false),
            ),
            ("newest".to_string(), owner("newest", Verdict::Live, true)),
        ]);
        spare_live(&mut plan, &owners);
        let kept: Vec<(usize, &Action)> =
            plan.steps.iter().map(|s| (s.number, &s.action)).collect();
        assert_eq!(kept.len(), 2);
        assert!(
            matches!(kept[0], (1, Action::ForceTerminate { transactional_id }) if transactional_id == "orphan")
        );
        // an id kdp knows no owner of is left to the plan's own rules
        assert!(
            matches!(kept[1], (2, Action::ForceTerminate { transactional_id }) if transactional_id == "nobody")
        );
    }
}
