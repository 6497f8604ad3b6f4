//! Consumer groups as their coordinators hold them: the group's type
//! (classic or KIP-848 consumer), state, members with their assignments,
//! and the offsets committed for it. A group lives on the partition of
//! `__consumer_offsets` its id hashes to (`Utils.abs(groupId.hashCode) %
//! partitions`, as transactional ids on `__transaction_state`).

use std::collections::BTreeMap;

use bytes::BufMut;

/// Which protocol a group speaks (ListGroups v5's `GroupType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupType {
    /// The classic rebalance protocol (JoinGroup/SyncGroup): DescribeGroups.
    Classic,
    /// The consumer protocol of KIP-848 (Kafka 4.0+): ConsumerGroupDescribe.
    Consumer,
    /// A share group of KIP-932 (Kafka 4.1+): its offsets are share-partition
    /// start offsets, read with DescribeShareGroupOffsets, never OffsetFetch.
    Share,
    /// A Kafka Streams group of KIP-1071 (Kafka 4.1+): StreamsGroupDescribe,
    /// each member with its Streams process id.
    Streams,
}

impl GroupType {
    /// Kafka's name (`GroupType.toString`): `classic`, `consumer`, `share`,
    /// `streams`.
    pub fn name(self) -> &'static str {
        match self {
            GroupType::Classic => "classic",
            GroupType::Consumer => "consumer",
            GroupType::Share => "share",
            GroupType::Streams => "streams",
        }
    }

    /// Reads Kafka's name, in any case (as ListGroups' type filter does).
    pub fn from_name(name: &str) -> Option<GroupType> {
        [
            GroupType::Classic,
            GroupType::Consumer,
            GroupType::Share,
            GroupType::Streams,
        ]
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// A group's state (`ClassicGroupState`, `ConsumerGroup.ConsumerGroupState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupState {
    /// No members; offsets may remain.
    Empty,
    /// Classic: a rebalance began, members are rejoining.
    PreparingRebalance,
    /// Classic: waiting for the leader's assignment.
    CompletingRebalance,
    /// Members consume their assignment.
    Stable,
    /// Consumer: the assignor is computing a new target assignment.
    Assigning,
    /// Consumer: members are moving to the target assignment.
    Reconciling,
    /// Removed; never listed.
    Dead,
}

impl GroupState {
    const ALL: [GroupState; 7] = [
        GroupState::Empty,
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Stable,
        GroupState::Assigning,
        GroupState::Reconciling,
        GroupState::Dead,
    ];

    /// Kafka's name, e.g. `Stable`.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
            GroupState::Dead => "Dead",
        }
    }

    /// Reads Kafka's name exactly.
    pub fn from_name(name: &str) -> Option<GroupState> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether a group of type `t` can be in this state.
    pub fn is_state_of(self, t: GroupType) -> bool {
        match self {
            GroupState::PreparingRebalance | GroupState::CompletingRebalance => {
                t == GroupType::Classic
            }
            // StreamsGroupState has them too (and NotReady, not modelled)
            GroupState::Assigning | GroupState::Reconciling => {
                matches!(t, GroupType::Consumer | GroupType::Streams)
            }
            // ShareGroupState: Empty, Stable, Dead.
            GroupState::Empty | GroupState::Stable | GroupState::Dead => true,
        }
    }
}

/// One member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    /// The member id the coordinator gave.
    pub member_id: String,
    /// A static member's `group.instance.id`.
    pub group_instance_id: Option<String>,
    /// The member's client id.
    pub client_id: String,
    /// The member's host, e.g. `/10.0.0.7`.
    pub client_host: String,
    /// Its partitions, by topic.
    pub assignment: BTreeMap<String, Vec<i32>>,
    /// Its own protocol bytes (a Kafka Streams or Connect member's
    /// metadata and assignment), served by DescribeGroups instead of the
    /// consumer protocol made from `assignment`.
    pub protocol_bytes: Option<ProtocolBytes>,
    /// A streams group's member: its Streams process id (the UUID in its
    /// transactional ids), as StreamsGroupDescribe lists it.
    pub process_id: Option<String>,
}

