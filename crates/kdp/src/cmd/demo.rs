//! `kdp demo`: start the built-in mock cluster in this process (three
//! brokers on free ports of 127.0.0.1) and describe it with exactly the code
//! `kdp describe` runs. No Kafka needed.

use std::time::Duration;

use kdp_server::{MockCluster, MockConfig};

use crate::cmd::cluster::ClusterArgs;
use crate::cmd::repair::ConfirmArgs;
use crate::cmd::{batches, blocked, describe, find_hanging, history, lag, owners, producers};
use crate::exit;
use crate::output::Output;

#[derive(clap::Args)]
#[command(after_help = "\
The demo cluster: topics orders, payments, inventory, ledger and the internal __consumer_offsets
and __transaction_state. orders-3 holds the seed document's example producer; there is an idle
idempotent producer, open transactions, a fenced zombie epoch, and a hanging transaction on
payments-0. ledger holds a transaction whose partition its coordinator forgot (ledger-0), one stuck
in PrepareCommit (ledger-2), one whose transactional id ACLs hide (ledger-3) and a fenced instance
(ledger-4: its transactional id inventory-sync has a transaction log in __transaction_state that
shows the second instance's InitProducerId; `kdp demo --history` prints it, and
`kdp describe --with-transactions` flags ledger-4 fenced from it); inventory-0 has a diverged follower. Four consumer groups read payments:
payments-ledger (read_committed) is blocked at the LSO the hanging transaction pins,
payments-audit (a KIP-848 consumer group) lags behind it, payments-reporting reads uncommitted
past it, and payments-archive has no members (Empty); `kdp demo --blocked` shows them.
inventory-1 holds record batches: producer 9101's sequence has a duplicate batch (the same
sequences twice, as a retry the broker did not catch) and a gap (25 sequences missing: what a
broker answers with OutOfOrderSequence); `kdp demo --batches` shows them as `kdp batches`
does. To serve the same cluster and point other tools at it:
  kdp demo --print-cluster-file > demo.json && kdp mock-broker --cluster demo.json
(the format: docs/CLUSTER_FILE.md).

`kdp demo --producers` adds producer-id pressure and shows what `kdp producers` finds, two scans 2 s
apart: a Flink-like sink makes a transactional id every 20 s (ingest-flink-<n>) on topic
checkpoints, whose replicas are all on broker 2; broker 2 keeps Kafka's default
producer.id.expiration.ms (a day) while 1 and 3 expire ids after an hour, so broker 2 holds about
4,900 producer ids (above the demo's --max-producer-ids-per-broker 1000: exit 4) and the others
about 700. A function makes a transactional id per request (receipt-fn-<uuid>, two a second: the
churn between the scans), a steady idempotent service writes events, and settlement-writer, a
transactional id using an epoch a second, is about 760 epochs from 32767, with its rate and when
it gets there.
`kdp demo --producers --print-cluster-file` prints that cluster (producer_generators make the
producers from the clock).

`kdp demo --owners` runs `kdp owners` on a cluster of its own (exit 4: orphaned and lingering
transactions): orders-app, a Kafka Streams application whose group lists one live instance while
another instance's two ids hold transactions open on orders-out for 9 minutes (orphaned, with the
force-terminate that ends each); connect-prod, a Connect cluster whose worker runs connector
ticks-2024-v2's three tasks (live); ingest-sink, a Flink sink restarted without state whose old
ingest-sink-0-41 is still open after the new job committed two checkpoints (lingering) while
ingest-sink-0-3 is its newest checkpoint's (live, with what an abort would discard); and
legacy-writer.7 (unattributed). The groups' member bytes are from real runs.")]
pub struct Args {
    /// Output format (as for `kdp describe`).
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,

    /// List partitions without active producers too.
    #[arg(long)]
    pub show_empty: bool,

    /// Print the built-in cluster file (for `kdp mock-broker --cluster`) and exit.
    #[arg(long, conflicts_with_all = ["output", "show_empty"])]
    pub print_cluster_file: bool,

    /// Add producer-id pressure to the demo and show what `kdp producers` finds: a broker holding
    /// thousands of ids from a Flink-like sink, and a transactional id near the end of its epochs.
    #[arg(long, conflicts_with_all = ["show_empty", "repair_dry_run", "blocked", "batches", "history"])]
    pub producers: bool,

    /// Show what `kdp find-hanging --repair --dry-run` would do to the demo cluster.
    #[arg(long, conflicts_with_all = ["show_empty", "print_cluster_file"])]
    pub repair_dry_run: bool,

    /// Show what `kdp blocked` finds: the consumer groups the demo's open transactions hold back.
    #[arg(long, conflicts_with_all = ["show_empty", "print_cluster_file", "repair_dry_run"])]
    pub blocked: bool,

    /// Show what `kdp batches` finds on inventory-1: a producer's duplicate batch and sequence gap.
    #[arg(long, conflicts_with_all = ["show_empty", "print_cluster_file", "repair_dry_run", "blocked"])]
    pub batches: bool,

    /// Show the fenced instance's story: `kdp history` of inventory-sync (a new instance fenced the
    /// one that wrote ledger-4).
    #[arg(long, conflicts_with_all = ["show_empty", "print_cluster_file", "repair_dry_run", "blocked", "batches"])]
    pub history: bool,

    /// Show what `kdp lag` finds on a cluster of its own: a group Kafka's tool calls lagging by
    /// one offset (a commit marker) that is caught up, one held back by an open transaction, one
    /// whose 17 offsets hold 11 records, and a read_committed share group whose records still to
    /// deliver are known only as "at most".
    #[arg(long, conflicts_with_all = ["show_empty", "print_cluster_file", "repair_dry_run", "blocked", "batches", "history", "producers", "owners"])]
    pub lag: bool,

