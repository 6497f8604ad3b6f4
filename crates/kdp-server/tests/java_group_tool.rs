//! Apache Kafka's own `kafka-consumer-groups.sh`
//! (org.apache.kafka.tools.consumer.group.ConsumerGroupCommand, the class in
//! kafka-tools of 3.9 and 4.x alike) against the mock serving the demo
//! cluster with one more group the client may not DESCRIBE: `--list`,
//! `--describe --all-groups` (offsets) and `--describe --all-groups
//! --state` must print exactly what the cluster file holds, both group
//! protocols (the demo's payments-audit is a KIP-848 consumer group).
//!
//! Needs the Kafka jars: run `scripts/test.sh` (KDP_IT_CLASSPATH, and
//! KDP_IT_JAVA), which runs it with the tool of each Kafka generation.
//! Without KDP_IT_CLASSPATH the test fails rather than skips.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};

/// A group the client may not DESCRIBE: left out of everything.
const HIDDEN: &str = "payments-secret";

fn cluster() -> Cluster {
    let mut doc: serde_json::Value =
        serde_json::from_str(kdp_server::demo::DEMO_CLUSTER_JSON).expect("the demo's JSON");
    doc["groups"]
        .as_array_mut()
        .expect("groups")
        .push(serde_json::json!({
            "group_id": HIDDEN,
            "offsets": {"payments": {"0": 40112}}
        }));
    doc["acls"]["group_describe_deny"] = serde_json::json!([HIDDEN]);
    Cluster::from_json_at(&doc.to_string(), std::time::SystemTime::now()).expect("the cluster")
}

struct Run {
    args: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kafka-consumer-groups.sh {} exited {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.args, self.code, self.stdout, self.stderr
        )
    }
}

