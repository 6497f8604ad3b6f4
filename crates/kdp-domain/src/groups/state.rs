//! A group's state and type as ListGroups, DescribeGroups and
//! ConsumerGroupDescribe name them (`ClassicGroupState`,
//! `ConsumerGroupState`, `GroupType`), typed so that nothing downstream
//! compares strings.

/// A group's state. Names kdp does not know are kept, never guessed at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupState {
    /// No members (offsets may remain): nobody consumes.
    Empty,
    /// Members consume their assignment.
    Stable,
    /// Classic: a rebalance began.
    PreparingRebalance,
    /// Classic: waiting for the leader's assignment.
    CompletingRebalance,
    /// Consumer protocol: a new target assignment is being computed.
    Assigning,
    /// Consumer protocol: members are moving to the target assignment.
    Reconciling,
    /// Removed.
    Dead,
    /// A name this kdp does not know (a newer broker).
    Other(String),
}

impl GroupState {
    const KNOWN: [GroupState; 7] = [
        GroupState::Empty,
        GroupState::Stable,
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Assigning,
        GroupState::Reconciling,
        GroupState::Dead,
    ];

    /// Kafka's name, e.g. `Stable`.
    pub fn name(&self) -> &str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::Stable => "Stable",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
            GroupState::Dead => "Dead",
            GroupState::Other(s) => s,
        }
    }

    /// Reads a broker's name (brokers write them in this case; a known name
    /// in another case is still that state).
    pub fn from_name(name: &str) -> GroupState {
        Self::KNOWN
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
            .unwrap_or_else(|| GroupState::Other(name.to_string()))
    }

    /// Whether the group has members that consume: not Empty or Dead.
    pub fn has_members(&self) -> bool {
        !matches!(self, GroupState::Empty | GroupState::Dead)
    }
}

/// Which protocol a group speaks (ListGroups v5+).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupType {
    /// The classic rebalance protocol: DescribeGroups describes it.
    Classic,
    /// KIP-848's consumer protocol (Kafka 4.0+): ConsumerGroupDescribe.
    Consumer,
    /// A share group (KIP-932, Kafka 4.x): its progress is not a committed
    /// offset (DescribeShareGroupOffsets).
    Share,
    /// A Kafka Streams group (KIP-1071, Kafka 4.x): OffsetFetch reads its
    /// offsets like a consumer group's.
    Streams,
    /// A type this kdp does not know.
    Other(String),
}

impl GroupType {
    /// Kafka's name: `classic`, `consumer`, ...
    pub fn name(&self) -> &str {
        match self {
            GroupType::Classic => "classic",
            GroupType::Consumer => "consumer",
            GroupType::Share => "share",
            GroupType::Streams => "streams",
            GroupType::Other(s) => s,
        }
    }

    /// Reads a broker's name, in any case.
    pub fn from_name(name: &str) -> GroupType {
        if name.eq_ignore_ascii_case("classic") {
            GroupType::Classic
        } else if name.eq_ignore_ascii_case("consumer") {
            GroupType::Consumer
        } else if name.eq_ignore_ascii_case("share") {
            GroupType::Share
        } else if name.eq_ignore_ascii_case("streams") {
            GroupType::Streams
        } else {
            GroupType::Other(name.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_kept() {
        for s in GroupState::KNOWN {
            assert_eq!(GroupState::from_name(s.name()), s);
        }
        assert_eq!(
            GroupState::from_name("Rebalancing"),
            GroupState::Other("Rebalancing".into())
        );
        assert!(!GroupState::Empty.has_members());
        assert!(GroupState::Reconciling.has_members());
        assert_eq!(GroupType::from_name("Consumer"), GroupType::Consumer);
        assert_eq!(GroupType::from_name("share"), GroupType::Share);
        assert_eq!(GroupType::from_name("Streams").name(), "streams");
        assert_eq!(GroupType::from_name("queue").name(), "queue");
    }
}
