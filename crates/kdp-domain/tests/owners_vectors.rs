//! `kdp owners`' attribution against what real Kafka Streams, Kafka Connect
//! and Flink runs left on real clusters (vectors/owners, Kafka 4.4.0 and
//! 3.9.2), and against the cases the runs cannot show: hidden and
//! unreadable groups, ids of no scheme, ambiguous application ids.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kdp_domain::groups::read::Visibility;
use kdp_domain::groups::state::{GroupState, GroupType};
use kdp_domain::owners::scheme::ProcessId;
use kdp_domain::owners::{
    Advice, Evidence, Framework, GroupMembers, GroupProtocol, GroupSeen, Member, Owners,
    OwnersInput, Task, TxnEntry, Verdict,
};
use kdp_domain::KeyError;
use kdp_wire::messages::{TopicData, TransactionState};
use kdp_wire::{hex, ErrorCode};
use serde_json::Value;

fn vector(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../vectors/owners")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// `topic-3` as the vectors write a partition.
fn partition(tp: &str) -> (String, i32) {
    let (t, p) = tp.rsplit_once('-').unwrap();
    (t.to_string(), p.parse().unwrap())
}

fn txn(t: &Value) -> TxnEntry {
    let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in t["topicPartitions"].as_array().unwrap() {
        let (topic, p) = partition(tp.as_str().unwrap());
        topics.entry(topic).or_default().push(p);
    }
    TxnEntry {
        transactional_id: s(&t["transactionalId"]),
        coordinator: t["coordinatorId"].as_i64().map(|c| c as i32),
        described: Ok(TransactionState {
            transactional_id: s(&t["transactionalId"]),
            transaction_state: s(&t["state"]),
            transaction_timeout_ms: t["transactionTimeoutMs"].as_i64().unwrap() as i32,
            transaction_start_time_ms: t["transactionStartTimeMs"].as_i64().unwrap(),
            producer_id: t["producerId"].as_i64().unwrap(),
            producer_epoch: t["producerEpoch"].as_i64().unwrap() as i16,
            topics: topics
                .into_iter()
                .map(|(topic, partitions)| TopicData {
                    topic,
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
    }
}

/// A snapshot of `dev.kdp.it.OwnersSnapshot` as kdp's read: the groups
/// listed with what DescribeGroups (or StreamsGroupDescribe) said.
fn input(snapshot: &Value) -> OwnersInput {
    let mut groups = BTreeMap::new();
    for g in snapshot["classicGroups"].as_array().unwrap() {
        let protocol = GroupProtocol::from_names(
            g["protocolType"].as_str().unwrap_or(""),
            g["protocol"].as_str().unwrap_or(""),
        );
        let members = g["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Member {
                member_id: s(&m["memberId"]),
                client_id: s(&m["clientId"]),
                client_host: s(&m["clientHost"]),
                metadata: hex::decode(m["metadataHex"].as_str().unwrap()).unwrap(),
                assignment: hex::decode(m["assignmentHex"].as_str().unwrap()).unwrap(),
                process_id: None,
            })
            .collect();
        groups.insert(
            s(&g["groupId"]),
            GroupSeen {
                listed: Some(protocol.clone()),
                described: Ok(GroupMembers {
                    state: GroupState::from_name(g["groupState"].as_str().unwrap()),
                    group_type: GroupType::Classic,
                    protocol,
                    members,
                }),
            },
        );
    }
    for g in snapshot["streamsGroups"].as_array().into_iter().flatten() {
        let members = g["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Member {
                member_id: s(&m["memberId"]),
                client_id: s(&m["clientId"]),
                client_host: s(&m["clientHost"]),
                process_id: ProcessId::parse(m["processId"].as_str().unwrap()),
                ..Default::default()
            })
            .collect();
        groups.insert(
            s(&g["groupId"]),
            GroupSeen {
                listed: Some(GroupProtocol::None),
                described: Ok(GroupMembers {
                    state: GroupState::from_name(g["groupState"].as_str().unwrap()),
                    group_type: GroupType::Streams,
                    protocol: GroupProtocol::None,
                    members,
                }),
            },
        );
    }
    let transactions: Vec<TxnEntry> = snapshot["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(txn)
        .collect();
    let now_ms = transactions
        .iter()
        .filter_map(|t| t.described.as_ref().ok())
        .map(|d| d.transaction_start_time_ms)
        .max()
        .unwrap_or(0)
        + 60_000;
    OwnersInput {
        now_ms,
        transactions,
        listing_complete: true,
        groups,
        group_listing_failures: Vec::new(),
        visibility: Visibility::Any,
        held: None,
    }
}

fn verdicts(o: &Owners) -> BTreeMap<String, Verdict> {
    o.owners
        .iter()
        .map(|o| (o.transactional_id.clone(), o.verdict))
        .collect()
}

const GENERATIONS: [&str; 2] = ["4.4.0", "3.9.2"];

fn streams_after_kill(file: &str) {
    let v = vector(file);
    let killed = s(&v["instances"]["A"]["processId"]);
    let alive = s(&v["instances"]["B"]["processId"]);
    let app = s(&v["applicationId"]);
    let input = input(&v["snapshots"]["afterKill"]);
    let judged = Owners::judge(&input);
    assert_eq!(judged.owners.len(), 4, "{file}");
    for o in &judged.owners {
        let a = o.attribution.as_ref().expect("attributed");
        assert_eq!(
            (a.framework, a.application.as_str()),
            (Framework::KafkaStreams, app.as_str())
        );
        let process = a.instance.as_deref().unwrap();
        if process == killed {
            assert_eq!(o.verdict, Verdict::Orphaned, "{file} {o:?}");
            assert!(
                matches!(o.evidence, Evidence::NoMember { ref state, .. } if *state == GroupState::Stable)
            );
            // the orphan names the partitions it pins, and force-terminate is suggested
            let t = o.txn.as_ref().unwrap();
            assert!(t.is_open() && !t.partitions.is_empty(), "{file} {t:?}");
            assert_eq!(o.advice(), Advice::ForceTerminate);
        } else {
            assert_eq!(process, alive, "{file}");
            assert_eq!(o.verdict, Verdict::Live, "{file} {o:?}");
            match &o.evidence {
                Evidence::Member { client_id, .. } => assert!(client_id.contains(&alive)),
                other => panic!("{file}: {other:?}"),
            }
            assert_ne!(o.advice(), Advice::ForceTerminate);
        }
        assert!(matches!(a.task, Task::StreamThread(1 | 2)));
    }
    let apps = &judged.applications;
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0].live_instances, Some(1), "{file}");
    assert_eq!((apps[0].ids, apps[0].orphaned), (4, 2), "{file}");
    assert!(judged.decided());

    // while both instances ran, every id was live
    let live = Owners::judge(&self::input(&v["snapshots"]["live"]));
    assert!(
        live.owners.iter().all(|o| o.verdict == Verdict::Live),
        "{file}"
    );
    assert_eq!(live.applications[0].live_instances, Some(2));
}

#[test]
fn a_killed_streams_instance_leaves_orphans_and_the_survivor_stays_live() {
    for g in GENERATIONS {
        streams_after_kill(&format!("streams-{g}.json"));
    }
    // a KIP-1071 streams group lists its members' process ids
    streams_after_kill("streams-protocol-4.4.0.json");
}

#[test]
fn connect_task_ids_are_attributed_to_their_connector_task_and_worker() {
    for g in GENERATIONS {
        let v = vector(&format!("connect-{g}.json"));
        let group = s(&v["groupId"]);
        let connector = s(&v["connector"]);
        for snap in ["live", "afterKill"] {
            let judged = Owners::judge(&input(&v["snapshots"][snap]));
            let mut tasks = Vec::new();
            for o in &judged.owners {
                let a = o.attribution.as_ref().expect("attributed");
                assert_eq!(a.framework, Framework::KafkaConnect);
                assert_eq!(o.verdict, Verdict::Live, "{g} {snap} {o:?}");
                match a.task {
                    Task::ConnectLeader => assert_eq!(a.application, group),
                    Task::ConnectTask(n) => {
                        assert_eq!(a.application, format!("{group}/{connector}"));
                        assert!(a.instance.as_deref().unwrap().starts_with("connect-"));
                        tasks.push(n);
                    }
                    ref other => panic!("{other:?}"),
                }
            }
            assert_eq!(tasks, [0, 1, 2], "{g} {snap}");
        }
        // after the kill one worker runs every task
        let after = Owners::judge(&input(&v["snapshots"]["afterKill"]));
        let workers: std::collections::BTreeSet<_> = after
            .owners
            .iter()
            .filter_map(|o| o.attribution.as_ref()?.instance.clone())
            .collect();
        assert_eq!(workers.len(), 1, "{g}");
    }
}

#[test]
fn a_connect_task_nobody_runs_is_orphaned_once_the_group_settles() {
    let v = vector("connect-4.4.0.json");
    let mut input = input(&v["snapshots"]["afterKill"]);
    let group = s(&v["groupId"]);
    let seen = input.groups.get_mut(&group).unwrap();
    let g = seen.described.as_mut().unwrap();
    g.members.clear();
    g.state = GroupState::Empty;
    let judged = Owners::judge(&input);
    assert!(judged.owners.iter().all(|o| o.verdict == Verdict::Orphaned));
    // rebalancing: not decided
    let g = input
        .groups
        .get_mut(&group)
        .unwrap()
        .described
        .as_mut()
        .unwrap();
    g.state = GroupState::PreparingRebalance;
    let judged = Owners::judge(&input);
    assert!(judged.owners.iter().all(|o| o.verdict == Verdict::Unknown));
}

#[test]
fn flink_lingering_transactions_and_the_newest_checkpoint() {
    for g in GENERATIONS {
        let v = vector(&format!("flink-{g}.json"));
        let prefix = s(&v["prefix"]);
        // after C: B's `-1-5` is open and C committed `-1-1`, `-1-2` after it started
        let judged = Owners::judge(&input(&v["snapshots"]["afterC"]));
        let by = verdicts(&judged);
        let id = |sub: u32, n: u32| format!("{prefix}-{sub}-{n}");
        assert_eq!(by[&id(1, 5)], Verdict::Lingering, "{g}");
        let lingering = judged
            .owners
            .iter()
            .find(|o| o.transactional_id == id(1, 5))
            .unwrap();
        assert_eq!(lingering.advice(), Advice::ForceTerminate);
        assert!(
            matches!(&lingering.evidence, Evidence::CommittedAfter { sibling } if sibling.starts_with(&id(1, 0)[..id(1, 0).len() - 1]))
        );
        for newest in [id(0, 3), id(1, 3)] {
            let o = judged
                .owners
                .iter()
                .find(|o| o.transactional_id == newest)
                .unwrap();
            assert_eq!(o.verdict, Verdict::Live, "{g} {newest}");
            assert!(o.newest_checkpoint);
            assert_eq!(o.advice(), Advice::NewestCheckpoint, "{g} {newest}");
        }
        let open_unknown = judged
            .owners
            .iter()
            .filter(|o| o.is_open() && o.verdict == Verdict::Unknown)
            .count();
        assert_eq!(open_unknown, 0, "{g}");
        let app = &judged.applications[0];
        assert_eq!(
            (app.framework, app.application.as_str()),
            (Framework::FlinkKafkaSink, prefix.as_str())
        );
        assert_eq!((app.lingering, app.live_instances), (1, Some(2)), "{g}");
        assert!(app.churn_per_hour.is_some_and(|c| c > 0.0));
        assert!(judged.decided());

        // after B (killed), nothing committed after its two open ids: no lingering
        let b = Owners::judge(&input(&v["snapshots"]["afterB"]));
        assert!(
            b.owners.iter().all(|o| o.verdict != Verdict::Lingering),
            "{g}"
        );
        assert_eq!(verdicts(&b)[&id(0, 5)], Verdict::Live);
    }
}

fn entry(id: &str, state: &str, start: i64) -> TxnEntry {
    TxnEntry {
        transactional_id: id.to_string(),
        coordinator: Some(1),
        described: Ok(TransactionState {
            transactional_id: id.to_string(),
            transaction_state: state.to_string(),
            transaction_timeout_ms: 60_000,
            transaction_start_time_ms: start,
            producer_id: 7,
            topics: vec![TopicData {
                topic: "out".into(),
                partitions: vec![0],
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

#[test]
fn ids_of_no_scheme_are_unattributed_never_a_framework_by_shape() {
    let input = OwnersInput {
        now_ms: 2_000_000,
        transactions: vec![
            entry("tx-orders.17", "Ongoing", 1_000_000),
            entry("payments", "Ongoing", 1_000_000),
            // Flink-shaped, but alone on its prefix and subtask
            entry("batch-3-7", "Ongoing", 1_000_000),
            // Streams-shaped, and a plain consumer group by that name
            entry(
                "shop-7a6b3d01-4179-4b52-810e-eec29c97bef5-1",
                "Ongoing",
                1_000_000,
            ),
        ],
        listing_complete: true,
        groups: BTreeMap::from([(
            "shop".to_string(),
            GroupSeen {
                listed: Some(GroupProtocol::Consumer { named: true }),
                described: Ok(GroupMembers {
                    state: GroupState::Stable,
                    group_type: GroupType::Classic,
                    protocol: GroupProtocol::Consumer { named: true },
                    members: vec![Member::default()],
                }),
            },
        )]),
        group_listing_failures: Vec::new(),
        visibility: Visibility::Any,
        held: None,
    };
    let judged = Owners::judge(&input);
    for o in &judged.owners {
        assert_eq!(o.verdict, Verdict::Unattributed, "{o:?}");
        assert_eq!(o.attribution, None);
        assert_eq!(o.advice(), Advice::Undecided);
    }
    assert!(
        matches!(&judged.owners[0].evidence, Evidence::NoScheme { counter_tail: Some((p, 17)) } if p == "tx-orders.")
    );
    assert!(matches!(judged.owners[2].evidence, Evidence::Alone));
    assert!(matches!(
        judged.owners[3].evidence,
        Evidence::NotStreamsGroup { .. }
    ));
    assert!(judged.applications.is_empty());
    // unattributed is decided: it does not fail the command
    assert!(judged.decided());
}

#[test]
fn an_application_id_with_dashes_and_a_uuid_is_kept_whole() {
    let v = vector("streams-4.4.0.json");
    let mut snap = input(&v["snapshots"]["afterKill"]);
    let app = s(&v["applicationId"]);
    // the same run, as if the application id itself carried a UUID and digits
    let tricky = "svc-2-3f1c9a52-1d2e-4f3a-9b8c-7d6e5f4a3b2c-9";
    let rename = |id: &str| id.replacen(&app, tricky, 1);
    for t in &mut snap.transactions {
        t.transactional_id = rename(&t.transactional_id);
    }
    let seen = snap.groups.remove(&app).unwrap();
    snap.groups.insert(tricky.to_string(), seen);
    let judged = Owners::judge(&snap);
    for o in &judged.owners {
        let a = o.attribution.as_ref().unwrap();
        assert_eq!(a.application, tricky);
        assert!(matches!(o.verdict, Verdict::Live | Verdict::Orphaned));
    }
}

#[test]
fn a_hidden_or_unreadable_group_is_unknown_never_guessed() {
    let v = vector("streams-4.4.0.json");
    let app = s(&v["applicationId"]);
    let base = input(&v["snapshots"]["afterKill"]);

    // hidden by ACLs: not listed, and the listing may hide groups
    let mut hidden = base.clone();
    hidden.groups.remove(&app);
    hidden.visibility = Visibility::Limited;
    let judged = Owners::judge(&hidden);
    for o in &judged.owners {
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(matches!(
            o.evidence,
            Evidence::GroupNotFound {
                may_be_hidden: true,
                ..
            }
        ));
        let expect = if o.is_open() {
            Advice::Undecided
        } else {
            Advice::Nothing
        };
        assert_eq!(o.advice(), expect);
    }
    assert!(!judged.decided());
    assert_eq!(judged.applications[0].live_instances, None);

    // listed, but DescribeGroups refused or failed
    for code in [
        ErrorCode::GROUP_AUTHORIZATION_FAILED,
        ErrorCode::COORDINATOR_NOT_AVAILABLE,
    ] {
        let mut unreadable = base.clone();
        unreadable.groups.get_mut(&app).unwrap().described = Err(KeyError::broker(code, None));
        let judged = Owners::judge(&unreadable);
        assert!(judged.owners.iter().all(|o| o.verdict == Verdict::Unknown
            && matches!(&o.evidence, Evidence::GroupUnreadable { error, .. } if error.code == code)));
        assert!(!judged.decided());
    }

    // a member whose bytes are not a Streams subscription: it may be the owner
    let mut garbled = base.clone();
    let g = garbled
        .groups
        .get_mut(&app)
        .unwrap()
        .described
        .as_mut()
        .unwrap();
    g.members[0].metadata.truncate(20);
    let judged = Owners::judge(&garbled);
    let killed = s(&v["instances"]["A"]["processId"]);
    for o in judged
        .owners
        .iter()
        .filter(|o| o.transactional_id.contains(&killed))
    {
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            matches!(&o.evidence, Evidence::MemberUnreadable { error, .. } if error.to_string().contains("at byte"))
        );
    }

    // Flink-shaped ids while groups may be hidden: a Connect group could own them
    let f = vector("flink-4.4.0.json");
    let mut flink = input(&f["snapshots"]["afterC"]);
    flink.visibility = Visibility::Limited;
    let judged = Owners::judge(&flink);
    assert!(judged.owners.iter().all(
        |o| o.verdict == Verdict::Unknown && matches!(o.evidence, Evidence::GroupsMayBeHidden)
    ));
}

#[test]
fn an_id_the_coordinator_did_not_describe_leaves_the_answer_undecided() {
    let mut input = input(&vector("streams-3.9.2.json")["snapshots"]["afterKill"]);
    input.transactions[0].described = Err(KeyError::broker(
        ErrorCode::COORDINATOR_LOAD_IN_PROGRESS,
        None,
    ));
    let judged = Owners::judge(&input);
    assert_eq!(judged.owners[0].advice(), Advice::Undecided);
    assert!(!judged.decided());
    let mut partial = self::input(&vector("streams-3.9.2.json")["snapshots"]["afterKill"]);
    partial.listing_complete = false;
    assert!(!Owners::judge(&partial).decided());
}

/// `TransactionalIdFactory.buildTransactionalId(prefix, subtask,
/// checkpointId)`: the three joined by `-`.
fn flink_id(prefix: &str, subtask: u32, checkpoint: u64) -> String {
    format!("{prefix}-{subtask}-{checkpoint}")
}

fn flink_input(transactions: Vec<TxnEntry>) -> OwnersInput {
    OwnersInput {
        now_ms: 2_000_000,
        transactions,
        listing_complete: true,
        visibility: Visibility::Any,
        ..Default::default()
    }
}

#[test]
fn two_flink_jobs_on_one_prefix_leave_its_ids_unknown_and_are_named() {
    // job A at checkpoints 41.., job B started fresh on the same prefix at
    // 1..; each commits a checkpoint a second, their ids interleaved, and
    // each has its current transaction open
    let mut txns = Vec::new();
    for i in 0..6u64 {
        let t = 1_000_000 + 1_000 * i as i64;
        let state = if i == 5 { "Ongoing" } else { "CompleteCommit" };
        txns.push(entry(&flink_id("ingest-sink", 0, 41 + i), state, t));
        txns.push(entry(&flink_id("ingest-sink", 0, 1 + i), state, t + 500));
    }
    let judged = Owners::judge(&flink_input(txns.clone()));
    for o in &judged.owners {
        assert_eq!(o.verdict, Verdict::Unknown, "{}", o.transactional_id);
        assert!(
            matches!(o.evidence, Evidence::TwoJobs { .. }),
            "{}: {}",
            o.transactional_id,
            o.evidence
        );
        // never force-terminate a transaction one of the jobs may still commit
        assert_ne!(o.advice(), Advice::ForceTerminate);
    }
    let app = &judged.applications[0];
    assert_eq!(app.application, "ingest-sink");
    let (subtask, c) = &app.collisions[0];
    assert_eq!(*subtask, 0);
    assert_eq!(c.sequences[0].first, "ingest-sink-0-41");
    assert_eq!(c.sequences[1].last, "ingest-sink-0-6");
    assert_eq!(c.switches, 11);

    // the same ids of job A, then job B after it was killed (a restart
    // without state): one switch, no collision; A's open one lingers
    let mut txns = Vec::new();
    for i in 0..6u64 {
        let state = if i == 5 { "Ongoing" } else { "CompleteCommit" };
        txns.push(entry(
            &flink_id("ingest-sink", 0, 41 + i),
            state,
            1_000_000 + 1_000 * i as i64,
        ));
        txns.push(entry(
            &flink_id("ingest-sink", 0, 1 + i),
            "CompleteCommit",
            1_100_000 + 1_000 * i as i64,
        ));
    }
    let judged = Owners::judge(&flink_input(txns));
    assert!(judged.applications[0].collisions.is_empty());
    let lingering = judged
        .owners
        .iter()
        .find(|o| o.transactional_id == "ingest-sink-0-46")
        .unwrap();
    assert_eq!(lingering.verdict, Verdict::Lingering);
}
