//! `kdp describe`: the producers of partitions of a real cluster.
//!
//! The work is done by `kdp_client::describe_producers`; this module parses
//! the flags, connects, and renders the results as they stream in: `jsonl`
//! line by line, `table` and `json` at the end (they are sorted and merged).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kdp_client::{
    BrokerAddress, Client, ClientConfig, DescribeEvent, DescribeOptions, DescribeSummary,
    PartitionOutcome, TopicSelection,
};
use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use serde::Serialize;

use crate::exit;

/// Partitions from which on a progress bar is drawn (stderr on a terminal only).
const PROGRESS_MIN_PARTITIONS: u64 = 1000;

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

Exit status: 0 every partition described, 1 some partitions failed (the rest is printed),
2 bad usage, 3 the cluster could not be reached within --timeout.

Examples:
  kdp describe --bootstrap-server localhost:9092 --topic orders --partition 0
  kdp describe --bootstrap-server b1:9092,b2:9092 --topic orders --output jsonl
  kdp describe --bootstrap-server localhost:9092 --topic orders --partition 0 --broker-id 2")]
pub struct Args {
    /// Brokers to bootstrap from, tried in order.
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    pub bootstrap_server: String,
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
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Bound on the whole command (connecting, retries included), e.g. 500ms, 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Kafka client properties file (client.id, request.timeout.ms, ...). Only
    /// security.protocol=PLAINTEXT is supported for now.
    #[arg(long, value_name = "FILE")]
    pub command_config: Option<PathBuf>,
    /// List partitions without active producers too (table: a row each; jsonl: a line each).
    #[arg(long)]
    pub show_empty: bool,
}

impl Args {
    /// Describe the whole cluster behind `bootstrap` as a table, with the defaults.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        Args {
            bootstrap_server: bootstrap.into(),
            topic: Vec::new(),
            partition: Vec::new(),
            broker_id: None,
            output: Output::Table,
            timeout: Duration::from_secs(30),
            command_config: None,
            show_empty: false,
        }
    }
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Table,
    Json,
    Jsonl,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 500ms, 30s, 2m)"))?;
    if d.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(d)
}

/// `kdp describe`: builds a runtime and runs [`run_to`] on stdout.
pub fn run(args: Args) -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kdp: cannot start the async runtime: {e}");
            return exit::PARTIAL;
        }
    };
    rt.block_on(run_async(args))
}

/// The whole `kdp describe` path, output on stdout. For callers that already
/// run inside a tokio runtime (e.g. `kdp demo`).
pub async fn run_async(args: Args) -> i32 {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    run_to(args, &mut out).await
}

/// [`run_async`] against `bootstrap` instead of `args.bootstrap_server`.
pub async fn run_against(bootstrap: &str, mut args: Args) -> i32 {
    args.bootstrap_server = bootstrap.to_string();
    run_async(args).await
}

