//! `kdp describe`: the producers of partitions of a real cluster.
//!
//! The work is done by `kdp_client::describe::describe_producers_framed`
//! (each answer read through its response's view); this module parses the
//! flags, connects, and renders the results as they stream in: `jsonl`
//! line by line, `table` and `json` at the end (they are sorted and merged).

use std::io::{self, Write};

use kdp_client::describe::{describe_producers_framed, FramedEvent};

use crate::cmd::cluster::{self, ClusterArgs};
use crate::cmd::describe_txn;
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::producers::Renderer;
use crate::output::Output;
use crate::progress::Progress;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Which partitions:
  no --topic                        every partition of the cluster, internal topics included
  --topic T [--topic U ...]         every partition of those topics
  --topic T --partition P [...]     the given partitions; each --partition applies to every --topic
With --broker-id N the broker N is asked instead of each partition's leader (a follower answers
from its own state); partitions picked implicitly are then only those with a replica on N.
A topic or partition that does not exist is an error row at once (UNKNOWN_TOPIC_OR_PARTITION;
a missing topic without --partition is one row with partition -1, shown as '-' in the table); a topic
deleted while the cluster is scanned is left out.
Retries (within --timeout): NOT_LEADER_OR_FOLLOWER (not with --broker-id), UNKNOWN_TOPIC_OR_PARTITION
and unreachable brokers, after a metadata refresh; never authorization errors.

Output (stdout): table (default; sorted; partitions without producers are summed up, listed with
--show-empty), json (one DescribeProducersResponse document merged across brokers, readable by
`kdp decode`'s JSON reader), jsonl (one object per producer and per failed partition, streamed).

With --with-transactions each producer is joined with its transactional id and the coordinator's
state, and flagged only where the data proves it (`kdp explain FLAG` says more):
  fenced         a later instance (or the coordinator) fenced the partition's last writes: the
                 transaction log (__transaction_state, read for each producer's transactional id)
                 shows an InitProducerId or a coordinator's abort after their epoch, on both
                 transaction protocols; under v1 also an epoch older than the coordinator's. A
                 producer that commits to different partitions in turn is never flagged. JSON:
                 Fenced {Verdict, Source: log|epochs|null, Detail}; the table's FencedFrom says
                 where it came from, and a note on stderr gives the log record. Where the log
                 cannot be read (no READ on __transaction_state, records compacted away) and the
                 epochs prove nothing (v2), the verdict is unknown, the note says why, and the
                 exit status is 1. Reading the log (the __transaction_state partitions of the
                 producers' ids, whole) draws on --timeout like the rest.
  open-too-long  an open transaction older than its timeout (the id's, else the cluster's maximum)
  orphan         an open transaction the coordinator will not end (find-hanging calls it hanging)
  idle           silent for longer than the cluster's producer.id.expiration.ms

Exit status: 0 every partition described, 1 some partitions failed (the rest is printed) or,
with --with-transactions, some fence verdict could not be checked,
2 bad usage (a bad --command-config included), 3 the cluster could not be reached within --timeout,
or TLS or SASL failed (unknown CA, hostname mismatch, expired or missing certificate, wrong password).

Examples:
  kdp describe --bootstrap-server localhost:9092 --topic orders --partition 0
  kdp describe --bootstrap-server b1:9092,b2:9092 --topic orders --output jsonl
  kdp describe --bootstrap-server localhost:9092 --topic orders --partition 0 --broker-id 2")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Topic to describe; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Partition to describe, for every --topic given; repeat or comma-separate. Default: all.
    #[arg(long, value_name = "PARTITION", requires = "topic", value_delimiter = ',',
          value_parser = clap::value_parser!(i32).range(0..))]
    pub partition: Vec<i32>,
    /// Ask this broker (leader or follower) instead of each partition's leader.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(i32).range(0..))]
    pub broker_id: Option<i32>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// List partitions without active producers too (table: a row each; jsonl: a line each).
    #[arg(long)]
    pub show_empty: bool,
    /// Join each producer with its transactional id and the coordinator's state, and flag
    /// fenced (from the transaction log), open-too-long, orphan and idle producers.
    #[arg(long)]
    pub with_transactions: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
}

impl Args {
    /// Describe the whole cluster behind `bootstrap` as a table, with the defaults.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        Args {
            cluster: ClusterArgs::new(bootstrap),
            topic: Vec::new(),
            partition: Vec::new(),
            broker_id: None,
            output: Output::Table,
            show_empty: false,
            with_transactions: false,
            watch: WatchArgs::default(),
        }
    }
}

/// `kdp describe`: builds a runtime and runs [`run_to`] on stdout.
pub fn run(args: Args) -> i32 {
    if args.watch.watch.is_some() {
        let every = args.watch.watch;
        return watch::run(every, "kdp describe", async |out| {
            run_to(args.clone(), out).await
        });
    }
    cluster::block_on(run_async(args))
}

/// The whole `kdp describe` path, output on stdout. For callers that already
/// run inside a tokio runtime (e.g. `kdp demo`).
pub async fn run_async(args: Args) -> i32 {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    run_to(args, &mut out).await
}

/// [`run_async`] against `bootstrap` instead of `args.cluster.bootstrap_server`.
pub async fn run_against(bootstrap: &str, mut args: Args) -> i32 {
    args.cluster.bootstrap_server = bootstrap.to_string();
    run_async(args).await
}

/// The whole `kdp describe` path, output on `out`; returns the exit status.
/// Errors go to stderr prefixed `kdp:`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let start = tokio::time::Instant::now();
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = conn.describe_options(
        cluster::selection(&args.topic, &args.partition),
        args.broker_id,
    );
    if args.with_transactions {
        return describe_txn::run_to(&conn, opts, args.output, out).await;
    }
    let client = conn.client.clone();

    let now_ms = kdp_workflows::clock::now_ms();
    let mut render = Renderer::new(
        args.output,
        args.broker_id.is_some(),
        args.show_empty,
        now_ms,
        out,
    );
    let mut progress = Progress::new();
    let result = {
        let sink = |ev: FramedEvent| match ev {
            FramedEvent::Planned { partitions } => progress.planned(partitions as u64),
            FramedEvent::Results {
                throttle_time_ms,
                outcomes,
                ..
            } => {
                progress.done(outcomes.len() as u64);
                render.results(throttle_time_ms, outcomes);
            }
        };
        // bounded by the command's one deadline, like every step of it
        describe_producers_framed(client, &opts, &conn.bound, sink).await
    };
    progress.finish();
    let summary = match result {
        Ok(s) => s,
        Err(e) => return exit::report(&e),
    };
    if let Err(e) = render.finish(&summary) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    tracing::debug!(elapsed = ?start.elapsed(), ?summary, "describe done");
    if summary.failed > 0 {
        fail!(
            "{} of {} partitions could not be described",
            summary.failed,
            summary.partitions
        );
        exit::PARTIAL
    } else {
        exit::OK
    }
}
