//! The groups of a cluster as the blocked-consumer join needs them: every
//! group ListGroups names (or the ones asked for), each with its state, its
//! committed offsets and, when asked, its members (DescribeGroups or
//! ConsumerGroupDescribe). `kdp blocked`, the blocked-groups column of
//! `find-hanging` and `describe --with-transactions`, the exporter and a
//! repair's proof all read them this way, once per run.

use std::collections::BTreeMap;

use crate::admin::{DriverOptions, KeyError};
use crate::error::Result;
use crate::groups::describe::describe_groups_at;
use crate::groups::offsets::committed_offsets_at;
use crate::groups::{list_groups, GroupOffsets, GroupState, GroupType};
use crate::txn::SharedClient;
use kdp_wire::ErrorCode;

/// What kdp learned of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAnswer {
    /// The group id.
    pub group_id: String,
    /// Its state: its coordinator's description, else its listing
    /// (ListGroups v4+); `None` when neither said.
    pub state: Option<GroupState>,
    /// Its type, when described or listed (ListGroups v5+).
    pub group_type: Option<GroupType>,
    /// Its members now (`Some(Ok(0))`: nobody consumes); `None` when not
    /// asked ([`ReadOptions::members`] off, or a type kdp does not describe).
    pub members: Option<std::result::Result<u32, KeyError>>,
    /// Its committed offsets, or why there are none.
    pub offsets: std::result::Result<GroupOffsets, KeyError>,
}

impl GroupAnswer {
    /// Whether someone consumes for the group now: its member count when
    /// described, else its state (`None`: kdp cannot tell).
    pub fn has_members(&self) -> Option<bool> {
        match &self.members {
            Some(Ok(n)) => Some(*n > 0),
            _ => self.state.as_ref().map(GroupState::has_members),
        }
    }

    /// Its coordinator does not know it: described as Dead or not found,
    /// and nothing committed.
    pub fn is_unknown(&self) -> bool {
        let not_found = matches!(
            &self.members,
            Some(Err(e)) if e.code == ErrorCode::GROUP_ID_NOT_FOUND
        ) || self.state == Some(GroupState::Dead);
        not_found && matches!(&self.offsets, Ok(o) if o.is_empty())
    }
}

/// What to read of each group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Only these groups (empty: every group the listing names).
    pub only: Vec<String>,
    /// Also describe each group at its coordinator for its members
    /// (DescribeGroups, ConsumerGroupDescribe).
    pub members: bool,
}

/// Whether ListGroups could have left groups out. Kafka lists only the
/// groups the caller may DESCRIBE, silently; kdp asks for the offsets of a
/// group id nobody uses to learn whether its ACLs cover arbitrary groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Visibility {
    /// Groups were named: nothing was left to the listing.
    #[default]
    Named,
    /// DESCRIBE on an unused group id was allowed: no ALLOW-only ACL hides
    /// groups (a DENY on particular groups still could; Kafka gives no way
    /// to tell).
    Any,
    /// DESCRIBE on an unused group id was refused: the listing leaves out
    /// every group this principal's ACLs do not name.
    Limited,
    /// The probe got another answer: whether groups are hidden is unknown.
    Unknown(KeyError),
}

impl Visibility {
    /// Whether a whole-cluster answer may be missing groups.
    pub fn may_hide(&self) -> bool {
        matches!(self, Visibility::Limited | Visibility::Unknown(_))
    }
}

/// The groups read, and the brokers whose listing failed (their groups may
/// be missing from `answers`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupsRead {
    /// One per group, by group id.
    pub answers: Vec<GroupAnswer>,
    /// Each broker whose ListGroups failed, with why.
    pub listing_failures: Vec<(i32, KeyError)>,
    /// Whether the listing could have hidden groups from this caller.
    pub visibility: Visibility,
}

/// A group id nobody uses (the `__` prefix is never a real consumer's).
fn probe_id() -> String {
    format!(
        "__kdp-acl-probe-{}-{}",
        crate::txn::join::now_ms(),
        std::process::id()
    )
}