/// `kafka-consumer-groups.sh --bootstrap-server B ARGS`.
fn tool(bootstrap: &str, args: &[&str]) -> Run {
    let classpath = std::env::var("KDP_IT_CLASSPATH").unwrap_or_else(|_| {
        panic!(
            "KDP_IT_CLASSPATH is not set: this test needs the Kafka jars; run scripts/test.sh \
             (or set KDP_IT_CLASSPATH to it/target/kafka-VERSION/lib/*)"
        )
    });
    let java = std::env::var("KDP_IT_JAVA").unwrap_or_else(|_| "java".into());
    let out = Command::new(&java)
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", &classpath])
        .arg("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand")
        .args(["--bootstrap-server", bootstrap, "--timeout", "25000"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {java}: {e}"));
    let run = Run {
        args: args.join(" "),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(run.code, Some(0), "{run}");
    run
}

/// Every table of the tool's output: each row as header -> cell (3.9
/// leaves an Empty group's ASSIGNMENT-STRATEGY blank: no such key then).
fn tables(run: &Run) -> Vec<BTreeMap<String, String>> {
    let mut rows = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for line in run.stdout.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.is_empty() {
            continue;
        }
        if cells[0] == "GROUP" {
            // "COORDINATOR (ID)" is one column
            let joined = line.replace("COORDINATOR (ID)", "COORDINATOR");
            header = Some(joined.split_whitespace().map(str::to_string).collect());
            continue;
        }
        let Some(h) = &header else { continue };
        if line.starts_with("Consumer group '") {
            continue;
        }
        // the coordinator cell is "host:port  (id)": two words, the
        // assignment strategy after it may be blank
        if h.iter().any(|c| c == "COORDINATOR") && cells.len() >= 5 {
            let n = cells.len();
            let mut row = BTreeMap::new();
            row.insert("GROUP".to_string(), cells[0].to_string());
            row.insert("COORDINATOR".into(), format!("{} {}", cells[1], cells[2]));
            if n == 6 {
                row.insert("ASSIGNMENT-STRATEGY".into(), cells[3].to_string());
            }
            row.insert("STATE".into(), cells[n - 2].to_string());
            row.insert("#MEMBERS".into(), cells[n - 1].to_string());
            rows.push(row);
            continue;
        }
        let cells: Vec<String> = cells.iter().map(|s| s.to_string()).collect();
        let mut row = BTreeMap::new();
        row.insert(h[0].clone(), cells[0].clone());
        let (hs, cs) = (&h[1..], &cells[1..]);
        for (k, v) in hs.iter().rev().zip(cs.iter().rev()) {
            row.insert(k.clone(), v.clone());
        }
        rows.push(row);
    }
    rows
}

/// What `--describe` must print for each visible group of `cluster`: one
/// row per partition the group committed on or a member holds.
fn expected_offsets(cluster: &Cluster) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for g in &cluster.groups {
        if g.group_id == HIDDEN {
            continue;
        }
        let mut partitions: BTreeSet<(String, i32)> = g
            .offsets
            .iter()
            .flat_map(|(t, ps)| ps.keys().map(move |p| (t.clone(), *p)))
            .collect();
        for m in &g.members {
            for (t, ps) in &m.assignment {
                partitions.extend(ps.iter().map(|p| (t.clone(), *p)));
            }
        }
        for (t, p) in partitions {
            let hw = cluster.partition(&t, p).expect("partition").high_watermark;
            let member = g
                .members
                .iter()
                .find(|m| m.assignment.get(&t).is_some_and(|ps| ps.contains(&p)));
            let committed = g.committed(&t, p);
            let dash = || "-".to_string();
            out.insert(vec![
                g.group_id.clone(),
                t.clone(),
                p.to_string(),
                committed.map_or_else(dash, |c| c.to_string()),
                hw.to_string(),
                committed.map_or_else(dash, |c| (hw - c).to_string()),
                member.map_or_else(dash, |m| m.member_id.clone()),
                member.map_or_else(dash, |m| m.client_host.clone()),
                member.map_or_else(dash, |m| m.client_id.clone()),
            ]);
        }
    }
    out
}

#[test]
#[ignore = "needs the Kafka jars: run scripts/test.sh"]
fn kafka_consumer_groups_list_and_describe_all_groups_against_the_mock() {
    let cluster = cluster();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let config = MockConfig {
        port: 0,
        idle_timeout: Duration::from_secs(60),
        ..MockConfig::default()
    };
    let mock = rt
        .block_on(MockCluster::start(cluster.clone(), config))
        .unwrap();
    let bootstrap = mock.bootstrap();
    let visible: BTreeSet<String> = cluster
        .groups
        .iter()
        .map(|g| g.group_id.clone())
        .filter(|g| g != HIDDEN)
        .collect();
    assert_eq!(visible.len(), 4);

    let (list, offsets, state) = std::thread::scope(|s| {
        let list = s.spawn(|| tool(&bootstrap, &["--list"]));
        let offsets = s.spawn(|| tool(&bootstrap, &["--describe", "--all-groups"]));
        let state = s.spawn(|| tool(&bootstrap, &["--describe", "--all-groups", "--state"]));
        (
            list.join().unwrap(),
            offsets.join().unwrap(),
            state.join().unwrap(),
        )
    });

    // --list: every group the client may describe, and only those
    let listed: BTreeSet<String> = list
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    assert_eq!(listed, visible, "{list}");

    // --describe --all-groups: offsets, log-end offsets, lag and members
    let got: BTreeSet<Vec<String>> = tables(&offsets)
        .into_iter()
        .map(|r| {
            [
                "GROUP",
                "TOPIC",
                "PARTITION",
                "CURRENT-OFFSET",
                "LOG-END-OFFSET",
                "LAG",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID",
            ]
            .iter()
            .map(|k| {
                r.get(*k)
                    .cloned()
                    .unwrap_or_else(|| panic!("no {k} in {r:?}"))
            })
            .collect()
        })
        .collect();
    assert_eq!(got, expected_offsets(&cluster), "{offsets}");
    // said on stderr (4.x) or stdout
    assert!(
        format!("{}{}", offsets.stdout, offsets.stderr)
            .contains("Consumer group 'payments-archive' has no active members."),
        "{offsets}"
    );

    // --state: coordinator (by the hash rule), strategy, state, members
    let rows = tables(&state);
    assert_eq!(rows.len(), visible.len(), "{state}");
    for r in rows {
        let g = cluster.group(&r["GROUP"]).expect("a group of the file");
        let coordinator = cluster.group_coordinator(&g.group_id).expect("coordinator");
        assert!(
            r["COORDINATOR"].ends_with(&format!("({coordinator})")),
            "{r:?}\n{state}"
        );
        assert_eq!(r["STATE"], g.state.name(), "{r:?}");
        assert_eq!(r["#MEMBERS"], g.members.len().to_string(), "{r:?}");
        if !g.members.is_empty() {
            assert_eq!(r.get("ASSIGNMENT-STRATEGY"), Some(&g.protocol), "{r:?}");
        }
    }
    rt.block_on(mock.shutdown());
}
