//! `kdp history`: transactional ids' state changes, read from the
//! transaction coordinator's log (`__transaction_state`), with what caused
//! each change of epoch and every change of producer instance marked.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use kdp_domain::history::{Beginning, Cause, History, IdHistory, StateChange};
use kdp_domain::owners::Owner;
use kdp_workflows::clock::now_ms;
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::cmd::owner_of;
use crate::exit;
use crate::output::colour::Style;
use crate::output::records::{or_dash, when};
use crate::output::table::{self, Cell, Column};
use crate::output::{Output, Rfc3339, BUFFER};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Reads the __transaction_state partition that holds each transactional id (Kafka's rule:
abs(id.hashCode()) % the topic's partition count), from its first offset (or --since) to its
high watermark, and prints every state change of the id in log order: the time (RFC 3339 and
raw ms), the state, producer id and epoch, the partitions the change added, the transaction
timeout, and what caused each change of producer id or epoch:

  init-producer-id  InitProducerId bumped the epoch: a NEW PRODUCER INSTANCE (marked in the
                    Instance column and `InstanceChange` in JSON). Every earlier epoch is fenced:
                    the old instance's next request fails with ProducerFencedException (protocol
                    v1) or InvalidProducerEpochException (v2).
  admin-fence       the same InitProducerId, with the signature of kdp force-terminate,
                    kafka-transactions.sh forceTerminateTransaction or Admin.fenceProducers: the
                    recorded transaction timeout changed (they record their request timeout) and
                    nothing ran at the new epoch. Kafka records both alike; this is kdp's reading.
  new-producer-id   InitProducerId gave a new producer id at epoch 0 (a new or expired id, or an
                    exhausted epoch)
  commit, abort     a transaction's end under transaction protocol v2 (Kafka 4.x): every end
                    bumps the epoch; the same instance goes on
  timeout           the coordinator aborted a transaction that outlived its timeout (the epoch is
                    bumped: the producer is fenced)
  fencing-abort     protocol v1: the coordinator aborted the open transaction for a new
                    InitProducerId (the next change)
  rollover          the epoch ran out at a transaction end; the coordinator moved the id to the
                    producer id it had announced
  unexplained       records of the id are missing before this one (see below)
  before-history    the first record read is not an InitProducerId: what led to it was not read

How far back it reaches: the topic is compacted, so outside the active segment (100 MB by
default) the log cleaner keeps only each id's latest record. For every id kdp says which offsets
it read, when the first record was written, and whether records were removed. Only a log that
starts at offset 0 with nothing removed holds the id's whole history; otherwise the first change
shown is not its creation, and a change across removed records is `unexplained`, never guessed.

Needs READ on the topic __transaction_state (which includes DESCRIBE); without it kdp names the
ACL to add.

Exit status: 0 every id's partition read to its end; 1 some id could not be read, has no record
in what was read, or --timeout ended the read (what was read is printed); 2 bad usage;
3 the cluster could not be reached.

Examples:
  kdp history --bootstrap-server localhost:9092 --transactional-id ledger-writer
  kdp history --bootstrap-server localhost:9092 --transactional-id a --transactional-id b --since 2h
  kdp history --bootstrap-server localhost:9092 --transactional-id a --since 2026-11-30T08:00:00Z -o jsonl

A partition of more than 100,000 offsets draws a progress bar on stderr (on a terminal). The
whole read is bounded by --timeout: a read cut short says where it stopped.")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The transactional id; repeat for several.
    #[arg(long, value_name = "ID", required = true)]
    pub transactional_id: Vec<String>,
    /// Only changes since then: a duration before now (`2h`, `30m`), an RFC 3339 time, or ms
    /// since the epoch.
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_since)]
    pub since: Option<Since>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// `--since`, as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// This long before the command starts.
    Ago(std::time::Duration),
    /// This time (ms since the epoch).
    At(i64),
}

impl Since {
    /// The time in ms since the epoch, `now_ms` being now.
    pub fn ms(self, now_ms: i64) -> i64 {
        match self {
            Since::Ago(d) => {
                now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            }
            Since::At(ms) => ms,
        }
    }
}

