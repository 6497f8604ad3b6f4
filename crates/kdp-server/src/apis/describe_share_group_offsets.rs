//! DescribeShareGroupOffsets (`KafkaApis.handleDescribeShareGroupOffsetsRequest`,
//! `GroupCoordinatorService.describeShareGroupOffsets`, KIP-932): at the
//! coordinator, each group checked by `group_precheck`; a group that does
//! not exist or is not a share group is GROUP_ID_NOT_FOUND. The mock keeps a
//! share group's start offsets where other groups keep committed offsets.
//! Null topics ask for every partition the group has state for; an asked
//! partition without state answers start offset -1. Partitions of a topic
//! the caller may not DESCRIBE answer TOPIC_AUTHORIZATION_FAILED, and are
//! left out when all are asked for. The mock computes no lag of its own:
//! v1's Lag is -1 (unknown), as Kafka answers where it has none.

use kdp_wire::messages::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsResponse, DescribeShareGroupOffsetsResponseGroup,
    DescribeShareGroupOffsetsResponsePartition, DescribeShareGroupOffsetsResponseTopic,
};
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::{Group, GroupType};

/// Answers DescribeShareGroupOffsets, one entry per group asked for.
pub fn describe_share_group_offsets(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &DescribeShareGroupOffsetsRequest,
) -> DescribeShareGroupOffsetsResponse {
    DescribeShareGroupOffsetsResponse {
        groups: req
            .groups
            .iter()
            .map(|g| describe_one(cluster, caller, g))
            .collect(),
        ..Default::default()
    }
}

fn describe_one(
    cluster: &Cluster,
    caller: &Caller<'_>,
    asked: &DescribeShareGroupOffsetsRequestGroup,
) -> DescribeShareGroupOffsetsResponseGroup {
    let id = asked.group_id.as_str();
    let failed =
        |code: ErrorCode, message: Option<String>| DescribeShareGroupOffsetsResponseGroup {
            group_id: id.to_string(),
            error_code: code,
            error_message: message,
            ..Default::default()
        };
    if let Some(code) = group_precheck(cluster, caller, id) {
        return failed(code, None);
    }
    let group = match cluster.group(id) {
        Some(g) if g.group_type == GroupType::Share => g,
        Some(_) => {
            return failed(
                ErrorCode::GROUP_ID_NOT_FOUND,
                Some(format!("Group {id} is not a share group.")),
            )
        }
        None => {
            return failed(
                ErrorCode::GROUP_ID_NOT_FOUND,
                Some(format!("Group {id} not found.")),
            )
        }
    };
    let topics = match &asked.topics {
        None => group
            .offsets
            .iter()
            .filter(|(topic, _)| caller.may_describe_topic(cluster, topic))
            .map(|(topic, partitions)| {
                let indexes: Vec<i32> = partitions.keys().copied().collect();
                topic_entry(cluster, group, topic, &indexes, ErrorCode::NONE)
            })
            .collect(),
        Some(topics) => topics
            .iter()
            .map(|t| {
                let code = if caller.may_describe_topic(cluster, &t.topic_name) {
                    ErrorCode::NONE
                } else {
                    ErrorCode::TOPIC_AUTHORIZATION_FAILED
                };
                topic_entry(cluster, group, &t.topic_name, &t.partitions, code)
            })
            .collect(),
    };
    DescribeShareGroupOffsetsResponseGroup {
        group_id: group.group_id.clone(),
        topics,
        error_code: ErrorCode::NONE,
        ..Default::default()
    }
}

