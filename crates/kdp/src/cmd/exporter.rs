//! `kdp exporter`: watch producer state continuously and serve it to
//! Prometheus. The scanning is `kdp describe`'s (same client, same
//! describe engine, same flags for the cluster); see `crate::exporter`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::BrokerAddress;

use crate::cmd::cluster::{client_config, selection as topic_selection, ClusterArgs};
use crate::exit;
use crate::exporter::diagnosis::{Diagnose, FileDiagnosis};
use crate::exporter::findings::ClusterDiagnosis;
use crate::exporter::pressure::PressureConfig;
use crate::exporter::scan::ScanConfig;
use crate::exporter::{self, Config, StartError};

/// How logs are written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (for log pipelines).
    Json,
}

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Serves, on --listen:
  /metrics   Prometheus text format (OpenMetrics when the Accept header asks for it)
  /healthz   200 while the process runs
  /readyz    200 once a scan has reached the cluster, 503 before

Metrics (labels: topic; topic and partition with --per-partition):
  kdp_producers, kdp_open_transactions, kdp_oldest_open_transaction_age_seconds (from the
  producer's LastTimestamp: a lower bound of the transaction's age), and the exporter's own:
  kdp_scans_total{result}, kdp_scan_errors_total{error}, kdp_scan_duration_seconds,
  kdp_last_successful_scan_timestamp_seconds, kdp_scan_stale, kdp_build_info{version}.
  From the diagnosis after each scan (as find-hanging, from the scan's own answers):
  kdp_hanging_transactions, kdp_stuck_transactions, kdp_unknown_transactions (candidates it could
  not judge), kdp_fenced_producers (from the epochs: transaction protocol v1 only, as the exporter does
  not read the transaction log), kdp_blocked_records (held by every open transaction, live or
  not) and kdp_blocked_records_by_verdict (by the verdict on each partition's LSO holder); with
  --compare-replicas also kdp_replica_divergences (producers whose state differs between
  replicas). Per consumer group (label group; --no-groups leaves them out), as kdp blocked:
  kdp_group_blocked_partitions (partitions where the group's committed offset is at the LSO of a
  transaction whose producer wrote nothing for --blocked-after), kdp_group_blocked_records (the
  records held back there: high watermark - LSO) and kdp_group_members. The LSO lag per topic
  (per partition with --per-partition) is kdp_blocked_records. No zero stands for a check not
  made: kdp_diagnosis_available is 0 and the scan partial when a request of the diagnosis failed,
  and a group kdp could not fully check has no blocked series. A LastTimestamp of 0 or below
  gives no age.
  With --producer-ids, producer-id pressure (what kdp producers reports): kdp_broker_producer_ids
  {broker} (one per partition replica and producer, as the broker's ProducerIdCount gauge counts),
  kdp_broker_producer_ids_expiring_within_hour, kdp_broker_producer_ids_past_expiration,
  kdp_topic_producer_ids{topic}, kdp_topic_max_producer_epoch,
  kdp_topic_producers_near_epoch_exhaustion (within --epoch-margin of 32767) and the counters
  kdp_broker_new_producer_ids_total{broker} and kdp_topic_new_producer_ids_total{topic} (ids held
  that the previous answer did not hold; they only grow). A broker or topic some replica of which
  did not answer has no series that scan (the scan is partial), never a count of part of it.

--timeout bounds each scan (connecting, retries and the diagnosis included); without it, a scan
has the interval, at most 30s. A failed scan keeps the last values (kdp_scan_stale 1,
kdp_scan_errors_total counts it); a partial one keeps the last values of the topics it could not
describe. Scans never overlap: one longer than --interval delays the next. SIGINT or SIGTERM stops it cleanly. The bound address is printed on
stdout as one line. Rules, a dashboard and a systemd unit are in deploy/.

Examples:
  kdp exporter --bootstrap-server localhost:9092
  kdp exporter --bootstrap-server b1:9092,b2:9092 --listen 0.0.0.0:9308 --interval 30s --log-format json
  kdp exporter --bootstrap-server localhost:9092 --producer-ids --epoch-margin 2000")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Where to serve the metrics. Bound exactly as given.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9308")]
    pub listen: String,
    /// Time between the starts of two scans, e.g. 30s, 1m.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::duration::parse)]
    pub interval: Duration,
    /// Topic to watch; repeat for several. Default: every topic, internal ones included.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Label the per-topic metrics by partition too (many series on a big cluster).
    #[arg(long)]
    pub per_partition: bool,
    /// Also ask every replica of each partition each scan and export
    /// kdp_replica_divergences (as kdp compare-replicas); multiplies the
    /// scan's DescribeProducers requests by the replication factor (one
    /// pass over every replica, which is the leaders' describe and, with
    /// --producer-ids, the pressure scan too).
    #[arg(long)]
    pub compare_replicas: bool,
    /// A consumer group at the LSO counts as blocked (kdp_group_blocked_*) once the producer
    /// of the transaction there has written nothing for this long; before, it waits on a live
    /// transaction (as kdp blocked --blocked-after; 0: always blocked).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = crate::duration::parse_age)]
    pub blocked_after: Duration,
    /// Do not read consumer groups (no kdp_group_* series; saves ListGroups, OffsetFetch
    /// and DescribeGroups of every group each scan).
    #[arg(long)]
    pub no_groups: bool,
    /// Also export each group's lag in records beside Kafka's offset lag (kdp_group_lag_*, as
    /// kdp lag): reads committed offsets, ListOffsets and, where a group is below the LSO, the
    /// partition's batches with Fetch READ_COMMITTED (up to --lag-max-bytes-per-partition;
    /// READ_UNCOMMITTED up to the high watermark for groups read read_uncommitted).
    /// A partition a scan found without transactions or markers (in a topic not compacted) is
    /// read at the next scan only from where that read ended: no Fetch while it does not grow.
    /// Share groups (KIP-932): kdp_group_lag_records_at_most (records above the start offset,
    /// at most), kdp_group_lag_records_at_least (the lower bound derived from Kafka's Lag; none
    /// where Kafka gives no Lag), kdp_group_lag_held_back_offsets and kdp_share_group_lag (the
    /// Lag Kafka reports); no kdp_group_lag_records or kdp_group_lag_offsets (no committed
    /// offset).
    #[arg(long)]
    pub lag: bool,
    /// With --lag: bytes of batches read per partition at most each scan; past it the records
    /// are bounds (kdp_group_lag_records at least, kdp_group_lag_records_at_most).
    #[arg(long, value_name = "BYTES", default_value_t = kdp_workflows::lag::DEFAULT_MAX_BYTES_PER_PARTITION, requires = "lag")]
    pub lag_max_bytes_per_partition: u64,
    /// With --lag: how the consumer and streams groups read (as kdp lag).
    #[command(flatten)]
    pub lag_isolation: crate::cmd::lag::IsolationArgs,
    /// Ask every replica each scan, not only the leaders, for producer-id
    /// pressure per broker and topic (kdp_broker_producer_ids and the rest;
    /// see below); the leaders' answers among them are the scan's describe.
    /// Costs about the replication factor times the leaders' DescribeProducers
    /// requests and bytes, and one DescribeConfigs per broker.
    #[arg(long)]
    pub producer_ids: bool,
    /// Also attribute every transactional id to its owner each scan (kdp_owner_* per
    /// application: open, orphaned, lingering and unknown transactions, live instances, the
    /// oldest orphan's age). Costs ListTransactions, DescribeTransactions of every id, ListGroups
    /// and DescribeGroups of the Streams and Connect groups each scan.
    #[arg(long)]
    pub owners: bool,
    /// With --producer-ids: epochs within this many of 32767 are near exhaustion.
    #[arg(long, value_name = "N", default_value_t = kdp_domain::diagnose::pressure::DEFAULT_EPOCH_MARGIN,
          value_parser = clap::value_parser!(i32).range(0..=32767), requires = "producer_ids")]
    pub epoch_margin: i32,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Test hook: read the diagnosis (JSON, see exporter::diagnosis) from this
    /// file after each scan instead of diagnosing the cluster.
    #[arg(long, value_name = "FILE", hide = true)]
    pub diagnosis_file: Option<PathBuf>,
    /// Partitions per DescribeProducers request: bounds the exporter's peak
    /// memory (the responses in flight). Tuning only; see docs/PERFORMANCE.md.
    #[arg(long, value_name = "N", default_value_t = 1000, hide = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_partitions_per_request: u32,
}