/// A duration (`2h`), an RFC 3339 time, or ms since the epoch.
pub fn parse_since(s: &str) -> Result<Since, String> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return if ms > 0 {
            Ok(Since::At(ms))
        } else {
            Err("a time in ms must be above 0".into())
        };
    }
    if let Ok(d) = humantime::parse_duration(s) {
        return Ok(Since::Ago(d));
    }
    match humantime::parse_rfc3339_weak(s) {
        Ok(t) => t
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i64::try_from(d.as_millis()).ok())
            .map(Since::At)
            .ok_or_else(|| "a time before 1970".into()),
        Err(_) => Err(format!(
            "{s:?} is neither a duration (2h, 30m) nor an RFC 3339 time (2026-11-30T08:00:00Z) nor ms since the epoch"
        )),
    }
}

/// One state change as the table and JSON lines show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ChangeRow {
    transactional_id: String,
    partition: i32,
    offset: i64,
    timestamp_ms: i64,
    timestamp: Option<Rfc3339>,
    transaction_state: String,
    producer_id: Option<i64>,
    producer_epoch: Option<i16>,
    previous_producer_id: Option<i64>,
    next_producer_id: Option<i64>,
    next_producer_epoch: Option<i16>,
    client_transaction_version: Option<i16>,
    transaction_timeout_ms: Option<i32>,
    transaction_start_time_ms: Option<i64>,
    transaction_start_time: Option<Rfc3339>,
    transaction_last_update_time_ms: Option<i64>,
    transaction_last_update_time: Option<Rfc3339>,
    topic_partitions: Vec<String>,
    partitions_added: Vec<String>,
    from_producer_id: Option<i64>,
    from_producer_epoch: Option<i16>,
    #[serde(serialize_with = "cause_label")]
    cause: Option<Cause>,
    instance: u32,
    instance_change: bool,
    gap_before: bool,
    value_version: Option<i16>,
    #[serde(skip)]
    now_ms: i64,
}

fn tp(list: &[(String, i32)]) -> Vec<String> {
    list.iter().map(|(t, p)| format!("{t}-{p}")).collect()
}

impl ChangeRow {
    fn new(id: &str, partition: i32, c: &StateChange, now_ms: i64) -> ChangeRow {
        let v = c.value.as_ref();
        let from = c.epoch_change.and_then(|e| e.from);
        ChangeRow {
            transactional_id: id.to_string(),
            partition,
            offset: c.offset,
            timestamp_ms: c.timestamp,
            timestamp: Rfc3339::at(c.timestamp),
            transaction_state: c.state.name(),
            producer_id: v.map(|v| v.producer_id),
            producer_epoch: v.map(|v| v.producer_epoch),
            previous_producer_id: v.map(|v| v.previous_producer_id),
            next_producer_id: v.map(|v| v.next_producer_id),
            next_producer_epoch: v.map(|v| v.next_producer_epoch),
            client_transaction_version: v.map(|v| v.client_transaction_version),
            transaction_timeout_ms: v.map(|v| v.transaction_timeout_ms),
            transaction_start_time_ms: v
                .and_then(|v| kdp_domain::time::known_ms(v.transaction_start_timestamp_ms)),
            transaction_start_time: v.and_then(|v| Rfc3339::at(v.transaction_start_timestamp_ms)),
            transaction_last_update_time_ms: v
                .and_then(|v| kdp_domain::time::known_ms(v.transaction_last_update_timestamp_ms)),
            transaction_last_update_time: v
                .and_then(|v| Rfc3339::at(v.transaction_last_update_timestamp_ms)),
            topic_partitions: tp(&c.partitions),
            partitions_added: tp(&c.partitions_added),
            from_producer_id: from.map(|f| f.producer_id),
            from_producer_epoch: from.map(|f| f.epoch),
            cause: c.cause(),
            instance: c.instance,
            instance_change: c.instance_change,
            gap_before: c.gap_before,
            value_version: c.value_version,
            now_ms,
        }
    }

