//! What `abort`, `force-terminate` and `find-hanging --repair` share: the
//! plan kdp-domain made, rendered before anything is sent; one
//! confirmation; kdp-workflows' re-check and execution; and the report,
//! numbered as the plan.

use std::io::{self, BufRead, IsTerminal, Write};

use kdp_domain::repair::{
    Action, CoordinatorAnswer, Done, LsoChange, Outcome, Plan, Proof, Report, Step,
};
use kdp_workflows::repair::{self as workflow, cluster_id, RepairOptions, Repaired};

use crate::cmd::audit;
use crate::cmd::cluster::{ClusterArgs, Connected};
use crate::exit;

/// `--dry-run` and `--yes`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConfirmArgs {
    /// Print the plan and change nothing (exit 0).
    #[arg(long)]
    pub dry_run: bool,
    /// Do it without asking (required when stdin is not a terminal).
    #[arg(long)]
    pub yes: bool,
    /// Append one JSON line per action sent (time, cluster id, principal, the plan step,
    /// its result, its partitions before and after) to FILE, created with mode 0600.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<std::path::PathBuf>,
}

/// The flags that reach the cluster as `args` do, for the command lines of
/// manual steps: `--bootstrap-server`, `--command-config`, and each
/// `--command-property` with its value left out (it may be a secret).
pub fn connection_flags(args: &ClusterArgs) -> Vec<String> {
    let mut flags = vec![
        "--bootstrap-server".to_string(),
        args.bootstrap_server.clone(),
    ];
    if let Some(path) = &args.client.command_config {
        flags.push("--command-config".into());
        flags.push(path.display().to_string());
    }
    for (key, _) in &args.client.command_property {
        flags.push("--command-property".into());
        flags.push(format!("{key}=<as given>"));
    }
    flags
}

/// Writes the plan.
pub fn render_plan(out: &mut dyn Write, plan: &Plan) -> io::Result<()> {
    let n = plan.steps.len();
    writeln!(out, "Plan ({n} step{}):", plural(n))?;
    for s in &plan.steps {
        render_step(out, s)?;
    }
    Ok(())
}

fn render_step(out: &mut dyn Write, s: &Step) -> io::Result<()> {
    let seen = &s.seen;
    let what = match &s.action {
        Action::Abort(a) => format!(
            "abort (WriteTxnMarkers to the leader): producer {} epoch {} coordinator epoch {}",
            a.producer_id, a.producer_epoch, a.coordinator_epoch
        ),
        Action::ForceTerminate { transactional_id } => format!(
            "force-terminate {transactional_id:?} (InitProducerId at its coordinator): producer {} epoch {}",
            seen.producer_id, seen.producer_epoch
        ),
        Action::Skip(reason) => format!("skip: {reason}"),
        Action::Manual(m) => format!("manual (kdp does not run it): {}", m.command_line()),
    };
    writeln!(out, "  {}. {what}", s.number)?;
    let parts: Vec<String> = seen
        .partitions
        .iter()
        .map(|p| format!("{}-{}@{}", p.topic, p.partition, p.start_offset))
        .collect();
    writeln!(
        out,
        "     partitions {}; transactional id {}; coordinator state {}; unblocks {} record(s)",
        if parts.is_empty() {
            "-".to_string()
        } else {
            parts.join(", ")
        },
        seen.transactional_id().unwrap_or("unknown"),
        seen.coordinator.state_name().unwrap_or("-"),
        seen.unblocks().map_or("?".to_string(), |b| b.to_string()),
    )?;
    match &s.action {
        Action::Abort(a) => {
            if let Some(advice) = abort_advice(&seen.coordinator, &a.topic, a.partition) {
                writeln!(out, "     {advice}")?;
            }
        }
        Action::Manual(m) => writeln!(out, "     why kdp did not run it: {}", m.why)?,
        _ => {}
    }
    Ok(())
}

