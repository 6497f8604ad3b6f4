//! DescribeShareGroupOffsets at each share group's coordinator (found with
//! FindCoordinator, as for every group): the start offset of every
//! partition each group has state for (null topics), many groups per
//! request. v1 (KIP-1226) adds Kafka's lag per partition; the request is
//! the same at both versions. NOT_COORDINATOR and the coordinator-loading
//! errors are retried after a new lookup; GROUP_AUTHORIZATION_FAILED and
//! GROUP_ID_NOT_FOUND are the answer.

use std::collections::BTreeMap;

use kdp_wire::messages::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsResponse,
};

use crate::admin::{AdminHandler, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::groups::coordinator::at_coordinators;
use kdp_domain::groups::share::{ShareOffsets, ShareStart};
use kdp_domain::key_error::KeyError;

struct Handler;

impl AdminHandler for Handler {
    type Key = String;
    type Value = ShareOffsets;
    type Request = DescribeShareGroupOffsetsRequest;
    type Response = DescribeShareGroupOffsetsResponse;

    fn build_request(&self, _broker: i32, keys: &[String]) -> DescribeShareGroupOffsetsRequest {
        DescribeShareGroupOffsetsRequest {
            groups: keys
                .iter()
                .map(|g| DescribeShareGroupOffsetsRequestGroup {
                    group_id: g.clone(),
                    topics: None,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        _keys: &[String],
        resp: DescribeShareGroupOffsetsResponse,
    ) -> Vec<(String, KeyOutcome<ShareOffsets>)> {
        resp.groups
            .into_iter()
            .map(|g| {
                let outcome = KeyOutcome::from_code(g.error_code, g.error_message, || {
                    g.topics
                        .into_iter()
                        .flat_map(|t| {
                            t.partitions.into_iter().map(move |p| {
                                (
                                    (t.topic_name.clone(), p.partition_index),
                                    ShareStart::of(p.start_offset, p.lag, p.error_code),
                                )
                            })
                        })
                        .collect()
                });
                (g.group_id, outcome)
            })
            .collect()
    }
}

/// The start offsets of share groups `groups`, each group's answer or why
/// it has none; `known`: coordinators already known (group id to broker,
/// e.g. the broker that listed it), which are then not looked up.
pub async fn share_offsets_at(
    client: &SharedClient,
    groups: Vec<String>,
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<String, Result<ShareOffsets, KeyError>> {
    if groups.is_empty() {
        return BTreeMap::new();
    }
    at_coordinators(client, &Handler, groups, known, opts, bound).await
}

#[cfg(test)]
mod tests {
    use kdp_domain::groups::Committed;
    use kdp_wire::messages::{
        DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
        DescribeShareGroupOffsetsResponseTopic,
    };
    use kdp_wire::ErrorCode;

    use super::*;

    #[test]
    fn one_request_asks_every_partition_of_every_group() {
        let req = Handler.build_request(1, &["a".to_string(), "b".to_string()]);
        let ids: Vec<&str> = req.groups.iter().map(|g| g.group_id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert!(req.groups.iter().all(|g| g.topics.is_none()));
    }

    #[test]
    fn each_group_gets_its_start_offsets_or_its_error() {
        let resp = DescribeShareGroupOffsetsResponse {
            groups: vec![
                DescribeShareGroupOffsetsResponseGroup {
                    group_id: "a".into(),
                    topics: vec![DescribeShareGroupOffsetsResponseTopic {
                        topic_name: "t".into(),
                        partitions: vec![DescribeShareGroupOffsetsResponsePartition {
                            partition_index: 3,
                            start_offset: 7,
                            lag: 2,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                DescribeShareGroupOffsetsResponseGroup {
                    group_id: "b".into(),
                    error_code: ErrorCode::NOT_COORDINATOR,
                    ..Default::default()
                },
                DescribeShareGroupOffsetsResponseGroup {
                    group_id: "c".into(),
                    error_code: ErrorCode::GROUP_ID_NOT_FOUND,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let keys = ["a".to_string(), "b".to_string(), "c".to_string()];
        let out = Handler.handle_response(1, &keys, resp);
        let KeyOutcome::Done(a) = &out[0].1 else {
            panic!("{out:?}")
        };
        let p = &a[&("t".to_string(), 3)];
        assert_eq!((&p.start, p.kafka_lag), (&Committed::At(7), Some(2)));
        assert!(matches!(out[1].1, KeyOutcome::Retry { refresh: true, .. }));
        assert!(matches!(
            &out[2].1,
            KeyOutcome::Failed(e) if e.code == ErrorCode::GROUP_ID_NOT_FOUND
        ));
    }
}
