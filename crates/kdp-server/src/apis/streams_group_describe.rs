//! StreamsGroupDescribe (`KafkaApis.handleStreamsGroupDescribe`, KIP-1071):
//! at the coordinator, each group checked by `group_precheck`. A streams
//! group is described with its state, epochs and members (client id, host,
//! Streams process id); a group of another type is GROUP_ID_NOT_FOUND, as a
//! real coordinator answers. Topology and task assignments are not
//! modelled: an initialized topology without subtopologies, empty
//! assignments.

use kdp_wire::messages::{
    StreamsDescribedGroup, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
    StreamsGroupMember, StreamsTopology,
};
use kdp_wire::nullable_struct::NullableStruct;
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::{Group, GroupType};

fn described(g: &Group) -> StreamsDescribedGroup {
    StreamsDescribedGroup {
        error_code: ErrorCode::NONE,
        error_message: None,
        group_id: g.group_id.clone(),
        group_state: g.state.name().to_string(),
        group_epoch: g.group_epoch,
        assignment_epoch: g.group_epoch,
        topology: NullableStruct(Some(StreamsTopology {
            epoch: 0,
            ..Default::default()
        })),
        members: g
            .members
            .iter()
            .map(|m| StreamsGroupMember {
                member_id: m.member_id.clone(),
                member_epoch: g.group_epoch,
                instance_id: m.group_instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                process_id: m.process_id.clone().unwrap_or_default(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Answers StreamsGroupDescribe, one entry per group asked for.
pub fn streams_group_describe(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &StreamsGroupDescribeRequest,
) -> StreamsGroupDescribeResponse {
    let groups = req
        .group_ids
        .iter()
        .map(|id| {
            let (code, message) = match group_precheck(cluster, caller, id) {
                Some(code) => (code, None),
                None => match cluster.group(id) {
                    Some(g) if g.group_type == GroupType::Streams => return described(g),
                    Some(_) => (
                        ErrorCode::GROUP_ID_NOT_FOUND,
                        Some(format!("Group {id} is not a streams group.")),
                    ),
                    None => (
                        ErrorCode::GROUP_ID_NOT_FOUND,
                        Some(format!("Group {id} not found.")),
                    ),
                },
            };
            StreamsDescribedGroup {
                error_code: code,
                error_message: message,
                group_id: id.clone(),
                ..Default::default()
            }
        })
        .collect();
    StreamsGroupDescribeResponse {
        groups,
        ..Default::default()
    }
}

impl Handler for StreamsGroupDescribeRequest {
    fn handle(&self, call: &Call<'_>) -> Result<StreamsGroupDescribeResponse, Refusal> {
        let resp = streams_group_describe(&call.shared.read(), &call.caller, self);
        crate::budget::Budget::new(call.limit).charge(
            &resp,
            kdp_wire::wire::Version::of::<StreamsGroupDescribeResponse>(call.version),
        )?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    fn codes(c: &Cluster, broker: i32, ids: &[&str]) -> Vec<ErrorCode> {
        let req = StreamsGroupDescribeRequest {
            group_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        streams_group_describe(c, &caller(broker), &req)
            .groups
            .iter()
            .map(|g| g.error_code)
            .collect()
    }

    #[test]
    fn groups_of_other_types_are_not_found_and_checks_come_first() {
        let c = cluster(GROUP_CLUSTER);
        assert_eq!(
            codes(&c, 1, &["reports", "hidden-x", "etl"]),
            [
                ErrorCode::GROUP_ID_NOT_FOUND,
                ErrorCode::GROUP_AUTHORIZATION_FAILED,
                ErrorCode::NOT_COORDINATOR,
            ]
        );
        // an unknown group, at its coordinator
        let at = c.group_coordinator("nope").unwrap();
        assert_eq!(codes(&c, at, &["nope"]), [ErrorCode::GROUP_ID_NOT_FOUND]);
    }

    #[test]
    fn a_streams_group_lists_each_members_process_id() {
        let c = crate::demo::owners_cluster().unwrap();
        let at = c.group_coordinator("payments-app").unwrap();
        let req = StreamsGroupDescribeRequest {
            group_ids: vec!["payments-app".into(), "orders-app".into()],
            ..Default::default()
        };
        let resp = streams_group_describe(&c, &caller(at), &req);
        let g = &resp.groups[0];
        assert_eq!(
            (g.error_code, g.group_state.as_str()),
            (ErrorCode::NONE, "Stable")
        );
        let processes: Vec<&str> = g.members.iter().map(|m| m.process_id.as_str()).collect();
        assert_eq!(processes, ["3f9a2c4e-8b71-4d05-9e6a-5c2b1d7f0a93"]);
        assert_eq!(g.members[0].member_epoch, g.group_epoch);
        // a classic group by name, asked at its own coordinator
        let at = c.group_coordinator("orders-app").unwrap();
        let req = StreamsGroupDescribeRequest {
            group_ids: vec!["orders-app".into()],
            ..Default::default()
        };
        let resp = streams_group_describe(&c, &caller(at), &req);
        assert_eq!(resp.groups[0].error_code, ErrorCode::GROUP_ID_NOT_FOUND);
    }

    #[test]
    fn a_streams_member_has_a_process_id_and_only_it() {
        let file = |member: &str| {
            format!(
                r#"{{"brokers": [{{"id": 1}}], "groups": [{{"group_id": "g", "type": "streams",
                "members": [{member}]}}]}}"#
            )
        };
        let e = Cluster::from_json(&file(r#"{"member_id": "m"}"#)).unwrap_err();
        assert!(e.to_string().contains("process_id"), "{e}");
        assert!(Cluster::from_json(&file(r#"{"member_id": "m", "process_id": "p"}"#)).is_ok());
        let classic = r#"{"brokers": [{"id": 1}], "groups": [{"group_id": "g",
            "members": [{"member_id": "m", "process_id": "p"}]}]}"#;
        assert!(Cluster::from_json(classic).is_err());
    }
}
