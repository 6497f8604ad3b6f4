//! What `describe --with-transactions` reads beside its join, at once:
//! the transaction log of every listed transactional id (for the fence
//! verdicts) and the consumer groups the open transactions hold.

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_domain::history::id::IdHistory;
use kdp_domain::joined::Joined;

use crate::groups::{held_groups_keeping, GroupsKept, Held};
use crate::history::{read_listed, ReadOptions};

/// The logs and the groups around a join.
#[derive(Debug, Clone)]
pub struct Around {
    /// The histories of the listed transactional ids.
    pub histories: Vec<IdHistory>,
    /// The groups each open transaction holds at the LSO.
    pub held: Held,
}

/// Reads the logs and the groups of `joined`; neither waits for the other.
/// Also returns what the groups' read holds beyond them ([`GroupsKept`];
/// `None` when no group was read, or the read failed), for the owners'
/// read that follows in the same run.
pub async fn around(
    client: &SharedClient,
    joined: &Joined,
    logs: &ReadOptions,
    groups: &DriverOptions,
    bound: &TimeBound,
) -> (Around, Option<GroupsKept>) {
    let (histories, (held, kept)) = tokio::join!(
        read_listed(client, joined, logs, bound),
        held_groups_keeping(client, joined, joined.max_timeout_ms(), groups, bound)
    );
    (Around { histories, held }, kept)
}
