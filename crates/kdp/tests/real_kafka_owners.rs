//! `kdp owners` against real Apache Kafka (both generations) and real
//! framework processes (it/README.md, "Framework harnesses"): two Kafka
//! Streams instances (exactly_once_v2, separate JVMs), one killed inside
//! its open transactions; a Kafka Connect worker running an exactly-once
//! source connector; producers following Flink KafkaSink's naming exactly
//! across "checkpoints"; an id of no scheme. Run with scripts/test.sh, or
//! start a cluster with `scripts/kafka-cluster.sh start` and `cargo test -p
//! kdp --test real_kafka_owners -- --include-ignored`.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::{create_topic, env, kdp, scenario, unique, Env};
use serde_json::Value;

/// A harness JVM whose stdout lines (JSON events) arrive on a channel;
/// killed (SIGKILL) when dropped.
struct Harness {
    child: Child,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Harness {
    fn start(env: &Env, classpath: &str, class: &str, args: &[&str]) -> Harness {
        Harness::start_heap(env, "-Xmx192m", classpath, class, args)
    }

    fn start_heap(env: &Env, heap: &str, classpath: &str, class: &str, args: &[&str]) -> Harness {
        let mut child = Command::new(&env.java)
            .args([
                heap,
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classpath,
                class,
            ])
            .args(["--bootstrap", &env.bootstrap])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{class}: {e}"));
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        Harness {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (at most `limit`) until `done` holds of the events seen so far.
    fn until(&mut self, what: &str, limit: Duration, done: impl Fn(&[Value]) -> bool) {
        let start = Instant::now();
        while !done(&self.seen) {
            let left = limit.checked_sub(start.elapsed()).unwrap_or_else(|| {
                panic!("{what}: not seen within {limit:?}; events: {:?}", self.seen)
            });
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(500)))
            {
                Ok(v) => self.seen.push(v),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(e) => panic!("{what}: the harness ended ({e}); events: {:?}", self.seen),
            }
        }
    }

    /// Takes in the events printed so far.
    fn drain(&mut self) {
        while let Ok(v) = self.lines.try_recv() {
            self.seen.push(v);
        }
    }

    fn events<'a>(&'a self, event: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.seen.iter().filter(move |v| v["event"] == event)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kdp owners --bootstrap-server B -o json ARGS`: status and rows by id.
fn owners(env: &Env, args: &[&str]) -> (i32, BTreeMap<String, Value>, Value) {
    let mut all = vec!["owners", "--bootstrap-server", &env.bootstrap, "-o", "json"];
    all.extend_from_slice(args);
    let r = kdp(&all);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("kdp owners printed no JSON ({e}): {}", r.stderr));
    let rows = doc["Owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["TransactionalId"].as_str().unwrap().to_string(),
                o.clone(),
            )
        })
        .collect();
    (r.code, rows, doc)
}

fn offsets(env: &Env, topic: &str, partition: i64) -> (i64, i64) {
    let o = scenario(
        env,
        "offsets",
        &["--topic", topic, "--partition", &partition.to_string()],
    );
    (
        o["lastStableOffset"].as_i64().unwrap(),
        o["highWatermark"].as_i64().unwrap(),
    )
}

/// Kafka's Admin view of a KIP-1071 streams group (`dev.kdp.it.OwnersSnapshot`
/// `--streams-groups`, i.e. `Admin.describeStreamsGroups`): its state and
/// its members' process ids.
fn admin_streams_group(env: &Env, group: &str) -> (String, Vec<String>) {
    let r = common::run(
        Command::new(&env.java)
            .args(["-cp", &env.classpath, "dev.kdp.it.OwnersSnapshot"])
            .args(["--bootstrap", &env.bootstrap, "--id-prefix", group])
            .args(["--streams-groups", group]),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, 0, "OwnersSnapshot: {}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let g = &doc["streamsGroups"][0];
    let members = g["members"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["processId"].as_str().unwrap_or_default().to_string())
        .collect();
    (
        g["groupState"].as_str().unwrap_or_default().to_string(),
        members,
    )
}

/// One transaction of `records` records on `topic` partition 0 under
/// `tid`, committed (`open` false) or left open by a killed producer
/// (five minutes' timeout: the coordinator does not end it during the test).
fn write_txn(env: &Env, topic: &str, records: u32, tid: &str, open: bool) {
    let records = records.to_string();
    let mut args = vec![
        "--topic",
        topic,
        "--partition",
        "0",
        "--records",
        &records,
        "--transactional-id",
        tid,
    ];
    if open {
        args.extend(["--transaction-timeout-ms", "300000"]);
    }
    scenario(env, if open { "txn-open" } else { "txn-commit" }, &args);
}

/// Ends the open transactions `tids` left, so the next test run starts clean.
fn force_terminate(env: &Env, tids: &[String]) {
    for tid in tids {
        let ft = kdp(&[
            "force-terminate",
            "--bootstrap-server",
            &env.bootstrap,
            "--transactional-id",
            tid,
            "--yes",
        ]);
        assert_eq!(ft.code, 0, "{}", ft.stderr);
    }
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn a_killed_streams_instance_is_orphaned_and_force_terminate_unblocks_its_partitions() {
    streams_instance_killed("classic");
}

/// The same with `group.protocol=streams`: a KIP-1071 streams group, whose
/// members kdp reads with StreamsGroupDescribe. Kafka 3.9 has no streams
/// groups (the harness refuses the protocol there): skipped.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn a_killed_streams_group_instance_is_orphaned_and_lag_reads_the_streams_group() {
    if env().kafka_version.starts_with("3.") {
        eprintln!(
            "skipped: Kafka {} has no streams groups",
            env().kafka_version
        );
        return;
    }
    let app = streams_instance_killed("streams");
    // kdp lag measures a streams group (its offsets by OffsetFetch, its
    // state by StreamsGroupDescribe): a Streams app (group.protocol=streams)
    // that read the application's input to its end and closed
    let env = env();
    let input = format!("{app}-in");
    let reader = format!("{app}-lag");
    let r = common::run(
        Command::new(&env.java)
            .args([
                "-cp",
                &env.classpath,
                "dev.kdp.it.LagScenario",
                "streams-run",
            ])
            .args(["--bootstrap", &env.bootstrap, "--timeout-seconds", "120"])
            .args(["--application-id", &reader, "--topic", &input])
            .args(["--guarantee", "exactly_once_v2"]),
        Duration::from_secs(180),
    );
    assert_eq!(r.code, 0, "LagScenario streams-run: {}", r.stderr);
    let run: Value = serde_json::from_str(r.stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let committed = &run["closed"]["listStreamsGroupOffsets"];
    let r = kdp(&[
        "lag",
        "--bootstrap-server",
        &env.bootstrap,
        "--group",
        &reader,
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("kdp lag printed no JSON ({e}): {}", r.stderr));
    assert_eq!(r.code, 0, "caught up: {doc}\n{}", r.stderr);
    let rows = doc["Lag"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "one row per input partition: {doc}");
    for row in rows {
        assert_eq!(row["Group"], reader.as_str(), "{row}");
        assert_eq!(row["GroupType"], "streams", "{row}");
        assert_eq!(row["GroupState"], "Empty", "{row}");
        let p = row["Partition"].as_i64().unwrap().to_string();
        // the offsets Kafka's Admin lists for the streams group
        assert_eq!(
            row["CommittedOffset"], committed[&p],
            "{row} vs {committed}"
        );
        assert_eq!(row["CommittedOffset"], row["HighWatermark"], "{row}");
        assert_eq!(row["Records"], 0, "{row}");
    }
}

/// Two Streams instances of one application (`protocol`: classic or
/// streams), one killed inside its open transactions: its ids orphaned
/// once the group drops it, the other's live, and force-terminate unblocks
/// the orphan's partitions. Returns the application id.
fn streams_instance_killed(protocol: &str) -> String {
    let env = env();
    let app = unique(&format!("owners-streams-{protocol}"));
    let (input, output) = (format!("{app}-in"), format!("{app}-out"));
    create_topic(&env, &input, 4);
    create_topic(&env, &output, 4);
    let mut args = vec![
        "--application-id",
        &app,
        "--input",
        &input,
        "--output",
        &output,
        "--threads",
        "2",
        "--group-protocol",
        protocol,
        "--commit-interval-ms",
        "600000",
        "--transaction-timeout-ms",
        "600000",
    ];
    let streams_group = protocol == "streams";
    if !streams_group {
        // a streams group's session timeout is the broker's (45 s by default)
        args.extend(["--session-timeout-ms", "6000"]);
    }
    let mut a = Harness::start(&env, &env.classpath, "dev.kdp.it.StreamsApp", &args);
    a.until("A running", Duration::from_secs(90), |e| {
        e.iter().any(|v| v["event"] == "running")
    });
    let mut b = Harness::start(&env, &env.classpath, "dev.kdp.it.StreamsApp", &args);
    b.until("B running", Duration::from_secs(90), |e| {
        e.iter().any(|v| v["event"] == "running")
    });
    let process = |h: &Harness| {
        h.events("running").last().unwrap()["processId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    if streams_group {
        // both instances' 4 threads in a Stable group, by Kafka's Admin
        let (pa, pb) = (process(&a), process(&b));
        let start = Instant::now();
        loop {
            let (state, members) = admin_streams_group(&env, &app);
            let has = |p: &str| members.iter().filter(|m| *m == p).count() == 2;
            if state == "Stable" && members.len() == 4 && has(&pa) && has(&pb) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(150),
                "streams group never Stable with both: {state} {members:?}"
            );
            std::thread::sleep(Duration::from_secs(2));
        }
        // let the last assignment's tasks start
        std::thread::sleep(Duration::from_secs(3));
    } else {
        // both in the group, each with tasks: A re-enters RUNNING after B joined
        a.until("A rebalanced", Duration::from_secs(60), |e| {
            e.iter().filter(|v| v["event"] == "running").count() >= 2
        });
    }
    let (pa, pb) = (process(&a), process(&b));
    for p in 0..4 {
        scenario(
            &env,
            "idempotent",
            &[
                "--topic",
                &input,
                "--partition",
                &p.to_string(),
                "--records",
                "1",
            ],
        );
    }
    a.until("A open", Duration::from_secs(60), |e| {
        e.iter().any(|v| v["event"] == "open")
    });
    b.until("B open", Duration::from_secs(60), |e| {
        e.iter().any(|v| v["event"] == "open")
    });
    let opened: Vec<(String, String, i64, i64)> = a
        .events("open")
        .map(|v| {
            (
                v["transactionalId"].as_str().unwrap().to_string(),
                v["topic"].as_str().unwrap().to_string(),
                v["partition"].as_i64().unwrap(),
                v["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    // SIGKILL inside the open transactions
    drop(a);

    // once the group has dropped A's members, its ids are orphaned
    let start = Instant::now();
    let (code, rows) = loop {
        let (code, rows, _) = owners(&env, &["--group", &app]);
        let settled = opened
            .iter()
            .all(|(id, ..)| rows.get(id).is_some_and(|r| r["Verdict"] == "orphaned"));
        if settled {
            break (code, rows);
        }
        // a streams group drops a member after the broker's 45 s session timeout
        let limit = if streams_group { 150 } else { 90 };
        assert!(
            start.elapsed() < Duration::from_secs(limit),
            "A's ids never orphaned: {rows:?}"
        );
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(code, 4, "an orphaned open transaction exits 4");
    for (id, r) in &rows {
        assert_eq!(r["Framework"], "kafka-streams", "{id}");
        assert_eq!(r["Application"], app.as_str(), "{id}");
        if id.contains(&pa) {
            assert_eq!(r["Instance"], pa.as_str());
        } else {
            assert!(id.contains(&pb), "{id}");
            assert_eq!(r["Verdict"], "live", "{id}: {r}");
            // the evidence names B's member of that thread
            let thread = id.rsplit('-').next().unwrap();
            let member = format!("member {app}-{pb}-StreamThread-{thread}-consumer");
            assert!(
                r["Evidence"].as_str().unwrap().starts_with(&member),
                "{id}: {r}"
            );
            assert_ne!(
                r["Action"].as_str().map(|a| a.contains("force-terminate")),
                Some(true)
            );
        }
    }
    // a read_committed group reads the output to its LSO and commits there:
    // the transaction holding each pinned partition's LSO holds it back
    let reader = format!("{app}-reader");
    scenario(
        &env,
        "group-consume",
        &["--topic", &output, "--group", &reader],
    );
    let (_, held, doc) = owners(&env, &["--group", &app]);
    b.drain();
    for (id, topic, partition, offset) in &opened {
        let (lso, _) = offsets(&env, topic, *partition);
        // A's first offset, or B's live transaction lower down
        let holder = if lso == *offset {
            id.clone()
        } else {
            b.events("open")
                .find(|v| {
                    v["topic"] == topic.as_str()
                        && v["partition"] == *partition
                        && v["offset"] == lso
                })
                .and_then(|v| v["transactionalId"].as_str())
                .unwrap_or_else(|| panic!("{topic}-{partition}: no open transaction at LSO {lso}"))
                .to_string()
        };
        let groups = &held[&holder]["GroupsBlocked"];
        assert!(
            groups
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g == reader.as_str())),
            "{holder} holds {topic}-{partition} at {lso}: {}",
            held[&holder]
        );
    }
    let summary = doc["Applications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["Application"] == app.as_str())
        .unwrap();
    assert!(
        summary["GroupsBlocked"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == reader.as_str())),
        "{summary}"
    );
    for (id, topic, partition, offset) in &opened {
        let r = &rows[id];
        let pinned = format!("{topic}-{partition}");
        assert!(
            r["PinnedPartitions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == &pinned),
            "{r}"
        );
        let action = r["Action"].as_str().unwrap();
        assert!(
            action.contains(&format!("--transactional-id {id}")),
            "{action}"
        );
        // the orphan holds read_committed consumers at its first offset
        let (lso, hw) = offsets(&env, topic, *partition);
        assert!(
            lso <= *offset && lso < hw,
            "{pinned}: LSO {lso}, HW {hw}, first {offset}"
        );
        // the suggested command, as printed
        let mut words: Vec<&str> = action.split(' ').skip(1).collect();
        words.push("--yes");
        let ft = kdp(&words);
        assert_eq!(ft.code, 0, "{action}: {}", ft.stderr);
        let read = scenario(
            &env,
            "consume-committed",
            &[
                "--topic",
                topic,
                "--partition",
                &partition.to_string(),
                "--seconds",
                "20",
            ],
        );
        // Streams writes by key, so B's live transaction may hold the same
        // partition lower down: the consumer then stops at B's first offset
        b.drain();
        let live_below = b
            .events("open")
            .filter(|v| v["topic"] == topic.as_str() && v["partition"] == *partition)
            .filter_map(|v| v["offset"].as_i64())
            .filter(|o| o < offset)
            .min();
        let position = read["position"].as_i64().unwrap();
        match live_below {
            Some(live) => assert_eq!(
                position, live,
                "{pinned}: held by B's live transaction: {read}"
            ),
            None => assert!(
                position > *offset,
                "{pinned}: a read_committed consumer still stops at {offset}: {read}"
            ),
        }
    }
    let (_, after, _) = owners(&env, &["--group", &app]);
    for (id, ..) in &opened {
        assert_ne!(after[id]["Verdict"], "live");
        assert_eq!(
            after[id]["Action"],
            Value::Null,
            "{id}: nothing open any more"
        );
    }
    drop(b);
    app
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn flink_named_ids_across_checkpoints_and_an_id_of_no_scheme() {
    let env = env();
    let prefix = unique("ingest-sink");
    let topic = format!("{prefix}-out");
    create_topic(&env, &topic, 1);
    let id = |counter: u32| format!("{prefix}-0-{counter}");
    let open = |tid: &str| write_txn(&env, &topic, 2, tid, true);
    let commit = |tid: &str| write_txn(&env, &topic, 1, tid, false);
    // a job killed with checkpoint 5's transaction open; a new job without
    // state starts again at 1 and commits 1 and 2; its 3 is open
    open(&id(5));
    commit(&id(1));
    commit(&id(2));
    open(&id(3));
    let plain = format!("{prefix}.tx-7");
    commit(&plain);

    let (code, rows, doc) = owners(&env, &["--prefix", &prefix]);
    assert_eq!(code, 4, "a lingering transaction exits 4: {doc}");
    let lingering = &rows[&id(5)];
    assert_eq!(lingering["Verdict"], "lingering");
    assert_eq!(lingering["Framework"], "flink-kafka-sink");
    assert_eq!(lingering["Application"], prefix.as_str());
    assert!(
        lingering["Evidence"].as_str().unwrap().contains(&id(2)),
        "{lingering}"
    );
    assert!(lingering["Action"]
        .as_str()
        .unwrap()
        .contains("force-terminate"));
    let newest = &rows[&id(3)];
    assert_eq!(
        (
            newest["Verdict"].as_str(),
            newest["NewestCheckpoint"].as_bool()
        ),
        (Some("live"), Some(true))
    );
    assert!(newest["Action"]
        .as_str()
        .unwrap()
        .contains("discards data Flink checkpointed"));
    assert_eq!(rows[&plain]["Verdict"], "unattributed");
    assert_eq!(rows[&plain]["Framework"], Value::Null);
    let app = doc["Applications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["Application"] == prefix.as_str())
        .unwrap();
    assert_eq!(
        (app["Lingering"].as_i64(), app["OpenTransactions"].as_i64()),
        (Some(1), Some(2))
    );

    // kdp blocked names the owner and suggests ending the lingering one only
    let r = kdp(&[
        "blocked",
        "--bootstrap-server",
        &env.bootstrap,
        "--topic",
        &topic,
        "-o",
        "json",
        "--blocked-after",
        "0",
    ]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let row = doc["Blocked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["TransactionalId"] == id(5).as_str())
        .unwrap();
    assert_eq!(row["Owner"]["Verdict"], "lingering");
    assert!(row["Unblock"].as_str().unwrap().contains("force-terminate"));
    // end them: the next test run starts clean
    force_terminate(&env, &[id(5), id(3)]);
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn a_connect_task_id_is_attributed_to_its_connector_task_and_worker() {
    let env = env();
    let group = unique("kdp-connect");
    let topic = format!("{group}-ticks");
    create_topic(&env, &topic, 2);
    let mut w = Harness::start(
        &env,
        &env.classpath,
        "dev.kdp.it.ConnectWorker",
        &[
            "--group-id",
            &group,
            "--connector",
            "ticks-2024-v2",
            "--topic",
            &topic,
            "--tasks",
            "2",
            "--rebalance-delay-ms",
            "5000",
        ],
    );
    w.until("worker up", Duration::from_secs(120), |e| {
        e.iter().any(|v| v["event"] == "worker")
    });
    w.until("tasks running", Duration::from_secs(120), |e| {
        e.iter().any(|v| {
            v["event"] == "connector"
                && v["tasks"]
                    .as_array()
                    .is_some_and(|t| t.len() == 2 && t.iter().all(|t| t["state"] == "RUNNING"))
        })
    });
    let worker = w.events("worker").next().unwrap()["clientId"]
        .as_str()
        .unwrap()
        .to_string();
    // a task's id shows once it has run a transaction
    let start = Instant::now();
    let rows = loop {
        let (_, rows, _) = owners(&env, &["--group", &group]);
        if (0..2).all(|t| rows.contains_key(&format!("{group}-ticks-2024-v2-{t}"))) {
            break rows;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no task ids: {rows:?}"
        );
        std::thread::sleep(Duration::from_secs(1));
    };
    for t in 0..2 {
        let r = &rows[&format!("{group}-ticks-2024-v2-{t}")];
        assert_eq!(r["Framework"], "kafka-connect", "{r}");
        assert_eq!(r["Application"], format!("{group}/ticks-2024-v2"));
        assert_eq!(r["Task"], format!("task {t}"));
        assert_eq!(r["Instance"], worker.as_str());
        assert_eq!(r["Verdict"], "live");
    }
    let leader = &rows[&format!("connect-cluster-{group}")];
    assert_eq!(
        (leader["Task"].as_str(), leader["Verdict"].as_str()),
        (Some("leader"), Some("live"))
    );
    drop(w);
}

/// Two Flink jobs on one transactional-id prefix, as producers following
/// KafkaSink's naming exactly (`TransactionalIdFactory`: prefix, subtask,
/// checkpoint): job A at checkpoints 41.. on one topic, job B started
/// fresh at 1.. on another, committing in turns, each with its current
/// transaction open. `kdp owners` names the collision, leaves the ids
/// unknown and suggests no force-terminate. (Two real FlinkSinkJob runs
/// on one prefix fence each other and restart in turns; their ids
/// interleave only for stretches: docs/OWNERS.md.)
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn two_flink_jobs_on_one_prefix_are_named_as_colliding() {
    let env = env();
    let prefix = unique("shared-sink");
    let id = |checkpoint: u32| format!("{prefix}-0-{checkpoint}");
    let topic = |job: &str| format!("{prefix}-{job}");
    for job in ["a", "b"] {
        create_topic(&env, &topic(job), 1);
    }
    let commit = |job: &str, tid: &str| write_txn(&env, &topic(job), 1, tid, false);
    let open = |job: &str, tid: &str| write_txn(&env, &topic(job), 1, tid, true);
    commit("a", &id(41));
    commit("b", &id(1));
    commit("a", &id(42));
    commit("b", &id(2));
    open("a", &id(43));
    open("b", &id(3));

    let (code, rows, doc) = owners(&env, &["--prefix", &format!("{prefix}-")]);
    assert_eq!(code, 4, "two jobs on one prefix exit 4: {doc}");
    let app = doc["Applications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["Application"] == prefix.as_str())
        .unwrap();
    let c = &app["Collisions"][0];
    assert_eq!(c["Subtask"], 0, "{app}");
    assert_eq!(c["Switches"], 5, "{app}");
    let sequences = c["Sequences"].as_array().unwrap();
    assert_eq!(
        (
            sequences[0]["First"].as_str(),
            sequences[0]["Last"].as_str()
        ),
        (Some(id(41).as_str()), Some(id(43).as_str())),
        "{app}"
    );
    assert_eq!(
        (
            sequences[1]["First"].as_str(),
            sequences[1]["Last"].as_str()
        ),
        (Some(id(1).as_str()), Some(id(3).as_str())),
        "{app}"
    );
    // the open transactions of each write their own topic
    assert_eq!(sequences[0]["Topics"], serde_json::json!([topic("a")]));
    assert_eq!(sequences[1]["Topics"], serde_json::json!([topic("b")]));
    assert_eq!(rows.len(), 6, "{doc}");
    for (tid, r) in &rows {
        assert_eq!(r["Framework"], "flink-kafka-sink", "{tid}");
        assert_eq!(r["Verdict"], "unknown", "{tid}: {r}");
        assert!(
            r["Evidence"].as_str().unwrap().contains("two jobs"),
            "{tid}: {r}"
        );
        // no force-terminate of a transaction one of the jobs may commit
        assert_eq!(r["Action"], Value::Null, "{tid}: {r}");
    }
    force_terminate(&env, &[id(43), id(3)]);
}
