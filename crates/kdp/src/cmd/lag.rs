//! `kdp lag`: each consumer group's lag in records a read_committed
//! consumer would still receive (markers and aborted records excluded; a
//! read_uncommitted one with `--isolation-level`),
//! the records an open transaction holds back and which one, beside
//! Kafka's offset lag; each share group's records still to deliver, at
//! most and at least, beside the lag Kafka reports for it. The judgement is kdp-domain's
//! ([`kdp_domain::lag`]); kdp-workflows reads ([`kdp_workflows::lag`]);
//! this file parses and renders.

use std::collections::HashSet;
use std::io::{self, Write};

use std::collections::BTreeMap;

use kdp_domain::groups::share::Isolation;
use kdp_domain::key_error::Failures;
use kdp_domain::lag::{lag_each, LagGap, LagOptions, LagRow, LagVerdict, Records, WaveGaps};
use kdp_domain::severity::Severity;
use kdp_workflows::lag::{
    LagRead, LagReadOptions, DEFAULT_COMMITTED_PER_WAVE, DEFAULT_MAX_BYTES_PER_PARTITION,
};
use kdp_workflows::lag_waves::read_in_waves;
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::colour::Style;
use crate::output::failures;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{Cell, Column};
use crate::output::{age, Output, Rfc3339};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
For each consumer group and partition it committed on (whole cluster by default; --group and
--topic narrow it): the committed offset, the log start, the last stable offset (LSO), the high
watermark (HWM), Kafka's offset lag (OffsetLag = HWM - committed, what kafka-consumer-groups.sh
prints as LAG), and Records: what a read_committed consumer seeked to the committed offset would
still receive up to the LSO. Commit and abort markers and aborted records take offsets but are
never delivered, so a group committed after its last record on an idle transactional partition
has OffsetLag 1 and Records 0. HeldBack = HWM - LSO: offsets an open transaction holds back from
every read_committed consumer, with the transaction holding the LSO (transactional id, producer
id, age) as `kdp blocked` names it.

kdp counts Records by fetching [committed, LSO) with isolation READ_COMMITTED (the broker lists the
aborted transactions of what it returns) and summing batch header record counts, once per
partition for all its groups; a partition where every group is at or past the LSO is not read.
Past --max-bytes-per-partition, Records is a bound: 'A..B' (at least A, at most B: one record per
offset not read; 'at most B' when A is 0), never a guess shown as exact. A group below the log start is counted from it.
A partition is not fetched at all when the broker proves no marker can lie in the range: a
LogAppendTime, uncompacted topic whose leader lists no transactional producer (DescribeProducers)
and whose range was all appended within producer.id.expiration.ms (ListOffsets by timestamp);
RecordsProvenUnread in JSON says so (docs/LAG.md section 11).

The broker cannot know a consumer's isolation.level, so say it: --isolation-level read_uncommitted
(for every consumer and streams group) or --group-isolation-level G=read_uncommitted (for some,
e.g. a Kafka Streams app with at_least_once) counts what a read_uncommitted consumer receives up to
the high watermark instead: aborted and open transactions' records included, markers not (Fetch
READ_UNCOMMITTED, read apart from the read_committed count); HeldBack is 0 and a group above the LSO
is just lagging or caught up. The Isolation column of JSON says which level each row was judged
under.
Verdicts:
  caught up         nothing to deliver and nothing held back (whatever OffsetLag says)
  lagging           at least one record to deliver below the LSO
  held back         nothing to deliver below the LSO; an open transaction holds offsets above it
  behind log start  committed below the log start: records were deleted unread
  past the LSO      committed above the LSO (read_committed), above the HWM (read_uncommitted)
  maybe lagging     Records is a bound from 0: not read far enough to tell
  unknown           the offset or the partition's offsets could not be read

Share groups (KIP-932) commit no offset: their row's Committed is the share-partition start
offset (DescribeShareGroupOffsets; ShareStartOffset in JSON), below which every record is
acknowledged or archived. Records above it may be delivered and acknowledged already (the start
offset moves late), so Records is a bound 'A..B'. At most B: the records a consumer of the group's
share.isolation.level (a group config, read with DescribeConfigs; unset means read_uncommitted)
receives from the start offset (read_committed: of [start, LSO); read_uncommitted: of
[start, HWM)). At least A: B's count less every offset that may be acknowledged already according
to KafkaLag (HWM - start - KafkaLag), 0 without KafkaLag; a share group with A above --max-records
is lagging (exit 4). HeldBack only under read_committed. KafkaLag is the Lag Kafka reports for the
share-partition (DescribeShareGroupOffsets v1, what kafka-share-groups.sh --describe --offsets
prints as LAG; '-' on a broker without v1 or when Kafka does not know it). Streams groups
(KIP-1071) are read like consumer groups.