/// What the plan says about force-terminate beside a raw abort: only what
/// the coordinator's answer supports.
fn abort_advice(coordinator: &CoordinatorAnswer, topic: &str, partition: i32) -> Option<String> {
    match coordinator {
        CoordinatorAnswer::Described(t) => {
            let id = &t.transactional_id;
            if coordinator.includes(topic, partition) == Some(true) {
                Some(format!(
                    "recommended instead: kdp force-terminate --transactional-id {id} (a raw abort \
                     leaves the coordinator unaware: a live producer can still commit later)"
                ))
            } else {
                Some(format!(
                    "(force-terminate would not help: {id}'s transaction at the coordinator \
                     ({}) does not include this partition)",
                    t.transaction_state
                ))
            }
        }
        CoordinatorAnswer::NotFound { transactional_id } => Some(format!(
            "(force-terminate would not help: the coordinator does not know {transactional_id} \
             (TRANSACTIONAL_ID_NOT_FOUND))"
        )),
        CoordinatorAnswer::NotListed => Some(
            "(no coordinator lists a transactional id for this producer: only a raw abort ends \
             this transaction)"
                .to_string(),
        ),
        CoordinatorAnswer::NotAsked(why) => Some(format!(
            "(whether force-terminate would help is not known: the coordinator could not be \
             asked: {why})"
        )),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The plan on `out`, the confirmation, then kdp-workflows' re-check and
/// execution and the report on `out`: `Ok(status of the report)` once
/// executed, `Err(status)` when it stopped before sending anything (0 for
/// a dry run). `plan_seen_at_prompt`: whether `out` is where the prompt
/// asks (a terminal stdout, or stderr itself); when not, the plan is
/// written again right before the question, so that it is never asked
/// about a plan not shown.
pub async fn carry_out(
    command: &str,
    conn: &Connected,
    out: &mut dyn Write,
    plan_seen_at_prompt: bool,
    plan: Plan,
    args: &ConfirmArgs,
) -> Result<i32, i32> {
    let _ = render_plan(out, &plan);
    let _ = out.flush();
    if args.dry_run {
        eprintln!("kdp: --dry-run: nothing was changed");
        return Err(exit::OK);
    }
    if plan.sends_anything() && !args.yes {
        let stdin = io::stdin();
        if !stdin.is_terminal() {
            fail!("refusing to change the cluster without confirmation: stdin is not a terminal; pass --yes (or --dry-run to only see the plan)");
            return Err(exit::USAGE);
        }
        let stderr = io::stderr();
        let mut prompt = stderr.lock();
        let again = (!plan_seen_at_prompt).then_some(&plan);
        match ask(again, &mut stdin.lock(), &mut prompt) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("kdp: not confirmed; nothing was changed");
                return Err(exit::USAGE);
            }
            Err(_) => return Err(exit::USAGE),
        }
    }
    // the audit file opens before anything is sent: no action goes unrecorded
    let mut audit_file = match &args.audit_log {
        Some(path) => match audit::open(path) {
            Ok(f) => Some(f),
            Err(e) => {
                fail!("--audit-log {}: {e}; nothing was changed", path.display());
                return Err(exit::PARTIAL);
            }
        },
        None => None,
    };
    let opts = RepairOptions::new(&conn.bound);
    // force-terminate's markers are written by the coordinator afterwards:
    // the proof reads again until the LSO moved or --timeout passes
    let Repaired {
        before,
        report,
        proof,
    } = workflow::carry_out(&conn.client, &plan, &opts, &conn.bound).await;
    let mut code = render_report(out, &report);
    render_proof(out, &proof);
    if !proof.all_settled() && code != exit::PARTIAL {
        code = exit::PARTIAL;
    }
    if let (Some(file), Some(path)) = (audit_file.as_mut(), &args.audit_log) {
        let cluster_id = cluster_id(&conn.client, &conn.bound).await;
        let ctx = audit::Context {
            command,
            cluster_id: cluster_id.as_deref(),
            principal: conn.principal.as_deref(),
        };
        if let Err(e) = audit::write(file, &ctx, &before, &report, &proof) {
            fail!("--audit-log {}: cannot write: {e}", path.display());
            code = exit::PARTIAL;
        }
    }
    Ok(code)
}

