//! What `abort`, `force-terminate` and `find-hanging --repair` share: a plan
//! printed before anything is sent, one confirmation, a check that nothing
//! changed since the plan, the repairs, and a table of what became of each.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, IsTerminal, Write};

use kdp_client::admin::{KeyError, TopicPartition};
use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::join::{join, JoinOptions};
use kdp_client::txn::repair::{self, AbortSpec, Action};
use kdp_client::txn::{driver_options, SharedClient};
use kdp_client::TopicSelection;

use crate::cmd::cluster::Connected;
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
}

/// One planned repair and what the plan saw.
#[derive(Debug, Clone)]
pub struct Step {
    /// What is sent.
    pub action: Action,
    /// The partitions it unblocks (with the producer's open transaction's
    /// start offset there).
    pub partitions: Vec<(TopicPartition, i64)>,
    /// The producer.
    pub producer_id: i64,
    /// The producer's epoch as the plan saw it.
    pub producer_epoch: i32,
    /// The transactional id, when known.
    pub transactional_id: Option<String>,
    /// The coordinator's state, when described.
    pub state: Option<String>,
    /// Whether the coordinator's transaction lists the partitions.
    pub in_transaction: bool,
    /// Records held back from read_committed consumers (HW - LSO), summed.
    pub blocked: Option<i64>,
}

/// Prints the plan.
pub fn print_plan(out: &mut dyn Write, steps: &[Step]) -> io::Result<()> {
    writeln!(out, "Plan ({} step{}):", steps.len(), plural(steps.len()))?;
    for (i, s) in steps.iter().enumerate() {
        let parts: Vec<String> = s
            .partitions
            .iter()
            .map(|((t, p), o)| format!("{t}-{p}@{o}"))
            .collect();
        let what = match &s.action {
            Action::Abort(a) => format!(
                "abort (WriteTxnMarkers to the leader): producer {} epoch {} coordinator epoch {}",
                a.producer_id, a.producer_epoch, a.coordinator_epoch
            ),
            Action::ForceTerminate { transactional_id } => format!(
                "force-terminate {transactional_id:?} (InitProducerId at its coordinator): producer {} epoch {}",
                s.producer_id, s.producer_epoch
            ),
            Action::Skip { reason } => format!("skip: {reason}"),
        };
        writeln!(out, "  {}. {what}", i + 1)?;
        writeln!(
            out,
            "     partitions {}; transactional id {}; coordinator state {}; unblocks {} record(s)",
            if parts.is_empty() {
                "-".to_string()
            } else {
                parts.join(", ")
            },
            s.transactional_id.as_deref().unwrap_or("unknown"),
            s.state.as_deref().unwrap_or("-"),
            s.blocked.map_or("?".to_string(), |b| b.to_string()),
        )?;
        if matches!(s.action, Action::Abort(_)) && s.transactional_id.is_some() && !s.in_transaction
        {
            writeln!(
                out,
                "     (force-terminate would not help: {}'s transaction at the coordinator does not \
                 include this partition)",
                s.transactional_id.as_deref().unwrap_or("")
            )?;
        } else if matches!(s.action, Action::Abort(_)) && s.transactional_id.is_some() {
            writeln!(
                out,
                "     recommended instead: kdp force-terminate --transactional-id {} (a raw abort \
                 leaves the coordinator unaware: a live producer can still commit later)",
                s.transactional_id.as_deref().unwrap_or("")
            )?;
        }
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The plan on `out`, the confirmation, then the steps and the table of
/// what was done: `Ok(status of the report)` once executed, `Err(status)`
/// when it stopped before sending anything (0 for a dry run).
pub async fn carry_out(
    conn: &Connected,
    out: &mut dyn Write,
    steps: Vec<Step>,
    args: &ConfirmArgs,
) -> Result<i32, i32> {
    let _ = print_plan(out, &steps);
    let _ = out.flush();
    match confirm(args) {
        Ok(true) => {}
        Ok(false) => return Err(exit::OK),
        Err(code) => return Err(code),
    }
    let done = execute(conn, steps).await;
    Ok(report(out, &done))
}

/// Whether to go ahead: `Ok(false)` for a dry run, `Err(status)` when
/// refused.
pub fn confirm(args: &ConfirmArgs) -> Result<bool, i32> {
    if args.dry_run {
        eprintln!("kdp: --dry-run: nothing was changed");
        return Ok(false);
    }
    if args.yes {
        return Ok(true);
    }
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        eprintln!("kdp: refusing to change the cluster without confirmation: stdin is not a terminal; pass --yes (or --dry-run to only see the plan)");
        return Err(exit::USAGE);
    }
    eprint!("Proceed? [y/N] ");
    let mut line = String::new();
    if stdin.lock().read_line(&mut line).is_err() {
        return Err(exit::USAGE);
    }
    if matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(true)
    } else {
        eprintln!("kdp: not confirmed; nothing was changed");
        Err(exit::USAGE)
    }
}

