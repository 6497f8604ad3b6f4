//! `kdp mock-broker` and `kdp demo` as processes: what they print, that the
//! mock serves, and that it stops cleanly on SIGTERM / SIGINT.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, MetadataRequest, MetadataResponse,
    TopicRequest,
};
use kdp_wire::{Request, RequestHeader};

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

fn cluster_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kdp-server/tests/data/cluster.json")
}

fn call<R: Request>(s: &mut TcpStream, req: &R, version: i16) -> R::Response {
    let header = RequestHeader {
        request_api_key: R::API_KEY,
        request_api_version: version,
        correlation_id: 42,
        client_id: Some("kdp-cli-test".into()),
        ..Default::default()
    };
    s.write_all(&request_frame_to_vec(&header, req)).unwrap();
    let mut size = [0u8; 4];
    s.read_exact(&mut size).unwrap();
    let mut frame = size.to_vec();
    frame.resize(4 + i32::from_be_bytes(size) as usize, 0);
    s.read_exact(&mut frame[4..]).unwrap();
    decode_response_frame::<R::Response>(&frame, version)
        .unwrap()
        .1
}

struct MockProcess {
    child: Child,
    bootstrap: String,
    stderr: std::process::ChildStderr,
}

impl MockProcess {
    fn start(extra: &[&str]) -> MockProcess {
        let mut child = Command::new(KDP)
            .arg("mock-broker")
            .arg("--cluster")
            .arg(cluster_file())
            .arg("--listen")
            .arg("127.0.0.1:0")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        MockProcess {
            child,
            bootstrap: line.trim().to_string(),
            stderr,
        }
    }

    fn addrs(&self) -> Vec<String> {
        self.bootstrap.split(',').map(str::to_string).collect()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig}");
    }

    /// Waits (bounded) for the exit; returns the status code and stderr.
    fn wait(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                self.stderr.read_to_string(&mut err).unwrap();
                return (status.code(), err);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("kdp mock-broker did not exit within 10s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mock_broker_prints_bootstrap_serves_and_stops_on_sigterm() {
    let mock = MockProcess::start(&[]);
    let addrs = mock.addrs();
    assert_eq!(addrs.len(), 4, "{}", mock.bootstrap);
    for a in &addrs {
        assert!(a.starts_with("127.0.0.1:"), "{a}");
    }

    // Metadata advertises exactly the listeners printed.
    let mut s = TcpStream::connect(&addrs[0]).unwrap();
    let md: MetadataResponse = call(
        &mut s,
        &MetadataRequest {
            topics: None,
            ..Default::default()
        },
        12,
    );
    let advertised: Vec<String> = md
        .brokers
        .iter()
        .map(|b| format!("{}:{}", b.host, b.port))
        .collect();
    assert_eq!(advertised, addrs);

    // The follower broker 3 answers orders-3 from its own (diverged) state.
    let mut s3 = TcpStream::connect(&addrs[2]).unwrap();
    let r: DescribeProducersResponse = call(
        &mut s3,
        &DescribeProducersRequest {
            topics: vec![TopicRequest {
                name: "orders".into(),
                partition_indexes: vec![3],
                ..Default::default()
            }],
            ..Default::default()
        },
        0,
    );
    assert_eq!(
        r.topics[0].partitions[0].active_producers[0].producer_epoch,
        11
    );

    mock.signal("TERM");
    // Open connections are closed by the shutdown.
    let mut buf = [0u8; 1];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(s.read(&mut buf).unwrap_or(0), 0);
    let (code, err) = mock.wait();
    assert_eq!(code, Some(0), "{err}");
    for (id, a) in [1, 2, 3, 4].iter().zip(&addrs) {
        assert!(
            err.contains(&format!("broker {id} listening on {a}")),
            "{err}"
        );
    }
    assert!(err.contains("SIGTERM"), "{err}");
}

#[test]
fn mock_broker_stops_on_sigint() {
    let mock = MockProcess::start(&["--idle-timeout", "5s", "--max-request-size", "4096"]);
    // A request above --max-request-size closes that connection only.
    let addrs = mock.addrs();
    let mut s = TcpStream::connect(&addrs[0]).unwrap();
    s.write_all(&5000i32.to_be_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 1];
    assert_eq!(s.read(&mut buf).unwrap_or(0), 0);
    let mut ok = TcpStream::connect(&addrs[0]).unwrap();
    let md: MetadataResponse = call(
        &mut ok,
        &MetadataRequest {
            topics: Some(vec![]),
            ..Default::default()
        },
        9,
    );
    assert_eq!(md.brokers.len(), 4);
    mock.signal("INT");
    let (code, err) = mock.wait();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("SIGINT"), "{err}");
}

