//! `kdp batches`: a partition's record batches read over the wire (Fetch,
//! read_uncommitted), each producer's sequence judged by the broker's own
//! rules (`kdp_domain::diagnose::sequence`). The CLI reads and renders;
//! the verdicts are the library's.

use std::io::{self, Write};

use kdp_client::fetch::{read_batches, FetchSettings, ReadFrom, ReadRequest};
use kdp_domain::diagnose::sequence::{check_sequences, summarize, SequenceVerdict};
use kdp_wire::records::{Compression, DEFAULT_MAX_DECOMPRESSED};
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::exit;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::{Output, Rfc3339};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Reads the partition's batches from its leader (Fetch, read_uncommitted: aborted data and the
commit/abort markers are shown too), as kafka-dump-log.sh shows them from a broker's disk, and
judges each producer's sequence by the broker's own rule (ProducerStateManager):

  in-sequence         BaseSequence follows the producer's last (after Int.MAX: 0)
  first               the producer's first batch in what was read: nothing to compare
  new-epoch           a new epoch starting at sequence 0 (an epoch bump resets it)
  gap                 sequences skipped           -> the broker answers OutOfOrderSequence
  repeat              sequences repeated or back  -> OutOfOrderSequence
  new-epoch-not-at-0  a new epoch not at 0        -> OutOfOrderSequence
  duplicate           the same epoch and sequences as one of the producer's last 5 batches:
                      the broker answers with the first copy and appends nothing
  epoch-went-back     an epoch below the producer's -> InvalidProducerEpoch (a fenced writer)

Each batch in a log was accepted when written, so a refusal here means the broker held other
producer state then: state expired (producer.id.expiration.ms) or lost, a log truncated on a
leader change, or a stretch compacted or deleted. Markers carry no sequence; under transaction
protocol v2 their bumped epoch resets it.

Columns: Offsets (base-last), the producer's id, epoch and sequences (base-last), Txn (a
transactional batch), Control (COMMIT/ABORT and the coordinator epoch), Records, Size in bytes,
Codec, CRC (ok, or BAD when the stored CRC-32C does not match), the largest timestamp (RFC 3339
and age; JSON has the raw milliseconds beside it), and the verdict.

Exit status: 0 every sequence in order, 4 a sequence problem (gap, repeat, duplicate, epoch
going back), 1 the read failed or some batch could not be read or has a bad CRC, 2 bad usage,
3 the cluster could not be reached.

Examples:
  kdp batches --bootstrap-server localhost:9092 --topic orders --partition 0
  kdp batches --bootstrap-server localhost:9092 --topic orders --partition 0 --last 1000
  kdp batches --bootstrap-server localhost:9092 --topic orders --partition 0 --producer-id 4000 \\
      --from-offset 120000 --output jsonl")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: String,
    /// The partition.
    #[arg(long, value_name = "PARTITION", value_parser = clap::value_parser!(i32).range(0..))]
    pub partition: i32,
    /// Show only this producer's batches (the others are still read).
    #[arg(long, value_name = "ID")]
    pub producer_id: Option<i64>,
    /// The last N batches before the high watermark (default 50).
    #[arg(long, value_name = "N", conflicts_with = "from_offset")]
    pub last: Option<usize>,
    /// Every batch from the one holding offset O (at most --max-batches).
    #[arg(long, value_name = "O")]
    pub from_offset: Option<i64>,
    /// With --from-offset: at most this many batches.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        requires = "from_offset"
    )]
    pub max_batches: usize,
    /// Read from this replica instead of the leader (a follower answers up to its own
    /// high watermark).
    #[arg(long, value_name = "N")]
    pub broker_id: Option<i32>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// One batch.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Row {
    topic: String,
    partition: i32,
    base_offset: i64,
    last_offset: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    last_sequence: i32,
    transactional: bool,
    control: Option<&'static str>,
    coordinator_epoch: Option<i32>,
    records: i32,
    size: usize,
    compression: Option<&'static str>,
    crc: u32,
    crc_valid: bool,
    timestamp_type: &'static str,
    base_timestamp: i64,
    base_time: Option<Rfc3339>,
    max_timestamp: i64,
    max_time: Option<Rfc3339>,
    partition_leader_epoch: i32,
    sequence: Option<&'static str>,
    broker_rule: Option<&'static str>,
    note: Option<String>,
    /// The verdict itself, which the Sequence cell is told from.
    #[serde(skip)]
    verdict: Option<SequenceVerdict>,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        let pid = self.producer_id >= 0;
        plain(vec![
            format!("{}-{}", self.base_offset, self.last_offset),
            if pid {
                self.producer_id.to_string()
            } else {
                "-".into()
            },
            if pid {
                self.producer_epoch.to_string()
            } else {
                "-".into()
            },
            if self.base_sequence >= 0 {
                format!("{}-{}", self.base_sequence, self.last_sequence)
            } else {
                "-".into()
            },
            if self.transactional { "yes" } else { "no" }.into(),
            match (self.control, self.coordinator_epoch) {
                (Some(t), Some(e)) => format!("{t} (coord {e})"),
                (Some(t), None) => t.into(),
                _ => "-".into(),
            },
            self.records.to_string(),
            self.size.to_string(),
            or_dash(self.compression),
            if self.crc_valid { "ok" } else { "BAD" }.into(),
            records::when(self.max_timestamp, self.now_ms),
            match self.verdict {
                Some(v) if v.is_routine() => v.label().into(),
                Some(v) => format!("{}: {}", v.label(), v.explain()),
                None => "-".into(),
            },
        ])
    }
}

