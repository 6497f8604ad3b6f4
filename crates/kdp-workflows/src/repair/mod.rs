//! Repairing partitions pinned by an open transaction, with the safety
//! `kdp abort`, `kdp force-terminate` and `kdp find-hanging --repair` give:
//! a [`Plan`] of typed steps made from what the cluster answered (and
//! refused when it cannot be right; the planners are kdp-domain's,
//! [`kdp_domain::repair`]), a re-check against the cluster right before
//! sending ([`revalidate`]), a [`Report`] with one typed [`Outcome`] per
//! step, numbered as in the plan ([`execute()`]), and the proof that it
//! worked ([`snapshot`] before, [`prove()`] after).
//!
//! The two levers are kdp-client's, one handler per Kafka API:
//!
//! - WriteTxnMarkers (ABORT) straight to the partition leader
//!   ([`kdp_client::txn::write_txn_markers::abort`]), as
//!   `Admin.abortTransaction` sends it. The coordinator is not told: a
//!   producer still alive can go on.
//! - InitProducerId with producer id and epoch -1 at the transactional id's
//!   coordinator ([`kdp_client::txn::init_producer_id::force_terminate`]),
//!   as `Admin.fenceProducers` and `forceTerminateTransaction` send it: the
//!   coordinator bumps the epoch, aborts the open transaction (writing the
//!   markers itself) and fences the previous instance.
//!
//! Plans:
//!
//! - [`plan_abort`] ([`plan_abort_from`] over a join already made): the raw
//!   abort of one partition's open transaction, by its start offset or by
//!   producer id and epochs. Refused ([`Refusal`]) when the partition has no
//!   such open transaction or its epochs are not the ones given.
//! - [`plan_force_terminate`]: one force-terminate per id its coordinator
//!   describes.
//! - [`plan_findings`] over [`findings()`]: what `find-hanging` found, with
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
//! use kdp_client::{BrokerAddress, Client, ClientConfig, DescribeOptions, TimeBound};
//! use kdp_workflows::repair::{
//!     execute, plan_abort, AbortTarget, Outcome, PlanError, RepairOptions,
//! };
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // one bound on time for the whole repair: the plan, its re-check, the abort
//! let bound = TimeBound::after(Duration::from_secs(30));
//! let bootstrap = BrokerAddress::parse_list("localhost:9092")?;
//! let client = Arc::new(Client::connect_within(bootstrap, ClientConfig::default(), &bound).await?);
//! let target = AbortTarget::StartOffset {
//!     topic: "payments".into(),
//!     partition: 0,
//!     start_offset: 40112,
//! };
//! let plan = match plan_abort(&client, &target, &DescribeOptions::default(), &bound).await {
//!     Ok(plan) => plan,
//!     // nothing was sent; the refusal says what the partition has instead
//!     Err(PlanError::Refused(why)) => return Err(why.into()),
//!     Err(e) => return Err(e.into()),
//! };
//! // re-checked against the cluster right before anything is sent
//! let report = execute(&client, &plan, &RepairOptions::new(&bound), &bound).await;
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

pub mod build;
pub mod carry;
pub mod execute;
pub mod prove;

pub use build::{join_partitions, plan_abort, plan_force_terminate, PlanError};
pub use carry::{carry_out, cluster_id, Repaired};
pub use execute::{execute, revalidate, RepairOptions};
pub use prove::{prove, snapshot};

pub use kdp_domain::repair::{
    findings, plan_abort_from, plan_findings, AbortTarget, Action, CoordinatorAnswer,
    ForceTerminatePlan, Manual, Outcome, Plan, Proof, Refusal, Report, Snapshot,
};