/// The whole `kdp describe` path, output on `out`; returns the exit status.
/// Errors go to stderr prefixed `kdp:`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let start = tokio::time::Instant::now();
    let deadline = start + args.timeout;

    let bootstrap = match BrokerAddress::parse_list(&args.bootstrap_server) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("kdp: --bootstrap-server: {e}");
            return exit::USAGE;
        }
    };
    let props = match &args.command_config {
        Some(path) => match props::load(path) {
            Ok(p) => p,
            Err(msg) => {
                eprintln!("kdp: --command-config {}: {msg}", path.display());
                return exit::USAGE;
            }
        },
        None => props::ClientProps::default(),
    };

    let mut config = ClientConfig::default();
    config.connection.client_id = Some(props.client_id.clone().unwrap_or_else(|| "kdp".into()));
    let request_timeout = props
        .request_timeout
        .unwrap_or(Duration::from_secs(30))
        .min(args.timeout);
    config.connection.request_timeout = request_timeout;
    // keep trying the bootstrap list until the deadline, then say why it failed
    config.bootstrap_timeout = args.timeout;
    config.connect_timeout = props
        .connect_timeout
        .unwrap_or(Duration::from_secs(10))
        .min(args.timeout);

    let client = match tokio::time::timeout_at(deadline, Client::connect(bootstrap, config)).await {
        Ok(Ok(c)) => Arc::new(c),
        Ok(Err(e)) => {
            eprintln!("kdp: cannot reach the cluster: {e}");
            return exit::UNREACHABLE;
        }
        Err(_) => {
            eprintln!(
                "kdp: cannot reach the cluster: no bootstrap server answered within {}",
                humantime::format_duration(args.timeout)
            );
            return exit::UNREACHABLE;
        }
    };

    let topics = if args.topic.is_empty() {
        None
    } else {
        let partitions = (!args.partition.is_empty()).then(|| {
            let mut ps = args.partition.clone();
            ps.sort_unstable();
            ps.dedup();
            ps
        });
        let mut names = args.topic.clone();
        names.sort();
        names.dedup();
        Some(
            names
                .into_iter()
                .map(|name| TopicSelection {
                    name,
                    partitions: partitions.clone(),
                })
                .collect(),
        )
    };
    let opts = DescribeOptions {
        topics,
        broker_id: args.broker_id,
        timeout: deadline.saturating_duration_since(tokio::time::Instant::now()),
        request_timeout,
        ..Default::default()
    };

    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut render = Renderer::new(
        args.output,
        args.broker_id.is_some(),
        args.show_empty,
        now_ms,
        out,
    );
    let mut progress = Progress::new();
    let result = {
        let sink = |ev: DescribeEvent| match ev {
            DescribeEvent::Planned { partitions } => progress.planned(partitions as u64),
            DescribeEvent::Results {
                throttle_time_ms,
                outcomes,
                ..
            } => {
                progress.done(outcomes.len() as u64);
                render.results(throttle_time_ms, outcomes);
            }
        };
        // the engine is bounded by the deadline; this is only a backstop
        let backstop = deadline + Duration::from_secs(5);
        tokio::time::timeout_at(
            backstop,
            kdp_client::describe_producers(client, &opts, sink),
        )
        .await
    };
    progress.finish();
    let summary = match result {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            eprintln!("kdp: cannot reach the cluster: {e}");
            return exit::UNREACHABLE;
        }
        Err(_) => {
            eprintln!("kdp: describe did not finish within the timeout");
            return exit::PARTIAL;
        }
    };
    if let Err(e) = render.finish(&summary) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("kdp: cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    tracing::debug!(elapsed = ?start.elapsed(), ?summary, "describe done");
    if summary.failed > 0 {
        eprintln!(
            "kdp: {} of {} partitions could not be described",
            summary.failed, summary.partitions
        );
        exit::PARTIAL
    } else {
        exit::OK
    }
}

/// A progress bar on stderr, only on a terminal and only for many partitions.
struct Progress {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
    planned: u64,
    done: u64,
}

impl Progress {
    fn new() -> Self {
        Progress {
            enabled: io::stderr().is_terminal(),
            bar: None,
            planned: 0,
            done: 0,
        }
    }

    fn planned(&mut self, n: u64) {
        self.planned += n;
        if let Some(bar) = &self.bar {
            bar.set_length(self.planned);
        } else if self.enabled && self.planned >= PROGRESS_MIN_PARTITIONS {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(self.planned),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} partitions [{bar:30}] {elapsed}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(self.done);
            self.bar = Some(bar);
        }
    }

    fn done(&mut self, n: u64) {
        self.done += n;
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

// ---------------------------------------------------------------- rendering

/// One line of `--output jsonl` for a producer.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ProducerLine<'a> {
    topic: &'a str,
    partition: i32,
    broker_id: Option<i32>,
    producer_id: i64,
    producer_epoch: i32,
    last_sequence: i32,
    last_timestamp: i64,
    last_timestamp_rfc3339: Option<String>,
    coordinator_epoch: i32,
    current_txn_start_offset: i64,
}

