//! `kdp describe` usage and unreachable clusters: no Kafka needed.

use std::io::Write;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn kdp(args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_kdp"))
        .args(args)
        .output()
        .expect("run kdp");
    (out, start.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[
            "describe",
            "--bootstrap-server",
            "h:9092",
            "--partition",
            "0",
        ][..],
        &[
            "describe",
            "--bootstrap-server",
            "h:9092",
            "--topic",
            "t",
            "--partition",
            "-1",
        ],
        &[
            "describe",
            "--bootstrap-server",
            "h:9092",
            "--timeout",
            "soon",
        ],
        &[
            "describe",
            "--bootstrap-server",
            "h:9092",
            "--timeout",
            "0s",
        ],
        &[
            "describe",
            "--bootstrap-server",
            "h:9092",
            "--output",
            "yaml",
        ],
        &["describe", "--bootstrap-server", "no-port"],
        &["describe", "--bootstrap-server", ","],
        &["describe"],
    ] {
        let (o, _) = kdp(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let (o, _) = kdp(&["describe", "--bootstrap-server", "no-port"]);
    assert!(
        stderr(&o).starts_with("kdp: --bootstrap-server"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn command_config_errors_are_usage_errors_named_by_key() {
    let path = std::env::temp_dir().join(format!("kdp-cli-{}.properties", std::process::id()));
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(
        f,
        "# from an SSL client\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN"
    )
    .unwrap();
    drop(f);
    let (o, elapsed) = kdp(&[
        "describe",
        "--bootstrap-server",
        "127.0.0.1:9",
        "--command-config",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with("kdp: --command-config"), "{e}");
    assert!(
        e.contains("sasl.jaas.config: sasl.mechanism=PLAIN needs a username and password"),
        "{e}"
    );
    assert!(
        elapsed < Duration::from_secs(2),
        "rejected before connecting"
    );
    let (o, _) = kdp(&[
        "describe",
        "--bootstrap-server",
        "127.0.0.1:9",
        "--command-config",
        "/nonexistent/x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_file(path);
}

/// Nothing listens: kdp keeps trying until `--timeout` (a broker starting
/// meanwhile would be found: see kdp-client's paused-clock tests), then exits 3.
#[test]
fn nothing_listening_exits_3() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let (o, _) = kdp(&["describe", "--bootstrap-server", &addr, "--timeout", "1s"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("kdp: cannot reach the cluster"),
        "{}",
        stderr(&o)
    );
    // the reason, not only the timeout (kdp's words, not the OS's)
    assert!(
        stderr(&o).contains(&format!("cannot connect to {addr}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_silent_bootstrap_server_exits_3_within_the_timeout() {
    // accepts (the kernel does), never answers ApiVersions
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let (o, elapsed) = kdp(&[
        "describe",
        "--bootstrap-server",
        &addr,
        "--timeout",
        "1500ms",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        elapsed >= Duration::from_millis(1400) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
    assert!(
        stderr(&o).contains("cannot reach the cluster"),
        "{}",
        stderr(&o)
    );
    drop(l);
}
