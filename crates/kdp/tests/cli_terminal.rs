//! kdp in a real terminal (tmux), as a person meets it: find-hanging's table
//! at 80 and 200 columns never wraps a row and keeps the columns its
//! priorities choose; `-o wide` keeps all; colour on the terminal only
//! (absent with NO_COLOR and when piped). Without a terminal: `COLUMNS`,
//! `--columns`, `--no-headers`, `--color always`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod common;
mod mock_broker;
use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");
const DONE: &str = "__kdp_done__";

/// The demo cluster served by `kdp mock-broker`, and its directory.
struct Demo {
    mock: MockBroker,
    dir: PathBuf,
}

impl Demo {
    fn start() -> Demo {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kdp-terminal-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(KDP)
            .args(["demo", "--print-cluster-file"])
            .output()
            .unwrap();
        let file = dir.join("cluster.json");
        std::fs::write(&file, &out.stdout).unwrap();
        Demo {
            mock: MockBroker::start(&file, &[], Stdio::null()),
            dir,
        }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A tmux server of its own, killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new() -> Tmux {
        static N: AtomicUsize = AtomicUsize::new(0);
        Tmux {
            socket: format!(
                "kdp-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }

    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// Runs `shell` (sh syntax) in a new `width`-column window and returns
    /// the screen once it is done: wrapped lines joined (`-J`), so a row
    /// that wrapped shows as one line longer than the window; with `-e`
    /// when `escapes`.
    fn run(&self, width: u16, shell: &str, escapes: bool) -> String {
        static RUN: AtomicUsize = AtomicUsize::new(0);
        let name = format!("w{width}-{}", RUN.fetch_add(1, Ordering::Relaxed));
        let script = format!("{shell}; echo {DONE}; sleep 600");
        let st = self
            .tmux()
            .args([
                "new-session",
                "-d",
                "-x",
                &width.to_string(),
                "-y",
                "50",
                "-s",
                &name,
            ])
            .arg(script)
            .status()
            .expect("tmux (scripts/install-deps.sh installs it)");
        assert!(st.success());
        let screen = self.wait_for(&name, escapes, |s| s.contains(DONE));
        // the session stays until the server is killed (on drop): killing
        // the last one would race the next new-session with the server's exit
        screen
            .lines()
            .take_while(|l| !l.contains(DONE))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Tmux {
    /// The screen of window `name`, with escapes when `escapes`.
    fn screen(&self, name: &str, escapes: bool) -> String {
        let mut c = self.tmux();
        c.args(["capture-pane", "-p", "-J", "-t", name]);
        if escapes {
            c.arg("-e");
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    }

    /// Polls window `name` until its screen satisfies `done` (at most 30 s).
    fn wait_for(&self, name: &str, escapes: bool, done: impl Fn(&str) -> bool) -> String {
        for _ in 0..300 {
            let screen = self.screen(name, escapes);
            if done(&screen) {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "window {name} never showed what was waited for:\n{}",
            self.screen(name, false)
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

/// `kdp find-hanging` as typed in the terminal (no COLUMNS: the terminal's width).
fn find_hanging(demo: &Demo, extra: &str) -> String {
    format!(
        "env -u COLUMNS -u NO_COLOR '{KDP}' find-hanging --bootstrap-server {} {extra}",
        demo.mock.bootstrap
    )
}

fn header(screen: &str) -> Vec<String> {
    screen
        .lines()
        .find(|l| l.starts_with("Topic"))
        .unwrap_or_else(|| panic!("no header in\n{screen}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn find_hanging_fits_80_and_200_columns_by_the_declared_priorities() {
    let demo = Demo::start();
    let tmux = Tmux::new();
    let all = [
        "Topic",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
        "LastTimestamp",
        "TransactionalId",
        "TxnAge",
        "BlockedRecords",
        "BlockedGroups",
        "Verdict",
        "Owner",
    ];
    for (width, kept) in [
        // never left out: Topic, Partition, ProducerId, BlockedRecords, Verdict
        (
            80,
            &[
                "Topic",
                "Partition",
                "ProducerId",
                "BlockedRecords",
                "Verdict",
            ][..],
        ),
        // Owner (7), CoordinatorEpoch (6) and LastTimestamp (5) go first
        (
            200,
            &[
                "Topic",
                "Partition",
                "ProducerId",
                "ProducerEpoch",
                "StartOffset",
                "TransactionalId",
                "TxnAge",
                "BlockedRecords",
                "BlockedGroups",
                "Verdict",
            ][..],
        ),
    ] {
        let screen = tmux.run(width, &find_hanging(&demo, ""), false);
        for line in screen.lines() {
            assert!(
                line.chars().count() <= usize::from(width),
                "a line wider than {width}:\n{line}\nin\n{screen}"
            );
        }
        assert_eq!(header(&screen), kept, "at {width}:\n{screen}");
        // every row is there, one line each
        let rows = screen
            .lines()
            .filter(|l| {
                l.starts_with("ledger ") || l.starts_with("orders ") || l.starts_with("payments ")
            })
            .count();
        assert_eq!(rows, 5, "{screen}");
        assert!(screen.contains("hanging: "), "{screen}");
        // stderr says what was left out
        assert!(screen.contains("left out to fit"), "{screen}");
    }
    // describe at 80: CoordinatorEpoch (7), LastTimestamp (6), LastSequence (5) and
    // Leader (4) go first; a failed partition's error is shortened, not wrapped
    let screen = tmux.run(
        80,
        &format!(
            "env -u COLUMNS '{KDP}' describe --bootstrap-server {} --topic ledger",
            demo.mock.bootstrap
        ),
        false,
    );
    assert_eq!(
        header(&screen),
        [
            "Topic",
            "Partition",
            "ProducerId",
            "ProducerEpoch",
            "Age",
            "CurrentTxnStartOffset"
        ],
        "{screen}"
    );
    let screen = tmux.run(
        80,
        &format!(
            "env -u COLUMNS '{KDP}' describe --bootstrap-server {} --topic ledger --topic no-such-topic-with-a-long-name",
            demo.mock.bootstrap
        ),
        false,
    );
    // the table's lines (the summary after it is prose, wrapped like any message)
    let table = screen.lines().filter(|l| {
        ["Topic ", "ledger ", "no-such"]
            .iter()
            .any(|p| l.starts_with(p))
    });
    assert_eq!(table.clone().count(), 7, "{screen}");
    assert!(table.clone().all(|l| l.chars().count() <= 80), "{screen}");
    assert!(header(&screen).contains(&"Error".to_string()), "{screen}");
    assert!(screen.contains("UNKNOWN_TOPIC"), "{screen}");
    // -o wide: every column, whatever the terminal
    let screen = tmux.run(80, &find_hanging(&demo, "-o wide"), false);
    assert_eq!(header(&screen), all, "{screen}");
}

#[test]
fn colour_on_a_terminal_only() {
    let demo = Demo::start();
    let tmux = Tmux::new();
    let red = "\x1b[31m";
    let screen = tmux.run(200, &find_hanging(&demo, ""), true);
    assert!(screen.contains(&format!("{red}hanging")), "{screen:?}");
    // NO_COLOR, --color never, a pipe: no colour escapes at all
    for shell in [
        format!(
            "NO_COLOR=1 {}",
            find_hanging(&demo, "").replace("-u NO_COLOR ", "")
        ),
        find_hanging(&demo, "--color never"),
        format!("{} | cat", find_hanging(&demo, "")),
    ] {
        let screen = tmux.run(200, &shell, true);
        assert!(screen.contains("hanging"), "{shell}: {screen:?}");
        assert!(!screen.contains("\x1b[3"), "{shell}: {screen:?}");
    }
    // an error on the terminal is red too
    let screen = tmux.run(
        200,
        &format!("env -u NO_COLOR -u KDP_BOOTSTRAP_SERVER -u KDP_CONTEXT XDG_CONFIG_HOME={} '{KDP}' find-hanging", demo.dir.display()),
        true,
    );
    assert!(
        screen.contains(&format!("{red}kdp: no bootstrap server")),
        "{screen:?}"
    );
    // and so is each failed request a command reports on its way (the
    // demo's payments-2 replica on broker 3 answers KAFKA_STORAGE_ERROR)
    let screen = tmux.run(
        200,
        &format!(
            "env -u NO_COLOR '{KDP}' compare-replicas --bootstrap-server {} --topic payments",
            demo.mock.bootstrap
        ),
        true,
    );
    assert!(
        screen.contains(&format!(
            "{red}kdp: payments-2 on broker 3: KAFKA_STORAGE_ERROR"
        )),
        "{screen:?}"
    );
}

#[test]
fn without_a_terminal_columns_choice_and_headers() {
    let demo = Demo::start();
    let run = |env: &[(&str, &str)], extra: &[&str]| {
        let mut c = Command::new(KDP);
        c.args(["find-hanging", "--bootstrap-server", &demo.mock.bootstrap])
            .args(extra)
            .env_remove("COLUMNS")
            .env_remove("NO_COLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(4),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // piped without COLUMNS: every column in full
    let full = run(&[], &[]);
    assert!(full.lines().next().unwrap().contains("CoordinatorEpoch"));
    // COLUMNS is the width when set
    let narrow = run(&[("COLUMNS", "80")], &[]);
    assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
    assert!(!narrow.contains("CoordinatorEpoch"));
    // --columns picks and orders, --no-headers drops the header
    let picked = run(&[], &["--columns", "verdict,Topic", "--no-headers"]);
    let first = picked.lines().next().unwrap();
    assert!(
        first.starts_with("hanging: the partition is not"),
        "{picked}"
    );
    assert!(first.ends_with("ledger"), "{picked}");
    assert_eq!(picked.lines().count(), 5);
    // --max-transaction-timeout counts bare numbers in minutes, as Kafka's tool
    let json = |t: &str| {
        let doc: serde_json::Value = serde_json::from_str(&run(
            &[],
            &["-o", "json", "--all", "--max-transaction-timeout", t],
        ))
        .unwrap();
        let rows = doc["Transactions"].as_array().cloned().unwrap_or_default();
        rows.iter()
            .map(|r| format!("{}-{}", r["Topic"], r["Partition"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(json("30"), json("30m"));
    assert_ne!(json("30"), json("30s"));
    // a column the table lacks is bad usage naming the ones it has
    let out = Command::new(KDP)
        .args([
            "find-hanging",
            "--bootstrap-server",
            &demo.mock.bootstrap,
            "--columns",
            "Topic,Nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no column \"Nope\"; its columns: Topic,Partition,"),
        "{err}"
    );
    // --color always colours even into a pipe
    assert!(run(&[], &["--color", "always"]).contains("\x1b[31mhanging"));
    assert!(!full.contains('\x1b'));
}

/// `--watch` in a terminal: each round redraws the screen in place (one
/// title, one table header, never a scrolling pile of tables), lines that
/// changed since the last round are highlighted, and Ctrl-C ends it with
/// exit status 0.
#[test]
fn watch_redraws_in_place_highlights_changes_and_exits_0_on_ctrl_c() {
    let demo = Demo::start();
    let tmux = Tmux::new();
    let name = "watch";
    let script = format!(
        "{} --watch 1s; echo EXIT=$?; echo {DONE}; sleep 600",
        find_hanging(&demo, "")
    );
    let st = tmux
        .tmux()
        .args(["new-session", "-d", "-x", "200", "-y", "50", "-s", name])
        .arg(script)
        .status()
        .expect("tmux");
    assert!(st.success());
    let screen = tmux.wait_for(name, false, |s| s.contains("round 3,"));
    assert!(screen.contains("Every 1s: kdp find-hanging"), "{screen}");
    assert_eq!(
        screen.matches("Every 1s:").count(),
        1,
        "redrawn in place:\n{screen}"
    );
    assert_eq!(
        screen.lines().filter(|l| l.starts_with("Topic")).count(),
        1,
        "one table on the screen:\n{screen}"
    );
    // the ages move every second: those lines are highlighted (reverse video)
    let coloured = tmux.screen(name, true);
    assert!(coloured.contains("\x1b[7m"), "{coloured}");
    let st = tmux
        .tmux()
        .args(["send-keys", "-t", name, "C-c"])
        .status()
        .unwrap();
    assert!(st.success());
    let screen = tmux.wait_for(name, false, |s| s.contains(DONE));
    assert!(screen.contains("EXIT=0"), "Ctrl-C exits 0:\n{screen}");
}

/// `--watch` into a pipe: one whole JSON document per round, and SIGINT
/// ends it with exit status 0; `kdp lag`'s rounds (read in waves) too.
#[test]
fn watch_into_a_pipe_writes_one_document_per_round_and_exits_0_on_sigint() {
    let demo = Demo::start();
    watch_into_a_pipe(&demo, &["transactions", "list"], "Transactions");
    watch_into_a_pipe(&demo, &["lag"], "Lag");
}

/// `kdp <command> --watch 200ms -o json` into a pipe: three documents,
/// each with rows under `key`, then SIGINT and exit status 0.
fn watch_into_a_pipe(demo: &Demo, command: &[&str], key: &str) {
    use std::io::Read;
    let mut child = Command::new(KDP)
        .args(command)
        .args(["--bootstrap-server", &demo.mock.bootstrap])
        .args(["--watch", "200ms", "--output", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    let mut docs = Vec::new();
    while docs.len() < 3 {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "kdp ended early: {text}");
        text.push_str(std::str::from_utf8(&buf[..n]).unwrap());
        docs = serde_json::Deserializer::from_str(&text)
            .into_iter::<serde_json::Value>()
            .take_while(Result::is_ok)
            .map(Result::unwrap)
            .collect();
    }
    for d in &docs {
        assert!(d[key].as_array().is_some_and(|t| !t.is_empty()), "{d}");
    }
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}