/// `kdp batches`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let from = match args.from_offset {
        Some(o) => ReadFrom::Offset(o),
        None => ReadFrom::Last(args.last.unwrap_or(50)),
    };
    let req = ReadRequest {
        partition: (args.topic.clone(), args.partition),
        from,
        max_batches: args.from_offset.map(|_| args.max_batches),
        broker_id: args.broker_id,
        settings: FetchSettings::default(),
    };
    // Progress on a terminal's stderr for long reads: a line rewritten
    // every ten fetches, cleared at the end.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut shown = false;
    let read = read_batches(&conn.client, &req, &conn.bound, |p| {
        tracing::debug!(
            batches = p.batches,
            fetches = p.fetches,
            next = p.next_offset,
            "read"
        );
        if terminal && p.fetches % 10 == 0 {
            eprint!(
                "\rkdp: {} batches read, at offset {} of {}  ",
                p.batches, p.next_offset, p.end_offset
            );
            shown = true;
        }
    })
    .await;
    if shown {
        eprint!("\r\x1b[2K");
    }
    let read = match read {
        Ok(r) => r,
        Err(e) => {
            fail!("{e}");
            if let Some(advice) = e.advice() {
                eprintln!("kdp: {advice}");
            }
            return exit::PARTIAL;
        }
    };
    let headers: Vec<_> = read.batches.iter().map(|b| *b.header()).collect();
    let verdicts = check_sequences(&headers);
    let now_ms = kdp_workflows::clock::now_ms();
    let mut bad_crc = 0;
    let mut rows = Vec::new();
    for ((b, h), verdict) in read.batches.iter().zip(&headers).zip(&verdicts) {
        if args.producer_id.is_some_and(|p| p != h.producer_id) {
            continue;
        }
        let view = b.batch();
        let crc_valid = view.as_ref().is_ok_and(|v| v.crc_valid());
        if !crc_valid {
            bad_crc += 1;
        }
        let control = match &view {
            Ok(v) if h.is_control() => match v.control(DEFAULT_MAX_DECOMPRESSED) {
                Ok(c) => c,
                Err(e) => {
                    fail!("{e}");
                    None
                }
            },
            _ => None,
        };
        rows.push(Row {
            topic: args.topic.clone(),
            partition: args.partition,
            base_offset: h.base_offset,
            last_offset: h.last_offset(),
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            last_sequence: h.last_sequence(),
            transactional: h.is_transactional(),
            control: control
                .map(|c| c.control_type.name())
                .or(h.is_control().then_some("UNKNOWN")),
            coordinator_epoch: control.and_then(|c| c.marker).map(|m| m.coordinator_epoch),
            records: h.record_count,
            size: b.bytes().len(),
            compression: h.compression().map(Compression::name),
            crc: h.crc,
            crc_valid,
            timestamp_type: h.timestamp_type().name(),
            base_timestamp: h.base_timestamp,
            base_time: Rfc3339::at(h.base_timestamp),
            max_timestamp: h.max_timestamp,
            max_time: Rfc3339::at(h.max_timestamp),
            partition_leader_epoch: h.partition_leader_epoch,
            sequence: verdict.map(SequenceVerdict::label),
            broker_rule: verdict.map(|v| v.rule().label()),
            note: verdict.map(SequenceVerdict::explain),
            verdict: *verdict,
            now_ms,
        });
    }
    let header = [
        Column::new("Offsets", 0),
        Column::new("ProducerId", 0),
        Column::new("Epoch", 1),
        Column::new("Sequences", 0),
        Column::new("Txn", 3),
        Column::new("Control", 2),
        Column::new("Records", 4),
        Column::new("Size", 4),
        Column::new("Codec", 3),
        Column::new("CRC", 2),
        Column::text("MaxTime", 5),
        Column::text("Sequence", 1).kept(),
    ];
    if let Err(e) = records::write(out, args.output, "Batches", &header, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    let summaries = summarize(&headers, &verdicts);
    let mut problem = false;
    for s in summaries
        .iter()
        .filter(|s| args.producer_id.is_none_or(|p| p == s.producer_id))
    {
        if s.has_problem() {
            problem = true;
            eprintln!(
                "kdp: producer {}: {} batches, epochs {:?}: {} gap(s), {} repeat(s), {} duplicate(s), \
                 {} epoch(s) going back",
                s.producer_id, s.batches, s.epochs, s.gaps, s.repeats, s.duplicates, s.epochs_back
            );
        }
    }
    let span = match (read.batches.first(), read.batches.last()) {
        (Some(a), Some(b)) => format!(
            "offsets {}-{}",
            a.header().base_offset,
            b.header().last_offset()
        ),
        _ => "no batch".into(),
    };
    if args.output == Output::Table {
        eprintln!(
            "kdp: {}-{}: {} batch(es), {span} (log start {}, high watermark {}{}), from broker {}",
            args.topic,
            args.partition,
            read.batches.len(),
            read.log_start_offset,
            read.high_watermark,
            if read.reaches_log_start {
                ""
            } else {
                "; earlier batches not read"
            },
            or_dash(read.broker),
        );
    }
    for e in &read.unreadable {
        fail!("{e}");
    }
    if bad_crc > 0 {
        fail!("{bad_crc} batch(es) with a CRC-32C that does not match their bytes");
    }
    if problem {
        exit::FOUND
    } else if !read.unreadable.is_empty() || bad_crc > 0 {
        exit::PARTIAL
    } else {
        exit::OK
    }
}