/// The probe's answer as a [`Visibility`].
fn visibility(answer: Option<std::result::Result<GroupOffsets, KeyError>>) -> Visibility {
    match answer {
        // an unknown group: nothing committed (Kafka 4.x may say GROUP_ID_NOT_FOUND)
        Some(Ok(_)) => Visibility::Any,
        Some(Err(e)) if e.code == ErrorCode::GROUP_ID_NOT_FOUND => Visibility::Any,
        Some(Err(e)) if e.code == ErrorCode::GROUP_AUTHORIZATION_FAILED => Visibility::Limited,
        Some(Err(e)) => Visibility::Unknown(e),
        None => Visibility::Unknown(KeyError::client(
            ErrorCode::UNKNOWN_SERVER_ERROR,
            "no answer for the probe",
        )),
    }
}

/// Lists the groups on every broker and reads the committed offsets (and,
/// with `members`, the description) of `only` (every listed group when
/// `only` is empty). The offsets and the descriptions are asked at once.
pub async fn read_groups(
    client: &SharedClient,
    read: &ReadOptions,
    opts: &DriverOptions,
) -> Result<GroupsRead> {
    let deadline = opts.deadline();
    let opts = &opts.within(deadline);
    let only = &read.only;
    let listings = list_groups(client, &Default::default(), opts).await?;
    let mut listed: BTreeMap<String, (Option<GroupState>, Option<GroupType>)> = BTreeMap::new();
    // the broker that lists a group coordinates it: no FindCoordinator
    let mut coordinators: BTreeMap<String, i32> = BTreeMap::new();
    let mut listing_failures = Vec::new();
    for (broker, listing) in listings {
        match listing {
            Ok(groups) => {
                for g in groups {
                    coordinators.insert(g.group_id.clone(), g.coordinator);
                    listed.insert(g.group_id, (g.state, g.group_type));
                }
            }
            Err(e) => listing_failures.push((broker, e)),
        }
    }
    let probe = only.is_empty().then(probe_id);
    let mut wanted: Vec<String> = if only.is_empty() {
        listed.keys().cloned().collect()
    } else {
        only.to_vec()
    };
    let typed: Vec<(String, Option<GroupType>)> = if read.members {
        wanted
            .iter()
            .map(|g| (g.clone(), listed.get(g).and_then(|l| l.1.clone())))
            .collect()
    } else {
        Vec::new()
    };
    let described = describe_groups_at(client, &typed, &coordinators, opts);
    wanted.extend(probe.clone());
    let (offsets, described) = tokio::join!(
        committed_offsets_at(client, wanted, &coordinators, opts),
        described
    );
    let (mut offsets, mut described) = (offsets?, described?);
    let visibility = match &probe {
        Some(id) => visibility(offsets.remove(id)),
        None => Visibility::Named,
    };
    let answers = offsets
        .into_iter()
        .map(|(group, offsets)| {
            let (state, group_type) = listed.remove(&group).unwrap_or_default();
            let description = described.remove(&group);
            GroupAnswer {
                state: match &description {
                    Some(Ok(d)) => Some(d.state.clone()),
                    _ => state,
                },
                group_type: match &description {
                    Some(Ok(d)) => Some(d.group_type.clone()),
                    _ => group_type,
                },
                members: description.map(|d| d.map(|d| d.members)),
                group_id: group,
                offsets,
            }
        })
        .collect();
    Ok(GroupsRead {
        answers,
        listing_failures,
        visibility,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answer_says_whether_the_listing_may_hide_groups() {
        let err = |code| Some(Err(KeyError::broker(code, None)));
        assert_eq!(visibility(Some(Ok(GroupOffsets::new()))), Visibility::Any);
        assert_eq!(
            visibility(err(ErrorCode::GROUP_ID_NOT_FOUND)),
            Visibility::Any
        );
        assert_eq!(
            visibility(err(ErrorCode::GROUP_AUTHORIZATION_FAILED)),
            Visibility::Limited
        );
        let timed_out = visibility(err(ErrorCode::REQUEST_TIMED_OUT));
        assert!(
            matches!(timed_out, Visibility::Unknown(ref e) if e.code == ErrorCode::REQUEST_TIMED_OUT)
        );
        assert!(visibility(None).may_hide());
        for v in [Visibility::Named, Visibility::Any] {
            assert!(!v.may_hide());
        }
        assert!(Visibility::Limited.may_hide() && timed_out.may_hide());
    }
}