Exit status: 0 every group is caught up (or committed nothing) and the answer is complete;
4 a group (share groups included) is lagging by more than --max-records (at least), held back, or
behind the log start; 1 the answer
is partial (a read or a listing failed, ACLs may hide groups, a bound left it undecided, a share
group's offsets or isolation could not be read) and nothing was found; 2 bad usage; 3 the cluster could not be reached.

Examples:
  kdp lag --bootstrap-server localhost:9092
  kdp lag --bootstrap-server localhost:9092 --group payments-ledger --output json
  kdp lag --bootstrap-server localhost:9092 --topic payments --max-records 1000 --watch 10s
  kdp lag --bootstrap-server localhost:9092 --group-isolation-level clicks-app=read_uncommitted")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Only this consumer group; repeat for several. Default: every group listed.
    #[arg(long, value_name = "GROUP")]
    pub group: Vec<String>,
    /// Only this topic; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Read at most this many bytes of batches per partition; past it Records is a bound.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES_PER_PARTITION)]
    pub max_bytes_per_partition: u64,
    /// Exit 4 only when a group has more than this many records to deliver (at least).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_records: i64,
    /// Read the cluster in waves of topics holding about N committed offsets each (a topic holding
    /// more is a wave alone; 0: one wave), printing each wave's rows before reading the next, so
    /// memory follows a wave, not the cluster; rows come wave by wave. The first wave lays a table
    /// out; a later one widens a column where it holds a wider value.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_COMMITTED_PER_WAVE)]
    pub committed_offsets_per_wave: usize,
    #[command(flatten)]
    pub isolation: IsolationArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// `isolation.level` of the consumer and streams groups' consumers (the
/// broker does not know it): shared by `kdp lag` and `kdp exporter --lag`.
#[derive(clap::Args, Debug, Clone)]
pub struct IsolationArgs {
    /// The isolation.level the consumer and streams groups' consumers read with (Kafka's
    /// consumer property; the broker cannot know it): read_committed counts Records up to the
    /// LSO, aborted records excluded; read_uncommitted up to the high watermark, aborted and
    /// open transactions' records included (HeldBack 0). Markers are never records. Share
    /// groups read with their share.isolation.level whatever this says.
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = IsolationLevel::ReadCommitted)]
    pub isolation_level: IsolationLevel,
    /// GROUP=LEVEL: this consumer or streams group reads with LEVEL instead of
    /// --isolation-level (repeat for several), e.g. a Kafka Streams app with
    /// processing.guarantee at_least_once (read_uncommitted) beside exactly_once_v2 apps.
    #[arg(long, value_name = "GROUP=LEVEL", value_parser = parse_group_isolation)]
    pub group_isolation_level: Vec<(String, IsolationLevel)>,
}

impl Default for IsolationArgs {
    fn default() -> Self {
        IsolationArgs {
            isolation_level: IsolationLevel::ReadCommitted,
            group_isolation_level: Vec::new(),
        }
    }
}

impl IsolationArgs {
    /// Into the lag's options.
    pub fn apply(&self, opts: &mut LagOptions) {
        opts.isolation = self.isolation_level.into();
        opts.group_isolation = self
            .group_isolation_level
            .iter()
            .map(|(g, l)| (g.clone(), (*l).into()))
            .collect::<BTreeMap<_, _>>();
    }
}

/// Kafka's `isolation.level` values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// Up to the last stable offset, aborted transactions skipped.
    #[value(name = "read_committed")]
    ReadCommitted,
    /// Up to the high watermark, every data record.
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
}

impl From<IsolationLevel> for Isolation {
    fn from(l: IsolationLevel) -> Isolation {
        match l {
            IsolationLevel::ReadCommitted => Isolation::ReadCommitted,
            IsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
        }
    }
}

