//! `kdp force-terminate`: end transactional ids' open transactions at their
//! coordinators and fence their producers, with a plan and a confirmation.

use std::collections::BTreeMap;
use std::io::Write;

use kdp_client::describe::TopicSelection;
use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::driver_options;
use kdp_client::txn::join::{join, JoinOptions};
use kdp_client::txn::repair::Action;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::cmd::repair::{self, ConfirmArgs, Step};
use crate::exit;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Sends InitProducerId for each transactional id to its coordinator with producer id and epoch -1,
as Admin.fenceProducers and Admin.forceTerminateTransaction (Kafka 4.1+) do: the coordinator bumps
the producer epoch, aborts the open transaction (writing the abort markers to every partition in
it) and fences the running instance: a producer that comes back with the old epoch is rejected.
The coordinator may first answer CONCURRENT_TRANSACTIONS while it aborts; kdp asks again until
--timeout, as Kafka's Admin client does.

This is the preferred repair whenever the transactional id is known: unlike a raw `kdp abort`,
the coordinator knows the transaction ended, so the producer cannot commit it later. It does not
help a transaction the coordinator has already decided (PrepareCommit/PrepareAbort with markers
never written), nor a partition the coordinator does not list in the transaction (use `kdp abort`
for that partition).

The plan (DescribeTransactions: state, producer id and epoch, partitions) is printed first; each
id is described again right before sending, and one whose producer or state changed is left alone.
Needs WRITE on the transactional id.

Exit status: 0 done (or --dry-run), 1 some failed, 2 bad usage or refused, 3 the cluster could
not be reached.

Example:
  kdp force-terminate --bootstrap-server localhost:9092 --transactional-id ledger-writer --dry-run")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Transactional id to terminate; repeat for several.
    #[arg(long, value_name = "ID", required = true)]
    pub transactional_id: Vec<String>,
    #[command(flatten)]
    pub confirm: ConfirmArgs,
}

/// `kdp force-terminate`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// Fills each step's partitions with where its producer's open transaction
/// starts there and the records it pins (DescribeProducers and ListOffsets
/// on the leaders), so that the plan says what the repair unblocks. Without
/// an answer the plan shows `-1` and `?`: it is only what the plan prints.
async fn show_what_it_unblocks(conn: &cluster::Connected, steps: &mut [Step]) {
    let mut wanted: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for ((topic, partition), _) in steps.iter().flat_map(|s| &s.partitions) {
        wanted.entry(topic.clone()).or_default().push(*partition);
    }
    if wanted.is_empty() {
        return;
    }
    let selection = wanted
        .into_iter()
        .map(|(name, partitions)| TopicSelection {
            name,
            partitions: Some(partitions),
        })
        .collect();
    let opts = JoinOptions {
        describe: conn.describe_options(Some(selection), None),
        open_only: true,
    };
    let Ok(joined) = join(&conn.client, &opts).await else {
        return;
    };
    for step in steps.iter_mut() {
        let mut blocked = None;
        for ((topic, partition), start) in &mut step.partitions {
            let open = joined.open_transactions().find(|(t, p, producer)| {
                t == topic && p == partition && producer.producer_id == step.producer_id
            });
            if let Some((_, _, producer)) = open {
                *start = producer.current_txn_start_offset;
                if let Some(Ok(o)) = joined.offsets.get(&(topic.clone(), *partition)) {
                    blocked = Some(blocked.unwrap_or(0) + o.blocked());
                }
            }
        }
        step.blocked = blocked;
    }
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = driver_options(&conn.describe_options(None, None));
    let mut ids = args.transactional_id.clone();
    ids.sort();
    ids.dedup();
    let described = describe_transactions(&conn.client, ids.clone(), &opts).await;
    let mut steps = Vec::new();
    let mut refused = 0;
    for id in ids {
        match described.get(&id).map(|d| &d.result) {
            Some(Ok(t)) => steps.push(Step {
                action: Action::ForceTerminate {
                    transactional_id: id.clone(),
                },
                partitions: t
                    .topics
                    .iter()
                    .flat_map(|td| td.partitions.iter().map(|p| ((td.topic.clone(), *p), -1)))
                    .collect(),
                producer_id: t.producer_id,
                producer_epoch: i32::from(t.producer_epoch),
                transactional_id: Some(id.clone()),
                state: Some(t.transaction_state.clone()),
                in_transaction: true,
                blocked: None,
            }),
            Some(Err(e)) => {
                refused += 1;
                eprintln!(
                    "kdp: {id}: cannot describe it ({}{}); left alone",
                    e.name(),
                    kdp_client::txn::repair::advice(e.code)
                        .map(|a| format!(": {a}"))
                        .unwrap_or_default()
                );
            }
            None => {
                refused += 1;
                eprintln!("kdp: {id}: no answer from its coordinator; left alone");
            }
        }
    }
    if steps.is_empty() {
        eprintln!("kdp: nothing to do; nothing was changed");
        return exit::USAGE;
    }
    show_what_it_unblocks(&conn, &mut steps).await;
    for s in &steps {
        if matches!(s.state.as_deref(), Some("PrepareCommit" | "PrepareAbort")) {
            eprintln!(
                "kdp: warning: {} is in {}: the coordinator answers CONCURRENT_TRANSACTIONS until its markers are written",
                s.transactional_id.as_deref().unwrap_or(""),
                s.state.as_deref().unwrap_or("")
            );
        }
    }
    match repair::carry_out(&conn, out, steps, &args.confirm).await {
        // the ids that could not be described were left alone
        Ok(_) if refused > 0 => exit::PARTIAL,
        Ok(code) | Err(code) => code,
    }
}