/// One line of `--output jsonl` for a partition that failed.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ErrorLine<'a> {
    topic: &'a str,
    partition: i32,
    broker_id: Option<i32>,
    error_code: i16,
    error_name: &'a str,
    error_message: Option<&'a str>,
    /// True when kdp, not a broker, produced the error.
    client_side: bool,
}

/// One line of `--output jsonl --show-empty` for a partition without producers.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct EmptyLine<'a> {
    topic: &'a str,
    partition: i32,
    broker_id: Option<i32>,
    active_producers: usize,
}

struct Renderer<'w> {
    output: Output,
    fixed_broker: bool,
    show_empty: bool,
    now_ms: i64,
    out: &'w mut dyn Write,
    /// table and json: everything, merged at the end
    outcomes: Vec<PartitionOutcome>,
    max_throttle_ms: i32,
    /// the first write error; later writes are skipped
    error: Option<io::Error>,
}

impl<'w> Renderer<'w> {
    fn new(
        output: Output,
        fixed_broker: bool,
        show_empty: bool,
        now_ms: i64,
        out: &'w mut dyn Write,
    ) -> Self {
        Renderer {
            output,
            fixed_broker,
            show_empty,
            now_ms,
            out,
            outcomes: Vec::new(),
            max_throttle_ms: 0,
            error: None,
        }
    }

    fn results(&mut self, throttle_time_ms: i32, mut outcomes: Vec<PartitionOutcome>) {
        self.max_throttle_ms = self.max_throttle_ms.max(throttle_time_ms);
        if self.output != Output::Jsonl {
            self.outcomes.append(&mut outcomes);
            return;
        }
        if self.error.is_some() {
            return;
        }
        for o in &mut outcomes {
            if let Ok(ps) = &mut o.result {
                ps.sort_by_key(|p| p.producer_id);
            }
        }
        let mut buf = Vec::with_capacity(256 * outcomes.len());
        for o in &outcomes {
            let line = match &o.result {
                Ok(ps) if ps.is_empty() => {
                    if !self.show_empty {
                        continue;
                    }
                    serde_json::to_writer(
                        &mut buf,
                        &EmptyLine {
                            topic: &o.topic,
                            partition: o.partition,
                            broker_id: o.broker_id,
                            active_producers: 0,
                        },
                    )
                }
                Ok(ps) => {
                    let mut r = Ok(());
                    for (i, p) in ps.iter().enumerate() {
                        if i > 0 {
                            buf.push(b'\n');
                        }
                        r = serde_json::to_writer(
                            &mut buf,
                            &ProducerLine {
                                topic: &o.topic,
                                partition: o.partition,
                                broker_id: o.broker_id,
                                producer_id: p.producer_id,
                                producer_epoch: p.producer_epoch,
                                last_sequence: p.last_sequence,
                                last_timestamp: p.last_timestamp,
                                last_timestamp_rfc3339: rfc3339(p.last_timestamp),
                                coordinator_epoch: p.coordinator_epoch,
                                current_txn_start_offset: p.current_txn_start_offset,
                            },
                        );
                        if r.is_err() {
                            break;
                        }
                    }
                    r
                }
                Err(e) => serde_json::to_writer(
                    &mut buf,
                    &ErrorLine {
                        topic: &o.topic,
                        partition: o.partition,
                        broker_id: o.broker_id,
                        error_code: e.code,
                        error_name: e.name(),
                        error_message: e.message.as_deref(),
                        client_side: e.client_side,
                    },
                ),
            };
            if let Err(e) = line {
                self.error = Some(io::Error::from(e));
                return;
            }
            buf.push(b'\n');
        }
        if let Err(e) = self.out.write_all(&buf).and_then(|()| self.out.flush()) {
            self.error = Some(e);
        }
    }