fn parse_group_isolation(s: &str) -> Result<(String, IsolationLevel), String> {
    let (group, level) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("'{s}': expected GROUP=read_committed|read_uncommitted"))?;
    if group.is_empty() {
        return Err(format!("'{s}': the group id is empty"));
    }
    let level = <IsolationLevel as clap::ValueEnum>::from_str(level, false)
        .map_err(|_| format!("'{level}': expected read_committed or read_uncommitted"))?;
    Ok((group.to_string(), level))
}

/// One group on one partition.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    group: String,
    /// `classic`, `consumer`, ...; null when not known.
    group_type: Option<String>,
    group_state: Option<String>,
    topic: String,
    partition: i32,
    committed_offset: Option<i64>,
    log_start_offset: Option<i64>,
    last_stable_offset: Option<i64>,
    high_watermark: Option<i64>,
    /// Kafka's LAG: HWM − committed (null for a share group).
    offset_lag: Option<i64>,
    /// A share group's share-partition start offset.
    share_start_offset: Option<i64>,
    /// The isolation the row was judged under: `--isolation-level` (or
    /// `--group-isolation-level`) for a consumer or streams group, a share
    /// group's `share.isolation.level`.
    isolation: Option<&'static str>,
    /// A share group's Lag as Kafka reports it (DescribeShareGroupOffsets v1).
    kafka_lag: Option<i64>,
    /// Exact records to deliver; null when only bounds are known.
    records: Option<i64>,
    records_at_least: Option<i64>,
    records_at_most: Option<i64>,
    held_back: Option<i64>,
    holding_transactional_id: Option<String>,
    holding_producer_id: Option<i64>,
    holding_transaction_start_ms: Option<i64>,
    holding_transaction_start_rfc3339: Option<Rfc3339>,
    oldest_undelivered_timestamp_ms: Option<i64>,
    oldest_undelivered_rfc3339: Option<Rfc3339>,
    /// Records was proven without a Fetch: no marker or transactional
    /// record can lie in the range (docs/LAG.md section 11).
    records_proven_unread: bool,
    verdict: &'static str,
    #[serde(skip)]
    label: &'static str,
    #[serde(skip)]
    severity: Severity,
    #[serde(skip)]
    now_ms: i64,
}

fn records_cell(r: Option<Records>) -> String {
    match r {
        Some(Records::Exact(n)) => n.to_string(),
        Some(Records::Between {
            at_least: 0,
            at_most,
        }) => format!("at most {at_most}"),
        Some(Records::Between { at_least, at_most }) => format!("{at_least}..{at_most}"),
        None => "-".into(),
    }
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        let records = match (self.records, self.records_at_least, self.records_at_most) {
            (Some(n), _, _) => Some(Records::Exact(n)),
            (None, Some(a), Some(b)) => Some(Records::Between {
                at_least: a,
                at_most: b,
            }),
            _ => None,
        };
        let mut cells = crate::output::table::plain(vec![
            self.group.clone(),
            self.topic.clone(),
            self.partition.to_string(),
            or_dash(self.committed_offset.or(self.share_start_offset)),
            or_dash(self.last_stable_offset),
            or_dash(self.high_watermark),
            or_dash(self.offset_lag),
            or_dash(self.kafka_lag),
            records_cell(records),
            or_dash(self.held_back),
            match (&self.holding_transactional_id, self.holding_producer_id) {
                (Some(id), _) => id.clone(),
                (None, Some(pid)) => format!("producer {pid}"),
                (None, None) => "-".into(),
            },
            self.holding_transaction_start_ms
                .map_or_else(|| "-".into(), |s| age(s, self.now_ms)),
            self.oldest_undelivered_timestamp_ms
                .map_or_else(|| "-".into(), |s| age(s, self.now_ms)),
        ]);
        cells.push(Cell::new(self.label, Style::from(self.severity)));
        cells
    }
}

const HEADER: &[Column] = &[
    Column::text("Group", 0),
    Column::text("Topic", 0),
    Column::new("Partition", 0),
    Column::new("Committed", 1),
    Column::new("LSO", 2),
    Column::new("HWM", 2),
    Column::new("OffsetLag", 1),
    Column::new("KafkaLag", 1),
    Column::new("Records", 0),
    Column::new("HeldBack", 1),
    Column::text("HeldBy", 3),
    Column::new("TxnAge", 3),
    Column::new("OldestAge", 4),
    Column::text("Verdict", 0),
];

