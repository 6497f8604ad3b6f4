//! Where a command's cluster comes from, as a user meets it: the flag, then
//! KDP_BOOTSTRAP_SERVER, then the context (--context, KDP_CONTEXT, `kdp
//! context use`), then bootstrap.servers of the properties; contexts kept in
//! $XDG_CONFIG_HOME/kdp/contexts.json, private to the user; a SASL password
//! referenced as `env:VAR` used to connect and printed nowhere.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

mod mock_broker;
use mock_broker::MockBroker;

mod common;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");
/// Nothing listens there: a command sent there fails with exit 3.
const DEAD: &str = "127.0.0.1:1";
const SECRET: &str = "ctx-Secret-5f2a91";

/// A config home of its own per test (XDG_CONFIG_HOME), removed at the end.
struct Home(PathBuf);

impl Home {
    fn new() -> Home {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "kdp-contexts-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        Home(d)
    }

    /// `kdp ARGS` with this config home and `env` (nothing else of the
    /// caller's KDP_* environment).
    fn kdp(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(KDP);
        cmd.args(args)
            .env("XDG_CONFIG_HOME", &self.0)
            .env_remove("KDP_BOOTSTRAP_SERVER")
            .env_remove("KDP_CONTEXT")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run kdp");
        common::schema::check_command(&cmd, &out.stdout);
        out
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.kdp(args, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn demo_cluster(home: &Home) -> String {
    let out = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    home.write("cluster.json", &text(&out.stdout))
}

/// `kdp describe --topic orders -o json`'s exit status with `extra` flags.
fn describe(home: &Home, extra: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut args = vec![
        "describe",
        "--topic",
        "orders",
        "-o",
        "json",
        "--timeout",
        "3s",
    ];
    args.extend_from_slice(extra);
    let out = home.kdp(&args, env);
    (out.status.code().unwrap_or(-1), text(&out.stderr))
}

#[test]
fn flag_then_environment_then_context_then_properties() {
    let home = Home::new();
    let cluster = demo_cluster(&home);
    let mock = MockBroker::start(&cluster, &[], Stdio::null());
    let live = mock.bootstrap.as_str();

    // no flag, no environment, no context, no properties: a usage error saying how
    let (code, err) = describe(&home, &[], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("KDP_BOOTSTRAP_SERVER"), "{err}");

    // bootstrap.servers in --command-config is used when nothing else says
    let props = home.write("live.properties", &format!("bootstrap.servers={live}\n"));
    assert_eq!(describe(&home, &["--command-config", &props], &[]).0, 0);
    // the flag beats the properties file
    let (code, err) = describe(
        &home,
        &["--command-config", &props, "--bootstrap-server", DEAD],
        &[],
    );
    assert_eq!(code, 3, "{err}");

    // contexts: the first one added is the current one
    home.ok(&["context", "add", "live", "--bootstrap-server", live]);
    home.ok(&["context", "add", "dead", "--bootstrap-server", DEAD]);
    assert_eq!(home.ok(&["context", "list"]), "  dead\n* live\n");
    assert_eq!(home.ok(&["context", "list", "--names"]), "dead\nlive\n");
    assert_eq!(describe(&home, &[], &[]).0, 0, "the current context");
    // the context beats the properties file
    let dead_props = home.write("dead.properties", &format!("bootstrap.servers={DEAD}\n"));
    assert_eq!(
        describe(&home, &["--command-config", &dead_props], &[]).0,
        0
    );
    // KDP_CONTEXT beats the current context; --context beats KDP_CONTEXT
    assert_eq!(describe(&home, &[], &[("KDP_CONTEXT", "dead")]).0, 3);
    assert_eq!(
        describe(&home, &["--context", "live"], &[("KDP_CONTEXT", "dead")]).0,
        0
    );
    // --context before the subcommand, as every connection flag
    let out = home.kdp(
        &[
            "--context",
            "dead",
            "describe",
            "--topic",
            "orders",
            "--timeout",
            "3s",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    // the environment beats the context, the flag beats the environment
    assert_eq!(describe(&home, &[], &[("KDP_BOOTSTRAP_SERVER", DEAD)]).0, 3);
    assert_eq!(
        describe(
            &home,
            &["--bootstrap-server", live],
            &[("KDP_BOOTSTRAP_SERVER", DEAD)]
        )
        .0,
        0
    );
    // a context that does not exist is a usage error naming the ones that do
    let (code, err) = describe(&home, &["--context", "nope"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("dead, live"), "{err}");

    // use, show, remove
    home.ok(&["context", "use", "dead"]);
    assert_eq!(describe(&home, &[], &[]).0, 3);
    assert!(home
        .ok(&["context", "show"])
        .contains("name:              dead (current)"));
    // show without a name: KDP_CONTEXT's, else the current one
    let out = home.kdp(&["context", "show"], &[("KDP_CONTEXT", "live")]);
    assert!(
        text(&out.stdout).contains("name:              live\n"),
        "{}",
        text(&out.stdout)
    );
    home.ok(&["context", "remove", "dead"]);
    assert_eq!(home.ok(&["context", "list", "--names"]), "live\n");
    // no current context any more, and no flag: usage error again
    assert_eq!(describe(&home, &[], &[]).0, 2);
    assert_eq!(describe(&home, &["--context", "live"], &[]).0, 0);
    // transactions list takes the context too, the flag after the subcommand
    let out = home.kdp(
        &["transactions", "list", "--context", "live", "-o", "json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["Transactions"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{doc}"
    );
}

#[cfg(unix)]
#[test]
fn the_contexts_file_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    home.ok(&["context", "add", "a", "--bootstrap-server", "h:1"]);
    let file = home.0.join("kdp").join("contexts.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    let dir = std::fs::metadata(home.0.join("kdp"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir, 0o700);
    // a name the shells could not complete is refused
    let out = home.kdp(
        &["context", "add", "two words", "--bootstrap-server", "h:1"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    // replacing needs --force
    let out = home.kdp(&["context", "add", "a", "--bootstrap-server", "h:2"], &[]);
    assert_eq!(out.status.code(), Some(2));
    home.ok(&[
        "context",
        "add",
        "a",
        "--bootstrap-server",
        "h:2",
        "--force",
    ]);
    assert!(home
        .ok(&["context", "show", "a"])
        .contains("bootstrap-server:  h:2"));
}

/// A SCRAM password given as `env:KDP_TEST_CTX_PW` authenticates against a
/// mock with SASL users, and is in no output: not `context show`, not
/// `-vvv`'s trace, not the error of a wrong password, not the file.
#[test]
fn an_env_secret_is_used_to_connect_and_never_printed() {
    let home = Home::new();
    let base =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kdp-server/tests/data/cluster.json");
    let mut cluster: Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    cluster["sasl"] = json!({"users": [{"name": "alice", "password": SECRET}]});
    let file = home.write("secure.json", &cluster.to_string());
    let mock = MockBroker::start(&file, &[], Stdio::null());
    home.ok(&[
        "context",
        "add",
        "sec",
        "--bootstrap-server",
        &mock.bootstrap,
        "--command-property",
        "security.protocol=SASL_PLAINTEXT",
        "--command-property",
        "sasl.mechanism=SCRAM-SHA-512",
        "--command-property",
        "sasl.username=alice",
        "--command-property",
        "sasl.password=env:KDP_TEST_CTX_PW",
    ]);
    let stored = std::fs::read_to_string(home.0.join("kdp/contexts.json")).unwrap();
    assert!(stored.contains("env:KDP_TEST_CTX_PW") && !stored.contains(SECRET));

    let out = home.kdp(
        &[
            "describe",
            "--topic",
            "orders",
            "-o",
            "json",
            "-vvv",
            "--timeout",
            "10s",
        ],
        &[("KDP_TEST_CTX_PW", SECRET)],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("TRACE") || err.contains("DEBUG"),
        "no trace logs: {err}"
    );
    assert!(!err.contains(SECRET) && !text(&out.stdout).contains(SECRET));

    let show = home.ok(&["context", "show", "sec"]);
    assert!(show.contains("sasl.password=env:KDP_TEST_CTX_PW"), "{show}");
    assert!(!show.contains(SECRET), "{show}");

    // a wrong password fails authentication (exit 3) without printing it
    let wrong = "wrong-Pw-77e1";
    let out = home.kdp(
        &["describe", "--topic", "orders", "--timeout", "10s", "-vvv"],
        &[("KDP_TEST_CTX_PW", wrong)],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains(wrong) && !err.contains(SECRET), "{err}");
    // the variable unset: a usage error naming it, not a connection without a password
    let out = home.kdp(&["describe", "--topic", "orders", "--timeout", "10s"], &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("KDP_TEST_CTX_PW is not set"), "{err}");
    // a secret typed in is stored (with a warning) but never shown
    let out = home.kdp(
        &[
            "context",
            "add",
            "typed",
            "--bootstrap-server",
            "h:1",
            "--command-property",
            &format!("sasl.password={SECRET}"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("warning: sasl.password is stored as typed"));
    let show = home.ok(&["context", "show", "typed"]);
    assert!(
        !show.contains(SECRET) && show.contains("sasl.password=(secret"),
        "{show}"
    );
}

/// A connection flag where it means nothing is refused, not ignored.
#[test]
fn connection_flags_where_they_mean_nothing_are_refused() {
    let home = Home::new();
    for (args, flag) in [
        (
            &["decode", "--bootstrap-server", "h:1"][..],
            "--bootstrap-server",
        ),
        (&["--timeout", "5s", "explain", "lso"], "--timeout"),
        (
            &["context", "list", "--command-config", "x.properties"],
            "--command-config",
        ),
        (
            &[
                "abort",
                "--bootstrap-server",
                "h:1",
                "--topic",
                "t",
                "--partition",
                "0",
                "--start-offset",
                "1",
                "-o",
                "json",
            ],
            "--output",
        ),
    ] {
        let out = home.kdp(args, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} does not apply")),
            "{args:?}: {err}"
        );
    }
}
