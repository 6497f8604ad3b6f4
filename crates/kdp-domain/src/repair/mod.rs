//! Repairs of partitions pinned by an open transaction, as data and rules:
//! a [`Plan`] of typed steps made from what the cluster
//! answered (and refused when it cannot be right), the re-check of each
//! step right before it is sent ([`revalidate`]), a
//! [`Report`] with one typed outcome per step, numbered as
//! in the plan, and the [`proof`] that it worked.
//!
//! - [`levers`]: the two levers: a raw abort's marker ([`AbortSpec`]) and
//!   what a force-terminate leaves ([`Terminated`]).
//! - [`plan`]: plans, their steps and what each saw of the coordinators
//!   ([`CoordinatorAnswer`]): [`plan_abort_from`] over a join, refused
//!   ([`Refusal`]) when the partition has no such open transaction;
//!   [`force_terminate_plan`] from what the coordinators described.
//! - [`findings`](mod@findings): the plan for what `find-hanging` found
//!   ([`plan_findings`]).
//! - [`revalidate`]: whether a step still fits the cluster as read again.
//! - [`report`]: what became of each step.
//! - [`proof`]: each touched partition before and after.
//!
//! Sending and reading again are kdp-workflows' (`repair`).

pub mod findings;
pub mod levers;
pub mod plan;
pub mod proof;
pub mod report;
pub mod revalidate;

pub use findings::{findings, findings_judged, plan_findings, Finding};
pub use levers::{
    advice, marker_coordinator_epoch, AbortSpec, Terminated, ABORT_TRANSACTION_VERSION,
};
pub use plan::{
    force_terminate_plan, place_partitions, plan_abort_from, unblocks, AbortTarget, Action,
    CoordinatorAnswer, ForceTerminatePlan, Manual, ManualReason, NotAsked, PartitionSeen, Plan,
    Refusal, Seen, SkipReason, Step,
};
pub use proof::{judge, LsoChange, PartitionProof, PartitionState, Proof, Snapshot};
pub use report::{Changed, Done, Failure, Outcome, Report, StepOutcome};
pub use revalidate::recheck;