/// What became of one step.
#[derive(Debug, Clone)]
pub struct Done {
    /// The step.
    pub step: Step,
    /// What was done, or why not.
    pub result: Result<String, String>,
}

fn key_error(e: &KeyError) -> String {
    let mut s = e.name().to_string();
    if let Some(m) = &e.message {
        s.push_str(&format!(" ({m})"));
    }
    if let Some(a) = repair::advice(e.code) {
        s.push_str(&format!(": {a}"));
    }
    s
}

/// Checks the plan against the cluster again, then runs each step still
/// valid. Changed steps are reported, not sent.
pub async fn execute(conn: &Connected, steps: Vec<Step>) -> Vec<Done> {
    let client = &conn.client;
    let fresh = revalidate(conn, &steps).await;
    let opts = driver_options(&conn.describe_options(None, None));
    let mut done = Vec::new();
    let mut aborts: Vec<(Step, AbortSpec)> = Vec::new();
    let mut terminates: Vec<Step> = Vec::new();
    for (step, check) in steps.into_iter().zip(fresh) {
        if let Err(why) = check {
            done.push(Done {
                step,
                result: Err(format!("state changed since the plan, nothing sent: {why}")),
            });
            continue;
        }
        match &step.action {
            Action::Abort(spec) => {
                let spec = spec.clone();
                aborts.push((step, spec));
            }
            Action::ForceTerminate { .. } => terminates.push(step),
            Action::Skip { reason } => {
                let reason = reason.clone();
                done.push(Done {
                    step,
                    result: Err(format!("not repaired: {reason}")),
                });
            }
        }
    }
    // one abort per partition and driver run
    while !aborts.is_empty() {
        let mut seen = BTreeSet::new();
        let (now, later): (Vec<_>, Vec<_>) =
            aborts.into_iter().partition(|(_, s)| seen.insert(s.key()));
        aborts = later;
        let specs = now.iter().map(|(_, s)| s.clone()).collect();
        let results = repair::abort(client, specs, &opts).await;
        for (step, spec) in now {
            let result = match results.get(&spec.key()) {
                Some(Ok(())) => Ok("aborted".to_string()),
                Some(Err(e)) => Err(key_error(e)),
                None => Err("no answer".to_string()),
            };
            done.push(Done { step, result });
        }
    }
    if !terminates.is_empty() {
        let ids: Vec<String> = terminates
            .iter()
            .filter_map(|s| match &s.action {
                Action::ForceTerminate { transactional_id } => Some(transactional_id.clone()),
                _ => None,
            })
            .collect();
        let timeout_ms = i32::try_from(conn.request_timeout.as_millis()).unwrap_or(i32::MAX);
        let results = repair::force_terminate(client, ids, timeout_ms, &opts).await;
        for step in terminates {
            let Action::ForceTerminate { transactional_id } = &step.action else {
                continue;
            };
            let result = match results.get(transactional_id) {
                Some(Ok(t)) => Ok(format!(
                    "terminated; producer {} now at epoch {} (older epochs fenced)",
                    t.producer_id, t.producer_epoch
                )),
                Some(Err(e)) => Err(key_error(e)),
                None => Err("no answer".to_string()),
            };
            done.push(Done { step, result });
        }
    }
    done
}

/// For each step, whether the cluster still shows what the plan saw.
async fn revalidate(conn: &Connected, steps: &[Step]) -> Vec<Result<(), String>> {
    let client: &SharedClient = &conn.client;
    let mut partitions: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    for s in steps {
        if matches!(s.action, Action::Abort(_)) {
            for ((t, p), _) in &s.partitions {
                partitions.entry(t.clone()).or_default().insert(*p);
            }
        }
    }
    let producers = if partitions.is_empty() {
        None
    } else {
        let topics = partitions
            .into_iter()
            .map(|(name, ps)| TopicSelection {
                name,
                partitions: Some(ps.into_iter().collect()),
            })
            .collect();
        let opts = JoinOptions {
            describe: conn.describe_options(Some(topics), None),
            open_only: true,
        };
        Some(join(client, &opts).await.map_err(|e| e.to_string()))
    };
    let ids: Vec<String> = steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::ForceTerminate { transactional_id } => Some(transactional_id.clone()),
            _ => None,
        })
        .collect();
    let described = if ids.is_empty() {
        BTreeMap::new()
    } else {
        let opts = driver_options(&conn.describe_options(None, None));
        describe_transactions(client, ids, &opts).await
    };
    steps
        .iter()
        .map(|s| match &s.action {
            Action::Abort(spec) => {
                let joined = match &producers {
                    Some(Ok(j)) => j,
                    Some(Err(e)) => return Err(format!("cannot describe the partition: {e}")),
                    None => return Err("not described".into()),
                };
                for ((t, p), start) in &s.partitions {
                    let now = joined
                        .open_transactions()
                        .find(|(tt, pp, ps)| tt == t && pp == p && ps.producer_id == spec.producer_id);
                    match now {
                        Some((_, _, ps))
                            if ps.current_txn_start_offset == *start
                                && ps.producer_epoch == s.producer_epoch => {}
                        Some((_, _, ps)) => {
                            return Err(format!(
                                "{t}-{p}: producer {} is now at epoch {} with a transaction from offset {}",
                                ps.producer_id, ps.producer_epoch, ps.current_txn_start_offset
                            ))
                        }
                        None if *start < 0 => {}
                        None => {
                            return Err(format!(
                                "{t}-{p}: producer {} has no open transaction any more",
                                spec.producer_id
                            ))
                        }
                    }
                }
                Ok(())
            }
            Action::ForceTerminate { transactional_id } => match described.get(transactional_id) {
                Some(d) => match &d.result {
                    // the partition's epoch may lag the coordinator's: compare the producer and state
                    Ok(t) if t.producer_id == s.producer_id
                        && Some(&t.transaction_state) == s.state.as_ref() => Ok(()),
                    Ok(t) => Err(format!(
                        "{transactional_id}: now producer {} epoch {} in {}",
                        t.producer_id, t.producer_epoch, t.transaction_state
                    )),
                    Err(e) => Err(format!("{transactional_id}: {}", key_error(e))),
                },
                None => Err(format!("{transactional_id}: not described")),
            },
            Action::Skip { .. } => Ok(()),
        })
        .collect()
}

