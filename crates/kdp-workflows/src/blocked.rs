//! What `kdp blocked` reads: the join over the selected partitions and
//! every consumer group, at once, on one budget.

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_domain::groups::read::GroupsRead;
use kdp_domain::joined::Joined;

use crate::groups::{read_groups, read_groups_keeping, ReadOptions};
use crate::join::{join, join_keeping, JoinOptions, Keep};
use crate::prior::Prior;

/// The join and the groups, each answered or failed on its own.
#[derive(Debug)]
pub struct Gathered {
    /// The join (`Err`: the cluster could not be reached).
    pub joined: Result<Joined>,
    /// The groups (`Err`: they could not be listed).
    pub groups: Result<GroupsRead>,
}

/// The join of `join` and the groups `groups` names (every group when it
/// names none), read side by side: the groups do not wait for the
/// producers.
pub async fn gather(
    client: &SharedClient,
    join_opts: &JoinOptions,
    groups: &ReadOptions,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Gathered {
    let (joined, groups) = tokio::join!(
        join(client, join_opts, bound),
        read_groups(client, groups, opts, bound)
    );
    Gathered { joined, groups }
}

/// [`gather`], keeping what the owners' read of the same run takes
/// instead of asking again ([`Prior`]): the join lists every transaction,
/// and the groups are described with their members.
pub async fn gather_keeping(
    client: &SharedClient,
    join_opts: &JoinOptions,
    groups: &ReadOptions,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> (Gathered, Prior) {
    let (joined, groups) = tokio::join!(
        join_keeping(client, join_opts, Keep::Everything, bound),
        read_groups_keeping(client, groups, opts, bound)
    );
    let (joined, transactions) = match joined {
        Ok((j, t)) => (Ok(j), t),
        Err(e) => (Err(e), None),
    };
    let (groups, kept) = match groups {
        Ok((g, k)) => (Ok(g), Some(k)),
        Err(e) => (Err(e), None),
    };
    let prior = Prior {
        transactions,
        groups: kept,
    };
    (Gathered { joined, groups }, prior)
}
