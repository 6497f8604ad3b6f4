//! kdp's JSON contract (docs/JSON.md): every command with `--output json`
//! has a schema in docs/schemas/, each schema is valid, every command's
//! output on the demo cluster fits it in both formats, and the schemas are
//! strict enough that a field that disappears, is renamed or is added
//! without being written down fails.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
mod mock_broker;

use common::schema::{check, violations};
use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// Every command that prints JSON, as the tests run it (the bootstrap and
/// output flags are added).
const COMMANDS: &[&[&str]] = &[
    &["describe"],
    &["describe", "--show-empty"],
    &["describe", "--with-transactions"],
    &["find-hanging", "--all"],
    &["compare-replicas"],
    &["producers"],
    &["blocked"],
    &["lag"],
    &["batches", "--topic", "inventory", "--partition", "1"],
    &["transactions", "list"],
    &[
        "transactions",
        "describe",
        "--transactional-id",
        "ledger-writer",
    ],
    &["history", "--transactional-id", "inventory-sync"],
];

fn demo() -> (MockBroker, tempdir::Dir) {
    let out = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    let dir = tempdir::Dir::new("kdp-json-contract");
    let file = dir.0.join("cluster.json");
    std::fs::write(&file, &out.stdout).expect("write the demo cluster");
    (MockBroker::start(&file, &[], Stdio::null()), dir)
}

mod tempdir {
    /// A directory removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(prefix: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
            std::fs::create_dir_all(&p).expect("temp dir");
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `kdp <command> --bootstrap-server B -o <format>`: its args and stdout.
fn run(bootstrap: &str, command: &[&str], format: &str) -> (Vec<String>, String) {
    // transactions takes the cluster flags before its subcommand
    let (head, tail) = if command[0] == "transactions" {
        (&command[..1], &command[1..])
    } else {
        (command, &[][..])
    };
    let mut args: Vec<String> = head.iter().map(|s| s.to_string()).collect();
    args.extend(["--bootstrap-server".into(), bootstrap.into()]);
    args.extend(["--timeout".into(), "20s".into()]);
    args.extend(tail.iter().map(|s| s.to_string()));
    args.extend(["--output".into(), format.into()]);
    let out = Command::new(KDP).args(&args).output().expect("run kdp");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        !stdout.trim().is_empty(),
        "kdp {args:?} printed nothing (exit {:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    (args, stdout)
}

#[test]
fn every_schema_is_a_valid_2020_12_schema_and_every_command_has_one() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("docs/schemas")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).expect("read schema");
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        assert!(
            jsonschema::draft202012::meta::is_valid(&schema),
            "{name} is not a valid JSON Schema 2020-12"
        );
        assert!(
            schema["$defs"]["line"].is_object(),
            "{name}: no jsonl line schema"
        );
    }
    for c in COMMANDS {
        let args: Vec<&str> = c.to_vec();
        let schema = common::schema::schema_name(&args).unwrap_or_else(|| panic!("{c:?}"));
        assert!(
            names.contains(&format!("{schema}.schema.json")),
            "{c:?}: no docs/schemas/{schema}.schema.json"
        );
    }
}

#[test]
fn every_command_on_the_demo_fits_its_schema_in_json_and_jsonl() {
    let (broker, _dir) = demo();
    for c in COMMANDS {
        for format in ["json", "jsonl"] {
            let (args, stdout) = run(&broker.bootstrap, c, format);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            check(&args, &stdout);
        }
    }
}

/// Removes `field` from the first object that has it, anywhere in `v`.
fn remove_first(v: &mut Value, field: &str) -> bool {
    match v {
        Value::Object(m) => {
            if m.remove(field).is_some() {
                return true;
            }
            m.values_mut().any(|x| remove_first(x, field))
        }
        Value::Array(a) => a.iter_mut().any(|x| remove_first(x, field)),
        _ => false,
    }
}

/// Adds `field` to the first object that has `beside`, anywhere in `v`.
fn add_beside(v: &mut Value, beside: &str, field: &str) -> bool {
    match v {
        Value::Object(m) => {
            if m.contains_key(beside) {
                m.insert(field.into(), Value::from(1));
                return true;
            }
            m.values_mut().any(|x| add_beside(x, beside, field))
        }
        Value::Array(a) => a.iter_mut().any(|x| add_beside(x, beside, field)),
        _ => false,
    }
}

#[test]
fn a_field_that_disappears_or_appears_unwritten_fails() {
    let (broker, _dir) = demo();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["describe"], "describe", "CurrentTxnStartOffset"),
        (&["describe", "--with-transactions"], "describe", "Flags"),
        (&["find-hanging", "--all"], "find-hanging", "Verdict"),
        (
            &["transactions", "list"],
            "transactions-list",
            "CurrentTransactionStartTimeMs",
        ),
        (&["compare-replicas"], "compare-replicas", "Values"),
        (&["producers"], "producers", "ExpiringWithinDay"),
        (&["blocked"], "blocked", "HeldBack"),
        (&["lag"], "lag", "RecordsAtMost"),
        (&["describe", "--with-transactions"], "describe", "Fenced"),
        (
            &["history", "--transactional-id", "inventory-sync"],
            "history",
            "InstanceChange",
        ),
        (
            &["history", "--transactional-id", "inventory-sync"],
            "history",
            "Beginning",
        ),
        (
            &["batches", "--topic", "inventory", "--partition", "1"],
            "batches",
            "BrokerRule",
        ),
    ];
    for (command, schema, field) in cases {
        let (_, stdout) = run(&broker.bootstrap, command, "json");
        let doc: Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(
            violations(schema, false, &doc),
            None,
            "{command:?} fits as printed"
        );
        let mut gone = doc.clone();
        assert!(remove_first(&mut gone, field), "{command:?} prints {field}");
        assert!(
            violations(schema, false, &gone).is_some(),
            "{command:?} without {field} must not fit {schema}"
        );
        let mut added = doc.clone();
        assert!(add_beside(&mut added, field, "NotInTheSchema"));
        assert!(
            violations(schema, false, &added).is_some(),
            "{command:?} with an unwritten field must not fit {schema}"
        );
    }
}

/// The runners of the other tests hand kdp's arguments to the check: it
/// must recognise each command and format the way the tests spell them.
#[test]
fn the_check_recognises_commands_and_formats_as_tests_spell_them() {
    use common::schema::{output_format, schema_name};
    let b = "127.0.0.1:9092";
    let cases: &[(&[&str], Option<&str>, Option<&str>)] = &[
        (
            &["describe", "--bootstrap-server", b, "-o", "jsonl"],
            Some("describe"),
            Some("jsonl"),
        ),
        (
            &["describe-producers", "--output=json"],
            Some("describe"),
            Some("json"),
        ),
        (
            &["find-hanging", "--bootstrap-server", b, "--output", "json"],
            Some("find-hanging"),
            Some("json"),
        ),
        (
            &["transactions", "--bootstrap-server", b, "list", "-ojson"],
            Some("transactions-list"),
            Some("json"),
        ),
        (
            &[
                "transactions",
                "--bootstrap-server",
                b,
                "describe",
                "--transactional-id",
                "x",
                "--output",
                "json",
            ],
            Some("transactions-describe"),
            Some("json"),
        ),
        (
            &["compare-replicas", "--output", "table"],
            Some("compare-replicas"),
            None,
        ),
        (&["decode", "--output", "json"], None, Some("json")),
    ];
    for (args, name, format) in cases {
        assert_eq!(schema_name(args), *name, "{args:?}");
        assert_eq!(output_format(args), *format, "{args:?}");
    }
}
