//! What `kdp owners` judges: the transactional ids with their
//! coordinators' descriptions, and the groups with their members, as one
//! read of the cluster gathered them.

use std::collections::BTreeMap;

use kdp_wire::messages::TransactionState;

use crate::diagnose::blocked::HeldGroups;
use crate::groups::read::Visibility;
use crate::groups::state::{GroupState, GroupType};
use crate::key_error::KeyError;
use crate::owners::scheme::ProcessId;

/// One transactional id and its coordinator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnEntry {
    /// The transactional id.
    pub transactional_id: String,
    /// The coordinator that answered, when known.
    pub coordinator: Option<i32>,
    /// DescribeTransactions' answer, or why there is none.
    pub described: Result<TransactionState, KeyError>,
}

/// What a classic group's protocol type and protocol (DescribeGroups'
/// `ProtocolType`, `ProtocolData`; ListGroups' `ProtocolType`) say, read
/// once from Kafka's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupProtocol {
    /// Protocol type `consumer`, protocol `stream`: a Kafka Streams
    /// application (its rebalance names Streams' assignor).
    KafkaStreams,
    /// Protocol type `consumer` with another (or, in an Empty group, no)
    /// protocol.
    Consumer {
        /// Whether a protocol was named (an Empty group names none).
        named: bool,
    },
    /// Protocol type `connect`: a Kafka Connect cluster's workers.
    Connect,
    /// No protocol type (a KIP-848 group, or one never joined).
    None,
    /// Another protocol type.
    Other(String),
}

impl GroupProtocol {
    /// Reads Kafka's protocol type and protocol (the latter empty when
    /// unknown, e.g. from a listing).
    pub fn from_names(protocol_type: &str, protocol: &str) -> GroupProtocol {
        match protocol_type {
            "consumer" if protocol == "stream" => GroupProtocol::KafkaStreams,
            "consumer" => GroupProtocol::Consumer {
                named: !protocol.is_empty(),
            },
            "connect" => GroupProtocol::Connect,
            "" => GroupProtocol::None,
            other => GroupProtocol::Other(other.to_string()),
        }
    }

    /// The protocol type's name as Kafka writes it (`-` for none).
    pub fn type_name(&self) -> &str {
        match self {
            GroupProtocol::KafkaStreams | GroupProtocol::Consumer { .. } => "consumer",
            GroupProtocol::Connect => "connect",
            GroupProtocol::None => "-",
            GroupProtocol::Other(s) => s,
        }
    }
}

/// One member of a group, as its coordinator described it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Member {
    /// The member id.
    pub member_id: String,
    /// Its client id.
    pub client_id: String,
    /// Its host.
    pub client_host: String,
    /// Classic groups: its protocol metadata.
    pub metadata: Vec<u8>,
    /// Classic groups: its assignment.
    pub assignment: Vec<u8>,
    /// Streams groups (KIP-1071): the process id the coordinator lists.
    pub process_id: Option<ProcessId>,
}

/// A group as its coordinator described it, members included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMembers {
    /// Its state.
    pub state: GroupState,
    /// Its type (the API that described it).
    pub group_type: GroupType,
    /// Classic groups: what its protocol type and protocol say.
    pub protocol: GroupProtocol,
    /// Its members.
    pub members: Vec<Member>,
}

/// One listed (or asked-for) group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSeen {
    /// What the listing's protocol type says, when it gave one.
    pub listed: Option<GroupProtocol>,
    /// Its description, or why there is none.
    pub described: Result<GroupMembers, KeyError>,
}

impl GroupSeen {
    /// Whether the group is a Kafka Connect cluster's.
    pub fn is_connect(&self) -> bool {
        let described = matches!(&self.described, Ok(g) if g.protocol == GroupProtocol::Connect);
        described || self.listed == Some(GroupProtocol::Connect)
    }
}

/// Everything one `kdp owners` run read.
#[derive(Debug, Clone, Default)]
pub struct OwnersInput {
    /// When the read started (ms since the epoch).
    pub now_ms: i64,
    /// Each transactional id kdp judges (and the siblings it needs).
    pub transactions: Vec<TxnEntry>,
    /// Whether every broker answered ListTransactions.
    pub listing_complete: bool,
    /// The groups, by id.
    pub groups: BTreeMap<String, GroupSeen>,
    /// Brokers whose ListGroups failed.
    pub group_listing_failures: Vec<(i32, KeyError)>,
    /// Whether the group listing may hide groups from this principal.
    pub visibility: Visibility,
    /// The consumer groups each open transaction holds at its partitions'
    /// LSO, as `kdp blocked` judges them ([`held_groups`]); `None` when
    /// they were not read.
    ///
    /// [`held_groups`]: crate::diagnose::blocked::held_groups
    pub held: Option<HeldGroups>,
}

impl OwnersInput {
    /// Whether a group missing from the listing may still exist.
    pub fn groups_may_hide(&self) -> bool {
        self.visibility.may_hide() || !self.group_listing_failures.is_empty()
    }
}
