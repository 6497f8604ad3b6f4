//! The groups of a cluster as the blocked-consumer join needs them: every
//! group ListGroups names (or the ones asked for), each with its state and
//! its committed offsets. `kdp blocked` and a repair's proof both read them
//! this way.

use std::collections::BTreeMap;

use crate::admin::{DriverOptions, KeyError};
use crate::error::Result;
use crate::groups::{committed_offsets, list_groups, GroupOffsets, GroupState};
use crate::txn::SharedClient;
use kdp_wire::ErrorCode;

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
    let probe = only.is_empty().then(probe_id);
    let mut wanted: Vec<String> = if only.is_empty() {
        states.keys().cloned().collect()
    } else {
        only.to_vec()
    };
    wanted.extend(probe.clone());
    let mut read = committed_offsets(client, wanted, opts).await?;
    let visibility = match &probe {
        Some(id) => visibility(read.remove(id)),
        None => Visibility::Named,
    };
    let answers = read
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