    /// Show what `kdp owners` finds on a cluster of its own: a Kafka Streams application with an
    /// orphaned instance, a Connect cluster's tasks, a Flink sink's lingering transaction and
    /// newest checkpoint, and an id of no known scheme (with --print-cluster-file: that cluster).
    #[arg(long, conflicts_with_all = ["show_empty", "repair_dry_run", "blocked", "batches", "history", "producers"])]
    pub owners: bool,
}

pub fn run(args: Args) -> i32 {
    if args.print_cluster_file {
        if args.producers {
            println!("{}", kdp_server::demo::producers_cluster_json());
        } else if args.owners {
            print!("{}", kdp_server::demo::DEMO_OWNERS_JSON);
        } else {
            print!("{}", kdp_server::demo::DEMO_CLUSTER_JSON);
        }
        return exit::OK;
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kdp demo: cannot start the async runtime: {e}");
            return exit::PARTIAL;
        }
    };
    rt.block_on(run_async(args))
}

pub async fn run_async(args: Args) -> i32 {
    let built = if args.lag {
        kdp_server::demo::lag_cluster()
    } else if args.producers {
        kdp_server::demo::producers_cluster()
    } else if args.owners {
        kdp_server::demo::owners_cluster()
    } else {
        kdp_server::demo::cluster()
    };
    let cluster = match built {
        Ok(c) => c,
        Err(e) => {
            // The file is built in and tested; this is a bug.
            eprintln!("kdp demo: the built-in cluster is invalid: {e}");
            return exit::PARTIAL;
        }
    };
    let config = MockConfig {
        host: "127.0.0.1".into(),
        port: 0,
        ..MockConfig::default()
    };
    let mock = match MockCluster::start(cluster, config).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("kdp demo: cannot start the mock cluster: {e}");
            return exit::UNREACHABLE;
        }
    };
    let bootstrap = mock.bootstrap();
    eprintln!(
        "kdp demo: a built-in mock cluster of {} brokers at {bootstrap}",
        mock.listeners().len()
    );
    let cluster = ClusterArgs {
        timeout: Duration::from_secs(20),
        ..ClusterArgs::new(bootstrap.clone())
    };
    if args.batches {
        let b = batches::Args {
            cluster,
            topic: "inventory".into(),
            partition: 1,
            producer_id: None,
            last: Some(20),
            from_offset: None,
            max_batches: 10_000,
            broker_id: None,
            output: args.output,
        };
        let stdout = std::io::stdout();
        let code = batches::run_to(b, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.producers {
        let p = producers::Args {
            cluster,
            topic: Vec::new(),
            broker_id: Vec::new(),
            since: None,
            interval: Some(Duration::from_secs(2)),
            max_producer_ids_per_broker: Some(1000),
            max_new_per_second: None,
            epoch_margin: kdp_domain::diagnose::pressure::DEFAULT_EPOCH_MARGIN,
            top: 5,
            output: args.output,
        };
        let stdout = std::io::stdout();
        let code = producers::run_to(p, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.lag {
        let l = lag::Args {
            cluster,
            group: Vec::new(),
            topic: Vec::new(),
            max_bytes_per_partition: kdp_workflows::lag::DEFAULT_MAX_BYTES_PER_PARTITION,
            max_records: 0,
            committed_offsets_per_wave: kdp_workflows::lag::DEFAULT_COMMITTED_PER_WAVE,
            isolation: Default::default(),
            output: args.output,
            watch: Default::default(),
        };
        let stdout = std::io::stdout();
        let code = lag::run_to(l, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.blocked {
        let b = blocked::Args {
            cluster,
            group: Vec::new(),
            topic: Vec::new(),
            blocked_after: Duration::from_millis(
                kdp_domain::diagnose::blocked::DEFAULT_BLOCKED_AFTER_MS.unsigned_abs(),
            ),
            output: args.output,
            watch: Default::default(),
        };
        let stdout = std::io::stdout();
        let code = blocked::run_to(b, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.owners {
        let o = owners::Args {
            cluster,
            transactional_id: Vec::new(),
            group: Vec::new(),
            prefix: Vec::new(),
            output: args.output,
            watch: Default::default(),
        };
        let stdout = std::io::stdout();
        let code = owners::run_to(o, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.history {
        let h = history::Args {
            cluster,
            transactional_id: vec!["inventory-sync".into()],
            since: None,
            output: args.output,
        };
        let stdout = std::io::stdout();
        let code = history::run_to(h, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    if args.repair_dry_run {
        let fh = find_hanging::Args {
            cluster,
            topic: Vec::new(),
            partition: Vec::new(),
            broker_id: None,
            max_transaction_timeout: None,
            all: false,
            output: args.output,
            repair: true,
            confirm: ConfirmArgs {
                dry_run: true,
                yes: false,
                audit_log: None,
            },
            watch: Default::default(),
        };
        let stdout = std::io::stdout();
        let code = find_hanging::run_to(fh, &mut stdout.lock()).await;
        mock.shutdown_within(Duration::from_secs(2)).await;
        return code;
    }
    let mut describe_args = describe::Args::new(bootstrap.clone());
    describe_args.output = args.output;
    describe_args.show_empty = args.show_empty;
    describe_args.cluster.timeout = Duration::from_secs(20);
    let code = describe::run_against(&bootstrap, describe_args).await;
    mock.shutdown_within(Duration::from_secs(2)).await;
    code
}