    fn cells(&self) -> Vec<Cell> {
        vec![
            self.transactional_id.clone().into(),
            self.offset.to_string().into(),
            when(self.timestamp_ms, self.now_ms).into(),
            self.timestamp_ms.to_string().into(),
            self.transaction_state.clone().into(),
            or_dash(self.producer_id).into(),
            or_dash(self.producer_epoch).into(),
            // a change of instance stands out
            if self.instance_change {
                Cell::new(format!("{} NEW", self.instance), Style::Bad)
            } else {
                self.instance.to_string().into()
            },
            // what fences in red, gaps in magenta
            match (self.cause, self.gap_before) {
                (Some(c), _) => {
                    Cell::new(c.label(), c.severity().map_or(Style::Plain, Style::from))
                }
                (None, true) => Cell::new("(gap before)", Style::Unknown),
                (None, false) => "-".into(),
            },
            if self.partitions_added.is_empty() {
                "-".into()
            } else {
                self.partitions_added.join(",").into()
            },
            or_dash(self.transaction_timeout_ms).into(),
            if self.topic_partitions.is_empty() {
                "-".into()
            } else {
                self.topic_partitions.join(",").into()
            },
        ]
    }
}

/// A cause as its label.
fn cause_label<S: serde::Serializer>(c: &Option<Cause>, s: S) -> Result<S::Ok, S::Error> {
    c.map(Cause::label).serialize(s)
}

const HEADER: &[Column] = &[
    Column::text("TransactionalId", 0),
    Column::new("Offset", 4),
    Column::new("Time", 0),
    Column::new("TimestampMs", 6),
    Column::new("State", 0),
    Column::new("ProducerId", 2),
    Column::new("Epoch", 0),
    Column::new("Instance", 0),
    Column::new("Cause", 0),
    Column::text("PartitionsAdded", 3),
    Column::new("TimeoutMs", 5),
    Column::text("Partitions", 7),
];

/// How far one id's history reaches, as the JSON shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct ReachJson {
    log_start_offset: i64,
    start_offset: i64,
    end_offset: i64,
    high_watermark: i64,
    complete: bool,
    first_offset: Option<i64>,
    first_timestamp_ms: Option<i64>,
    first_timestamp: Option<Rfc3339>,
    records_read: u64,
    removed_offsets: i64,
    first_removed_offset: Option<i64>,
    since_ms: Option<i64>,
    since: Option<Rfc3339>,
    beginning: &'static str,
}

impl ReachJson {
    fn new(h: &History) -> ReachJson {
        let r = &h.reach;
        ReachJson {
            log_start_offset: r.log_start_offset,
            start_offset: r.start_offset,
            end_offset: r.end_offset,
            high_watermark: r.high_watermark,
            complete: r.complete(),
            first_offset: r.first_record.map(|(o, _)| o),
            first_timestamp_ms: r
                .first_record
                .and_then(|(_, t)| kdp_domain::time::known_ms(t)),
            first_timestamp: r.first_record.and_then(|(_, t)| Rfc3339::at(t)),
            records_read: r.records,
            removed_offsets: r.removed(),
            first_removed_offset: r.holes.first().map(|h| h.start),
            since_ms: r.since_ms,
            since: r.since_ms.and_then(Rfc3339::at),
            beginning: r.beginning().label(),
        }
    }
}

/// A record of the id's partition that did not decode.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct UndecodedJson {
    offset: i64,
    error: String,
}

/// One id in the JSON document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct HistoryJson {
    transactional_id: String,
    /// Who writes it (`kdp owners`); null when not read.
    owner: Option<owner_of::OwnerField>,
    partition: Option<i32>,
    error: Option<String>,
    reach: Option<ReachJson>,
    changes: Vec<ChangeRow>,
    undecoded: Vec<UndecodedJson>,
}

/// A JSON line for an id that could not be read.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct ErrorLine<'a> {
    transactional_id: &'a str,
    partition: Option<i32>,
    error: String,
}

