//! `kdp force-terminate`: end transactional ids' open transactions at their
//! coordinators and fence their producers, with a plan and a confirmation.

use std::io::{IsTerminal, Write};

use kdp_domain::repair::{advice, ForceTerminatePlan};
use kdp_workflows::repair::plan_force_terminate;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::cmd::repair::{self, ConfirmArgs};
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

The plan (DescribeTransactions: state, producer id and epoch, partitions) is printed first (when
stdout is not a terminal, also on stderr right before the question); each id is described again
right before sending, and one whose producer or state changed is left alone.
Needs WRITE on the transactional id.

Exit status: 0 done (or --dry-run), 1 some failed, changed since the plan or could not be
described, 2 bad usage or refused, 3 the cluster could not be reached.

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

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let ForceTerminatePlan { plan, left_alone } = plan_force_terminate(
        &conn.client,
        &args.transactional_id,
        &conn.describe_options(None, None),
        &conn.bound,
    )
    .await;
    for (id, e) in &left_alone {
        match e {
            Some(e) => fail!(
                "{id}: cannot describe it ({}{}); left alone",
                e.name(),
                advice(e.code).map(|a| format!(": {a}")).unwrap_or_default()
            ),
            None => fail!("{id}: no answer from its coordinator; left alone"),
        }
    }
    if plan.is_empty() {
        eprintln!("kdp: nothing to do; nothing was changed");
        return exit::USAGE;
    }
    for s in &plan.steps {
        if let Some(state) = s.seen.coordinator.decided() {
            fail!(
                "warning: {} is in {state}: the coordinator answers CONCURRENT_TRANSACTIONS until its markers are written",
                s.seen.transactional_id().unwrap_or("")
            );
        }
    }
    let seen_at_prompt = std::io::stdout().is_terminal();
    match repair::carry_out(
        "force-terminate",
        &conn,
        out,
        seen_at_prompt,
        plan,
        &args.confirm,
    )
    .await
    {
        // the ids that could not be described were left alone
        Ok(_) if !left_alone.is_empty() => exit::PARTIAL,
        Ok(code) | Err(code) => code,
    }
}
