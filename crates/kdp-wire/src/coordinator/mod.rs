//! Records that Kafka's coordinators keep in their internal topics, outside
//! any API: each key and each value starts with its own int16 version, and
//! each record type has its own flexible versions. Declared with `#[kafka]`
//! like the messages (`record = ...` instead of `key = ...`).
//!
//! - [`txn_log`]: the transaction coordinator's `__transaction_state`
//!   records and Kafka's rule for which partition holds a transactional id.

mod record;
pub mod txn_log;

pub use record::{decode_record, encode_record, record_len, CoordinatorRecord, Versioned};
