//! ConsumerGroupDescribe (`KafkaApis.handleConsumerGroupDescribe`,
//! `GroupMetadataManager.consumerGroupDescribe`, KIP-848): at the
//! coordinator, each group checked by
//! `group_precheck`. A group that
//! does not exist, or is a classic group, is GROUP_ID_NOT_FOUND. Members'
//! assignments name topics by id and name; the mock's target assignment is
//! the current one.

use kdp_wire::messages::{
    Assignment, ConsumerDescribedGroup, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, ConsumerGroupMember, TopicPartitions,
};
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::{GroupMember, GroupType};

/// ConsumerGroupDescribe v1's MemberType of a consumer-protocol member.
const MEMBER_TYPE_CONSUMER: i8 = 1;

/// Answers ConsumerGroupDescribe, one entry per group asked for.
pub fn consumer_group_describe(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    let groups = req
        .group_ids
        .iter()
        .map(|id| describe_one(cluster, caller, id))
        .collect();
    ConsumerGroupDescribeResponse {
        groups,
        ..Default::default()
    }
}

fn describe_one(cluster: &Cluster, caller: &Caller<'_>, id: &str) -> ConsumerDescribedGroup {
    let failed = |code: ErrorCode, message: Option<String>| ConsumerDescribedGroup {
        error_code: code,
        error_message: message,
        group_id: id.to_string(),
        ..Default::default()
    };
    if let Some(code) = group_precheck(cluster, caller, id) {
        return failed(code, None);
    }
    let group = match cluster.group(id) {
        Some(g) if g.group_type == GroupType::Consumer => g,
        Some(_) => {
            return failed(
                ErrorCode::GROUP_ID_NOT_FOUND,
                Some(format!("Group {id} is not a consumer group.")),
            )
        }
        None => {
            return failed(
                ErrorCode::GROUP_ID_NOT_FOUND,
                Some(format!("Group {id} not found.")),
            )
        }
    };
    ConsumerDescribedGroup {
        error_code: ErrorCode::NONE,
        error_message: None,
        group_id: group.group_id.clone(),
        group_state: group.state.name().to_string(),
        group_epoch: group.group_epoch,
        assignment_epoch: group.group_epoch,
        assignor_name: group.protocol.clone(),
        members: group
            .members
            .iter()
            .map(|m| member(cluster, m, group.group_epoch))
            .collect(),
        ..Default::default()
    }
}

fn member(cluster: &Cluster, m: &GroupMember, epoch: i32) -> ConsumerGroupMember {
    let assignment = Assignment {
        topic_partitions: m
            .assignment
            .iter()
            .map(|(topic, partitions)| TopicPartitions {
                topic_id: cluster.topic(topic).map(|t| t.topic_id).unwrap_or_default(),
                topic_name: topic.clone(),
                partitions: partitions.clone(),
                unknown_tagged_fields: Default::default(),
            })
            .collect(),
        unknown_tagged_fields: Default::default(),
    };
    ConsumerGroupMember {
        member_id: m.member_id.clone(),
        instance_id: m.group_instance_id.clone(),
        rack_id: None,
        member_epoch: epoch,
        client_id: m.client_id.clone(),
        client_host: m.client_host.clone(),
        subscribed_topic_names: m.assignment.keys().cloned().collect(),
        subscribed_topic_regex: None,
        target_assignment: assignment.clone(),
        assignment,
        member_type: MEMBER_TYPE_CONSUMER,
        unknown_tagged_fields: Default::default(),
    }
}

impl Handler for ConsumerGroupDescribeRequest {
    fn handle(&self, call: &Call<'_>) -> Result<ConsumerGroupDescribeResponse, Refusal> {
        let resp = consumer_group_describe(&call.shared.read(), &call.caller, self);
        crate::budget::Budget::new(call.limit).charge(
            &resp,
            kdp_wire::wire::Version::of::<ConsumerGroupDescribeResponse>(call.version),
        )?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;

    fn describe(broker: i32, ids: &[&str]) -> Vec<ConsumerDescribedGroup> {
        let c = cluster(GROUP_CLUSTER);
        let req = ConsumerGroupDescribeRequest {
            group_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        consumer_group_describe(&c, &caller(broker), &req).groups
    }

    #[test]
    fn a_consumer_group_with_its_assignment_by_topic_id() {
        let c = cluster(GROUP_CLUSTER);
        let g = &describe(1, &["reports"])[0];
        assert_eq!(g.error_code, ErrorCode::NONE);
        assert_eq!((g.group_state.as_str(), g.group_epoch), ("Stable", 4));
        let tp = &g.members[0].assignment.topic_partitions[0];
        assert_eq!(tp.topic_id, c.topic("orders").unwrap().topic_id);
        assert_eq!(
            (tp.topic_name.as_str(), tp.partitions.clone()),
            ("orders", vec![0, 1])
        );
    }

    #[test]
    fn classic_unknown_elsewhere_and_hidden() {
        let gs = describe(1, &["idle", "hidden-x", "etl"]);
        assert_eq!(gs[0].error_code, ErrorCode::GROUP_ID_NOT_FOUND);
        assert_eq!(gs[1].error_code, ErrorCode::GROUP_AUTHORIZATION_FAILED);
        assert_eq!(gs[2].error_code, ErrorCode::NOT_COORDINATOR);
        assert_eq!(
            describe(2, &["reports"])[0].error_code,
            ErrorCode::NOT_COORDINATOR
        );
    }
}
