//! A group's members and state from its coordinator: DescribeGroups for
//! classic groups, ConsumerGroupDescribe for KIP-848 consumer groups (Kafka
//! 4.0+), StreamsGroupDescribe for KIP-1071 streams groups (Kafka 4.1+),
//! each batched per coordinator through the admin driver. A broker without
//! StreamsGroupDescribe leaves its streams groups failed (UNSUPPORTED_VERSION
//! from the driver), never described by guess.
//!
//! Which API asks is decided by the group's type from ListGroups (v5+,
//! Kafka 3.8). A group of unknown type is asked with DescribeGroups first;
//! on Kafka 4.x a consumer-protocol group answers that GROUP_ID_NOT_FOUND,
//! and is then asked with ConsumerGroupDescribe where a broker offers it (as
//! Kafka's Admin client falls back the other way round).

use std::collections::BTreeMap;

use std::marker::PhantomData;

use kdp_wire::messages::{
    ConsumerDescribedGroup, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, StreamsDescribedGroup,
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use kdp_wire::view::Received;
use kdp_wire::ErrorCode;

use crate::admin::{AdminHandler, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::error::Result;
use crate::groups::coordinator::at_coordinators;
use kdp_domain::groups::state::{GroupState, GroupType};
use kdp_domain::key_error::KeyError;
use kdp_domain::owners::scheme::ProcessId;
use kdp_domain::owners::{GroupMembers, GroupProtocol, Member};

/// What a group's coordinator says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// Its state.
    pub state: GroupState,
    /// The protocol that described it (and so its type).
    pub group_type: GroupType,
    /// Members now in the group (0: nobody consumes).
    pub members: u32,
}

/// Each group's description, or why there is none.
pub type Descriptions = BTreeMap<String, std::result::Result<Description, KeyError>>;

/// Each group with its members, or why there is none.
pub type MemberDescriptions = BTreeMap<String, std::result::Result<GroupMembers, KeyError>>;

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What a description keeps of a group: its state and member count
/// ([`Description`]), or its members with their protocol bytes
/// ([`GroupMembers`], for `kdp owners`).
pub trait Kept: Sized {
    /// From DescribeGroups' answer.
    fn classic(g: DescribedGroup) -> Self;
    /// From ConsumerGroupDescribe's answer.
    fn consumer(g: ConsumerDescribedGroup) -> Self;
    /// From StreamsGroupDescribe's answer.
    fn streams(g: StreamsDescribedGroup) -> Self;
}

impl Kept for Description {
    fn classic(g: DescribedGroup) -> Self {
        Description {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Classic,
            members: count(g.members.len()),
        }
    }

    fn consumer(g: ConsumerDescribedGroup) -> Self {
        Description {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Consumer,
            members: count(g.members.len()),
        }
    }

    fn streams(g: StreamsDescribedGroup) -> Self {
        Description {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Streams,
            members: count(g.members.len()),
        }
    }
}

impl From<&GroupMembers> for Description {
    /// What a description with members says as counts alone.
    fn from(g: &GroupMembers) -> Self {
        Description {
            state: g.state.clone(),
            group_type: g.group_type.clone(),
            members: count(g.members.len()),
        }
    }
}

impl Kept for GroupMembers {
    fn classic(g: DescribedGroup) -> Self {
        GroupMembers {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Classic,
            protocol: GroupProtocol::from_names(&g.protocol_type, &g.protocol_data),
            members: g
                .members
                .into_iter()
                .map(|m| Member {
                    member_id: m.member_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    metadata: m.member_metadata,
                    assignment: m.member_assignment,
                    process_id: None,
                })
                .collect(),
        }
    }

    fn consumer(g: ConsumerDescribedGroup) -> Self {
        GroupMembers {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Consumer,
            protocol: GroupProtocol::None,
            members: g
                .members
                .into_iter()
                .map(|m| Member {
                    member_id: m.member_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    ..Member::default()
                })
                .collect(),
        }
    }

    // Each member is one Streams client (one per StreamThread); its
    // ProcessId is the instance's UUID, as in the transactional ids. A
    // process id that is no UUID stays unread: the domain names the member
    // unreadable rather than match it.
    fn streams(g: StreamsDescribedGroup) -> Self {
        GroupMembers {
            state: GroupState::from_name(&g.group_state),
            group_type: GroupType::Streams,
            protocol: GroupProtocol::None,
            members: g
                .members
                .into_iter()
                .map(|m| Member {
                    process_id: ProcessId::parse(&m.process_id),
                    member_id: m.member_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    ..Member::default()
                })
                .collect(),
        }
    }
}

/// A described group's error: a group Kafka calls Dead (DescribeGroups
/// below v6 answers an unknown group with no error and state `Dead`) is
/// GROUP_ID_NOT_FOUND, as v6 says.
fn outcome<V>(
    code: ErrorCode,
    message: Option<String>,
    state: &str,
    described: impl FnOnce() -> V,
) -> KeyOutcome<V> {
    if code == ErrorCode::NONE && GroupState::from_name(state) == GroupState::Dead {
        return KeyOutcome::Failed(KeyError::broker(ErrorCode::GROUP_ID_NOT_FOUND, None));
    }
    KeyOutcome::from_code(code, message, described)
}

/// One of the three describe APIs, by what differs between them: its
/// request and response, and the described group it answers with.
trait DescribeApi {
    /// The request.
    type Request: kdp_wire::Request<Response = Self::Response> + Send + Sync + 'static;
    /// The response.
    type Response: Received<Message = Self::Response> + Send + 'static;
    /// One described group in it.
    type Group;
    /// The request for these group ids.
    fn request(group_ids: Vec<String>) -> Self::Request;
    /// The groups the response describes.
    fn groups(resp: Self::Response) -> Vec<Self::Group>;
    /// A group's id, error code, message and state, taken out of it.
    fn head(g: &mut Self::Group) -> (String, ErrorCode, Option<String>, String);
    /// What `V` keeps of it.
    fn keep<V: Kept>(g: Self::Group) -> V;
}

/// A [`DescribeApi`] named `$api`: its request (whose list of ids is the
/// field `$ids`), response and described group, and the [`Kept`]
/// constructor of that group. The three APIs differ in nothing else.
macro_rules! describe_api {
    ($(#[$doc:meta])* $api:ident, $req:ident { $ids:ident }, $resp:ident, $group:ident, $keep:ident) => {
        $(#[$doc])*
        struct $api;

        impl DescribeApi for $api {
            type Request = $req;
            type Response = $resp;
            type Group = $group;

            fn request(group_ids: Vec<String>) -> $req {
                $req {
                    $ids: group_ids,
                    ..Default::default()
                }
            }

            fn groups(resp: $resp) -> Vec<$group> {
                resp.groups
            }

            fn head(g: &mut $group) -> (String, ErrorCode, Option<String>, String) {
                let id = std::mem::take(&mut g.group_id);
                (id, g.error_code, g.error_message.take(), g.group_state.clone())
            }

            fn keep<V: Kept>(g: $group) -> V {
                V::$keep(g)
            }
        }
    };
}

describe_api!(
    /// DescribeGroups: classic groups.
    Classic, DescribeGroupsRequest { groups }, DescribeGroupsResponse, DescribedGroup, classic
);
describe_api!(
    /// ConsumerGroupDescribe: KIP-848 consumer groups.
    Consumer, ConsumerGroupDescribeRequest { group_ids }, ConsumerGroupDescribeResponse,
    ConsumerDescribedGroup, consumer
);
describe_api!(
    /// StreamsGroupDescribe: KIP-1071 streams groups.
    Streams, StreamsGroupDescribeRequest { group_ids }, StreamsGroupDescribeResponse,
    StreamsDescribedGroup, streams
);

/// The admin handler of describe API `A`, keeping `V` of each group.
struct Describe<A, V>(PhantomData<fn() -> (A, V)>);

impl<A, V> Describe<A, V> {
    fn new() -> Self {
        Describe(PhantomData)
    }
}

impl<A: DescribeApi, V: Kept> AdminHandler for Describe<A, V> {
    type Key = String;
    type Value = V;
    type Request = A::Request;
    type Response = A::Response;

    fn build_request(&self, _broker: i32, keys: &[String]) -> A::Request {
        A::request(keys.to_vec())
    }

    fn handle_response(
        &self,
        _broker: i32,
        _keys: &[String],
        resp: A::Response,
    ) -> Vec<(String, KeyOutcome<V>)> {
        A::groups(resp)
            .into_iter()
            .map(|mut g| {
                let (id, code, message, state) = A::head(&mut g);
                (id, outcome(code, message, &state, || A::keep(g)))
            })
            .collect()
    }
}

async fn run<H, V>(
    client: &SharedClient,
    handler: &H,
    keys: Vec<String>,
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<String, std::result::Result<V, KeyError>>
where
    H: AdminHandler<Key = String, Value = V>,
{
    if keys.is_empty() {
        return BTreeMap::new();
    }
    at_coordinators(client, handler, keys, known, opts, bound).await
}

/// Describes `groups` (each with its type when ListGroups said) at their
/// coordinators: classic and unknown types with DescribeGroups, consumer
/// groups with ConsumerGroupDescribe, streams groups with
/// StreamsGroupDescribe; a group of unknown type that DescribeGroups does
/// not know is asked with ConsumerGroupDescribe too. Share groups and
/// other types are not described (no entry).
pub async fn describe_groups(
    client: &SharedClient,
    groups: &[(String, Option<GroupType>)],
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Descriptions> {
    describe_groups_at(client, groups, &BTreeMap::new(), opts, bound).await
}

/// [`describe_groups`] with the coordinators of some groups already known
/// (`known`: group id to broker), which are then not looked up.
pub async fn describe_groups_at(
    client: &SharedClient,
    groups: &[(String, Option<GroupType>)],
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Descriptions> {
    describe_at(client, groups, known, opts, bound).await
}

/// [`describe_groups_at`], keeping each group's members: their ids,
/// client ids and hosts, and (classic groups) their protocol metadata and
/// assignment, with the group's protocol type and protocol.
pub async fn describe_members_at(
    client: &SharedClient,
    groups: &[(String, Option<GroupType>)],
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<MemberDescriptions> {
    describe_at(client, groups, known, opts, bound).await
}

async fn describe_at<V: Kept>(
    client: &SharedClient,
    groups: &[(String, Option<GroupType>)],
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<V, KeyError>>> {
    let mut classic = Vec::new();
    let mut consumer = Vec::new();
    let mut streams = Vec::new();
    for (id, t) in groups {
        match t {
            None | Some(GroupType::Classic) => classic.push(id.clone()),
            Some(GroupType::Consumer) => consumer.push(id.clone()),
            Some(GroupType::Streams) => streams.push(id.clone()),
            Some(GroupType::Share | GroupType::Other(_)) => {}
        }
    }
    let untyped: Vec<&String> = groups
        .iter()
        .filter(|(_, t)| t.is_none())
        .map(|(id, _)| id)
        .collect();
    let classic_h = Describe::<Classic, V>::new();
    let consumer_h = Describe::<Consumer, V>::new();
    let streams_h = Describe::<Streams, V>::new();
    let (mut out, consumers, streams) = tokio::join!(
        run(client, &classic_h, classic, known, opts, bound),
        run(client, &consumer_h, consumer, known, opts, bound),
        run(client, &streams_h, streams, known, opts, bound)
    );
    out.extend(consumers);
    out.extend(streams);
    // an untyped group DescribeGroups does not know may be a consumer group
    let retry: Vec<String> = untyped
        .into_iter()
        .filter(
            |id| matches!(out.get(*id), Some(Err(e)) if e.code == ErrorCode::GROUP_ID_NOT_FOUND),
        )
        .cloned()
        .collect();
    if !retry.is_empty() && offers_consumer_groups(client, bound).await {
        for (id, r) in run(client, &consumer_h, retry, &BTreeMap::new(), opts, bound).await {
            // a classic group's coordinator would not call it unknown twice
            if r.is_ok() {
                out.insert(id, r);
            }
        }
    }
    Ok(out)
}

/// Whether some broker offers ConsumerGroupDescribe (cached ApiVersions).
async fn offers_consumer_groups(client: &SharedClient, bound: &TimeBound) -> bool {
    for b in client.brokers().keys() {
        if let Ok(conn) = bound.run("ApiVersions", client.broker(*b)).await {
            if conn.version_for::<ConsumerGroupDescribeRequest>().is_ok() {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use kdp_wire::messages::{ConsumerGroupMember, DescribedGroupMember};

    use super::*;

    #[test]
    fn members_are_counted_and_a_dead_group_is_not_found() {
        let resp = DescribeGroupsResponse {
            groups: vec![
                DescribedGroup {
                    group_id: "live".into(),
                    group_state: "Stable".into(),
                    members: vec![DescribedGroupMember::default(); 3],
                    ..Default::default()
                },
                DescribedGroup {
                    group_id: "empty".into(),
                    group_state: "Empty".into(),
                    ..Default::default()
                },
                // below v6, an unknown group: no error, Dead
                DescribedGroup {
                    group_id: "gone".into(),
                    group_state: "Dead".into(),
                    ..Default::default()
                },
                DescribedGroup {
                    group_id: "loading".into(),
                    error_code: ErrorCode::COORDINATOR_LOAD_IN_PROGRESS,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let out = Describe::<Classic, Description>::new().handle_response(1, &[], resp);
        let done = |i: usize| match &out[i].1 {
            KeyOutcome::Done(d) => (d.state.clone(), d.members),
            other => panic!("{other:?}"),
        };
        assert_eq!(done(0), (GroupState::Stable, 3));
        assert_eq!(done(1), (GroupState::Empty, 0));
        assert!(
            matches!(&out[2].1, KeyOutcome::Failed(e) if e.code == ErrorCode::GROUP_ID_NOT_FOUND),
            "{:?}",
            out[2]
        );
        // a coordinator still loading the group is asked again
        assert!(matches!(out[3].1, KeyOutcome::Retry { .. }), "{:?}", out[3]);
    }

    #[test]
    fn a_consumer_group_is_counted_by_its_members() {
        let resp = ConsumerGroupDescribeResponse {
            groups: vec![ConsumerDescribedGroup {
                group_id: "kip848".into(),
                group_state: "Reconciling".into(),
                members: vec![ConsumerGroupMember::default(); 2],
                ..Default::default()
            }],
            ..Default::default()
        };
        let out = Describe::<Consumer, Description>::new().handle_response(1, &[], resp);
        assert_eq!(
            out[0].1,
            KeyOutcome::Done(Description {
                state: GroupState::Reconciling,
                group_type: GroupType::Consumer,
                members: 2
            })
        );
    }

    #[test]
    fn members_keep_their_protocol_bytes_and_the_groups_protocol() {
        let resp = DescribeGroupsResponse {
            groups: vec![DescribedGroup {
                group_id: "app".into(),
                group_state: "Stable".into(),
                protocol_type: "consumer".into(),
                protocol_data: "stream".into(),
                members: vec![DescribedGroupMember {
                    member_id: "m-1".into(),
                    client_id: "app-StreamThread-1-consumer".into(),
                    member_metadata: vec![0, 3, 9],
                    member_assignment: vec![7],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let out = Describe::<Classic, GroupMembers>::new().handle_response(1, &[], resp);
        let KeyOutcome::Done(g) = &out[0].1 else {
            panic!("{out:?}")
        };
        assert_eq!(g.protocol, GroupProtocol::KafkaStreams);
        assert_eq!(
            (
                g.members[0].metadata.as_slice(),
                g.members[0].assignment.as_slice()
            ),
            (&[0u8, 3, 9][..], &[7u8][..])
        );
        assert_eq!(g.members[0].client_id, "app-StreamThread-1-consumer");
    }
}