fn history_json(h: &IdHistory, owner: Option<&Owner>, now_ms: i64) -> HistoryJson {
    let owner = owner_of::field(owner);
    match &h.result {
        Ok(hist) => HistoryJson {
            transactional_id: h.transactional_id.clone(),
            owner,
            partition: h.partition,
            error: None,
            reach: Some(ReachJson::new(hist)),
            changes: rows(&h.transactional_id, hist, now_ms),
            undecoded: hist
                .undecoded
                .iter()
                .map(|u| UndecodedJson {
                    offset: u.offset,
                    error: u.error.clone(),
                })
                .collect(),
        },
        Err(e) => HistoryJson {
            transactional_id: h.transactional_id.clone(),
            owner,
            partition: h.partition,
            error: Some(e.to_string()),
            reach: None,
            changes: Vec::new(),
            undecoded: Vec::new(),
        },
    }
}

fn rows(id: &str, h: &History, now_ms: i64) -> Vec<ChangeRow> {
    h.changes
        .iter()
        .map(|c| ChangeRow::new(id, h.reach.partition, c, now_ms))
        .collect()
}

/// The line on stderr that says how far an id's history reaches.
pub fn reach_line(id: &str, h: &History, now_ms: i64) -> String {
    let r = &h.reach;
    let topic = kdp_wire::coordinator::txn_log::TRANSACTION_STATE_TOPIC;
    let mut line = format!(
        "{id}: {topic}-{} offsets {}..{} read ({} records",
        r.partition, r.start_offset, r.end_offset, r.records
    );
    match r.first_record {
        Some((_, t)) => line.push_str(&format!(", the first written {})", when(t, now_ms))),
        None => line.push(')'),
    }
    line.push_str(&match r.beginning() {
        Beginning::Whole => {
            "; the log starts at offset 0 and no record was removed: this is the id's whole history on it"
                .to_string()
        }
        Beginning::Since { since_ms } => format!(
            "; from {} on (--since): earlier changes were not read",
            or_dash(Rfc3339::at(since_ms))
        ),
        Beginning::Partial {
            log_start_offset,
            first_hole,
        } => {
            let mut s = String::from("; earlier changes may be missing, so the first one shown is not proven the id's first:");
            if log_start_offset > 0 {
                s.push_str(&format!(" the log starts at offset {log_start_offset}"));
            }
            if let Some(hole) = first_hole {
                if log_start_offset > 0 {
                    s.push(',');
                }
                s.push_str(&format!(
                    " the log cleaner removed {} records (the first at offset {})",
                    r.removed(),
                    hole.start
                ));
            }
            s
        }
    });
    if !r.complete() {
        line.push_str(&format!(
            "; NOT read to the end: stopped at offset {} of {} (--timeout)",
            r.end_offset, r.high_watermark
        ));
    }
    line
}

/// Writes the histories as `output`; returns the exit status they call for.
pub fn write(
    out: &mut dyn Write,
    output: Output,
    histories: &[IdHistory],
    owners: &BTreeMap<String, Owner>,
    now_ms: i64,
) -> io::Result<i32> {
    let mut code = exit::OK;
    for h in histories {
        if let Some(o) = owners.get(&h.transactional_id) {
            eprintln!(
                "{}: owner {} ({})",
                h.transactional_id,
                owner_of::cell(Some(o)).text,
                o.evidence
            );
        }
        match &h.result {
            Ok(hist) => {
                eprintln!("{}", reach_line(&h.transactional_id, hist, now_ms));
                if !hist.reach.complete() {
                    code = exit::PARTIAL;
                }
                if hist.changes.is_empty() {
                    fail!("{}: no record of it in what was read", h.transactional_id);
                    code = exit::PARTIAL;
                }
                for u in &hist.undecoded {
                    fail!(
                        "{}: {}-{} offset {}: a record kdp cannot decode (it may be this id's): {}",
                        h.transactional_id,
                        kdp_wire::coordinator::txn_log::TRANSACTION_STATE_TOPIC,
                        hist.reach.partition,
                        u.offset,
                        u.error
                    );
                }
            }
            Err(e) => {
                fail!("{}: {e}", h.transactional_id);
                code = exit::PARTIAL;
            }
        }
    }
    let mut buf = BufWriter::with_capacity(BUFFER, out);
    match output {
        Output::Table | Output::Wide => {
            table::write(&mut buf, HEADER, &mut |sink| {
                for h in histories {
                    if let Ok(hist) = &h.result {
                        for r in rows(&h.transactional_id, hist, now_ms) {
                            sink(&r.cells());
                        }
                    }
                }
            })?;
        }
        Output::Json => {
            #[derive(Serialize)]
            #[serde(rename_all = "PascalCase")]
            struct Doc {
                histories: Vec<HistoryJson>,
            }
            let doc = Doc {
                histories: histories
                    .iter()
                    .map(|h| history_json(h, owners.get(&h.transactional_id), now_ms))
                    .collect(),
            };
            serde_json::to_writer_pretty(&mut buf, &doc)?;
            buf.write_all(b"\n")?;
        }
        Output::Jsonl => {
            for h in histories {
                match &h.result {
                    Ok(hist) => {
                        for r in rows(&h.transactional_id, hist, now_ms) {
                            serde_json::to_writer(&mut buf, &r)?;
                            buf.write_all(b"\n")?;
                        }
                    }
                    Err(e) => {
                        serde_json::to_writer(
                            &mut buf,
                            &ErrorLine {
                                transactional_id: &h.transactional_id,
                                partition: h.partition,
                                error: e.to_string(),
                            },
                        )?;
                        buf.write_all(b"\n")?;
                    }
                }
            }
        }
    }
    buf.flush()?;
    Ok(code)
}

