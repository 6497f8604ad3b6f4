//! OffsetFetch at each group's coordinator (found with FindCoordinator):
//! every committed offset of each group (null topics, v2+). From v8 (Kafka
//! 3.0) one request carries many groups; when any broker is older, each
//! request carries one. NOT_COORDINATOR and the coordinator-loading errors
//! are retried after a new lookup; GROUP_AUTHORIZATION_FAILED is the
//! answer.

use std::collections::BTreeMap;

use kdp_wire::messages::{OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchResponse};

use crate::admin::{AdminHandler, AllBrokers, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::error::{Error, Result};
use kdp_domain::groups::offsets::{Committed, GroupOffsets};
use kdp_domain::key_error::KeyError;

use crate::client::SharedClient;
use crate::groups::coordinator::at_coordinators;

/// The first OffsetFetch version that batches groups.
const BATCHED: i16 = 8;
/// The first version that asks for every partition (null topics).
const ALL_PARTITIONS: i16 = 2;

struct Handler;

impl AdminHandler for Handler {
    type Key = String;
    type Value = GroupOffsets;
    type Request = OffsetFetchRequest;
    type Response = OffsetFetchResponse;

    fn build_request(&self, _broker: i32, keys: &[String]) -> OffsetFetchRequest {
        // Both shapes: the version sent decides which is on the wire (a
        // request below v8 carries one key, see `committed_offsets`).
        OffsetFetchRequest {
            group_id: keys.first().cloned().unwrap_or_default(),
            topics: None,
            groups: keys
                .iter()
                .map(|g| OffsetFetchRequestGroup {
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
        keys: &[String],
        resp: OffsetFetchResponse,
    ) -> Vec<(String, KeyOutcome<GroupOffsets>)> {
        if resp.groups.is_empty() {
            // v2-7: one group, its error at the top.
            let Some(group) = keys.first() else {
                return Vec::new();
            };
            // each topic's name moved once, not copied per partition
            let outcome = KeyOutcome::from_code(resp.error_code, None, || {
                GroupOffsets::of_topics(resp.topics.into_iter().map(|t| {
                    let partitions = t.partitions.into_iter().map(|p| {
                        (
                            p.partition_index,
                            Committed::of(p.committed_offset, p.error_code),
                        )
                    });
                    (t.name, partitions)
                }))
            });
            return vec![(group.clone(), outcome)];
        }
        resp.groups
            .into_iter()
            .map(|g| {
                let outcome = KeyOutcome::from_code(g.error_code, None, || {
                    GroupOffsets::of_topics(g.topics.into_iter().map(|t| {
                        let partitions = t.partitions.into_iter().map(|p| {
                            (
                                p.partition_index,
                                Committed::of(p.committed_offset, p.error_code),
                            )
                        });
                        (t.name, partitions)
                    }))
                });
                (g.group_id, outcome)
            })
            .collect()
    }
}

/// Every committed offset of `groups`, each group's answer or why it has
/// none.
pub async fn committed_offsets(
    client: &SharedClient,
    groups: Vec<String>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<GroupOffsets, KeyError>>> {
    committed_offsets_at(client, groups, &BTreeMap::new(), opts, bound).await
}

/// [`committed_offsets`] with the coordinators of some groups already known
/// (`known`: group id to broker, e.g. the broker that listed it), which are
/// then not looked up.
pub async fn committed_offsets_at(
    client: &SharedClient,
    groups: Vec<String>,
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<GroupOffsets, KeyError>>> {
    if groups.is_empty() {
        return Ok(BTreeMap::new());
    }
    // Any broker may coordinate a group: the oldest decides the batching.
    let brokers = bound
        .run(
            "Metadata",
            AllBrokers::keys_within(client, bound.request_timeout()),
        )
        .await?;
    let mut oldest = i16::MAX;
    for &b in &brokers {
        let conn = bound.run("ApiVersions", client.broker(b)).await?;
        let have = conn.version_for::<OffsetFetchRequest>()?;
        if have < ALL_PARTITIONS {
            return Err(Error::FeatureUnsupported {
                broker: b,
                feature: "every committed offset of a group",
                api: "OffsetFetch",
                needed: ALL_PARTITIONS,
                kafka: "0.10.2",
                broker_max: have,
            });
        }
        oldest = oldest.min(have);
    }
    let opts = if oldest < BATCHED {
        opts.one_key_per_request()
    } else {
        *opts
    };
    Ok(at_coordinators(client, &Handler, groups, known, &opts, bound).await)
}

#[cfg(test)]
mod tests {
    use kdp_wire::messages::{
        OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
        OffsetFetchResponseTopic, OffsetFetchResponseTopics,
    };

    use kdp_wire::ErrorCode;

    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_request_asks_every_partition_in_both_shapes() {
        let req = Handler.build_request(1, &keys(&["a", "b"]));
        assert_eq!(req.group_id, "a");
        assert_eq!(req.topics, None);
        let ids: Vec<&str> = req.groups.iter().map(|g| g.group_id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert!(req.groups.iter().all(|g| g.topics.is_none()));
    }

    #[test]
    fn a_one_group_answer_is_the_first_keys() {
        let resp = OffsetFetchResponse {
            topics: vec![OffsetFetchResponseTopic {
                name: "t".into(),
                partitions: vec![
                    OffsetFetchResponsePartition {
                        partition_index: 0,
                        committed_offset: 12,
                        ..Default::default()
                    },
                    OffsetFetchResponsePartition {
                        partition_index: 1,
                        committed_offset: -1,
                        ..Default::default()
                    },
                    OffsetFetchResponsePartition {
                        partition_index: 2,
                        committed_offset: -1,
                        error_code: ErrorCode::UNSTABLE_OFFSET_COMMIT,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let out = Handler.handle_response(1, &keys(&["a"]), resp);
        let KeyOutcome::Done(offsets) = &out[0].1 else {
            panic!("{out:?}")
        };
        assert_eq!(out[0].0, "a");
        let t = |p| *offsets.get("t", p).unwrap();
        assert_eq!(t(0), Committed::At(12));
        assert_eq!(t(1), Committed::Nothing);
        assert_eq!(t(2), Committed::Failed(ErrorCode::UNSTABLE_OFFSET_COMMIT));
        // A group error at the top: retried at a coordinator found again.
        let moved = OffsetFetchResponse {
            error_code: ErrorCode::NOT_COORDINATOR,
            ..Default::default()
        };
        let out = Handler.handle_response(1, &keys(&["a"]), moved);
        assert!(matches!(out[0].1, KeyOutcome::Retry { refresh: true, .. }));
    }

    #[test]
    fn a_batched_answer_gives_each_group_its_own_outcome() {
        let resp = OffsetFetchResponse {
            groups: vec![
                OffsetFetchResponseGroup {
                    group_id: "a".into(),
                    topics: vec![OffsetFetchResponseTopics {
                        name: "t".into(),
                        partitions: vec![OffsetFetchResponsePartitions {
                            partition_index: 3,
                            committed_offset: 7,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                OffsetFetchResponseGroup {
                    group_id: "b".into(),
                    error_code: ErrorCode::GROUP_AUTHORIZATION_FAILED,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let out = Handler.handle_response(1, &keys(&["a", "b"]), resp);
        assert_eq!(out.len(), 2);
        assert!(
            matches!(&out[0].1, KeyOutcome::Done(o) if o.get("t", 3) == Some(&Committed::At(7)))
        );
        assert!(matches!(
            &out[1].1,
            KeyOutcome::Failed(e) if e.code == ErrorCode::GROUP_AUTHORIZATION_FAILED
        ));
    }
}
