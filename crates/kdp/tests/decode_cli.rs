//! `kdp decode` and `kdp encode`, run as the built binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &[u8] = include_bytes!("../../../vectors/seed-example.bin");
const JSON: &str = include_str!("../../../vectors/seed-example.json");

fn kdp(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kdp");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("kdp output")
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn decode_seed_bytes_from_file_and_stdin() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../vectors/seed-example.bin"
    );
    for (args, input) in [
        (vec!["decode", path], &[][..]),
        (vec!["decode"], BIN),
        (vec!["decode", "-"], BIN),
    ] {
        let o = kdp(&args, input);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(json(&o.stdout), json(JSON.as_bytes()), "{args:?}");
    }
}

#[test]
fn decode_hex_ignores_whitespace() {
    let hex: String = kdp_wire_hex(BIN)
        .as_bytes()
        .chunks(8)
        .map(|c| format!("{} \n", String::from_utf8_lossy(c)))
        .collect();
    let o = kdp(&["decode", "--hex"], hex.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o.stdout), json(JSON.as_bytes()));
}

fn kdp_wire_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn encode_seed_json_gives_seed_bytes() {
    let o = kdp(&["encode"], JSON.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, BIN);
    let o = kdp(&["encode", "--hex"], JSON.as_bytes());
    assert_eq!(
        String::from_utf8(o.stdout).unwrap().trim(),
        kdp_wire_hex(BIN)
    );
}

#[test]
fn response_frame_round_trip() {
    let o = kdp(
        &["encode", "--frame", "--correlation-id", "7"],
        JSON.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let frame = o.stdout;
    // size, correlation id, empty header tags, then the body.
    assert_eq!(&frame[..4], &((frame.len() - 4) as i32).to_be_bytes());
    assert_eq!(&frame[4..8], &7i32.to_be_bytes());
    assert_eq!(frame[8], 0);
    assert_eq!(&frame[9..], BIN);
    let o = kdp(&["decode", "--frame"], &frame);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json(&o.stdout);
    assert_eq!(doc["Header"]["CorrelationId"], 7);
    assert_eq!(doc["Body"], json(JSON.as_bytes()));
    // What decode --frame prints, encode --frame takes back.
    let again = kdp(&["encode", "--frame"], &o.stdout);
    assert_eq!(again.stdout, frame, "{}", stderr(&again));
}

#[test]
fn request_frame_has_classic_client_id() {
    let req = r#"{"Topics":[{"Name":"orders","PartitionIndexes":[3,4]}]}"#;
    let o = kdp(
        &[
            "encode",
            "--request",
            "--frame",
            "--correlation-id",
            "9",
            "--client-id",
            "ops",
        ],
        req.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let f = &o.stdout;
    // api key 61, version 0, correlation 9, client id as int16 length 3 + "ops", header tags 0
    assert_eq!(&f[4..14], &[0, 61, 0, 0, 0, 0, 0, 9, 0, 3]);
    assert_eq!(&f[14..18], b"ops\0");
    let o = kdp(&["decode", "--frame", "--request"], f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json(&o.stdout);
    assert_eq!(doc["Header"]["ClientId"], "ops");
    assert_eq!(doc["Header"]["RequestApiKey"], 61);
    assert_eq!(doc["Body"], json(req.as_bytes()));
}

#[test]
fn malformed_bytes_exit_1_with_offset_and_path() {
    let o = kdp(&["decode"], &BIN[..30]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("at byte 20 (Topics[0].Partitions[0].ActiveProducers)"),
        "{e}"
    );
    assert!(o.stdout.is_empty());

    let mut trailing = BIN.to_vec();
    trailing.push(0);
    let o = kdp(&["decode"], &trailing);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("at byte 61"), "{}", stderr(&o));

    let o = kdp(&["decode", "--hex"], b"0g");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("invalid hex digit"), "{}", stderr(&o));
}

#[test]
fn malformed_json_exit_1_naming_the_path() {
    let bad = JSON.replace("\"ErrorCode\": 0", "\"ErrorCode\": 70000");
    let o = kdp(&["encode"], bad.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("Topics[0].Partitions[0].ErrorCode"),
        "{}",
        stderr(&o)
    );

    let unknown = JSON.replace("\"ThrottleTimeMs\"", "\"Bogus\": 1, \"ThrottleTimeMs\"");
    let o = kdp(&["encode"], unknown.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("Bogus"), "{}", stderr(&o));
}

#[test]
fn bad_usage_exits_2() {
    let o = kdp(&["decode", "/nonexistent/kdp-input"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = kdp(&["encode", "--frame"], JSON.as_bytes());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--correlation-id"), "{}", stderr(&o));
    let o = kdp(&["decode", "--no-such-flag"], b"");
    assert_eq!(o.status.code(), Some(2));
}
