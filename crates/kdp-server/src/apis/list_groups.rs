//! ListGroups (`KafkaApis.handleListGroupsRequest`,
//! `GroupMetadataManager.listGroups`): a broker lists only the groups its
//! `__consumer_offsets` partitions hold. The state filter (v4+) and the
//! type filter (v5+) match names in any case; an empty filter keeps all.
//! Dead groups are never listed; groups the caller may not DESCRIBE are
//! silently left out.

use kdp_wire::messages::{ListGroupsRequest, ListGroupsResponse, ListedGroup};

use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::GroupState;

/// Answers ListGroups with the groups this broker coordinates that pass the filters.
pub fn list_groups(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &ListGroupsRequest,
    version: i16,
) -> ListGroupsResponse {
    let states: &[String] = if version >= 4 {
        &req.states_filter
    } else {
        &[]
    };
    let types: &[String] = if version >= 5 { &req.types_filter } else { &[] };
    let groups = cluster
        .groups
        .iter()
        .filter(|g| {
            g.state != GroupState::Dead
                && cluster.group_coordinator(&g.group_id) == Some(caller.broker_id)
                && (states.is_empty()
                    || states
                        .iter()
                        .any(|s| s.trim().eq_ignore_ascii_case(g.state.name())))
                && (types.is_empty()
                    || types
                        .iter()
                        .any(|t| t.trim().eq_ignore_ascii_case(g.group_type.name())))
                && caller.may_describe_group(cluster, &g.group_id)
        })
        .map(|g| ListedGroup {
            group_id: g.group_id.clone(),
            protocol_type: g.protocol_type.clone(),
            group_state: g.state.name().to_string(),
            group_type: g.group_type.name().to_string(),
            unknown_tagged_fields: Default::default(),
        })
        .collect();
    ListGroupsResponse {
        groups,
        ..Default::default()
    }
}

impl Handler for ListGroupsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ListGroupsResponse, Refusal> {
        Ok(list_groups(
            &call.shared.read(),
            &call.caller,
            self,
            call.version,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::ErrorCode;

    fn listed(c: &Cluster, broker: i32, req: &ListGroupsRequest, v: i16) -> Vec<String> {
        let r = list_groups(c, &caller(broker), req, v);
        assert_eq!(r.error_code, ErrorCode::NONE);
        r.groups
            .into_iter()
            .map(|g| format!("{}:{}:{}", g.group_id, g.group_state, g.group_type))
            .collect()
    }

    #[test]
    fn each_broker_lists_the_groups_it_coordinates_minus_hidden() {
        let c = cluster(GROUP_CLUSTER);
        // hidden-x is coordinated by 1 but may not be described.
        assert_eq!(
            listed(&c, 1, &Default::default(), 5),
            vec!["reports:Stable:consumer", "idle:Empty:classic"]
        );
        assert_eq!(
            listed(&c, 2, &Default::default(), 5),
            vec!["etl:Stable:classic"]
        );
        assert!(listed(&c, 3, &Default::default(), 5).is_empty());
    }

    #[test]
    fn filters_match_in_any_case_and_only_where_the_version_has_them() {
        let c = cluster(GROUP_CLUSTER);
        let by_state = ListGroupsRequest {
            states_filter: vec!["empty".into()],
            ..Default::default()
        };
        assert_eq!(listed(&c, 1, &by_state, 4), vec!["idle:Empty:classic"]);
        let by_type = ListGroupsRequest {
            types_filter: vec!["Consumer".into()],
            ..Default::default()
        };
        assert_eq!(listed(&c, 1, &by_type, 5), vec!["reports:Stable:consumer"]);
        assert!(listed(&c, 2, &by_type, 5).is_empty());
        // v4 has no type filter, v3 no state filter: everything.
        assert_eq!(listed(&c, 1, &by_type, 4).len(), 2);
        assert_eq!(listed(&c, 1, &by_state, 3).len(), 2);
    }
}