fn row(r: &LagRow, now_ms: i64) -> Row {
    let bounds = r.position.map(|p| p.bounds);
    let holder = r.holder.as_ref();
    let started = holder.and_then(|h| h.started_ms);
    let start = r.position.and_then(|p| p.committed);
    let (committed, share_start) = match r.share {
        Some(_) => (None, start),
        None => (start, None),
    };
    Row {
        group: r.group_id.clone(),
        group_type: r.group_type.as_ref().map(|t| t.name().to_string()),
        group_state: r.state.as_ref().map(|s| s.name().to_string()),
        topic: r.partition.0.clone(),
        partition: r.partition.1,
        committed_offset: committed,
        log_start_offset: bounds.and_then(|b| b.log_start),
        last_stable_offset: bounds.map(|b| b.last_stable_offset),
        high_watermark: bounds.map(|b| b.high_watermark),
        offset_lag: r.offset_lag(),
        share_start_offset: share_start,
        isolation: r.isolation.map(|i| i.name()),
        kafka_lag: r.share.and_then(|s| s.kafka_lag),
        records: r.records.filter(Records::is_exact).map(|x| x.at_least()),
        records_at_least: r.records.map(|x| x.at_least()),
        records_at_most: r.records.map(|x| x.at_most()),
        held_back: r.held_back,
        holding_transactional_id: holder.and_then(|h| h.transactional_id.clone()),
        holding_producer_id: holder.map(|h| h.producer_id),
        holding_transaction_start_ms: started,
        holding_transaction_start_rfc3339: started.and_then(Rfc3339::at),
        oldest_undelivered_timestamp_ms: r.oldest_undelivered_ms,
        oldest_undelivered_rfc3339: r.oldest_undelivered_ms.and_then(Rfc3339::at),
        records_proven_unread: r.proven,
        verdict: r.verdict.key(),
        label: r.verdict.label(),
        severity: r.verdict.severity(),
        now_ms,
    }
}

/// The gaps on stderr, one line per kind and cause however many keys
/// share it (10,000 groups refused are one line).
fn report_gaps(gaps: &[LagGap]) {
    let mut listing = Failures::new();
    let mut offsets = Failures::new();
    let mut bounds = Failures::new();
    let mut read = Failures::new();
    let mut share = Vec::new();
    let mut share_offsets = Failures::new();
    let mut share_isolation = Failures::new();
    let mut unknown = Vec::new();
    let mut may_hide = false;
    for g in gaps {
        match g {
            LagGap::Listing(b, e) => listing.add(format!("broker {b}"), e),
            LagGap::MayHideGroups => may_hide = true,
            LagGap::GroupOffsets(g, e) => offsets.add(format!("group {g}"), e),
            LagGap::Bounds((t, p), e) => bounds.add(format!("{t}-{p}"), e),
            LagGap::Read((t, p), e) => read.add(format!("{t}-{p}"), e),
            LagGap::ShareGroup(g) => share.push(g.as_str()),
            LagGap::ShareOffsets(g, e) => share_offsets.add(format!("share group {g}"), e),
            LagGap::ShareIsolation(g, e) => share_isolation.add(format!("share group {g}"), e),
            LagGap::UnknownGroup(g) => unknown.push(g.as_str()),
        }
    }
    failures::report("groups not listed", "brokers", &listing);
    if may_hide {
        eprintln!(
            "kdp: the group listing may leave out groups this principal may not DESCRIBE \
             (name groups with --group, or grant Describe on groups)"
        );
    }
    failures::report("committed offsets not read", "groups", &offsets);
    failures::report("offsets not read", "partitions", &bounds);
    failures::report(
        "share-partition start offsets not read (DescribeShareGroupOffsets)",
        "share groups",
        &share_offsets,
    );
    failures::report(
        "share.isolation.level not read (DescribeConfigs): records unknown",
        "share groups",
        &share_isolation,
    );
    failures::report(
        "read stopped before the LSO (Records are bounds)",
        "partitions",
        &read,
    );
    if !unknown.is_empty() {
        eprintln!(
            "kdp: {}: unknown to its coordinator (nothing committed, not described): is the \
             id right?",
            named("group", "groups", &unknown)
        );
    }
    if !share.is_empty() {
        eprintln!(
            "kdp: {}: start offsets not read, not measured",
            named("share group", "share groups", &share)
        );
    }
}

