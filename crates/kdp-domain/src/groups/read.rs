//! What one read of a cluster's consumer groups found: each group with its
//! state, type, members and committed offsets, the brokers whose listing
//! failed, and whether the listing could have hidden groups from the
//! caller. `kdp blocked`, the blocked-groups column, the exporter and a
//! repair's proof all judge groups from it.

use std::collections::BTreeMap;

use kdp_wire::ErrorCode;

use crate::groups::offsets::GroupOffsets;
use crate::groups::share::ShareRead;
use crate::groups::state::{GroupState, GroupType};
use crate::key_error::KeyError;

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
    /// asked (the read did not ask for members, or a type kdp does not
    /// describe).
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
    /// Each share group's start offsets and isolation, by group id, when
    /// the read asked for them (`kdp lag`); empty otherwise.
    pub shares: BTreeMap<String, ShareRead>,
}

/// The probe's answer as a [`Visibility`].
pub fn visibility(answer: Option<std::result::Result<GroupOffsets, KeyError>>) -> Visibility {
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
