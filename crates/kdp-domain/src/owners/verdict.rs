//! What `kdp owners` concludes of a transactional id, and the evidence.

use std::fmt;

use kdp_wire::DecodeError;

use crate::groups::state::GroupState;
use crate::key_error::KeyError;
use crate::owners::collide::Collision;
use crate::severity::Severity;

/// Whether the writer of an id is still there (docs/OWNERS.md, Verdicts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Its instance is a member of its group (Streams, Connect), or it is
    /// one of its Flink subtask's newest transactions.
    Live,
    /// Its group was read and no member owns it: its instance is gone.
    Orphaned,
    /// Flink: a later-started transaction of the same prefix and subtask
    /// committed, and this one is still open.
    Lingering,
    /// A scheme matched but the evidence could not be read (a group that
    /// could not be read, hidden by ACLs, not found, rebalancing): never
    /// guessed.
    Unknown,
    /// No scheme matched, or only a shape without the evidence that would
    /// confirm it: never a framework picked by shape.
    Unattributed,
}

impl Verdict {
    /// The verdict's name in output.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Live => "live",
            Verdict::Orphaned => "orphaned",
            Verdict::Lingering => "lingering",
            Verdict::Unknown => "unknown",
            Verdict::Unattributed => "unattributed",
        }
    }

    /// How much it asks of an operator when the id holds a transaction
    /// open (see [`super::Owner::severity`] for a closed one).
    pub fn severity(self) -> Severity {
        match self {
            Verdict::Live => Severity::Ok,
            Verdict::Orphaned | Verdict::Lingering => Severity::Problem,
            Verdict::Unknown => Severity::Unknown,
            Verdict::Unattributed => Severity::Warning,
        }
    }

    /// Every verdict, for tests and documentation.
    pub const ALL: [Verdict; 5] = [
        Verdict::Live,
        Verdict::Orphaned,
        Verdict::Lingering,
        Verdict::Unknown,
        Verdict::Unattributed,
    ];
}

/// Why kdp drew a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The member of the group that owns the id.
    Member {
        /// The group.
        group_id: String,
        /// The member's id.
        member_id: String,
        /// The member's client id.
        client_id: String,
        /// The member's host.
        client_host: String,
    },
    /// The group was read, settled, and no member owns the id.
    NoMember {
        /// The group.
        group_id: String,
        /// Its state.
        state: GroupState,
        /// Members it has.
        members: usize,
    },
    /// The group is between assignments: a missing member may come back.
    Rebalancing {
        /// The group.
        group_id: String,
        /// Its state.
        state: GroupState,
    },
    /// The group could not be read (an ACL refusal included).
    GroupUnreadable {
        /// The group.
        group_id: String,
        /// Why.
        error: KeyError,
    },
    /// No such group was listed.
    GroupNotFound {
        /// The group.
        group_id: String,
        /// Whether the listing may have hidden it (ACLs, a broker that did
        /// not answer).
        may_be_hidden: bool,
    },
    /// A member's protocol bytes could not be read: it may be the owner.
    MemberUnreadable {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// What was wrong with its bytes.
        error: DecodeError,
    },
    /// Streams-shaped, but the group by that name is not a Streams
    /// application's.
    NotStreamsGroup {
        /// The group.
        group_id: String,
        /// Its protocol type (`-` when none).
        protocol_type: String,
    },
    /// A later-started sibling of the same Flink prefix and subtask
    /// committed.
    CommittedAfter {
        /// That sibling.
        sibling: String,
    },
    /// One of the newest transactions of its Flink prefix and subtask.
    Newest {
        /// Ids of the (prefix, subtask) seen.
        siblings: usize,
    },
    /// Flink: newer ids of its subtask exist and none committed after it.
    Superseded {
        /// The most recently started sibling.
        newest: String,
    },
    /// Flink-shaped ids, but groups may be hidden from this principal, so a
    /// Connect group could own them.
    GroupsMayBeHidden,
    /// No known scheme; a prefix with a counter is reported as such.
    NoScheme {
        /// The prefix and counter, when the id ends in digits.
        counter_tail: Option<(String, u64)>,
    },
    /// Flink-shaped, but the only id of its prefix and subtask.
    Alone,
    /// Two Flink jobs write its prefix and subtask: which transactions
    /// are whose cannot be told.
    TwoJobs {
        /// The two jobs' sequences of ids.
        collision: Box<Collision>,
    },
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evidence::Member {
                group_id,
                client_id,
                client_host,
                ..
            } => write!(f, "member {client_id} ({client_host}) of group {group_id}"),
            Evidence::NoMember {
                group_id,
                state,
                members,
            } => write!(
                f,
                "no member of group {group_id} owns it ({}, {members} members)",
                state.name()
            ),
            Evidence::Rebalancing { group_id, state } => write!(
                f,
                "group {group_id} is {}: a missing member may still rejoin",
                state.name()
            ),
            Evidence::GroupUnreadable { group_id, error } => {
                write!(f, "group {group_id} could not be read: {}", error.name())?;
                if let Some(m) = &error.message {
                    write!(f, " ({m})")?;
                }
                Ok(())
            }
            Evidence::GroupNotFound {
                group_id,
                may_be_hidden,
            } => {
                write!(f, "no group {group_id} listed")?;
                if *may_be_hidden {
                    f.write_str(" (the listing may hide groups from this principal)")?;
                }
                Ok(())
            }
            Evidence::MemberUnreadable {
                group_id,
                member_id,
                error,
            } => write!(
                f,
                "member {member_id} of group {group_id} is unreadable: {error}"
            ),
            Evidence::NotStreamsGroup {
                group_id,
                protocol_type,
            } => write!(
                f,
                "Streams-shaped, but group {group_id} is not a Streams application's (protocol type {protocol_type})"
            ),
            Evidence::CommittedAfter { sibling } => {
                write!(f, "{sibling}, started later, committed")
            }
            Evidence::Newest { siblings } => write!(
                f,
                "among the newest of its subtask's {siblings} ids; Flink has no group: liveness from siblings only"
            ),
            Evidence::Superseded { newest } => write!(
                f,
                "superseded by {newest}, none committed after it; Flink has no group to say whether its job runs"
            ),
            Evidence::GroupsMayBeHidden => f.write_str(
                "Flink-shaped, but groups may be hidden from this principal: a Connect group could own it",
            ),
            Evidence::NoScheme { counter_tail } => match counter_tail {
                Some((prefix, n)) => write!(f, "no known scheme; prefix {prefix} with counter {n}"),
                None => f.write_str("no known scheme"),
            },
            Evidence::Alone => {
                f.write_str("Flink-shaped, but the only id of its prefix and subtask")
            }
            Evidence::TwoJobs { collision } => write!(
                f,
                "{collision}: which transactions are whose cannot be told; give each job its own prefix"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_has_its_own_label_and_only_unknown_is_undecided() {
        let labels: std::collections::BTreeSet<_> =
            Verdict::ALL.iter().map(|v| v.label()).collect();
        assert_eq!(labels.len(), Verdict::ALL.len());
        for v in Verdict::ALL {
            assert_eq!(v.severity() == Severity::Unknown, v == Verdict::Unknown);
        }
        assert_eq!(Verdict::Orphaned.severity(), Severity::Problem);
        assert_eq!(Verdict::Lingering.severity(), Severity::Problem);
    }
}