    fn finish(mut self, summary: &DescribeSummary) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // stdout is line-buffered: without this, pretty JSON and tables of a
        // large cluster cost a write(2) per line.
        let mut out = io::BufWriter::with_capacity(1 << 16, &mut *self.out);
        match self.output {
            Output::Jsonl => {}
            Output::Json => {
                let doc = merge(std::mem::take(&mut self.outcomes), self.max_throttle_ms);
                kdp_wire::json::write_response_pretty(&mut out, &doc)?;
                out.write_all(b"\n")?;
            }
            Output::Table => {
                let mut outcomes = std::mem::take(&mut self.outcomes);
                write_table(
                    &mut out,
                    &mut outcomes,
                    summary,
                    TableStyle {
                        fixed_broker: self.fixed_broker,
                        show_empty: self.show_empty,
                        now_ms: self.now_ms,
                    },
                )?;
            }
        }
        out.flush()
    }
}

#[derive(Clone, Copy)]
struct TableStyle {
    fixed_broker: bool,
    show_empty: bool,
    now_ms: i64,
}

/// Counts of what a table showed, for its summary line.
#[derive(Default)]
struct TableCounts {
    rows: usize,
    with: usize,
    without: usize,
    producers: usize,
}

/// Calls `f` with the cells of every row, in order. The cells live in one
/// reused set of buffers, so a table of a million producers is rendered in
/// two passes (widths, then text) without holding its rows.
fn table_rows(
    outcomes: &[PartitionOutcome],
    style: TableStyle,
    any_error: bool,
    f: &mut dyn FnMut(&[String]),
) -> TableCounts {
    use std::fmt::Write as _;
    let columns = 10 + usize::from(any_error);
    let mut cells = vec![String::new(); columns];
    let mut counts = TableCounts::default();
    let dash_rest = |cells: &mut [String]| {
        for c in cells.iter_mut().skip(3).take(7) {
            c.clear();
            c.push('-');
        }
    };
    for o in outcomes {
        let set_head = |cells: &mut [String]| {
            for c in cells.iter_mut() {
                c.clear();
            }
            if let [topic, partition, broker, ..] = cells {
                topic.push_str(&o.topic);
                if o.partition < 0 {
                    partition.push('-');
                } else {
                    let _ = write!(partition, "{}", o.partition);
                }
                match o.broker_id {
                    Some(b) => {
                        let _ = write!(broker, "{b}");
                    }
                    None => broker.push('-'),
                }
            }
        };
        match &o.result {
            Ok(ps) if ps.is_empty() => {
                counts.without += 1;
                if style.show_empty {
                    set_head(&mut cells);
                    dash_rest(&mut cells);
                    f(&cells);
                    counts.rows += 1;
                }
            }
            Ok(ps) => {
                counts.with += 1;
                counts.producers += ps.len();
                for p in ps {
                    set_head(&mut cells);
                    if let [_, _, _, id, epoch, seq, ts, age_cell, coord, txn, ..] = &mut cells[..]
                    {
                        let _ = write!(id, "{}", p.producer_id);
                        let _ = write!(epoch, "{}", p.producer_epoch);
                        let _ = write!(seq, "{}", p.last_sequence);
                        ts.push_str(rfc3339(p.last_timestamp).as_deref().unwrap_or("-"));
                        age_cell.push_str(&age(p.last_timestamp, style.now_ms));
                        let _ = write!(coord, "{}", p.coordinator_epoch);
                        if p.current_txn_start_offset < 0 {
                            txn.push('-');
                        } else {
                            let _ = write!(txn, "{}", p.current_txn_start_offset);
                        }
                    }
                    f(&cells);
                    counts.rows += 1;
                }
            }
            Err(e) => {
                set_head(&mut cells);
                dash_rest(&mut cells);
                if let Some(last) = cells.last_mut() {
                    match &e.message {
                        Some(m) if !m.is_empty() => {
                            let _ = write!(last, "{}: {m}", e.name());
                        }
                        _ => last.push_str(e.name()),
                    }
                }
                f(&cells);
                counts.rows += 1;
            }
        }
    }
    counts
}

