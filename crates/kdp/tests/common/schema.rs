//! kdp's JSON contract: each command's `--output json` document and
//! `--output jsonl` lines are written down in `docs/schemas/`, and every
//! test that reads kdp's JSON checks it against them here, so a field that
//! disappears, is renamed or changes type fails the tests (and a new field
//! must be written down before it can ship: the schemas refuse unknown ones).

use std::path::Path;

use serde_json::Value;

/// The schema file of the command `args` run, if it has one.
pub fn schema_name(args: &[&str]) -> Option<&'static str> {
    let mut words = args.iter().filter(|a| !a.starts_with('-'));
    let name = match *words.next()? {
        "describe" | "describe-producers" => "describe",
        "find-hanging" => "find-hanging",
        "compare-replicas" => "compare-replicas",
        "producers" => "producers",
        "blocked" => "blocked",
        "lag" => "lag",
        "history" => "history",
        "owners" => "owners",
        "batches" => "batches",
        "transactions" => {
            // the subcommand is the first word that names one (flag values
            // such as a bootstrap list come before it)
            match args.iter().find(|a| matches!(**a, "list" | "describe"))? {
                &"list" => "transactions-list",
                _ => "transactions-describe",
            }
        }
        _ => return None,
    };
    Some(name)
}

/// `json` or `jsonl`, as `args` ask for.
pub fn output_format(args: &[&str]) -> Option<&'static str> {
    let mut it = args.iter();
    let mut found = None;
    while let Some(a) = it.next() {
        let v = match *a {
            "-o" | "--output" => it.next().copied(),
            a => a.strip_prefix("--output=").or_else(|| a.strip_prefix("-o")),
        };
        match v {
            Some("json") => found = Some("json"),
            Some("jsonl") => found = Some("jsonl"),
            _ => {}
        }
    }
    found
}

fn load(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("invalid schema: {e}"))
}

/// The schema's `#/$defs/line`, as a schema of its own (its `$ref`s
/// resolve against the same `$defs`).
fn line_schema(schema: &Value) -> Value {
    serde_json::json!({
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "$ref": "#/$defs/line",
    })
}

/// Why `doc` does not fit schema `name` (`jsonl`: a line of it), or `None`.
pub fn violations(name: &str, jsonl: bool, doc: &Value) -> Option<String> {
    let schema = load(name);
    let schema = if jsonl { line_schema(&schema) } else { schema };
    let v = validator(&schema);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// Checks what kdp printed for `args` against its command's schema, when
/// it printed JSON of a command that has one. Panics, naming the field, if
/// it does not fit.
pub fn check(args: &[&str], stdout: &str) {
    let (Some(name), Some(format)) = (schema_name(args), output_format(args)) else {
        return;
    };
    if stdout.trim().is_empty() {
        return; // nothing printed (the command failed before any output)
    }
    if format == "jsonl" {
        for line in stdout.lines().filter(|l| !l.is_empty()) {
            let doc: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("kdp {args:?}: a line is not JSON ({e}): {line}"));
            if let Some(why) = violations(name, true, &doc) {
                panic!(
                    "kdp {args:?}: a line breaks docs/schemas/{name}.schema.json: {why}\n{line}"
                );
            }
        }
    } else {
        let doc: Value = serde_json::from_str(stdout)
            .unwrap_or_else(|e| panic!("kdp {args:?}: not JSON ({e}): {stdout}"));
        if let Some(why) = violations(name, false, &doc) {
            panic!("kdp {args:?}: breaks docs/schemas/{name}.schema.json: {why}");
        }
    }
}

/// [`check`] for a `Command` that ran kdp, with its arguments.
pub fn check_command(cmd: &std::process::Command, stdout: &[u8]) {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(&args, &String::from_utf8_lossy(stdout));
}