#[test]
fn mock_broker_stops_on_a_signal_sent_as_soon_as_the_bootstrap_line_is_out() {
    // The handlers are in place before the line is printed; a signal that
    // came first would kill the process (no exit code).
    for sig in ["TERM", "INT", "TERM", "INT"] {
        let mock = MockProcess::start(&[]);
        mock.signal(sig);
        let (code, err) = mock.wait();
        assert_eq!(code, Some(0), "{err}");
    }
}

#[test]
fn mock_broker_rejects_a_bad_cluster_file_with_its_path() {
    let dir = std::env::temp_dir().join(format!("kdp-mock-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.json");
    std::fs::write(
        &file,
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "t", "partitions": [
            {"partition": 0, "leader": 2, "replicas": [1]}]}]}"#,
    )
    .unwrap();
    let out = Command::new(KDP)
        .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(err.contains("topics[0].partitions[0].leader"), "{err}");
    assert!(err.contains("bad.json"), "{err}");
}

#[test]
fn demo_prints_the_table_with_the_seed_producer() {
    let out = Command::new(KDP).arg("demo").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // orders-3: ProducerId 0, epoch 12, sequence 0, timestamp 0, coordinator
    // epoch 12, open transaction at 150382.
    let seed_row = stdout
        .lines()
        .find(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            c.len() > 3 && c[0] == "orders" && c[1] == "3"
        })
        .unwrap_or_else(|| panic!("no orders-3 row:\n{stdout}"));
    for cell in ["12", "150382"] {
        assert!(seed_row.split_whitespace().any(|c| c == cell), "{seed_row}");
    }
    // timestamp 0 is unknown: no 1970 date and no 56-year age
    let cells: Vec<&str> = seed_row.split_whitespace().collect();
    assert_eq!((cells[6], cells[7]), ("-", "-"), "{seed_row}");
    assert!(!seed_row.contains("1970"), "{seed_row}");
    for topic in ["payments", "inventory", "__consumer_offsets"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(topic)),
            "{topic}:\n{stdout}"
        );
    }
}

#[test]
fn demo_json_holds_the_seed_example_verbatim() {
    let out = Command::new(KDP)
        .args(["demo", "--output", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let orders = doc["Topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["Name"] == "orders")
        .unwrap();
    let p3 = orders["Partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["PartitionIndex"] == 3)
        .unwrap();
    let seed: serde_json::Value =
        serde_json::from_str(include_str!("../../../vectors/seed-example.json")).unwrap();
    assert_eq!(*p3, seed["Topics"][0]["Partitions"][0]);
}

#[test]
fn demo_jsonl_streams_one_object_per_producer() {
    let out = Command::new(KDP)
        .args(["demo", "--output", "jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 10, "{}", lines.len());
    // The hanging transaction on payments-0 is there, with an old timestamp.
    assert!(lines.iter().any(|l| l["Topic"] == "payments"
        && l["Partition"] == 0
        && l["ProducerId"] == 7003
        && l["CurrentTxnStartOffset"] == 40112));
}

#[test]
fn demo_cluster_file_runs_in_mock_broker() {
    let out = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let path = std::env::temp_dir().join(format!("kdp-demo-cluster-{}.json", std::process::id()));
    std::fs::write(&path, &out.stdout).unwrap();
    let mut child = Command::new(KDP)
        .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let addrs: Vec<&str> = line.trim().split(',').collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(addrs.len(), 3, "{line}");
}