/// `kdp exporter`: runs until SIGINT or SIGTERM.
pub fn run(args: Args) -> i32 {
    crate::malloc::fix_mmap_threshold();
    let bootstrap = match BrokerAddress::parse_list(&args.cluster.bootstrap_server) {
        Ok(b) => b,
        Err(e) => {
            fail!("--bootstrap-server: {e}");
            return exit::USAGE;
        }
    };
    let listen = match BrokerAddress::parse_listen(&args.listen) {
        Ok(a) => a,
        Err(e) => {
            fail!("--listen: {e}");
            return exit::USAGE;
        }
    };
    let props = match args.cluster.client.load() {
        Ok(p) => p,
        Err(msg) => {
            fail!("{msg}");
            return exit::USAGE;
        }
    };
    for warning in props.warnings() {
        tracing::warn!("{warning}");
    }
    // `main` bounded it by the interval when --timeout was not given
    let timeout = args.cluster.timeout;
    let (client, request_timeout) = match client_config(&props, timeout) {
        Ok(c) => c,
        Err(msg) => {
            fail!("{msg}");
            return exit::USAGE;
        }
    };
    let diagnose: Arc<dyn Diagnose> = match args.diagnosis_file {
        Some(path) => Arc::new(FileDiagnosis(path)),
        None => Arc::new(ClusterDiagnosis {
            describe: kdp_client::DescribeOptions {
                topics: topic_selection(&args.topic, &[]),
                ..Default::default()
            },
            compare_replicas: args.compare_replicas,
            groups_blocked_after_ms: (!args.no_groups)
                .then(|| i64::try_from(args.blocked_after.as_millis()).unwrap_or(i64::MAX)),
            lag: args.lag.then(|| kdp_workflows::lag::LagReadOptions {
                max_bytes_per_partition: args.lag_max_bytes_per_partition,
                lag: {
                    let mut lag = kdp_domain::lag::LagOptions {
                        topics: args.topic.clone(),
                        ..Default::default()
                    };
                    args.lag_isolation.apply(&mut lag);
                    lag
                },
                members: false,
                ..Default::default()
            }),
            lag_per_partition: args.per_partition,
            lag_known: Default::default(),
        }),
    };
    let config = Config {
        scan: ScanConfig {
            bootstrap,
            client,
            request_timeout,
            timeout,
            interval: args.interval,
            topics: topic_selection(&args.topic, &[]),
            per_partition: args.per_partition,
            max_partitions_per_request: args.max_partitions_per_request as usize,
            producer_ids: args.producer_ids.then_some(PressureConfig {
                epoch_margin: args.epoch_margin,
            }),
            owners: args.owners,
        },
        listen,
        diagnose,
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            fail!("cannot start the async runtime: {e}");
            return exit::PARTIAL;
        }
    };
    rt.block_on(async move {
        let mut signals = crate::signal::Signals::install();
        let bound = |addr: std::net::SocketAddr| {
            tracing::info!(%addr, interval = ?args.interval, "serving /metrics");
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{addr}");
            let _ = out.flush();
        };
        let stop = async {
            let signal = signals.recv().await;
            tracing::info!(signal, "shutting down");
        };
        match exporter::run(config, bound, stop).await {
            Ok(()) => exit::OK,
            Err(StartError::Listen(e)) if e.kind() == std::io::ErrorKind::AddrInUse => {
                fail!(
                    "--listen {}: the address is in use (another process listens there)",
                    args.listen
                );
                exit::USAGE
            }
            Err(StartError::Listen(e)) => {
                fail!("--listen {}: cannot listen there: {e}", args.listen);
                exit::USAGE
            }
            Err(StartError::Runtime(e)) => {
                fail!("cannot start the HTTP server: {e}");
                exit::PARTIAL
            }
        }
    })
}
