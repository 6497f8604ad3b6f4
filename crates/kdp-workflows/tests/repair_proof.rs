//! The proof after a repair, on kdp-test-support's in-memory demo cluster
//! and tokio's paused clock: the partitions are read again until the LSO
//! moves (a coordinator writes a force-terminate's markers after it
//! answers), and a repair whose LSO never moves is reported as such by the
//! deadline, never waited on past it.
//!
//! The report is made by hand, as a lever that answered "done" would make
//! it, and the cluster changes (or not) on its own: what is tested is the
//! waiting and the judgement, not the levers (repair.rs tests those).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kdp_client::{Client, DescribeOptions, TimeBound};
use kdp_domain::repair::{AbortTarget, Done, LsoChange, Outcome, Plan, Report, StepOutcome};
use kdp_test_support::StallCluster;
use kdp_wire::api;
use kdp_workflows::repair::{plan_abort, prove, snapshot, RepairOptions};
use tokio::time::Instant;

/// The one bound of a test: `budget` from now, 2 s a request.
fn bound(budget: Duration) -> TimeBound {
    TimeBound::after(budget).with_request_timeout(Duration::from_secs(2))
}

/// payments-0's open transaction (producer 7003 from 40112), planned.
async fn payments_plan(client: &Arc<Client>, bound: &TimeBound) -> Plan {
    let target = AbortTarget::StartOffset {
        topic: "payments".into(),
        partition: 0,
        start_offset: 40112,
    };
    plan_abort(client, &target, &DescribeOptions::default(), bound)
        .await
        .expect("plan")
}

fn done(plan: &Plan) -> Report {
    Report {
        outcomes: plan
            .steps
            .iter()
            .map(|s| StepOutcome {
                step: s.clone(),
                outcome: Outcome::Done(Done::Aborted),
            })
            .collect(),
    }
}

/// Ends 7003's transaction on payments-0 as its markers would.
fn end_7003(c: &mut kdp_server::Cluster) {
    if let Some(p) = c.partition_mut("payments", 0) {
        for list in p.all_producer_lists_mut() {
            for s in list.iter_mut().filter(|s| s.producer_id == 7003) {
                s.current_txn_start_offset = -1;
            }
        }
        p.explicit_last_stable_offset = None;
    }
}

#[tokio::test(start_paused = true)]
async fn the_proof_waits_for_markers_written_after_the_answer() {
    let cluster = StallCluster::demo();
    let bound = bound(Duration::from_secs(30));
    let deadline = bound.deadline();
    let client = cluster.client().await;
    let plan = payments_plan(&client, &bound).await;
    let opts = RepairOptions::new(&bound);
    let before = snapshot(&client, &plan, &opts, &bound).await;
    let old = before.partitions[&("payments".to_string(), 0)]
        .lso()
        .expect("LSO read");
    assert_eq!(old, 40112);
    // the markers land only after a few more reads of the partition
    let asked_before = cluster.asked(api::LIST_OFFSETS);
    let ended = Arc::new(AtomicBool::new(false));
    let flag = ended.clone();
    cluster.after_answer(api::LIST_OFFSETS, move |c, n| {
        if n >= asked_before + 4 && !flag.swap(true, Ordering::SeqCst) {
            end_7003(c);
        }
    });
    let proof = prove(&client, &before, &done(&plan), &opts, &bound).await;
    assert!(ended.load(Ordering::SeqCst));
    assert!(proof.reads > 1, "read once only: {proof:?}");
    let p = &proof.partitions[0];
    assert_eq!(p.change, LsoChange::Moved, "{proof:?}");
    let hw = cluster
        .cluster()
        .partition("payments", 0)
        .expect("payments-0")
        .high_watermark;
    assert_eq!(p.after.lso(), Some(hw));
    assert_eq!(p.released(), Some(hw - 40112));
    assert_eq!(p.transaction_gone, Some(true));
    // the demo's payments-ledger is committed at 40112: blocked before, free now
    assert_eq!(p.groups_can_advance, vec!["payments-ledger".to_string()]);
    assert!(proof.all_settled());
    assert!(Instant::now() < deadline.at());
}

#[tokio::test(start_paused = true)]
async fn an_lso_that_never_moves_is_reported_by_the_deadline() {
    let cluster = StallCluster::demo();
    let bound = bound(Duration::from_secs(10));
    let deadline = bound.deadline();
    let client = cluster.client().await;
    let plan = payments_plan(&client, &bound).await;
    let opts = RepairOptions::new(&bound);
    let before = snapshot(&client, &plan, &opts, &bound).await;
    // nothing ends the transaction: "done" was answered, nothing happened
    let proof = prove(&client, &before, &done(&plan), &opts, &bound).await;
    let p = &proof.partitions[0];
    assert_eq!(p.change, LsoChange::NotMoved, "{proof:?}");
    assert_eq!(p.transaction_gone, Some(false));
    assert_eq!(p.released(), Some(0));
    assert!(p.groups_can_advance.is_empty());
    assert!(!proof.all_settled());
    assert_eq!(proof.unsettled(), 1);
    // it kept reading, and stopped within the one budget
    assert!(proof.reads > 3, "{}", proof.reads);
    assert!(Instant::now() <= deadline.at());
}