/// Writes what the partitions read after the repair show: the LSO before
/// and after, the records released, whether the transaction is gone, and
/// the groups that can now advance.
pub fn render_proof(out: &mut dyn Write, proof: &Proof) {
    if proof.partitions.is_empty() {
        return;
    }
    let _ = writeln!(out, "After the repair (read {} time(s)):", proof.reads);
    let dash = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    for p in &proof.partitions {
        let what = match p.change {
            LsoChange::Moved => format!(
                "LSO moved {} -> {}, {} record(s) released",
                dash(p.before.lso()),
                dash(p.after.lso()),
                dash(p.released())
            ),
            LsoChange::HeldByAnother { producer_id } => format!(
                "transaction gone; LSO stays at {}: producer {producer_id}'s open transaction starts there",
                dash(p.after.lso())
            ),
            LsoChange::NotMoved => format!(
                "LSO DID NOT MOVE: still {} (was {}) when the time ran out",
                dash(p.after.lso()),
                dash(p.before.lso())
            ),
            LsoChange::Unknown => "LSO NOT KNOWN: the partition could not be read".to_string(),
        };
        let gone = match p.transaction_gone {
            Some(true) => "transaction gone",
            Some(false) => "transaction still open",
            None => "producers not read",
        };
        let groups = if p.groups_can_advance.is_empty() {
            String::new()
        } else {
            format!(
                "; groups that can advance: {}",
                p.groups_can_advance.join(", ")
            )
        };
        let _ = writeln!(out, "  {}-{}: {what}; {gone}{groups}", p.topic, p.partition);
    }
    if let Some(e) = &proof.groups_error {
        let _ = writeln!(out, "  (groups not read: {e})");
    }
    let _ = out.flush();
}

