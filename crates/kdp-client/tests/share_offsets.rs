//! `kdp_client::groups::share_offsets_at` against kdp-test-support's broker
//! (the mock's DescribeShareGroupOffsets): each share group's start offsets
//! from its coordinator, looked up; a group that is not a share group is
//! GROUP_ID_NOT_FOUND.

use std::collections::BTreeMap;
use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::groups::share_offsets_at;
use kdp_client::TimeBound;
use kdp_client::{Client, ClientConfig};
use kdp_domain::groups::Committed;
use kdp_test_support::StallCluster;
use kdp_wire::{api, ErrorCode};

const CLUSTER: &str = r#"{
    "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
    "topics": [
        {"name": "jobs", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 500},
            {"partition": 1, "leader": 2, "replicas": [2], "high_watermark": 80}
        ]},
        {"name": "__consumer_offsets", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1]},
            {"partition": 1, "leader": 2, "replicas": [2]},
            {"partition": 2, "leader": 3, "replicas": [3]}
        ]}
    ],
    "groups": [
        {"group_id": "workers", "type": "share", "offsets": {"jobs": {"0": 120, "1": 80}}},
        {"group_id": "reports", "type": "consumer", "offsets": {"jobs": {"0": 400}}}
    ]
}"#;

#[tokio::test(start_paused = true)]
async fn each_share_group_answers_its_start_offsets_at_its_coordinator() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    let client = Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap());
    let got = share_offsets_at(
        &client,
        vec!["workers".into(), "reports".into()],
        &BTreeMap::new(),
        &DriverOptions::default(),
        &TimeBound::after(std::time::Duration::from_secs(30)),
    )
    .await;
    let workers = got["workers"].as_ref().unwrap();
    let starts: Vec<((String, i32), Committed)> = workers
        .iter()
        .map(|(tp, s)| (tp.clone(), s.start))
        .collect();
    assert_eq!(
        starts,
        vec![
            (("jobs".into(), 0), Committed::At(120)),
            (("jobs".into(), 1), Committed::At(80)),
        ]
    );
    assert!(
        workers.values().all(|s| s.kafka_lag.is_none()),
        "the mock gives no lag"
    );
    let reports = got["reports"].as_ref().unwrap_err();
    assert_eq!(reports.code, ErrorCode::GROUP_ID_NOT_FOUND);
    assert!(cluster.asked(api::DESCRIBE_SHARE_GROUP_OFFSETS) >= 1);
}
