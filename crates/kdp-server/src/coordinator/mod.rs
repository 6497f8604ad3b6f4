//! What the mock's transaction coordinators do on their own, over the
//! cluster: abort an open transaction (to fence it for a new
//! InitProducerId, or once it outlived its timeout), writing the markers
//! and their records to `__transaction_state` as Kafka's
//! `TransactionCoordinator` does. The state changes themselves are
//! [`crate::txn::transit`]'s; InitProducerId is
//! [`crate::apis::init_producer_id`].

mod abort;
mod timeout;

pub use abort::abort_open_transaction;
pub use timeout::{abort_timed_out_transactions, TimeoutScans, ABORT_INTERVAL_CONFIG};