/// Asks `Proceed? [y/N]` on `prompt`, after writing `plan` there first
/// (when given) and flushing; true for a yes.
pub fn ask(
    plan: Option<&Plan>,
    input: &mut dyn BufRead,
    prompt: &mut dyn Write,
) -> io::Result<bool> {
    if let Some(plan) = plan {
        render_plan(prompt, plan)?;
    }
    write!(prompt, "Proceed? [y/N] ")?;
    prompt.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Writes what became of each step, with the plan's numbers; the exit
/// status: 0 every step sent is done, 1 some step failed or was not sent
/// because the cluster changed, 4 none failed but some were left to an
/// operator (skipped or manual: what they are about still hangs).
pub fn render_report(out: &mut dyn Write, report: &Report) -> i32 {
    let _ = writeln!(out, "Result:");
    for o in &report.outcomes {
        let s = &o.step;
        let target = match &s.action {
            Action::Abort(a) => format!(
                "abort {}-{} producer {}",
                a.topic, a.partition, a.producer_id
            ),
            Action::ForceTerminate { transactional_id } => {
                format!("force-terminate {transactional_id}")
            }
            Action::Skip(_) | Action::Manual(_) => {
                let parts: Vec<String> = s
                    .seen
                    .partitions
                    .iter()
                    .map(|p| format!("{}-{}", p.topic, p.partition))
                    .collect();
                let kind = if matches!(s.action, Action::Skip(_)) {
                    "skip"
                } else {
                    "manual"
                };
                format!("{kind} {} producer {}", parts.join(","), s.seen.producer_id)
            }
        };
        let (status, text) = match (&o.outcome, &s.action) {
            (Outcome::Done(Done::Aborted), _) => ("done", "aborted".to_string()),
            (Outcome::Done(Done::Terminated(t)), _) => (
                "done",
                format!(
                    "terminated; producer {} now at epoch {} (older epochs fenced)",
                    t.producer_id, t.producer_epoch
                ),
            ),
            (Outcome::Skipped, Action::Skip(reason)) => ("skipped", format!("not sent: {reason}")),
            (Outcome::Skipped, Action::Manual(m)) => (
                "skipped",
                format!("left to an operator: {}", m.command_line()),
            ),
            (Outcome::Skipped, _) => ("skipped", "not sent".to_string()),
            (Outcome::Refused(changed), _) => (
                "NOT SENT",
                format!("state changed since the plan, nothing sent: {changed}"),
            ),
            (Outcome::Failed(f), _) => ("FAILED", f.to_string()),
        };
        let _ = writeln!(out, "  {}. {target}: {status}: {text}", s.number);
    }
    let _ = out.flush();
    if !report.all_sent_done() {
        exit::PARTIAL
    } else if report.skipped() > 0 {
        exit::FOUND
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use kdp_domain::repair::{AbortSpec, CoordinatorAnswer, NotAsked, PartitionSeen, Seen};

    use super::*;

    /// One buffer behind two writers, as a terminal shows stdout and stderr.
    #[derive(Clone, Default)]
    struct Screen(Rc<RefCell<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn abort_plan(coordinator: CoordinatorAnswer) -> Plan {
        let mut plan = Plan::default();
        plan.push(
            Action::Abort(AbortSpec {
                topic: "payments".into(),
                partition: 0,
                producer_id: 7003,
                producer_epoch: 0,
                coordinator_epoch: 2,
            }),
            Seen {
                producer_id: 7003,
                producer_epoch: 0,
                partitions: vec![PartitionSeen {
                    topic: "payments".into(),
                    partition: 0,
                    start_offset: 40112,
                    unblocks: Some(78),
                }],
                coordinator,
            },
        );
        plan
    }

    /// A repair the cluster answers "done" to but whose LSO never moves
    /// (here every read_committed ListOffsets answer keeps payments-0 at the
    /// transaction's start): the report says so, the audit line too, and
    /// the command exits 1, all within the one --timeout on tokio's paused
    /// clock.
    #[tokio::test(start_paused = true)]
    async fn an_lso_that_did_not_move_exits_1_and_is_recorded() {
        use std::time::Duration;

        use kdp_client::TimeBound;
        use kdp_domain::repair::AbortTarget;
        use kdp_wire::messages::list_offsets::READ_COMMITTED;
        use kdp_wire::messages::ListOffsetsRequest;
        use kdp_workflows::repair::plan_abort;

        let cluster = kdp_test_support::StallCluster::demo();
        cluster.edit::<ListOffsetsRequest, _>(|_, req, resp| {
            if req.isolation_level == READ_COMMITTED {
                for t in resp.topics.iter_mut().filter(|t| t.name == "payments") {
                    for p in t.partitions.iter_mut().filter(|p| p.partition_index == 0) {
                        p.offset = 40112;
                    }
                }
            }
        });
        let conn = Connected {
            client: cluster.client().await,
            bound: TimeBound::after(Duration::from_secs(10))
                .with_request_timeout(Duration::from_secs(2)),
            principal: Some("User:ops".into()),
        };
        let target = AbortTarget::StartOffset {
            topic: "payments".into(),
            partition: 0,
            start_offset: 40112,
        };
        let plan = plan_abort(
            &conn.client,
            &target,
            &conn.describe_options(None, None),
            &conn.bound,
        )
        .await
        .expect("plan");
        let dir = std::env::temp_dir().join(format!("kdp-not-moved-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("audit.jsonl");
        let _ = std::fs::remove_file(&log);
        let args = ConfirmArgs {
            dry_run: false,
            yes: true,
            audit_log: Some(log.clone()),
        };
        let mut out = Vec::new();
        let code = carry_out("abort", &conn, &mut out, true, plan, &args).await;
        let shown = String::from_utf8(out).unwrap();
        assert_eq!(code, Ok(exit::PARTIAL), "{shown}");
        assert!(
            shown.contains("abort payments-0 producer 7003: done"),
            "{shown}"
        );
        assert!(
            shown.contains("payments-0: LSO DID NOT MOVE: still 40112 (was 40112)"),
            "{shown}"
        );
        let line: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
        assert_eq!(line["Partitions"][0]["LsoChange"], "not moved");
        assert_eq!(line["Principal"], "User:ops");
        assert!(tokio::time::Instant::now() <= conn.bound.deadline().at());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_question_comes_after_the_plan_it_asks_about() {
        let screen = Screen::default();
        let plan = abort_plan(CoordinatorAnswer::NotListed);
        let mut input: &[u8] = b"y\n";
        // stdout went elsewhere (a pipe): the plan is written where the question is
        let yes = ask(Some(&plan), &mut input, &mut screen.clone()).expect("ask");
        assert!(yes);
        let shown = String::from_utf8(screen.0.borrow().clone()).expect("utf-8");
        let plan_at = shown.find("Plan (1 step)").expect("the plan is shown");
        let question_at = shown.find("Proceed? [y/N]").expect("the question");
        assert!(plan_at < question_at, "{shown}");
        assert!(shown.contains("payments-0@40112"), "{shown}");
    }

    #[test]
    fn a_coordinator_not_asked_gets_no_claim_about_its_transaction() {
        let plan = abort_plan(CoordinatorAnswer::NotAsked(NotAsked::DescribeFailed {
            transactional_id: "payments-app".into(),
            error: "COORDINATOR_NOT_AVAILABLE",
        }));
        let mut out = Vec::new();
        render_plan(&mut out, &plan).expect("render");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(!text.contains("would not help"), "{text}");
        assert!(
            text.contains("the coordinator could not be asked")
                && text.contains("COORDINATOR_NOT_AVAILABLE"),
            "{text}"
        );
    }
}