/// `group g` for one name; `N groups (a, b, ... and M more)` for several.
fn named(one: &str, many: &str, names: &[&str]) -> String {
    if let [only] = names {
        return format!("{one} {only}");
    }
    let shown = names.len().min(5);
    let mut list = names
        .iter()
        .take(shown)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        list.push_str(&format!(" and {} more", names.len() - shown));
    }
    format!("{} {many} ({list})", names.len())
}

/// `kdp lag`.
pub fn run(args: Args) -> i32 {
    let every = args.watch.watch;
    watch::run(every, "kdp lag", async |out| {
        run_to(args.clone(), out).await
    })
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    run_on(&conn, &args, out).await
}

/// The exit status, folded row by row as the rows are printed: found
/// beats partial beats clean.
#[derive(Debug, Default, Clone, Copy)]
struct Status {
    /// A group lags by more than `--max-records`, is held back or behind
    /// the log start.
    found: bool,
    /// A bound or an unknown row leaves the answer undecided.
    undecided: bool,
}

impl Status {
    fn add(&mut self, r: &LagRow, max_records: i64) {
        self.found |= match r.verdict {
            LagVerdict::Lagging => r.records.is_some_and(|x| x.at_least() > max_records),
            LagVerdict::HeldBack | LagVerdict::BehindLogStart => true,
            _ => false,
        };
        self.undecided |= match r.verdict {
            LagVerdict::MaybeLagging => r.records.is_some_and(|x| x.at_most() > max_records),
            LagVerdict::Unknown => true,
            _ => false,
        };
    }

    fn code(&self, gaps: &[LagGap]) -> i32 {
        if self.found {
            exit::FOUND
        } else if !gaps.is_empty() || self.undecided {
            exit::PARTIAL
        } else {
            exit::OK
        }
    }
}

/// Judges `read` row by row as it writes the rows to `stream` as one
/// part: each group and partition is judged, printed and dropped, in the
/// order of [`kdp_domain::lag::lag`] (by group, then topic and partition),
/// so a wave's committed offsets are never as many rows held. A table
/// judges twice (its widths, then its text); `status` only ors what it
/// sees, so twice is once. Returns the rows written and what could not be
/// checked.
fn write_part(
    stream: &mut records::Stream<'_>,
    read: &LagRead,
    opts: &LagOptions,
    max_records: i64,
    now_ms: i64,
    status: &mut Status,
) -> (usize, Vec<LagGap>) {
    let mut gaps = None;
    let rows = stream.part(&mut |sink| {
        gaps = Some(lag_each(
            &read.groups,
            &read.partitions,
            &read.blocked,
            opts,
            |r| {
                status.add(&r, max_records);
                sink(&row(&r, now_ms));
            },
        ));
    });
    // a stream that failed to write asks for no rows: judged all the same
    let gaps = gaps.unwrap_or_else(|| {
        lag_each(&read.groups, &read.partitions, &read.blocked, opts, |r| {
            status.add(&r, max_records)
        })
    });
    (rows, gaps)
}

/// What a table's closing line on stderr counts, summed over the waves.
#[derive(Debug, Default)]
struct Tally {
    rows: usize,
    /// Every group listed, each once (a group committing on topics of
    /// several waves is in each).
    groups: HashSet<String>,
    read: usize,
    proven: usize,
    bytes: u64,
    fetches: u64,
}

impl Tally {
    fn add(&mut self, read: &LagRead, rows: usize) {
        let counted = |proven: bool| {
            read.partitions
                .values()
                .filter(|p| {
                    [&p.tally, &p.uncommitted]
                        .into_iter()
                        .flatten()
                        .any(|t| t.is_proven() == proven)
                })
                .count()
        };
        self.rows += rows;
        for g in &read.groups.answers {
            if !self.groups.contains(&g.group_id) {
                self.groups.insert(g.group_id.clone());
            }
        }
        self.read += counted(false);
        self.proven += counted(true);
        self.bytes += read.bytes_read;
        self.fetches += read.fetches;
    }
}

