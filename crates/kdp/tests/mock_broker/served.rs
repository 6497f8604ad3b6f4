//! A cluster document served by `kdp mock-broker` from a file of its own,
//! and `kdp` run against it: what every CLI-over-mock test shares.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

use super::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// `kdp demo FLAGS --print-cluster-file`, parsed.
pub fn demo_doc(flags: &[&str]) -> Value {
    let out = Command::new(KDP)
        .arg("demo")
        .args(flags)
        .arg("--print-cluster-file")
        .output()
        .expect("kdp demo --print-cluster-file");
    serde_json::from_slice(&out.stdout).expect("demo cluster JSON")
}

/// A running mock serving a document; its file is removed on drop.
pub struct Served {
    pub broker: MockBroker,
    dir: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Served {
    /// Serves `doc`.
    pub fn start(doc: &Value) -> Served {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kdp-mock-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("cluster.json");
        std::fs::write(&file, serde_json::to_vec(doc).expect("JSON")).expect("write cluster");
        Served {
            broker: MockBroker::start(&file, &[], Stdio::null()),
            dir,
        }
    }

    /// Serves `kdp demo FLAGS`' cluster with `edit` applied to it first.
    pub fn demo(flags: &[&str], edit: impl FnOnce(&mut Value)) -> Served {
        let mut doc = demo_doc(flags);
        edit(&mut doc);
        Served::start(&doc)
    }

    /// The bootstrap list the mock printed.
    pub fn bootstrap(&self) -> &str {
        &self.broker.bootstrap
    }

    /// `kdp CMD --bootstrap-server B --timeout 20s ARGS`: exit status,
    /// stdout, stderr; JSON output is checked against its schema.
    pub fn run(&self, cmd: &[&str], args: &[&str]) -> (i32, String, String) {
        let mut kdp = Command::new(KDP);
        kdp.args(cmd)
            .args(["--bootstrap-server", self.bootstrap(), "--timeout", "20s"])
            .args(args);
        let out = kdp.output().expect("run kdp");
        crate::common::schema::check_command(&kdp, &out.stdout);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// [`Served::run`] with `--output json`: exit status, the document,
    /// stderr.
    pub fn json(&self, cmd: &[&str], args: &[&str]) -> (i32, Value, String) {
        let mut all = args.to_vec();
        all.extend(["--output", "json"]);
        let (code, stdout, stderr) = self.run(cmd, &all);
        let doc = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: stdout {stdout:?}\nstderr {stderr}"));
        (code, doc, stderr)
    }
}
