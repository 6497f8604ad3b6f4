//! Repairs over the wire: the plans the domain makes
//! ([`kdp_domain::repair`]) from joins run here, their re-check and
//! execution, and the proof.

pub mod build;
pub mod execute;
pub mod prove;

pub use build::{join_partitions, plan_abort, plan_force_terminate, PlanError};
pub use execute::{execute, revalidate, RepairOptions};
pub use kdp_domain::repair::*;
pub use prove::{prove, snapshot};

pub use crate::txn::init_producer_id::force_terminate;
pub use crate::txn::write_txn_markers::abort;
