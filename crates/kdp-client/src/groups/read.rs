//! The groups of a cluster as the blocked-consumer join needs them: every
//! group ListGroups names (or the ones asked for), each with its state and
//! its committed offsets. `kdp blocked` and a repair's proof both read them
//! this way.

use std::collections::BTreeMap;

use crate::admin::{DriverOptions, KeyError};
use crate::error::Result;
use crate::groups::{committed_offsets, list_groups, GroupOffsets, GroupState};
use crate::txn::SharedClient;

/// What kdp learned of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAnswer {
    /// The group id.
    pub group_id: String,
    /// Its state, when its coordinator's listing said (ListGroups v4+).
    pub state: Option<GroupState>,
    /// Its committed offsets, or why there are none.
    pub offsets: std::result::Result<GroupOffsets, KeyError>,
}

/// The groups read, and the brokers whose listing failed (their groups may
/// be missing from `answers`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupsRead {
    /// One per group, by group id.
    pub answers: Vec<GroupAnswer>,
    /// Each broker whose ListGroups failed, with why.
    pub listing_failures: Vec<(i32, KeyError)>,
}

/// Lists the groups on every broker and reads the committed offsets of
/// `only` (every listed group when `only` is empty).
pub async fn read_groups(
    client: &SharedClient,
    only: &[String],
    opts: &DriverOptions,
) -> Result<GroupsRead> {
    let listings = list_groups(client, &Default::default(), opts).await?;
    let mut states: BTreeMap<String, Option<GroupState>> = BTreeMap::new();
    let mut listing_failures = Vec::new();
    for (broker, listing) in listings {
        match listing {
            Ok(groups) => {
                for g in groups {
                    states.insert(g.group_id, g.state);
                }
            }
            Err(e) => listing_failures.push((broker, e)),
        }
    }
    let wanted: Vec<String> = if only.is_empty() {
        states.keys().cloned().collect()
    } else {
        only.to_vec()
    };
    let answers = committed_offsets(client, wanted, opts)
        .await?
        .into_iter()
        .map(|(group, offsets)| GroupAnswer {
            state: states.get(&group).cloned().flatten(),
            group_id: group,
            offsets,
        })
        .collect();
    Ok(GroupsRead {
        answers,
        listing_failures,
    })
}
