//! `kdp mock-broker` as a child process, for the tests that drive the CLI
//! against it.
#![allow(dead_code)] // each test binary uses a different subset

mod served;
#[allow(unused_imports)] // not every test binary serves a document
pub use served::{demo_doc, Served};

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `kdp mock-broker`, killed (and reaped) on drop.
pub struct MockBroker {
    child: Child,
    /// The bootstrap list it printed once listening.
    pub bootstrap: String,
}

impl MockBroker {
    /// Serves the cluster file `cluster` on free ports, with `extra` flags;
    /// its log (stderr) goes to `log`.
    pub fn start(cluster: impl AsRef<OsStr>, extra: &[&str], log: Stdio) -> MockBroker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kdp"))
            .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
            .arg(cluster)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start kdp mock-broker");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("bootstrap line");
        assert!(!line.trim().is_empty(), "the mock did not start");
        MockBroker {
            child,
            bootstrap: line.trim().to_string(),
        }
    }
}

impl Drop for MockBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