/// A member's protocol metadata and assignment as its client sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtocolBytes {
    /// Its JoinGroup metadata.
    pub metadata: Vec<u8>,
    /// Its SyncGroup assignment.
    pub assignment: Vec<u8>,
}

/// `share.isolation.level`: the group config the mock knows (Kafka's
/// default, unset, is read_uncommitted).
pub const SHARE_ISOLATION_LEVEL: &str = "share.isolation.level";

/// One group at its coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The group id.
    pub group_id: String,
    /// Classic or consumer.
    pub group_type: GroupType,
    /// Its state.
    pub state: GroupState,
    /// The protocol type, `consumer` for Kafka consumers.
    pub protocol_type: String,
    /// Classic: the chosen protocol (the assignor, e.g. `range`); consumer:
    /// the server-side assignor (e.g. `uniform`).
    pub protocol: String,
    /// The group epoch (consumer groups).
    pub group_epoch: i32,
    /// The members.
    pub members: Vec<GroupMember>,
    /// Committed offsets by topic and partition.
    pub offsets: BTreeMap<String, BTreeMap<i32, i64>>,
    /// Group configs set on it (DYNAMIC_GROUP_CONFIG), by key.
    pub configs: BTreeMap<String, String>,
}

impl Group {
    /// The offset committed for a partition, if any.
    pub fn committed(&self, topic: &str, partition: i32) -> Option<i64> {
        self.offsets.get(topic)?.get(&partition).copied()
    }
}

/// A member's assignment as a consumer's `ConsumerProtocolAssignment` v0
/// (DescribeGroups' MemberAssignment): version, then topics with their
/// partitions, then null user data.
pub fn consumer_protocol_assignment(assignment: &BTreeMap<String, Vec<i32>>) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_i16(0);
    put_count(&mut out, assignment.len());
    for (topic, partitions) in assignment {
        put_string(&mut out, topic);
        put_count(&mut out, partitions.len());
        for &p in partitions {
            out.put_i32(p);
        }
    }
    out.put_i32(-1);
    out
}

/// The topics of a member's assignment as a `ConsumerProtocolSubscription`
/// v0 (DescribeGroups' MemberMetadata): version, topics, null user data.
pub fn consumer_protocol_subscription(assignment: &BTreeMap<String, Vec<i32>>) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_i16(0);
    put_count(&mut out, assignment.len());
    for topic in assignment.keys() {
        put_string(&mut out, topic);
    }
    out.put_i32(-1);
    out
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    out.put_i32(i32::try_from(n).unwrap_or(i32::MAX));
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    // Topic names are at most 249 bytes (validated with the file).
    out.put_i16(i16::try_from(s.len()).unwrap_or(i16::MAX));
    out.put_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_states_belong_to_types() {
        for s in GroupState::ALL {
            assert_eq!(GroupState::from_name(s.name()), Some(s));
        }
        assert_eq!(GroupState::from_name("stable"), None);
        assert_eq!(GroupType::from_name("Consumer"), Some(GroupType::Consumer));
        assert!(!GroupState::Reconciling.is_state_of(GroupType::Classic));
        assert!(!GroupState::PreparingRebalance.is_state_of(GroupType::Consumer));
        assert!(GroupState::Empty.is_state_of(GroupType::Consumer));
    }

    #[test]
    fn assignment_bytes_are_consumer_protocol_v0() {
        let a = BTreeMap::from([("ab".to_string(), vec![1, 2])]);
        assert_eq!(
            consumer_protocol_assignment(&a),
            [
                0, 0, // version
                0, 0, 0, 1, // one topic
                0, 2, b'a', b'b', // "ab"
                0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // [1, 2]
                0xff, 0xff, 0xff, 0xff // null user data
            ]
        );
        assert_eq!(
            consumer_protocol_subscription(&a),
            [0, 0, 0, 0, 0, 1, 0, 2, b'a', b'b', 0xff, 0xff, 0xff, 0xff]
        );
    }
}
