//! OffsetFetch (`KafkaApis.handleOffsetFetchRequest`,
//! `GroupCoordinator.fetchOffsets`/`fetchAllOffsets`): at the coordinator,
//! each group checked by
//! `group_precheck`. A group error
//! is the group's code from v8, the top-level code in v2-7, and each asked
//! partition's code in v1 (`OffsetFetchRequest.getErrorResponse`). Asked
//! partitions without a committed offset (or of a group that does not
//! exist) answer offset -1 and no error; partitions of a topic the caller
//! may not DESCRIBE answer TOPIC_AUTHORIZATION_FAILED. Null topics (v2+)
//! ask for every committed offset, leaving out unauthorized topics. The
//! mock holds no pending transactional commits, so RequireStable changes
//! nothing.

use std::collections::BTreeMap;

use kdp_wire::messages::{
    OffsetFetchRequest, OffsetFetchRequestTopics, OffsetFetchResponse, OffsetFetchResponseGroup,
    OffsetFetchResponsePartition, OffsetFetchResponsePartitions, OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
};
use kdp_wire::ErrorCode;

use super::group_errors::group_precheck;
use super::handler::{Call, Caller, Handler, Refusal};
use crate::cluster::Cluster;
use crate::group::GroupType;

/// One partition's answer, before it is put in a version's shape.
struct Fetched {
    partition: i32,
    offset: i64,
    error_code: ErrorCode,
}

/// Answers OffsetFetch.
pub fn offset_fetch(
    cluster: &Cluster,
    caller: &Caller<'_>,
    req: &OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    if version >= 8 {
        let groups = req
            .groups
            .iter()
            .map(|g| {
                let (error_code, topics) =
                    fetch_group(cluster, caller, &g.group_id, g.topics.as_deref());
                OffsetFetchResponseGroup {
                    group_id: g.group_id.clone(),
                    topics: topics
                        .into_iter()
                        .map(|(name, ps)| OffsetFetchResponseTopics {
                            name,
                            partitions: ps
                                .into_iter()
                                .map(|f| OffsetFetchResponsePartitions {
                                    partition_index: f.partition,
                                    committed_offset: f.offset,
                                    committed_leader_epoch: -1,
                                    metadata: Some(String::new()),
                                    error_code: f.error_code,
                                    unknown_tagged_fields: Default::default(),
                                })
                                .collect(),
                            unknown_tagged_fields: Default::default(),
                        })
                        .collect(),
                    error_code,
                    unknown_tagged_fields: Default::default(),
                }
            })
            .collect();
        return OffsetFetchResponse {
            groups,
            ..Default::default()
        };
    }
    let asked: Option<Vec<OffsetFetchRequestTopics>> = req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| OffsetFetchRequestTopics {
                name: t.name.clone(),
                partition_indexes: t.partition_indexes.clone(),
                unknown_tagged_fields: Default::default(),
            })
            .collect()
    });
    let (error_code, mut topics) = fetch_group(cluster, caller, &req.group_id, asked.as_deref());
    if error_code != ErrorCode::NONE {
        topics = BTreeMap::new();
        if version < 2 {
            // v1 has no group-level code: every asked partition carries it.
            for t in asked.iter().flatten() {
                topics.insert(
                    t.name.clone(),
                    t.partition_indexes
                        .iter()
                        .map(|&p| Fetched {
                            partition: p,
                            offset: -1,
                            error_code,
                        })
                        .collect(),
                );
            }
        }
    }
    OffsetFetchResponse {
        topics: topics
            .into_iter()
            .map(|(name, ps)| OffsetFetchResponseTopic {
                name,
                partitions: ps
                    .into_iter()
                    .map(|f| OffsetFetchResponsePartition {
                        partition_index: f.partition,
                        committed_offset: f.offset,
                        committed_leader_epoch: -1,
                        metadata: Some(String::new()),
                        error_code: f.error_code,
                        unknown_tagged_fields: Default::default(),
                    })
                    .collect(),
                unknown_tagged_fields: Default::default(),
            })
            .collect(),
        error_code,
        ..Default::default()
    }
}

/// A group's error, or its offsets by topic.
fn fetch_group(
    cluster: &Cluster,
    caller: &Caller<'_>,
    group_id: &str,
    asked: Option<&[OffsetFetchRequestTopics]>,
) -> (ErrorCode, BTreeMap<String, Vec<Fetched>>) {
    if let Some(code) = group_precheck(cluster, caller, group_id) {
        return (code, BTreeMap::new());
    }
    // A share group fails `ShareGroup.validateOffsetFetch`, which
    // `OffsetMetadataManager.fetchOffsets` answers as a group without
    // offsets: its start offsets are not committed offsets.
    let group = cluster
        .group(group_id)
        .filter(|g| g.group_type != GroupType::Share);
    let mut out: BTreeMap<String, Vec<Fetched>> = BTreeMap::new();
    match asked {
        None => {
            for (topic, partitions) in group.map(|g| &g.offsets).into_iter().flatten() {
                if !caller.may_describe_topic(cluster, topic) {
                    continue;
                }
                out.insert(
                    topic.clone(),
                    partitions
                        .iter()
                        .map(|(&partition, &offset)| Fetched {
                            partition,
                            offset,
                            error_code: ErrorCode::NONE,
                        })
                        .collect(),
                );
            }
        }
        Some(topics) => {
            for t in topics {
                let allowed = caller.may_describe_topic(cluster, &t.name);
                let entry = out.entry(t.name.clone()).or_default();
                for &p in &t.partition_indexes {
                    entry.push(if allowed {
                        Fetched {
                            partition: p,
                            offset: group.and_then(|g| g.committed(&t.name, p)).unwrap_or(-1),
                            error_code: ErrorCode::NONE,
                        }
                    } else {
                        Fetched {
                            partition: p,
                            offset: -1,
                            error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                        }
                    });
                }
            }
        }
    }
    (ErrorCode::NONE, out)
}

