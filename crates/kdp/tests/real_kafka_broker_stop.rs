//! A broker that stops answering during a scan (its own test binary, so that
//! it runs after tests/real_kafka.rs; cargo runs test binaries one at a time).
//!
//! Broker 3 (never node 1, the only controller) is frozen with SIGSTOP: its
//! kernel still accepts connections but nothing answers, the harshest case for
//! a client (a refused connection fails fast). kdp must re-route its partitions
//! once Kafka moves leadership (broker.session.timeout.ms=6000 here) or report
//! client-side error rows, and never hang. The broker is thawed with SIGCONT
//! (also if the test fails) and the test waits until it serves again with a
//! full ISR, so the cluster is left as it was found.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

const VICTIM: i32 = 3;

struct Frozen {
    pid: String,
}

impl Frozen {
    fn freeze(pid: &str) -> Self {
        let st = Command::new("kill").args(["-STOP", pid]).status().unwrap();
        assert!(st.success(), "kill -STOP {pid}");
        Frozen {
            pid: pid.to_string(),
        }
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.pid]).status();
    }
}

fn isr_full(env: &Env, topic: &str) -> bool {
    let v = scenario(env, "leaders", &["--topic", topic]);
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["isr"].as_array().unwrap().len() == 3 && p["leader"].as_i64().unwrap() >= 0)
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn broker_stopped_during_a_scan() {
    let env = env();
    let topic = unique("kdp-stop");
    let created = create_topic(&env, &topic, 6);
    let leaders: BTreeMap<i32, i32> = created["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap() as i32,
                p["leader"].as_i64().unwrap() as i32,
            )
        })
        .collect();
    let on_victim: Vec<i32> = leaders
        .iter()
        .filter(|(_, l)| **l == VICTIM)
        .map(|(p, _)| *p)
        .collect();
    assert!(
        !on_victim.is_empty(),
        "broker {VICTIM} leads none of {leaders:?}"
    );
    // producer state on a partition the victim leads: replicated, so the new leader has it too
    let p = on_victim[0];
    let idem = scenario(
        &env,
        "idempotent",
        &[
            "--topic",
            &topic,
            "--partition",
            &p.to_string(),
            "--records",
            "3",
        ],
    );
    let want = scenario_row(&idem);

    let pid = std::fs::read_to_string(format!("{}/node{VICTIM}/pid", env.state_dir))
        .expect("pid file of the broker")
        .trim()
        .to_string();
    let props = std::env::temp_dir().join(format!("{}.properties", unique("kdp-stop")));
    std::fs::write(
        &props,
        "security.protocol=PLAINTEXT\nrequest.timeout.ms=2000\n",
    )
    .unwrap();
    let props = props.to_str().unwrap().to_string();
    // bootstrap from broker 1 only: the frozen broker must not be needed
    let bootstrap = env.broker_addr(1).to_string();

    {
        let _frozen = Frozen::freeze(&pid);

        // 1. --broker-id on the frozen broker, at once: its requests time out, and
        //    with --broker-id that is the answer (error rows), within --timeout
        let r = kdp(&[
            "describe",
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--output",
            "jsonl",
            "--broker-id",
            &VICTIM.to_string(),
            "--timeout",
            "5s",
            "--command-config",
            &props,
        ]);
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(r.elapsed < Duration::from_secs(7), "{:?}", r.elapsed);
        let lines = parse_jsonl(&r.stdout);
        assert_eq!(
            lines.len(),
            6,
            "every partition (all have a replica on {VICTIM}) gets a row:\n{}",
            r.stdout
        );
        for l in &lines {
            let code = l["ErrorCode"]
                .as_i64()
                .unwrap_or_else(|| panic!("not an error row: {l}"));
            assert!([7, 8, 13].contains(&code), "{l}");
        }

        // 2. leaders: requests to the frozen broker time out, kdp refreshes
        //    metadata and retries until Kafka has moved leadership.
        let r = kdp(&[
            "describe",
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--output",
            "jsonl",
            "--show-empty",
            "--timeout",
            "30s",
            "--command-config",
            &props,
        ]);
        assert!(
            r.elapsed < Duration::from_secs(33),
            "bounded by --timeout: {:?}",
            r.elapsed
        );
        let lines = parse_jsonl(&r.stdout);
        let mut seen = std::collections::BTreeSet::new();
        for l in &lines {
            let part = l["Partition"].as_i64().unwrap() as i32;
            seen.insert(part);
            if let Some(code) = l.get("ErrorCode") {
                // only the frozen broker's partitions may fail, with a client-side error
                assert!(on_victim.contains(&part), "{l}");
                assert!([7, 13].contains(&code.as_i64().unwrap()), "{l}");
                assert_eq!(l["ClientSide"], true);
            } else {
                assert_ne!(
                    l["BrokerId"].as_i64(),
                    Some(VICTIM as i64),
                    "answered by a live broker: {l}"
                );
            }
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            (0..6).collect::<Vec<_>>(),
            "{}",
            r.stdout
        );
        match r.code {
            0 => {
                // re-routed: the new leader reports the same producer state
                let rows: Vec<ProducerRow> = lines
                    .iter()
                    .filter(|l| l["Partition"] == p && l.get("ProducerId").is_some())
                    .map(jsonl_row)
                    .collect();
                assert_eq!(rows, vec![want.clone()]);
            }
            1 => eprintln!(
                "error rows for the frozen broker's partitions:\n{}",
                r.stdout
            ),
            c => panic!("exit {c}: {}", r.stderr),
        }
    } // SIGCONT

    // leave the cluster as found: the broker answers again, every ISR is full
    let start = Instant::now();
    loop {
        let r = kdp(&[
            "describe",
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--broker-id",
            &VICTIM.to_string(),
            "--timeout",
            "5s",
        ]);
        if r.code == 0 && isr_full(&env, &topic) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "broker {VICTIM} did not come back"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    let _ = std::fs::remove_file(&props);
}
