//! `kdp abort`: a raw abort of one partition's open transaction
//! (WriteTxnMarkers to the leader, as `kafka-transactions.sh abort`), with a
//! plan, a confirmation and a re-check before anything is sent.

use std::io::Write;

use kdp_client::diagnose::hanging::{self, OpenTxn};
use kdp_client::txn::join::Joined;
use kdp_client::txn::repair::{marker_coordinator_epoch, AbortSpec, Action};
use kdp_wire::messages::ProducerState;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::cmd::repair::{self, ConfirmArgs, Step};
use crate::exit;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Writes an ABORT marker for a producer's open transaction straight to the partition's leader
(WriteTxnMarkers, as kafka-transactions.sh abort and Admin.abortTransaction). The records of the
transaction become aborted and the last stable offset moves on: read_committed consumers read on.

With --start-offset kdp finds the producer whose open transaction starts at that offset
(DescribeProducers on the leader) and takes its epoch and coordinator epoch from there (a
negative coordinator epoch is sent as 0, as Kafka's tool does). The plan is printed first:
producer, epochs, start offset, transactional id when a coordinator lists one, and the records it
unblocks (high watermark minus LSO). Right before sending, the partition is described again: if
the transaction ended or the producer moved on, nothing is sent. Aborting again is harmless.

Prefer `kdp force-terminate --transactional-id ID` when the transactional id is known: a raw
abort leaves the coordinator unaware, so a producer that is still alive can go on and commit
later; force-terminate bumps the epoch at the coordinator, which aborts the transaction and fences
that producer. A raw abort is for transactions no coordinator knows (hanging).

Needs ALTER or CLUSTER_ACTION on the cluster.

Exit status: 0 done (or --dry-run), 1 the abort failed, 2 bad usage or refused (no open
transaction at that offset, no confirmation), 3 the cluster could not be reached.

Examples:
  kdp abort --bootstrap-server localhost:9092 --topic payments --partition 0 --start-offset 40112 --dry-run
  kdp abort --bootstrap-server localhost:9092 --topic payments --partition 0 \\
      --producer-id 7003 --producer-epoch 0 --coordinator-epoch 0 --yes")]
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
    /// The producer id (instead of --start-offset).
    #[arg(long, value_name = "ID", requires_all = ["producer_epoch", "coordinator_epoch"])]
    pub producer_id: Option<i64>,
    /// The producer's epoch on the partition.
    #[arg(long, value_name = "EPOCH", requires = "producer_id")]
    pub producer_epoch: Option<i16>,
    /// The coordinator epoch on the partition.
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

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let describe = conn.describe_options(
        cluster::selection(std::slice::from_ref(&args.topic), &[args.partition]),
        None,
    );
    let joined = match cluster::join(&conn, describe, true).await {
        Ok(j) => j,
        Err(code) => return code,
    };
    if cluster::report_failed_partitions(&joined) > 0 {
        return exit::PARTIAL;
    }
    let step = match plan(&args, &joined) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("kdp: {msg}; nothing was changed");
            return exit::USAGE;
        }
    };
    let steps = vec![step];
    repair::carry_out(&conn, out, steps, &args.confirm)
        .await
        .unwrap_or_else(|stopped| stopped)
}

fn plan(args: &Args, joined: &Joined) -> Result<Step, String> {
    let open: Vec<&ProducerState> = joined
        .open_transactions()
        .filter(|(t, p, _)| *t == args.topic && *p == args.partition)
        .map(|(_, _, p)| p)
        .collect();
    let tp = format!("{}-{}", args.topic, args.partition);
    let (producer, spec) = match (args.start_offset, args.producer_id) {
        (Some(offset), _) => {
            let Some(p) = open.iter().find(|p| p.current_txn_start_offset == offset) else {
                let starts: Vec<String> = open
                    .iter()
                    .map(|p| {
                        format!(
                            "{} (producer {})",
                            p.current_txn_start_offset, p.producer_id
                        )
                    })
                    .collect();
                return Err(format!(
                    "no open transaction starts at offset {offset} on {tp} (open transactions start at: {})",
                    if starts.is_empty() { "none".to_string() } else { starts.join(", ") }
                ));
            };
            let epoch = i16::try_from(p.producer_epoch)
                .map_err(|_| format!("{tp}: producer epoch {} out of range", p.producer_epoch))?;
            (
                Some((*p).clone()),
                AbortSpec {
                    topic: args.topic.clone(),
                    partition: args.partition,
                    producer_id: p.producer_id,
                    producer_epoch: epoch,
                    coordinator_epoch: marker_coordinator_epoch(p.coordinator_epoch),
                },
            )
        }
        (None, Some(id)) => (
            open.iter()
                .find(|p| p.producer_id == id)
                .map(|p| (*p).clone()),
            AbortSpec {
                topic: args.topic.clone(),
                partition: args.partition,
                producer_id: id,
                producer_epoch: args.producer_epoch.unwrap_or(-1),
                coordinator_epoch: args.coordinator_epoch.unwrap_or(0),
            },
        ),
        (None, None) => return Err("give --start-offset or --producer-id".into()),
    };
    let start = producer.as_ref().map_or(-1, |p| p.current_txn_start_offset);
    let transactional_id = producer.as_ref().and_then(|p| {
        let txn = OpenTxn {
            topic: args.topic.clone(),
            partition: args.partition,
            producer: p.clone(),
        };
        hanging::transactional_id(&joined.view, &txn).map(str::to_string)
    });
    if producer.is_none() {
        eprintln!("kdp: producer {} has no open transaction on {tp}: the abort would change nothing but the producer's epoch there", spec.producer_id);
    }
    let state = producer
        .as_ref()
        .and_then(|p| joined.coordinator_state(p.producer_id));
    let in_transaction =
        state.is_some_and(|t| kdp_client::diagnose::includes(t, &args.topic, args.partition));
    Ok(Step {
        in_transaction,
        partitions: vec![((args.topic.clone(), args.partition), start)],
        producer_id: spec.producer_id,
        producer_epoch: producer
            .as_ref()
            .map_or(i32::from(spec.producer_epoch), |p| p.producer_epoch),
        state: state.map(|t| t.transaction_state.clone()),
        transactional_id,
        blocked: joined
            .offsets
            .get(&(args.topic.clone(), args.partition))
            .and_then(|o| o.as_ref().ok())
            .map(|o| o.blocked()),
        action: Action::Abort(spec),
    })
}