impl Handler for OffsetFetchRequest {
    fn handle(&self, call: &Call<'_>) -> Result<OffsetFetchResponse, Refusal> {
        let resp = offset_fetch(&call.shared.read(), &call.caller, self, call.version);
        crate::budget::Budget::new(call.limit).charge(
            &resp,
            kdp_wire::wire::Version::of::<OffsetFetchResponse>(call.version),
        )?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::testing::*;
    use kdp_wire::messages::{OffsetFetchRequestGroup, OffsetFetchRequestTopic};

    fn group(id: &str, topics: Option<Vec<(&str, Vec<i32>)>>) -> OffsetFetchRequestGroup {
        OffsetFetchRequestGroup {
            group_id: id.into(),
            topics: topics.map(|ts| {
                ts.into_iter()
                    .map(|(n, ps)| OffsetFetchRequestTopics {
                        name: n.into(),
                        partition_indexes: ps,
                        ..Default::default()
                    })
                    .collect()
            }),
            ..Default::default()
        }
    }

    fn offsets(g: &OffsetFetchResponseGroup) -> Vec<(String, i32, i64, ErrorCode)> {
        g.topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(|p| {
                    (
                        t.name.clone(),
                        p.partition_index,
                        p.committed_offset,
                        p.error_code,
                    )
                })
            })
            .collect()
    }

    #[test]
    fn many_groups_per_request_each_with_its_own_error() {
        let c = cluster(GROUP_CLUSTER);
        let req = OffsetFetchRequest {
            groups: vec![
                group("reports", None),
                group("idle", Some(vec![("orders", vec![0, 1])])),
                group("etl", None),
                group("hidden-x", None),
                group("ghost", Some(vec![("orders", vec![0])])),
            ],
            ..Default::default()
        };
        // "ghost" hashes to partition 0 but has no group.
        let r = offset_fetch(&c, &caller(1), &req, 8);
        let o = |s: &str, p, off| (s.to_string(), p, off, ErrorCode::NONE);
        assert_eq!(
            offsets(&r.groups[0]),
            vec![o("orders", 0, 400), o("orders", 1, 80)]
        );
        assert_eq!(
            offsets(&r.groups[1]),
            vec![o("orders", 0, 12), o("orders", 1, -1)]
        );
        assert_eq!(r.groups[2].error_code, ErrorCode::NOT_COORDINATOR);
        assert_eq!(
            r.groups[3].error_code,
            ErrorCode::GROUP_AUTHORIZATION_FAILED
        );
        assert_eq!(r.groups[4].error_code, ErrorCode::NONE);
        assert_eq!(offsets(&r.groups[4]), vec![o("orders", 0, -1)]);
    }

    #[test]
    fn one_group_versions_put_the_group_error_where_the_version_has_it() {
        let c = cluster(GROUP_CLUSTER);
        let req = OffsetFetchRequest {
            group_id: "etl".into(),
            topics: Some(vec![OffsetFetchRequestTopic {
                name: "orders".into(),
                partition_indexes: vec![0],
                ..Default::default()
            }]),
            ..Default::default()
        };
        let ok = offset_fetch(&c, &caller(2), &req, 7);
        assert_eq!(ok.error_code, ErrorCode::NONE);
        assert_eq!(ok.topics[0].partitions[0].committed_offset, 450);
        let v2 = offset_fetch(&c, &caller(1), &req, 2);
        assert_eq!(v2.error_code, ErrorCode::NOT_COORDINATOR);
        assert!(v2.topics.is_empty());
        let v1 = offset_fetch(&c, &caller(1), &req, 1);
        assert_eq!(
            v1.topics[0].partitions[0].error_code,
            ErrorCode::NOT_COORDINATOR
        );
    }

    #[test]
    fn topics_the_caller_may_not_describe() {
        let text = GROUP_CLUSTER.replace(
            r#""acls": {"#,
            r#""acls": {"topic_describe_deny": ["orders"], "#,
        );
        let c = cluster(&text);
        let req = OffsetFetchRequest {
            groups: vec![
                group("reports", None),
                group("idle", Some(vec![("orders", vec![0])])),
            ],
            ..Default::default()
        };
        let r = offset_fetch(&c, &caller(1), &req, 9);
        assert!(r.groups[0].topics.is_empty());
        assert_eq!(
            offsets(&r.groups[1]),
            vec![(
                "orders".into(),
                0,
                -1,
                ErrorCode::TOPIC_AUTHORIZATION_FAILED
            )]
        );
    }
}
