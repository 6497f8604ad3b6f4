//! Admin requests that concern many keys (partitions, transactional ids,
//! brokers): one [`driver`] routes, batches, sends, retries and reports them;
//! each API supplies an [`AdminHandler`] and picks a [`lookup`] strategy.

pub mod driver;
pub mod lookup;

pub use driver::{
    collect, drive, AdminHandler, Batch, DriverOptions, DriverStats, KeyOutcome, KeyResult,
};
pub use lookup::{
    AllBrokers, ChosenBroker, Coordinator, CoordinatorFuture, CoordinatorLookup, LookupStrategy,
    PartitionLeader, Route,
};
