//! Repairing partitions pinned by an open transaction, with the safety
//! `kdp abort`, `kdp force-terminate` and `kdp find-hanging --repair` give:
//! a [`Plan`] of typed steps made from what the cluster answered (and
//! refused when it cannot be right), a re-check against the cluster right
//! before sending ([`revalidate`]), and a [`Report`] with one typed
//! [`Outcome`] per step, numbered as in the plan ([`execute`]).
//!
//! The two levers, each one user of the [admin driver](crate::admin::driver):
//!
//! - [`abort`]: WriteTxnMarkers (ABORT) straight to the partition leader, as
//!   `Admin.abortTransaction` (AbortTransactionHandler) sends it. The
//!   coordinator is not told: a producer still alive can go on.
//! - [`force_terminate`]: InitProducerId with producer id and epoch -1 at the
//!   transactional id's coordinator, as `Admin.fenceProducers` and
//!   `forceTerminateTransaction` send it: the coordinator bumps the epoch,
//!   aborts the open transaction (writing the markers itself) and fences the
//!   previous instance. CONCURRENT_TRANSACTIONS and
//!   COORDINATOR_LOAD_IN_PROGRESS are retried within the deadline, as
//!   FenceProducersHandler does: the first call may only start the abort.
//!
//! Plans:
//!
//! - [`plan_abort`] ([`plan_abort_from`] over a join already made): the raw
//!   abort of one partition's open transaction, by its start offset or by
//!   producer id and epochs. Refused ([`Refusal`]) when the partition has no
//!   such open transaction or its epochs are not the ones given.
//! - [`plan_force_terminate`]: one force-terminate per id its coordinator
//!   describes.
//! - [`plan_findings`] over [`findings`]: what `find-hanging` found, with
//!   skipped steps for decided transactions and [manual](Manual) steps (the
//!   command, and why kdp did not run it) for the ones it cannot judge.
//!
//! Each step records what the coordinators said ([`CoordinatorAnswer`]):
//! only a described transaction supports a claim about it (e.g. that it
//! does not include the partition, so force-terminate would not help).
//!
//! Another program automates a repair with the same checks:
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use kdp_client::txn::repair::{
//!     execute, plan_abort, AbortTarget, Outcome, PlanError, RepairOptions,
//! };
//! use kdp_client::{BrokerAddress, Client, ClientConfig, DescribeOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let bootstrap = BrokerAddress::parse_list("localhost:9092")?;
//! let client = Arc::new(Client::connect(bootstrap, ClientConfig::default()).await?);
//! let bounds = DescribeOptions {
//!     timeout: Duration::from_secs(30),
//!     ..Default::default()
//! };
//! let target = AbortTarget::StartOffset {
//!     topic: "payments".into(),
//!     partition: 0,
//!     start_offset: 40112,
//! };
//! let plan = match plan_abort(&client, &target, &bounds).await {
//!     Ok(plan) => plan,
//!     // nothing was sent; the refusal says what the partition has instead
//!     Err(PlanError::Refused(why)) => return Err(why.into()),
//!     Err(e) => return Err(e.into()),
//! };
//! // re-checked against the cluster right before anything is sent
//! let report = execute(&client, &plan, &RepairOptions::new(bounds)).await;
//! for o in &report.outcomes {
//!     match &o.outcome {
//!         Outcome::Done(_) => println!("{}: done", o.step.number),
//!         Outcome::Refused(changed) => println!("{}: not sent: {changed}", o.step.number),
//!         Outcome::Failed(f) => println!("{}: failed: {f}", o.step.number),
//!         Outcome::Skipped => println!("{}: left to an operator", o.step.number),
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod build;
mod execute;
mod findings;
mod levers;
mod plan;
mod proof;

pub use build::{join_partitions, plan_abort, plan_force_terminate, ForceTerminatePlan, PlanError};
pub use execute::{
    execute, revalidate, Changed, Done, Failure, Outcome, RepairOptions, Report, StepOutcome,
};
pub use findings::{findings, plan_findings, Finding};
pub use levers::{
    abort, advice, force_terminate, marker_coordinator_epoch, AbortSpec, Terminated,
    ABORT_TRANSACTION_VERSION,
};
pub use plan::{
    plan_abort_from, unblocks, AbortTarget, Action, CoordinatorAnswer, Manual, ManualReason,
    NotAsked, PartitionSeen, Plan, Refusal, Seen, SkipReason, Step,
};
pub use proof::{
    judge, prove, snapshot, LsoChange, PartitionProof, PartitionState, Proof, Snapshot,
};
