//! DescribeGroups (`KafkaApis.handleDescribeGroupsRequest`,
//! `GroupMetadataManager.describeGroups`): at the coordinator, each group
//! checked by `group_precheck`. A
//! classic group is described with its members; ProtocolData, member
//! metadata and assignments only when Stable, as Kafka does. A group that
//! does not exist, or is a consumer-protocol group, is GROUP_ID_NOT_FOUND
//! with state Dead from v6; before v6 Kafka answers no error and state Dead.

use kdp_wire::messages::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, DescribedGroupMember,
};
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::{
    consumer_protocol_assignment, consumer_protocol_subscription, GroupState, GroupType,
};

/// Answers DescribeGroups, one entry per group asked for.
pub fn describe_groups(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeGroupsRequest,
    version: i16,
) -> DescribeGroupsResponse {
    let groups = req
        .groups
        .iter()
        .map(|id| describe_one(cluster, caller, id, version))
        .collect();
    DescribeGroupsResponse {
        groups,
        ..Default::default()
    }
}

fn describe_one(cluster: &Cluster, caller: &Caller<'_>, id: &str, version: i16) -> DescribedGroup {
    let failed = |code: ErrorCode, message: Option<String>| DescribedGroup {
        error_code: code,
        error_message: message,
        group_id: id.to_string(),
        group_state: GroupState::Dead.name().to_string(),
        ..Default::default()
    };
    if let Some(code) = group_precheck(cluster, caller, id) {
        return DescribedGroup {
            group_state: String::new(),
            ..failed(code, None)
        };
    }
    let group = match cluster.group(id) {
        Some(g) if g.group_type == GroupType::Classic => g,
        other if version >= 6 => {
            let message = match other {
                Some(_) => format!("Group {id} is not a classic group."),
                None => format!("Group {id} not found."),
            };
            return failed(ErrorCode::GROUP_ID_NOT_FOUND, Some(message));
        }
        _ => return failed(ErrorCode::NONE, None),
    };
    let stable = group.state == GroupState::Stable;
    let members = group
        .members
        .iter()
        .map(|m| DescribedGroupMember {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            member_metadata: match (&m.protocol_bytes, stable) {
                (_, false) => Vec::new(),
                (Some(b), true) => b.metadata.clone(),
                (None, true) => consumer_protocol_subscription(&m.assignment),
            },
            member_assignment: match (&m.protocol_bytes, stable) {
                (_, false) => Vec::new(),
                (Some(b), true) => b.assignment.clone(),
                (None, true) => consumer_protocol_assignment(&m.assignment),
            },
            unknown_tagged_fields: Default::default(),
        })
        .collect();
    DescribedGroup {
        error_code: ErrorCode::NONE,
        error_message: None,
        group_id: group.group_id.clone(),
        group_state: group.state.name().to_string(),
        protocol_type: group.protocol_type.clone(),
        protocol_data: if stable {
            group.protocol.clone()
        } else {
            String::new()
        },
        members,
        ..Default::default()
    }
}

impl Handler for DescribeGroupsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<DescribeGroupsResponse, Refusal> {
        let resp = describe_groups(&call.shared.read(), &call.caller, self, call.version);
        crate::budget::Budget::new(call.limit).charge(
            &resp,
            kdp_wire::wire::Version::of::<DescribeGroupsResponse>(call.version),
        )?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    fn describe(broker: i32, ids: &[&str], v: i16) -> Vec<DescribedGroup> {
        let c = cluster(GROUP_CLUSTER);
        let req = DescribeGroupsRequest {
            groups: ids.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        describe_groups(&c, &caller(broker), &req, v).groups
    }

    #[test]
    fn a_stable_classic_group_with_members_and_assignments() {
        let g = &describe(2, &["etl"], 5)[0];
        assert_eq!(g.error_code, ErrorCode::NONE);
        assert_eq!(
            (
                g.group_state.as_str(),
                g.protocol_type.as_str(),
                g.protocol_data.as_str()
            ),
            ("Stable", "consumer", "range")
        );
        assert_eq!(g.members.len(), 2);
        assert_eq!(g.members[0].group_instance_id.as_deref(), Some("etl-a"));
        // ConsumerProtocolAssignment v0 of orders-0.
        let a = &g.members[0].member_assignment;
        assert_eq!(&a[..8], &[0, 0, 0, 0, 0, 1, 0, 6]);
        assert_eq!(&a[8..14], b"orders");
    }

    #[test]
    fn errors_in_kafka_order() {
        // Not the coordinator; hidden; an empty group.
        let gs = describe(1, &["etl", "hidden-x", "idle"], 5);
        assert_eq!(gs[0].error_code, ErrorCode::NOT_COORDINATOR);
        assert_eq!(gs[1].error_code, ErrorCode::GROUP_AUTHORIZATION_FAILED);
        assert_eq!(gs[2].error_code, ErrorCode::NONE);
        assert_eq!(gs[2].group_state, "Empty");
        assert!(gs[2].members.is_empty());
    }

    #[test]
    fn unknown_and_consumer_groups_are_not_found_from_v6_and_dead_before() {
        // "reports" is a consumer group, "ghost" none; both on broker 1.
        let ghost = &describe(1, &["ghost"], 6)[0];
        assert_eq!(ghost.error_code, ErrorCode::GROUP_ID_NOT_FOUND);
        assert_eq!(
            ghost.error_message.as_deref(),
            Some("Group ghost not found.")
        );
        let v6 = describe(1, &["reports"], 6);
        assert_eq!(v6[0].error_code, ErrorCode::GROUP_ID_NOT_FOUND);
        assert_eq!(v6[0].group_state, "Dead");
        assert!(v6[0]
            .error_message
            .as_deref()
            .unwrap()
            .contains("not a classic group"));
        let v5 = describe(1, &["reports"], 5);
        assert_eq!(
            (v5[0].error_code, v5[0].group_state.as_str()),
            (ErrorCode::NONE, "Dead")
        );
    }
}