/// Reads the lag in waves of topics ([`read_in_waves`]): each wave's rows
/// are judged and written to `stream` before the next wave is read, the
/// exit status and the gaps folded over the waves.
async fn run_in_waves(
    conn: &Connected,
    args: &Args,
    opts: &LagReadOptions,
    mut stream: records::Stream<'_>,
) -> i32 {
    let dopts = conn.describe_options(None, None).driver_options();
    let mut status = Status::default();
    let mut gaps = WaveGaps::new();
    let mut tally = Tally::default();
    let mut join_failed = false;
    let waves = read_in_waves(&conn.client, opts, &dopts, &conn.bound, None, |read| {
        if let Some(e) = read.join_error.as_ref().filter(|_| !join_failed) {
            // said once, not once per wave
            eprintln!("kdp: the transactions holding LSOs were not read: {e}");
            join_failed = true;
        }
        let now_ms = kdp_workflows::clock::now_ms();
        let (rows, wave) = write_part(
            &mut stream,
            &read,
            &opts.lag,
            args.max_records,
            now_ms,
            &mut status,
        );
        tally.add(&read, rows);
        gaps.add(wave);
    })
    .await;
    if let Err(e) = waves {
        // before any wave: no half document
        stream.abandon();
        return exit::report(&e);
    }
    let written = stream.finish();
    let gaps = gaps.finish();
    // known once every row is judged: after the rows
    report_gaps(&gaps);
    if let Err(e) = written {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("kdp: cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    if matches!(args.output, Output::Table | Output::Wide) {
        eprintln!(
            "kdp: {} position(s) of {} group(s); {} partition(s) read, {} proven without a read, {} bytes in {} fetch(es)",
            tally.rows,
            tally.groups.len(),
            tally.read,
            tally.proven,
            tally.bytes,
            tally.fetches
        );
    }
    let code = status.code(&gaps);
    if join_failed && code == exit::OK {
        return exit::PARTIAL;
    }
    code
}

/// The command on a connected client (the in-process tests' entry).
pub async fn run_on(conn: &Connected, args: &Args, out: &mut dyn Write) -> i32 {
    let mut lag = LagOptions {
        groups: args.group.clone(),
        topics: args.topic.clone(),
        ..LagOptions::default()
    };
    args.isolation.apply(&mut lag);
    let opts = LagReadOptions {
        lag,
        max_bytes_per_partition: args.max_bytes_per_partition,
        committed_per_wave: args.committed_offsets_per_wave,
        ..LagReadOptions::default()
    };
    match records::Stream::begin(out, args.output, "Lag", HEADER) {
        Ok(stream) => run_in_waves(conn, args, &opts, stream).await,
        // an unknown --columns name, before the cluster is asked anything
        Err(e) => {
            eprintln!("kdp: {e}");
            exit::USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kdp_domain::diagnose::blocked::Blocked;
    use kdp_domain::groups::{Committed, GroupAnswer, GroupType, GroupsRead};
    use kdp_domain::lag::{lag, Bounds, PartitionLag};
    use kdp_domain::KeyError;
    use kdp_wire::ErrorCode;
    use serde_json::Value;

    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    /// `groups` groups (by group id, as the read lists them), each on 3
    /// partitions of one of 5 topics: behind the log
    /// start, lagging at most (nothing read), past the LSO, or nothing
    /// committed; t4-2's offsets could not be read when `failed`.
    fn read(groups: usize, offsets: &[Committed], failed: bool) -> LagRead {
        let mut partitions = BTreeMap::new();
        for t in 0..5 {
            for p in 0..3 {
                let bounds = if failed && (t, p) == (4, 2) {
                    Err(KeyError::broker(ErrorCode::NOT_LEADER_OR_FOLLOWER, None))
                } else {
                    Ok(Bounds {
                        log_start: Some(10),
                        last_stable_offset: 40 + i64::from(p),
                        high_watermark: 50,
                    })
                };
                let lag = PartitionLag {
                    bounds,
                    tally: None,
                    stopped: None,
                    uncommitted: None,
                    uncommitted_stopped: None,
                };
                partitions.insert((format!("t{t}"), p), lag);
            }
        }
        let answers = (0..groups)
            .map(|g| GroupAnswer {
                group_id: format!("g{g:05}"),
                state: None,
                group_type: Some(if g % 5 == 0 {
                    GroupType::Consumer
                } else {
                    GroupType::Classic
                }),
                members: None,
                offsets: Ok((0..3)
                    .map(|p| {
                        let c = offsets[(g + p as usize) % offsets.len()];
                        ((format!("t{}", g % 5), p), c)
                    })
                    .collect()),
            })
            .collect();
        LagRead {
            groups: GroupsRead {
                answers,
                ..GroupsRead::default()
            },
            partitions,
            blocked: Blocked::default(),
            join_error: None,
            bytes_read: 0,
            fetches: 0,
            fetched: BTreeMap::new(),
        }
    }

    /// What [`write_judged`] judged while it printed.
    #[derive(Debug)]
    struct Written {
        code: i32,
        rows: usize,
        gaps: Vec<LagGap>,
    }

    /// `read` written as one part of a stream, as a one-wave run does.
    fn write_judged(
        out: &mut dyn Write,
        format: Output,
        read: &LagRead,
        opts: &LagOptions,
        max_records: i64,
        now_ms: i64,
    ) -> (io::Result<()>, Written) {
        let mut status = Status::default();
        let mut stream = match records::Stream::begin(out, format, "Lag", HEADER) {
            Ok(stream) => stream,
            Err(e) => {
                let w = Written {
                    code: exit::USAGE,
                    rows: 0,
                    gaps: Vec::new(),
                };
                return (Err(e), w);
            }
        };
        let (rows, gaps) = write_part(&mut stream, read, opts, max_records, now_ms, &mut status);
        let code = status.code(&gaps);
        (stream.finish(), Written { code, rows, gaps })
    }

    /// Output of the rows judged whole and collected (what `kdp lag`
    /// printed before it streamed), and of [`write_judged`].
    fn both(read: &LagRead, format: Output) -> (String, String, Written) {
        let opts = LagOptions::default();
        let judged = lag(&read.groups, &read.partitions, &read.blocked, &opts);
        let rows: Vec<Row> = judged.rows.iter().map(|r| row(r, NOW)).collect();
        let mut collected = Vec::new();
        records::write(&mut collected, format, "Lag", HEADER, &rows).unwrap();
        let mut streamed = Vec::new();
        let (written, w) = write_judged(&mut streamed, format, read, &opts, 0, NOW);
        written.unwrap();
        assert_eq!(w.rows, judged.rows.len());
        assert_eq!(w.gaps, judged.gaps);
        (
            String::from_utf8(collected).unwrap(),
            String::from_utf8(streamed).unwrap(),
            w,
        )
    }

    #[test]
    fn streamed_rows_are_the_collected_rows_byte_for_byte_in_group_order() {
        let offsets = [
            Committed::At(5),
            Committed::At(20),
            Committed::At(45),
            Committed::Nothing,
        ];
        let read = read(2_000, &offsets, true);
        for format in [Output::Json, Output::Jsonl, Output::Table, Output::Wide] {
            let (collected, streamed, w) = both(&read, format);
            assert_eq!(collected, streamed, "{format:?}");
            // behind the log start is found: 4 beats the gap's 1
            assert_eq!(w.code, exit::FOUND, "{format:?}");
        }
        let (_, json, _) = both(&read, Output::Json);
        let doc: Value = serde_json::from_str(&json).unwrap();
        let keys: Vec<(String, String, i64)> = doc["Lag"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["Group"].as_str().unwrap().to_string(),
                    r["Topic"].as_str().unwrap().to_string(),
                    r["Partition"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(keys.len(), 6_000);
        // by group, then topic and partition: the order documented
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "out of order");
    }

    #[test]
    fn a_partial_answer_exits_1_after_its_rows_are_streamed() {
        // nothing found: lagging at most (not read), past the LSO
        let offsets = [Committed::At(20), Committed::At(45)];
        let failed = read(300, &offsets, true);
        for format in [Output::Json, Output::Jsonl, Output::Table] {
            let (_, text, w) = both(&failed, format);
            assert_eq!(w.code, exit::PARTIAL, "{format:?}");
            assert_eq!(w.rows, 900);
            assert!(
                matches!(w.gaps.as_slice(), [LagGap::Bounds(tp, _)] if tp.0 == "t4" && tp.1 == 2)
            );
            assert!(text.contains("g00299"), "{format:?}: rows written");
        }
        // nothing undecided, no gap: 0
        let clean = read(300, &[Committed::At(45), Committed::Nothing], false);
        let (_, _, w) = both(&clean, Output::Jsonl);
        assert_eq!((w.code, w.rows), (exit::OK, 900));
        // no group at all: an empty document, still complete
        let (collected, streamed, w) = both(&read(0, &offsets, false), Output::Json);
        assert_eq!(
            (collected.as_str(), w.code),
            ("{\n  \"Lag\": []\n}\n", exit::OK)
        );
        assert_eq!(collected, streamed);
    }
}