/// The table: columns left-aligned and two spaces apart, then a summary line.
fn write_table(
    out: &mut dyn Write,
    outcomes: &mut [PartitionOutcome],
    summary: &DescribeSummary,
    style: TableStyle,
) -> io::Result<()> {
    outcomes.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    for o in outcomes.iter_mut() {
        if let Ok(ps) = &mut o.result {
            ps.sort_by_key(|p| p.producer_id);
        }
    }
    let any_error = outcomes.iter().any(|o| o.result.is_err());
    let mut header: Vec<String> = [
        "Topic",
        "Partition",
        if style.fixed_broker {
            "Broker"
        } else {
            "Leader"
        },
        "ProducerId",
        "ProducerEpoch",
        "LastSequence",
        "LastTimestamp",
        "Age",
        "CoordinatorEpoch",
        "CurrentTxnStartOffset",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if any_error {
        header.push("Error".into());
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    let counts = table_rows(outcomes, style, any_error, &mut |cells| {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    });
    let mut result = Ok(());
    let mut line = String::new();
    let mut emit = |cells: &[String]| {
        if result.is_err() {
            return;
        }
        line.clear();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(c);
            let pad = w.saturating_sub(c.chars().count());
            line.extend(std::iter::repeat_n(' ', pad));
        }
        let trimmed = line.trim_end();
        result = out
            .write_all(trimmed.as_bytes())
            .and_then(|()| out.write_all(b"\n"));
    };
    if counts.rows > 0 {
        emit(&header);
        table_rows(outcomes, style, any_error, &mut emit);
    }
    result?;
    let n = summary.partitions;
    let plural =
        |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    if counts.rows == 0 && summary.failed == 0 {
        writeln!(
            out,
            "No active producers in the {} described.",
            plural(n, "partition", "partitions")
        )
    } else {
        let mut line = format!(
            "{} described: {} with active producers ({}), {} without",
            plural(n, "partition", "partitions"),
            counts.with,
            plural(counts.producers, "producer", "producers"),
            counts.without
        );
        if summary.failed > 0 {
            line.push_str(&format!(", {} failed", summary.failed));
        }
        if counts.without > 0 && !style.show_empty {
            line.push_str(" (--show-empty lists them)");
        }
        writeln!(out, "{line}.")
    }
}

/// All outcomes as one DescribeProducersResponse: topics by name, partitions
/// by index, producers by id. Failed partitions carry their error code and
/// message; client-side errors too (e.g. NETWORK_EXCEPTION).
fn merge(outcomes: Vec<PartitionOutcome>, throttle_time_ms: i32) -> DescribeProducersResponse {
    let mut topics: BTreeMap<String, BTreeMap<i32, PartitionResponse>> = BTreeMap::new();
    for o in outcomes {
        let part = match o.result {
            Ok(mut ps) => {
                ps.sort_by_key(|p: &ProducerState| p.producer_id);
                PartitionResponse {
                    partition_index: o.partition,
                    active_producers: ps,
                    ..Default::default()
                }
            }
            Err(e) => PartitionResponse {
                partition_index: o.partition,
                error_code: e.code,
                error_message: e.message,
                ..Default::default()
            },
        };
        topics.entry(o.topic).or_default().insert(o.partition, part);
    }
    DescribeProducersResponse {
        throttle_time_ms,
        topics: topics
            .into_iter()
            .map(|(name, ps)| TopicResponse {
                name,
                partitions: ps.into_values().collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T12:00:00.123Z`; `None` for -1.
fn rfc3339(ms: i64) -> Option<String> {
    let ms = u64::try_from(ms).ok()?;
    let t = UNIX_EPOCH.checked_add(Duration::from_millis(ms))?;
    Some(humantime::format_rfc3339_millis(t).to_string())
}

/// How long ago `ms` was: `850ms ago`, `12s ago`, `3m12s ago`, `2h5m ago`, `4d3h ago`.
fn age(ms: i64, now_ms: i64) -> String {
    if ms < 0 {
        return "-".into();
    }
    let diff = now_ms.saturating_sub(ms);
    let (d, suffix_future) = if diff < 0 {
        (-diff, true)
    } else {
        (diff, false)
    };
    let d = d as u64;
    let s = d / 1000;
    let text = if s == 0 {
        format!("{d}ms")
    } else if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}d{}h", s / 86_400, s % 86_400 / 3600)
    };
    if suffix_future {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// Kafka client properties (`--command-config`), Java `.properties` syntax.
mod props {
    use std::path::Path;
    use std::time::Duration;

    #[derive(Debug, Default, Clone, PartialEq, Eq)]
    pub struct ClientProps {
        pub client_id: Option<String>,
        pub request_timeout: Option<Duration>,
        pub connect_timeout: Option<Duration>,
    }

    pub fn load(path: &Path) -> Result<ClientProps, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        from_str(&text)
    }

    pub fn from_str(text: &str) -> Result<ClientProps, String> {
        let pairs = parse(text);
        let mut props = ClientProps::default();
        let protocol = pairs
            .iter()
            .rev()
            .find(|(k, _)| k == "security.protocol")
            .map(|(_, v)| v.trim().to_string());
        if let Some(p) = &protocol {
            if !p.eq_ignore_ascii_case("PLAINTEXT") {
                return Err(format!(
                    "security.protocol={p} is not supported yet: kdp speaks PLAINTEXT only \
                     (SSL, SASL_PLAINTEXT and SASL_SSL are planned)"
                ));
            }
        }
        let ms = |k: &str, v: &str| -> Result<Duration, String> {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("{k}={v} is not a number of milliseconds"))
        };
        let mut ignored_security = Vec::new();
        for (k, v) in &pairs {
            match k.as_str() {
                "security.protocol" | "bootstrap.servers" => {}
                "client.id" => props.client_id = Some(v.clone()),
                "request.timeout.ms" => props.request_timeout = Some(ms(k, v)?),
                "socket.connection.setup.timeout.ms" => props.connect_timeout = Some(ms(k, v)?),
                k if k.starts_with("ssl.") || k.starts_with("sasl.") => {
                    ignored_security.push(k.to_string())
                }
                k => tracing::debug!(property = k, "ignored --command-config property"),
            }
        }
        if !ignored_security.is_empty() {
            eprintln!(
                "kdp: warning: security.protocol is PLAINTEXT: ignoring {}",
                ignored_security.join(", ")
            );
        }
        Ok(props)
    }

    /// Java `Properties.load`: `key=value`, `key:value` or `key value`;
    /// `#`/`!` comments; a trailing `\` continues the line; `\` escapes.
    pub fn parse(text: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut logical = String::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let trimmed = line.trim_start();
            if logical.is_empty()
                && (trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!'))
            {
                continue;
            }
            logical.push_str(trimmed);
            // an odd number of trailing backslashes continues the line
            let trailing = logical.chars().rev().take_while(|c| *c == '\\').count();
            if trailing % 2 == 1 {
                logical.pop();
                if lines.clone().next().is_some() {
                    continue;
                }
            }
            let entry = std::mem::take(&mut logical);
            out.push(split_entry(&entry));
        }
        out
    }

    fn split_entry(entry: &str) -> (String, String) {
        let mut key = String::new();
        let mut chars = entry.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        key.push(unescape(n));
                    }
                }
                '=' | ':' => break,
                c if c.is_whitespace() => {
                    // skip whitespace, then one optional separator
                    while chars.peek().is_some_and(|c| c.is_whitespace()) {
                        chars.next();
                    }
                    if matches!(chars.peek(), Some('=') | Some(':')) {
                        chars.next();
                    }
                    break;
                }
                c => key.push(c),
            }
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    value.push(unescape(n));
                }
            } else {
                value.push(c);
            }
        }
        (key, value)
    }

    fn unescape(c: char) -> char {
        match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0c',
            c => c,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn parses_java_properties() {
            let p = parse("# c\n! c\n a = 1\nb:2\nc 3\nd=x\\\n   y\ne\\=f=g\n\nempty=\n");
            let want: Vec<(String, String)> = [
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("d", "xy"),
                ("e=f", "g"),
                ("empty", ""),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            assert_eq!(p, want);
        }

        #[test]
        fn plaintext_only() {
            assert!(from_str("security.protocol=PLAINTEXT\nclient.id=ops\n").is_ok());
            let e = from_str("security.protocol=SASL_SSL\n").unwrap_err();
            assert!(e.contains("SASL_SSL is not supported"), "{e}");
            let p = from_str("client.id=ops\nrequest.timeout.ms=1500\n").unwrap();
            assert_eq!(p.client_id.as_deref(), Some("ops"));
            assert_eq!(p.request_timeout, Some(Duration::from_millis(1500)));
            assert!(from_str("request.timeout.ms=soon\n").is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_ages() {
        assert_eq!(rfc3339(-1), None);
        assert_eq!(rfc3339(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            rfc3339(1_795_953_600_123).as_deref(),
            Some("2026-11-29T12:00:00.123Z")
        );
        let now = 1_000_000_000;
        assert_eq!(age(now - 192_000, now), "3m12s ago");
        assert_eq!(age(now - 850, now), "850ms ago");
        assert_eq!(age(now - 7_500_000, now), "2h5m ago");
        assert_eq!(age(now - 4 * 86_400_000 - 3 * 3_600_000, now), "4d3h ago");
        assert_eq!(age(now + 3_000, now), "in 3s");
        assert_eq!(age(-1, now), "-");
    }

    #[test]
    fn table_layout() {
        let now = 1_795_953_600_000;
        let producer = |id, ts, txn| ProducerState {
            producer_id: id,
            producer_epoch: 3,
            last_sequence: 99,
            last_timestamp: ts,
            coordinator_epoch: 5,
            current_txn_start_offset: txn,
            ..Default::default()
        };
        let outcome = |topic: &str, partition, result| PartitionOutcome {
            topic: topic.into(),
            partition,
            broker_id: Some(2),
            result,
        };
        let mut outcomes = vec![
            outcome("orders", 1, Ok(vec![])),
            outcome(
                "orders",
                0,
                Ok(vec![
                    producer(2002, now - 192_000, 150_382),
                    producer(7, -1, -1),
                ]),
            ),
            outcome(
                "nope",
                -1,
                Err(kdp_client::PartitionError {
                    code: kdp_wire::error_code::UNKNOWN_TOPIC_OR_PARTITION,
                    message: None,
                    client_side: true,
                }),
            ),
        ];
        let summary = DescribeSummary {
            partitions: 3,
            failed: 1,
            ..Default::default()
        };
        let style = TableStyle {
            fixed_broker: false,
            show_empty: true,
            now_ms: now,
        };
        let mut out = Vec::new();
        write_table(&mut out, &mut outcomes, &summary, style).unwrap();
        let expected = "\
Topic   Partition  Leader  ProducerId  ProducerEpoch  LastSequence  LastTimestamp             Age        CoordinatorEpoch  CurrentTxnStartOffset  Error
nope    -          2       -           -              -             -                         -          -                 -                      UNKNOWN_TOPIC_OR_PARTITION
orders  0          2       7           3              99            -                         -          5                 -
orders  0          2       2002        3              99            2026-11-29T11:56:48.000Z  3m12s ago  5                 150382
orders  1          2       -           -              -             -                         -          -                 -
3 partitions described: 1 with active producers (2 producers), 1 without, 1 failed.
";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