/// Prints what was done; the exit status: 0 all done, 1 some failed.
pub fn report(out: &mut dyn Write, done: &[Done]) -> i32 {
    let _ = writeln!(out, "Result:");
    let mut failed = 0;
    for (i, d) in done.iter().enumerate() {
        let target = match &d.step.action {
            Action::Abort(a) => format!(
                "abort {}-{} producer {}",
                a.topic, a.partition, a.producer_id
            ),
            Action::ForceTerminate { transactional_id } => {
                format!("force-terminate {transactional_id}")
            }
            Action::Skip { .. } => {
                let parts: Vec<String> = d
                    .step
                    .partitions
                    .iter()
                    .map(|((t, p), _)| format!("{t}-{p}"))
                    .collect();
                format!("skip {} producer {}", parts.join(","), d.step.producer_id)
            }
        };
        let (status, text) = match &d.result {
            Ok(t) => ("done", t.as_str()),
            Err(t) => {
                failed += 1;
                ("FAILED", t.as_str())
            }
        };
        let _ = writeln!(out, "  {}. {target}: {status}: {text}", i + 1);
    }
    if failed > 0 {
        exit::PARTIAL
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kdp_server::{MockCluster, MockConfig};

    use super::*;
    use crate::cmd::cluster::{connect, ClusterArgs};

    async fn demo() -> (MockCluster, Connected) {
        let cluster = kdp_server::demo::cluster().expect("demo cluster");
        let config = MockConfig {
            host: "127.0.0.1".into(),
            port: 0,
            ..MockConfig::default()
        };
        let mock = MockCluster::start(cluster, config).await.expect("mock");
        let conn = connect(&ClusterArgs {
            bootstrap_server: mock.bootstrap(),
            client: Default::default(),
            timeout: Duration::from_secs(20),
        })
        .await
        .unwrap_or_else(|_| panic!("connect"));
        (mock, conn)
    }

    fn payments_abort(producer_epoch: i32, start: i64) -> Step {
        Step {
            action: Action::Abort(AbortSpec {
                topic: "payments".into(),
                partition: 0,
                producer_id: 7003,
                producer_epoch: 0,
                coordinator_epoch: 2,
            }),
            partitions: vec![(("payments".into(), 0), start)],
            producer_id: 7003,
            producer_epoch,
            transactional_id: None,
            state: None,
            in_transaction: false,
            blocked: None,
        }
    }

    fn open_start(mock: &MockCluster) -> Option<i64> {
        mock.cluster().partition("payments", 0).and_then(|p| {
            p.producers_on(p.leader)
                .iter()
                .find(|s| s.producer_id == 7003)
                .map(|s| s.current_txn_start_offset)
        })
    }

    #[tokio::test]
    async fn a_plan_the_cluster_no_longer_matches_sends_nothing() {
        let (mock, conn) = demo().await;
        assert_eq!(open_start(&mock), Some(40112));
        // planned against another epoch, then another start offset
        for step in [payments_abort(1, 40112), payments_abort(0, 40000)] {
            let done = execute(&conn, vec![step]).await;
            let err = done[0].result.as_ref().expect_err("refused");
            assert!(err.contains("state changed since the plan"), "{err}");
        }
        assert_eq!(open_start(&mock), Some(40112));
        // the plan that matches is carried out, and a second run is refused as stale
        let done = execute(&conn, vec![payments_abort(0, 40112)]).await;
        assert!(done[0].result.is_ok(), "{:?}", done[0].result);
        assert_eq!(open_start(&mock), Some(-1));
        let done = execute(&conn, vec![payments_abort(0, 40112)]).await;
        assert!(done[0].result.is_err());
        mock.shutdown().await;
    }
}
