//! Logs written to a pipe or file carry no colour escapes (they would end up as
//! `^[[2m` noise in log files and `jq` pipelines).

use std::process::{Command, Stdio};

#[test]
fn logs_to_a_pipe_have_no_ansi_escapes() {
    let out = Command::new(env!("CARGO_BIN_EXE_kdp"))
        .args(["demo", "-v"])
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run kdp demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // -v logs the mock brokers' listeners at info: there is something to colour.
    assert!(stderr.contains("INFO"), "no log lines:\n{stderr}");
    assert!(!stderr.contains("\x1b["), "colour escapes in:\n{stderr:?}");
}
