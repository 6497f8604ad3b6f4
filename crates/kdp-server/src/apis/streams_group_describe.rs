//! StreamsGroupDescribe (`KafkaApis.handleStreamsGroupDescribe`, KIP-1071):
//! at the coordinator, each group checked by `group_precheck`. The mock
//! holds classic and consumer groups only, so every group it knows is
//! GROUP_ID_NOT_FOUND here, as a real coordinator answers for a group of
//! another type.

use kdp_wire::messages::{
    StreamsDescribedGroup, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;

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
                None if cluster.group(id).is_some() => (
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    Some(format!("Group {id} is not a streams group.")),
                ),
                None => (
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    Some(format!("Group {id} not found.")),
                ),
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
}
