//! The past of transactional ids, read from the transaction coordinator's
//! own log, `__transaction_state`: every state change with its producer id,
//! epoch, partitions and timeout, what caused each change of epoch (a
//! commit or abort under transaction protocol v2, a new instance's
//! InitProducerId, the coordinator's timeout, an admin fence, an epoch
//! rollover), and how far back the log reaches.
//!
//! - [`changes`]: the records of one id turned into [`StateChange`]s (pure).
//! - [`scan`]: one streaming pass over a partition's records.
//! - [`reach`]: how much of a partition was read, and where a history
//!   begins.
//! - [`id`]: one id's history, or why there is none.
//!
//! Reading the log over the wire is kdp-workflows' (`history`). The
//! `fenced` verdict of `describe --with-transactions`, from the log on both
//! protocol generations and from the epochs under v1, is
//! [`crate::diagnose::fence`].
//!
//! The topic is compacted: outside the active segment (100 MB by default)
//! the cleaner keeps only the latest record of each id. So a history says
//! where it starts ([`Reach`], [`Beginning`]) and never takes its first
//! record for the id's creation unless the partition's log starts at
//! offset 0 and no record was removed.

pub mod changes;
pub mod id;
pub mod reach;
pub mod scan;

pub use changes::{
    state_changes, Cause, ChangeState, EpochChange, Hole, InitKind, LogRecord, ProducerEpoch,
    StateChange,
};
pub use id::{missing_acl, History, HistoryError, IdHistory, Undecoded};
pub use reach::{holes, Beginning, Reach};
pub use scan::PartitionScan;
