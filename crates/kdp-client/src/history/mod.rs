//! The histories of transactional ids, read over the wire ([`read`]); what
//! they are, and every rule over them, is [`kdp_domain::history`].

pub mod read;

pub use kdp_domain::history::*;
pub use read::{read_histories, read_histories_with, ReadOptions, ReadProgress};
