//! `kdp abort`: a raw abort of one partition's open transaction
//! (WriteTxnMarkers to the leader, as `kafka-transactions.sh abort`), with a
//! plan, a confirmation and a re-check before anything is sent.

use std::io::{IsTerminal, Write};

use kdp_domain::repair::{plan_abort_from, AbortTarget};

use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::repair::{self, ConfirmArgs};
use crate::exit;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Writes an ABORT marker for a producer's open transaction straight to the partition's leader
(WriteTxnMarkers, as kafka-transactions.sh abort and Admin.abortTransaction). The records of the
transaction become aborted and the last stable offset moves on: read_committed consumers read on.

With --start-offset kdp finds the producer whose open transaction starts at that offset
(DescribeProducers on the leader) and takes its epoch and coordinator epoch from there (a
negative coordinator epoch is sent as 0, as Kafka's tool does). With --producer-id the producer
must have an open transaction on the partition and exactly the epochs given (a negative
coordinator epoch may be given as 0); otherwise the plan itself is refused, --dry-run included
(exit 2), with the producers and open transactions the partition does have, and nothing is sent.

The plan is printed first: producer, epochs, start offset, transactional id when a coordinator
lists one, and the records it unblocks (from the LSO to the next open transaction or the high
watermark). What it says about force-terminate is only what the coordinator answered; when the
coordinator could not be asked it says so and why. When stdout is not a terminal the plan is
also written to stderr right before the question. Right before sending, the partition is
described again: if the transaction ended or the producer moved on, nothing is sent.

Prefer `kdp force-terminate --transactional-id ID` when the transactional id is known: a raw
abort leaves the coordinator unaware, so a producer that is still alive can go on and commit
later; force-terminate bumps the epoch at the coordinator, which aborts the transaction and fences
that producer. A raw abort is for transactions no coordinator knows (hanging).

Needs ALTER or CLUSTER_ACTION on the cluster.

Exit status: 0 done (or --dry-run), 1 the abort failed or the partition changed since the plan,
2 bad usage or refused (no open transaction at that offset or of that producer, epochs that are
not the partition's, no confirmation), 3 the cluster could not be reached.

Examples:
  kdp abort --bootstrap-server localhost:9092 --topic payments --partition 0 --start-offset 40112 --dry-run
  kdp abort --bootstrap-server localhost:9092 --topic payments --partition 0 \\
      --producer-id 7003 --producer-epoch 0 --coordinator-epoch 2 --yes")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The topic.
    #[arg(long)]
    pub topic: String,
    /// The partition.
    #[arg(long, value_parser = clap::value_parser!(i32).range(0..))]
    pub partition: i32,
    /// The offset the open transaction starts at (its CurrentTxnStartOffset).
    #[arg(long, value_name = "OFFSET", required_unless_present = "producer_id",
          conflicts_with_all = ["producer_id", "producer_epoch", "coordinator_epoch"])]
    pub start_offset: Option<i64>,
    /// The producer id (instead of --start-offset); it must have an open transaction there.
    #[arg(long, value_name = "ID", requires_all = ["producer_epoch", "coordinator_epoch"])]
    pub producer_id: Option<i64>,
    /// The producer's epoch on the partition (as DescribeProducers reports it).
    #[arg(long, value_name = "EPOCH", requires = "producer_id")]
    pub producer_epoch: Option<i16>,
    /// The coordinator epoch on the partition (as DescribeProducers reports it; 0 for a negative one).
    #[arg(
        long,
        value_name = "EPOCH",
        requires = "producer_id",
        allow_negative_numbers = true
    )]
    pub coordinator_epoch: Option<i32>,
    #[command(flatten)]
    pub confirm: ConfirmArgs,
}

/// `kdp abort`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// What `--start-offset` or `--producer-id` and the epochs ask for.
pub(crate) fn target(args: &Args) -> Option<AbortTarget> {
    match (args.start_offset, args.producer_id) {
        (Some(start_offset), _) => Some(AbortTarget::StartOffset {
            topic: args.topic.clone(),
            partition: args.partition,
            start_offset,
        }),
        (None, Some(producer_id)) => Some(AbortTarget::Producer {
            topic: args.topic.clone(),
            partition: args.partition,
            producer_id,
            producer_epoch: args.producer_epoch?,
            coordinator_epoch: args.coordinator_epoch?,
        }),
        (None, None) => None,
    }
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let Some(target) = target(&args) else {
        fail!(
            "give --start-offset, or --producer-id with --producer-epoch and --coordinator-epoch"
        );
        return exit::USAGE;
    };
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    run_on(&conn, &args, target, out).await
}

/// The command on a connected client.
pub async fn run_on(
    conn: &Connected,
    args: &Args,
    target: AbortTarget,
    out: &mut dyn Write,
) -> i32 {
    let describe = conn.describe_options(
        cluster::selection(std::slice::from_ref(&args.topic), &[args.partition]),
        None,
    );
    let joined = match cluster::join(conn, describe, true).await {
        Ok(j) => j,
        Err(code) => return code,
    };
    if cluster::report_failed_partitions(&joined) > 0 {
        return exit::PARTIAL;
    }
    let plan = match plan_abort_from(&joined, &target) {
        Ok(p) => p,
        Err(refusal) => {
            fail!("refused: {refusal}; nothing was changed");
            return exit::USAGE;
        }
    };
    let seen_at_prompt = std::io::stdout().is_terminal();
    repair::carry_out("abort", conn, out, seen_at_prompt, plan, &args.confirm)
        .await
        .unwrap_or_else(|stopped| stopped)
}