fn topic_entry(
    cluster: &Cluster,
    group: &Group,
    topic: &str,
    partitions: &[i32],
    code: ErrorCode,
) -> DescribeShareGroupOffsetsResponseTopic {
    let allowed = code == ErrorCode::NONE;
    DescribeShareGroupOffsetsResponseTopic {
        topic_name: topic.to_string(),
        topic_id: cluster.topic(topic).map(|t| t.topic_id).unwrap_or_default(),
        partitions: partitions
            .iter()
            .map(|&p| DescribeShareGroupOffsetsResponsePartition {
                partition_index: p,
                start_offset: allowed
                    .then(|| group.committed(topic, p))
                    .flatten()
                    .unwrap_or(-1),
                leader_epoch: cluster.partition(topic, p).map_or(-1, |x| x.leader_epoch),
                lag: -1,
                error_code: code,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

impl Handler for DescribeShareGroupOffsetsRequest {
    fn handle(&self, call: &Call<'_>) -> Result<DescribeShareGroupOffsetsResponse, Refusal> {
        let resp = describe_share_group_offsets(&call.shared.read(), &call.caller, self);
        crate::budget::Budget::new(call.limit).charge(
            &resp,
            kdp_wire::wire::Version::of::<DescribeShareGroupOffsetsResponse>(call.version),
        )?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::DescribeShareGroupOffsetsRequestTopic;

    /// GROUP_CLUSTER's topics and groups, plus a share group.
    fn share_cluster() -> Cluster {
        let with_share = GROUP_CLUSTER.replace(
            r#""groups": ["#,
            r#""groups": [
            {"group_id": "queue", "type": "share", "offsets": {"orders": {"0": 120}}},"#,
        );
        cluster(&with_share)
    }

    fn describe(
        broker: i32,
        id: &str,
        topics: Option<Vec<(&str, Vec<i32>)>>,
    ) -> DescribeShareGroupOffsetsResponseGroup {
        let c = share_cluster();
        let req = DescribeShareGroupOffsetsRequest {
            groups: vec![DescribeShareGroupOffsetsRequestGroup {
                group_id: id.into(),
                topics: topics.map(|ts| {
                    ts.into_iter()
                        .map(|(t, ps)| DescribeShareGroupOffsetsRequestTopic {
                            topic_name: t.into(),
                            partitions: ps,
                            ..Default::default()
                        })
                        .collect()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        describe_share_group_offsets(&c, &caller(broker), &req)
            .groups
            .remove(0)
    }

    #[test]
    fn a_share_group_answers_its_start_offsets_all_or_asked() {
        let c = share_cluster();
        let g = describe(1, "queue", None);
        assert_eq!(g.error_code, ErrorCode::NONE);
        let t = &g.topics[0];
        assert_eq!(t.topic_name, "orders");
        assert_eq!(t.topic_id, c.topic("orders").unwrap().topic_id);
        let got: Vec<(i32, i64, i64)> = t
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.start_offset, p.lag))
            .collect();
        assert_eq!(got, vec![(0, 120, -1)]);
        let asked = describe(1, "queue", Some(vec![("orders", vec![1, 0])]));
        let got: Vec<(i32, i64)> = asked.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.start_offset))
            .collect();
        assert_eq!(got, vec![(1, -1), (0, 120)]);
    }

    #[test]
    fn other_groups_are_not_found_and_offset_fetch_sees_no_share_offsets() {
        let g = describe(1, "reports", None);
        assert_eq!(g.error_code, ErrorCode::GROUP_ID_NOT_FOUND);
        assert_eq!(
            g.error_message.as_deref(),
            Some("Group reports is not a share group.")
        );
        let c = share_cluster();
        let nobody = c.group_coordinator("nobody").unwrap();
        assert_eq!(
            describe(nobody, "nobody", None).error_code,
            ErrorCode::GROUP_ID_NOT_FOUND
        );
        assert_eq!(
            describe(2, "queue", None).error_code,
            ErrorCode::NOT_COORDINATOR
        );
        // Kafka's OffsetFetch finds no committed offsets in a share group.
        let req = kdp_wire::messages::OffsetFetchRequest {
            groups: vec![kdp_wire::messages::OffsetFetchRequestGroup {
                group_id: "queue".into(),
                topics: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        let fetched = crate::apis::offset_fetch::offset_fetch(&c, &caller(1), &req, 9);
        assert_eq!(fetched.groups[0].error_code, ErrorCode::NONE);
        assert!(fetched.groups[0].topics.is_empty());
    }
}
