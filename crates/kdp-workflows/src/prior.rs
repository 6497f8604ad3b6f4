//! What a command already read that a later read in the same run takes
//! instead of asking the cluster again: `kdp blocked` and `find-hanging`
//! hand their transactions and groups to the owners' read of their Owner
//! column ([`crate::owners::read_owners_after`]), so nothing is read twice.

use crate::groups::GroupsKept;
use crate::join::TxnRead;

/// The reads a run already made (`None`: not made, or failed: the later
/// read asks itself).
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// The join's ListTransactions (unfiltered) and DescribeTransactions.
    pub transactions: Option<TxnRead>,
    /// ListGroups, the probe of the listing's visibility, and the groups
    /// described with their members.
    pub groups: Option<GroupsKept>,
}