/// Offsets of a partition from which on reading it draws a progress bar
/// (stderr on a terminal only).
const PROGRESS_MIN_OFFSETS: i64 = 100_000;

/// A progress bar on stderr while a long `__transaction_state` partition
/// is read.
pub struct OffsetsBar {
    terminal: bool,
    bar: Option<(i32, indicatif::ProgressBar)>,
}

impl OffsetsBar {
    /// A bar, drawn only on a terminal.
    pub fn new() -> Self {
        OffsetsBar {
            terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            bar: None,
        }
    }

    /// After a chunk of a partition.
    pub fn update(&mut self, p: kdp_workflows::history::ReadProgress) {
        if !self.terminal || p.total < PROGRESS_MIN_OFFSETS {
            return;
        }
        let total = u64::try_from(p.total).unwrap_or(0);
        let read = u64::try_from(p.read).unwrap_or(0);
        match &self.bar {
            Some((partition, bar)) if *partition == p.partition => bar.set_position(read),
            _ => {
                self.finish();
                let bar = indicatif::ProgressBar::with_draw_target(
                    Some(total),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
                    "{{spinner}} __transaction_state-{} {{pos}}/{{len}} offsets [{{bar:30}}] {{elapsed}}",
                    p.partition
                )) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_position(read);
                self.bar = Some((p.partition, bar));
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if let Some((_, bar)) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Default for OffsetsBar {
    fn default() -> Self {
        Self::new()
    }
}

/// `kdp history`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let now = now_ms();
    let opts = kdp_workflows::history::ReadOptions {
        driver: conn.describe_options(None, None).driver_options(),
        since_ms: args.since.map(|s| s.ms(now)),
        principal: conn.principal.clone(),
    };
    let mut bar = OffsetsBar::new();
    let (histories, owners) = tokio::join!(
        kdp_workflows::history::read_histories_with(
            &conn.client,
            &args.transactional_id,
            &opts,
            &conn.bound,
            |p| bar.update(p),
        ),
        owner_of::owners(&conn, args.transactional_id.clone())
    );
    bar.finish();
    match write(out, args.output, &histories, &owners, now_ms()) {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            fail!("cannot write output: {e}");
            exit::PARTIAL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_times_and_ms() {
        assert_eq!(
            parse_since("2h"),
            Ok(Since::Ago(std::time::Duration::from_secs(7200)))
        );
        assert_eq!(
            Since::Ago(std::time::Duration::from_secs(2)).ms(10_000),
            8_000
        );
        assert_eq!(parse_since("1796287460449"), Ok(Since::At(1796287460449)));
        assert_eq!(
            parse_since("2026-11-30T08:00:00Z"),
            Ok(Since::At(1_796_025_600_000))
        );
        assert!(parse_since("0").is_err());
        let e = parse_since("yesterday").unwrap_err();
        assert!(e.contains("RFC 3339"), "{e}");
    }
}
