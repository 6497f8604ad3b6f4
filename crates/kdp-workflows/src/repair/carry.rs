//! A plan carried out from start to end: the partitions read before, the
//! steps re-checked and sent, and the partitions read again until the
//! repair shows or time runs out. What `kdp abort`, `kdp force-terminate`
//! and `kdp find-hanging --repair` run once the plan is confirmed.

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_domain::repair::plan::Plan;
use kdp_domain::repair::proof::{Proof, Snapshot};
use kdp_domain::repair::report::Report;

use crate::repair::execute::{execute, RepairOptions};
use crate::repair::prove::{prove, snapshot};

/// What carrying a plan out did.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// The touched partitions before anything was sent.
    pub before: Snapshot,
    /// What became of each step, numbered as in the plan.
    pub report: Report,
    /// The touched partitions after, set beside `before`.
    pub proof: Proof,
}

/// Reads the partitions the plan touches, carries the plan out
/// ([`execute`]: each step re-checked first) and proves it, all within
/// `bound`: a force-terminate's markers are written by the coordinator
/// afterwards, so the proof reads again until every LSO moved or the
/// deadline passes.
pub async fn carry_out(
    client: &SharedClient,
    plan: &Plan,
    opts: &RepairOptions,
    bound: &TimeBound,
) -> Repaired {
    let before = snapshot(client, plan, opts, bound).await;
    let report = execute(client, plan, opts, bound).await;
    let proof = prove(client, &before, &report, opts, bound).await;
    Repaired {
        before,
        report,
        proof,
    }
}

/// The cluster's id, for an audit record: `None` when no broker says in
/// time (one request of `bound`).
pub async fn cluster_id(client: &SharedClient, bound: &TimeBound) -> Option<String> {
    client
        .metadata_within(Some(&[]), bound.request_limit())
        .await
        .ok()
        .and_then(|m| m.cluster_id)
}
