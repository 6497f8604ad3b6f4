//! DescribeProducers results in every output format: a table row per
//! producer, JSON lines per producer and per failed partition, and one merged
//! DescribeProducersResponse document.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use kdp_client::describe::FramedOutcome;
use kdp_domain::diagnose::flags::Flag;
use kdp_domain::partition::{PartitionError, ProducerFields};
use kdp_domain::{DescribeSummary, PartitionOutcome};
use kdp_wire::messages::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use kdp_wire::ErrorCode;
use kdp_workflows::leaders::{leader_answers, LeaderAnswer};
use kdp_workflows::replicas::{ProducerRef, Producers};
use serde::Serialize;

use super::colour::Style;
use super::format::{age, Output, Rfc3339, BUFFER};
use super::table::{self, Column};
use super::{json, jsonl};

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
    /// formatted into the output as it is written, no `String` per producer
    last_timestamp_rfc3339: Option<Rfc3339>,
    coordinator_epoch: i32,
    current_txn_start_offset: i64,
    /// `describe --with-transactions` only: what it adds to each producer.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    transaction: Option<&'a TxnFields>,
}

/// What `describe --with-transactions` adds to each producer, in JSON and
/// JSON lines alike: the document keeps `describe`'s shape and only gains
/// these fields.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TxnFields {
    /// The producer's transactional id, if a coordinator lists it.
    pub transactional_id: Option<String>,
    /// The coordinator's state for it (Kafka's name).
    pub transaction_state: Option<String>,
    /// Its `transaction.timeout.ms`, as the coordinator holds it.
    pub transaction_timeout_ms: Option<i32>,
    /// The epoch the coordinator holds for it.
    pub coordinator_producer_epoch: Option<i16>,
    /// What the data proves (`fenced`, `open-too-long`, `orphan`, `idle`).
    #[serde(serialize_with = "flag_labels")]
    pub flags: Vec<Flag>,
    /// The consumer groups whose committed offset is at the LSO this
    /// producer's open transaction holds (empty: none, or no open
    /// transaction; null: kdp could not read them all).
    pub blocked_groups: Option<Vec<String>>,
    /// The fence verdict and where it came from; `null` for a producer
    /// with no sign of a transaction (idempotent).
    pub fenced: Option<FencedJson>,
    /// Who writes its transactional id while it holds a transaction open
    /// (`kdp owners`); null otherwise.
    pub owner: Option<OwnerField>,
}

/// An id's owner as other commands' JSON shows it (`Owner`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct OwnerField {
    /// `kafka-streams`, `kafka-connect`, `flink-kafka-sink`; null when
    /// unattributed.
    pub framework: Option<&'static str>,
    /// The application.
    pub application: Option<String>,
    /// The instance.
    pub instance: Option<String>,
    /// The task.
    pub task: Option<String>,
    /// `live`, `orphaned`, `lingering`, `unknown`, `unattributed`.
    pub verdict: &'static str,
    /// Why.
    pub evidence: String,
}

/// The flags as their labels.
fn flag_labels<S: serde::Serializer>(flags: &[Flag], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(flags.iter().map(|f| f.label()))
}

/// `describe --with-transactions`' fence verdict of one producer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FencedJson {
    /// `fenced`, `not-fenced` or `unknown`.
    pub verdict: &'static str,
    /// `log` (the transaction log), `epochs` (protocol v1's epoch rule), or
    /// `null` when unknown.
    pub source: Option<&'static str>,
    /// The evidence (the log record) or why it is unknown; `null` when not
    /// fenced.
    pub detail: Option<String>,
}

/// Finds the added fields of a producer on a partition.
pub type TxnLookup<'a> = dyn Fn(&str, i32, i64) -> Option<&'a TxnFields> + 'a;

/// Writes one partition's JSON lines to `buf` (a buffered writer: each line
/// is serialized into it, none is built on its own): a line per producer
/// (in the order given), a line for a failed partition, and with
/// `show_empty` one for a partition without producers.
pub fn push_jsonl<W: Write + ?Sized>(
    buf: &mut W,
    o: &PartitionOutcome,
    show_empty: bool,
    txn: &TxnLookup<'_>,
) -> io::Result<()> {
    let head = Head {
        topic: &o.topic,
        partition: o.partition,
        broker_id: o.broker_id,
    };
    push_lines(buf, head, o.result.as_deref(), show_empty, txn)
}

/// Where a partition's lines say they are from.
#[derive(Clone, Copy)]
struct Head<'a> {
    topic: &'a str,
    partition: i32,
    broker_id: Option<i32>,
}

/// [`push_jsonl`] of producers where they lie (owned, or in a response).
fn push_lines<W: Write + ?Sized, P: ProducerFields>(
    buf: &mut W,
    o: Head<'_>,
    result: Result<&[P], &PartitionError>,
    show_empty: bool,
    txn: &TxnLookup<'_>,
) -> io::Result<()> {
    match result {
        Ok([]) => {
            if !show_empty {
                return Ok(());
            }
            jsonl::push_line(
                buf,
                &EmptyLine {
                    topic: o.topic,
                    partition: o.partition,
                    broker_id: o.broker_id,
                    active_producers: 0,
                },
            )
        }
        Ok(ps) => {
            for p in ps {
                jsonl::push_line(
                    buf,
                    &ProducerLine {
                        topic: o.topic,
                        partition: o.partition,
                        broker_id: o.broker_id,
                        producer_id: p.producer_id(),
                        producer_epoch: p.producer_epoch(),
                        last_sequence: ProducerFields::last_sequence(p),
                        last_timestamp: p.last_timestamp(),
                        last_timestamp_rfc3339: Rfc3339::at(p.last_timestamp()),
                        coordinator_epoch: p.coordinator_epoch(),
                        current_txn_start_offset: p.current_txn_start_offset(),
                        transaction: txn(o.topic, o.partition, p.producer_id()),
                    },
                )?;
            }
            Ok(())
        }
        Err(e) => jsonl::push_line(
            buf,
            &ErrorLine {
                topic: o.topic,
                partition: o.partition,
                broker_id: o.broker_id,
                error_code: e.code,
                error_name: e.name(),
                error_message: e.message.as_deref(),
                client_side: e.client_side,
            },
        ),
    }
}

/// An answer's producers by id (a stable sort: equal ids keep the
/// broker's order) in `buf`, reused from partition to partition; nothing
/// is copied out of the response.
fn by_id<'a, 'b>(ps: Producers<'a>, buf: &'b mut Vec<ProducerRef<'a>>) -> &'b [ProducerRef<'a>] {
    buf.clear();
    buf.extend(ps.iter());
    buf.sort_by_key(|p| p.producer_id());
    buf
}

/// An answer's head and its producers by id ([`by_id`]).
fn sorted<'a, 'b>(
    a: &LeaderAnswer<'a>,
    buf: &'b mut Vec<ProducerRef<'a>>,
) -> (Head<'a>, Result<&'b [ProducerRef<'a>], &'a PartitionError>) {
    let head = Head {
        topic: a.topic,
        partition: a.partition,
        broker_id: a.broker_id,
    };
    (head, a.result.map(|ps| by_id(ps, buf)))
}

/// Writes outcomes as one DescribeProducersResponse document (the seed's
/// shape and field order: topics by name, partitions by index, producers by
/// id), each producer gaining the fields `txn` finds. Serialized from the
/// borrowed outcomes straight into a buffer: nothing is cloned.
pub fn write_json_with(
    out: &mut dyn Write,
    outcomes: &[PartitionOutcome],
    throttle_time_ms: i32,
    txn: &TxnLookup<'_>,
) -> io::Result<()> {
    let mut topics: BTreeMap<&str, BTreeMap<i32, &PartitionOutcome>> = BTreeMap::new();
    for o in outcomes {
        // a later answer for the same partition wins, as in `merge`
        topics.entry(&o.topic).or_default().insert(o.partition, o);
    }
    let doc = WithTxnDoc {
        throttle_time_ms,
        topics: WithTxnTopics {
            topics: &topics,
            txn,
        },
    };
    let mut buf = BufWriter::with_capacity(BUFFER, out);
    serde_json::to_writer_pretty(&mut buf, &doc)?;
    buf.write_all(b"\n")?;
    buf.flush()
}

/// `describe`'s document, borrowed, with fields added to each producer.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct WithTxnDoc<'a, 't> {
    throttle_time_ms: i32,
    topics: WithTxnTopics<'a, 't>,
}

type ByTopic<'a> = BTreeMap<&'a str, BTreeMap<i32, &'a PartitionOutcome>>;

struct WithTxnTopics<'a, 't> {
    topics: &'a ByTopic<'a>,
    txn: &'a TxnLookup<'t>,
}

impl Serialize for WithTxnTopics<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.topics.iter().map(|(name, partitions)| WithTxnTopic {
            name,
            partitions: WithTxnPartitions {
                partitions,
                txn: self.txn,
            },
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct WithTxnTopic<'a, 't> {
    name: &'a str,
    partitions: WithTxnPartitions<'a, 't>,
}

struct WithTxnPartitions<'a, 't> {
    partitions: &'a BTreeMap<i32, &'a PartitionOutcome>,
    txn: &'a TxnLookup<'t>,
}

impl Serialize for WithTxnPartitions<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.partitions.values().map(|o| {
            let (error_code, error_message, mut producers) = match &o.result {
                Ok(ps) => (ErrorCode::NONE, None, ps.iter().collect::<Vec<_>>()),
                Err(e) => (e.code, e.message.as_deref(), Vec::new()),
            };
            producers.sort_by_key(|p| p.producer_id);
            WithTxnPartition {
                partition_index: o.partition,
                error_code,
                error_message,
                active_producers: WithTxnProducers {
                    topic: &o.topic,
                    partition: o.partition,
                    producers,
                    txn: self.txn,
                },
            }
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct WithTxnPartition<'a, 't> {
    partition_index: i32,
    error_code: ErrorCode,
    error_message: Option<&'a str>,
    active_producers: WithTxnProducers<'a, 't>,
}

struct WithTxnProducers<'a, 't> {
    topic: &'a str,
    partition: i32,
    producers: Vec<&'a ProducerState>,
    txn: &'a TxnLookup<'t>,
}

impl Serialize for WithTxnProducers<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.producers.iter().map(|q| WithTxnProducer {
            producer: q,
            transaction: (self.txn)(self.topic, self.partition, q.producer_id),
        }))
    }
}

#[derive(Serialize)]
struct WithTxnProducer<'a> {
    #[serde(flatten)]
    producer: &'a ProducerState,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    transaction: Option<&'a TxnFields>,
}

/// One line of `--output jsonl` for a partition that failed.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ErrorLine<'a> {
    topic: &'a str,
    partition: i32,
    broker_id: Option<i32>,
    error_code: ErrorCode,
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

/// Renders outcomes as they arrive: `jsonl` at once, `table` and `json` at
/// [`Renderer::finish`] (they are sorted and merged). Every answer is read
/// through its response's view: `jsonl` writes its lines from there, and
/// `table` and `json` keep the responses (their validated bytes, shared by
/// the partitions they answered) and each partition's outcome naming its
/// response, sorted and read at the end; no producer is built.
pub struct Renderer<'w> {
    output: Output,
    fixed_broker: bool,
    show_empty: bool,
    now_ms: i64,
    /// stdout is line-buffered: without this buffer, pretty JSON and tables
    /// of a large cluster cost a write(2) per line
    out: BufWriter<&'w mut dyn Write>,
    /// table and json: every outcome, its answer in the response it names
    held: Vec<FramedOutcome>,
    max_throttle_ms: i32,
    /// the first write error; later writes are skipped
    error: Option<io::Error>,
}

impl<'w> Renderer<'w> {
    /// `fixed_broker`: the table's third column is `Broker` (`--broker-id`) rather than `Leader`.
    pub fn new(
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
            out: BufWriter::with_capacity(BUFFER, out),
            held: Vec::new(),
            max_throttle_ms: 0,
            error: None,
        }
    }

    /// One batch of outcomes, as a broker answered them.
    pub fn results(&mut self, throttle_time_ms: i32, mut outcomes: Vec<FramedOutcome>) {
        self.max_throttle_ms = self.max_throttle_ms.max(throttle_time_ms);
        if self.output != Output::Jsonl {
            self.held.append(&mut outcomes);
            return;
        }
        if self.error.is_some() {
            return;
        }
        // each line goes straight into the buffer; the batch is flushed so a
        // consumer sees it as it arrives rather than when the command ends
        let mut buf = Vec::new();
        let written = leader_answers(&outcomes)
            .try_for_each(|a| {
                let (head, result) = sorted(&a, &mut buf);
                push_lines(&mut self.out, head, result, self.show_empty, &|_, _, _| {
                    None
                })
            })
            .and_then(|()| self.out.flush());
        if let Err(e) = written {
            self.error = Some(e);
        }
    }

    /// Writes what was held back (table, json) and reports the first write error.
    pub fn finish(mut self, summary: &DescribeSummary) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let out = &mut self.out;
        let mut held = std::mem::take(&mut self.held);
        // stable: a partition reported twice keeps its order of arrival
        held.sort_by(|a, b| a.partition.cmp(&b.partition));
        let mut answers: Vec<LeaderAnswer<'_>> = leader_answers(&held).collect();
        match self.output {
            Output::Jsonl => {}
            Output::Json => write_merged(out, &answers, self.max_throttle_ms)?,
            Output::Table | Output::Wide => {
                write_table(
                    out,
                    &mut answers,
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

/// Calls `f` with the cells of every row, in order, in one reused set of
/// buffers (see [`table::write`]).
fn table_rows(
    answers: &[LeaderAnswer<'_>],
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
    let mut buf = Vec::new();
    for a in answers {
        let (o, result) = sorted(a, &mut buf);
        let set_head = |cells: &mut [String]| {
            for c in cells.iter_mut() {
                c.clear();
            }
            if let [topic, partition, broker, ..] = cells {
                topic.push_str(o.topic);
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
        match result {
            Ok([]) => {
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
                        let _ = write!(id, "{}", p.producer_id());
                        let _ = write!(epoch, "{}", p.producer_epoch());
                        let _ = write!(seq, "{}", ProducerFields::last_sequence(p));
                        match Rfc3339::at(p.last_timestamp()) {
                            Some(t) => {
                                let _ = write!(ts, "{t}");
                            }
                            None => ts.push('-'),
                        }
                        age_cell.push_str(&age(p.last_timestamp(), style.now_ms));
                        let _ = write!(coord, "{}", p.coordinator_epoch());
                        if p.current_txn_start_offset() < 0 {
                            txn.push('-');
                        } else {
                            let _ = write!(txn, "{}", p.current_txn_start_offset());
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

/// The table, sorted by topic, partition and producer, then a summary line.
fn write_table(
    out: &mut dyn Write,
    answers: &mut [LeaderAnswer<'_>],
    summary: &DescribeSummary,
    style: TableStyle,
) -> io::Result<()> {
    // producers by id as each partition's rows are written
    answers.sort_by(|a, b| (a.topic, a.partition).cmp(&(b.topic, b.partition)));
    let any_error = answers.iter().any(|o| o.result.is_err());
    let mut columns = vec![
        Column::new("Topic", 0),
        Column::new("Partition", 0),
        Column::new(
            if style.fixed_broker {
                "Broker"
            } else {
                "Leader"
            },
            if style.fixed_broker { 0 } else { 4 },
        ),
        Column::new("ProducerId", 0),
        Column::new("ProducerEpoch", 2),
        Column::new("LastSequence", 5),
        Column::new("LastTimestamp", 6),
        Column::new("Age", 1),
        Column::new("CoordinatorEpoch", 7),
        Column::new("CurrentTxnStartOffset", 1),
    ];
    if any_error {
        // shortened first: a long error message must not push the producers' columns out
        columns.push(Column::text("Error", 1).kept().styled(Style::Bad));
    }
    let mut counts = TableCounts::default();
    table::write(out, &columns, &mut |row| {
        counts = table_rows(answers, style, any_error, row);
    })?;
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

/// All answers (sorted by topic and partition) as one
/// DescribeProducersResponse document: topics by name, partitions by
/// index, producers by id; of a partition answered twice, the last.
/// Failed partitions carry their error code and message; client-side
/// errors too (e.g. NETWORK_EXCEPTION). Written from the views as
/// [`merge`]'s owned document would be; a producer with tagged fields
/// kdp does not know takes that owned document (its serde path keeps them).
fn write_merged<W: Write>(
    out: &mut W,
    answers: &[LeaderAnswer<'_>],
    throttle_time_ms: i32,
) -> io::Result<()> {
    let tagged = |a: &LeaderAnswer<'_>| match a.result {
        Ok(Producers::Viewed(v)) => v.iter().any(|p| !p.tagged_fields().is_empty()),
        Ok(Producers::Owned(ps)) => ps.iter().any(|p| !p.unknown_tagged_fields.is_empty()),
        Err(_) => false,
    };
    if answers.iter().any(tagged) {
        let doc = merge(
            answers.iter().map(LeaderAnswer::to_outcome),
            throttle_time_ms,
        );
        return json::write_describe_producers(out, &doc);
    }
    let mut doc = kdp_wire::json::PrettyResponse::begin(out, throttle_time_ms);
    let mut topic: Option<&str> = None;
    let mut buf = Vec::new();
    for (i, a) in answers.iter().enumerate() {
        let next = answers.get(i + 1);
        if next.is_some_and(|n| (n.topic, n.partition) == (a.topic, a.partition)) {
            continue;
        }
        if topic != Some(a.topic) {
            doc.topic(a.topic)?;
            topic = Some(a.topic);
        }
        match a.result {
            Ok(ps) => doc.partition(a.partition, 0, None, by_id(ps, &mut buf))?,
            Err(e) => doc.partition(
                a.partition,
                e.code.0,
                e.message.as_deref(),
                std::iter::empty::<ProducerRef<'_>>(),
            )?,
        }
    }
    doc.finish()?;
    out.write_all(b"\n")
}

/// All outcomes as one DescribeProducersResponse: topics by name, partitions
/// by index, producers by id. Failed partitions carry their error code and
/// message; client-side errors too (e.g. NETWORK_EXCEPTION).
fn merge(
    outcomes: impl IntoIterator<Item = PartitionOutcome>,
    throttle_time_ms: i32,
) -> DescribeProducersResponse {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let outcomes = [
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
                Err(kdp_domain::partition::PartitionError {
                    code: kdp_wire::ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    message: None,
                    client_side: true,
                    stalled: None,
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
        let mut answers: Vec<_> = outcomes.iter().map(LeaderAnswer::of).collect();
        write_table(&mut out, &mut answers, &summary, style).unwrap();
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

    /// A validated response of `partitions` of topic `t`, and the
    /// outcomes naming it (broker 1).
    fn framed(partitions: Vec<(i32, Vec<ProducerState>)>) -> Vec<FramedOutcome> {
        let resp = DescribeProducersResponse {
            topics: vec![TopicResponse {
                name: "t".into(),
                partitions: partitions
                    .iter()
                    .map(|(i, ps)| PartitionResponse {
                        partition_index: *i,
                        active_producers: ps.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let body = bytes::Bytes::from(kdp_wire::encode_to_vec(&resp, 0));
        let frame = std::sync::Arc::new(kdp_wire::view::Validated::new(body, 0).unwrap());
        partitions
            .iter()
            .map(|(i, _)| FramedOutcome {
                broker_id: Some(1),
                partition: ("t".into(), *i),
                result: Ok(frame.clone()),
            })
            .collect()
    }

    fn failed(partition: i32) -> FramedOutcome {
        FramedOutcome {
            broker_id: Some(1),
            partition: ("t".into(), partition),
            result: Err(kdp_domain::partition::PartitionError {
                code: kdp_wire::ErrorCode::NOT_LEADER_OR_FOLLOWER,
                message: Some("moved".into()),
                client_side: false,
                stalled: None,
            }),
        }
    }

    #[test]
    fn jsonl_lines() {
        let producer = ProducerState {
            producer_id: 9,
            producer_epoch: 1,
            last_sequence: 4,
            last_timestamp: 0,
            coordinator_epoch: 2,
            current_txn_start_offset: -1,
            ..Default::default()
        };
        let mut outcomes = framed(vec![(0, vec![producer.clone(), producer]), (1, vec![])]);
        outcomes.push(failed(2));
        let mut out = Vec::new();
        let mut r = Renderer::new(Output::Jsonl, false, true, 0, &mut out);
        r.results(0, outcomes);
        r.finish(&DescribeSummary::default()).unwrap();
        let p = r#"{"Topic":"t","Partition":0,"BrokerId":1,"ProducerId":9,"ProducerEpoch":1,"LastSequence":4,"LastTimestamp":0,"LastTimestampRfc3339":null,"CoordinatorEpoch":2,"CurrentTxnStartOffset":-1}"#;
        let expected = format!(
            "{p}\n{p}\n\
             {{\"Topic\":\"t\",\"Partition\":1,\"BrokerId\":1,\"ActiveProducers\":0}}\n\
             {{\"Topic\":\"t\",\"Partition\":2,\"BrokerId\":1,\"ErrorCode\":6,\
             \"ErrorName\":\"NOT_LEADER_OR_FOLLOWER\",\"ErrorMessage\":\"moved\",\"ClientSide\":false}}\n"
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    /// Partitions and their producers, in a response's order.
    type Partitions = Vec<(i32, Vec<ProducerState>)>;

    /// Two responses of several topics, partitions out of order,
    /// producers out of id order with ties, empty partitions and errors,
    /// and a partition reported twice: the outcomes a describe hands on.
    fn mixed() -> Vec<FramedOutcome> {
        let p = |id, seq| ProducerState {
            producer_id: id,
            producer_epoch: 2,
            last_sequence: seq,
            last_timestamp: 1_795_953_600_000 + i64::from(seq),
            coordinator_epoch: if id % 2 == 0 { 3 } else { -1 },
            current_txn_start_offset: if id % 3 == 0 { 40 + id } else { -1 },
            ..Default::default()
        };
        let frame = |topics: Vec<(&str, Partitions)>, broker| {
            let resp = DescribeProducersResponse {
                topics: topics
                    .iter()
                    .map(|(name, ps)| TopicResponse {
                        name: (*name).into(),
                        partitions: ps
                            .iter()
                            .map(|(i, ps)| PartitionResponse {
                                partition_index: *i,
                                active_producers: ps.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            let body = bytes::Bytes::from(kdp_wire::encode_to_vec(&resp, 0));
            let frame = std::sync::Arc::new(kdp_wire::view::Validated::new(body, 0).unwrap());
            topics
                .iter()
                .flat_map(|(name, ps)| ps.iter().map(move |(i, _)| ((*name).to_owned(), *i)))
                .map(|tp| FramedOutcome {
                    broker_id: Some(broker),
                    partition: tp,
                    result: Ok(frame.clone()),
                })
                .collect::<Vec<_>>()
        };
        let mut all = frame(
            vec![
                (
                    "orders",
                    vec![(3, vec![p(9, 1), p(4, 2), p(9, 0)]), (0, vec![])],
                ),
                ("alpha", vec![(1, vec![p(6, 5)])]),
            ],
            2,
        );
        all.push(FramedOutcome {
            broker_id: None,
            partition: ("gone".into(), -1),
            result: Err(kdp_domain::partition::PartitionError::client(
                kdp_wire::ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                "no such topic \"gone\"",
            )),
        });
        all.extend(frame(
            vec![(
                "orders",
                vec![(1, vec![p(12, 7), p(3, 8)]), (3, vec![p(1, 1)])],
            )],
            1,
        ));
        all.push(failed(5));
        all
    }

    /// What each output writes of `outcomes` (in batches of `at` as they
    /// arrived).
    fn rendered(output: Output, show_empty: bool, outcomes: &[FramedOutcome]) -> String {
        let mut out = Vec::new();
        let mut r = Renderer::new(output, false, show_empty, 1_795_953_700_000, &mut out);
        r.results(3, outcomes[..4].to_vec());
        r.results(7, outcomes[4..].to_vec());
        let summary = DescribeSummary {
            partitions: outcomes.len(),
            failed: 2,
            ..Default::default()
        };
        r.finish(&summary).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The views' JSON document is byte for byte the owned one (the
    /// outcomes built, merged and written as before), producers and
    /// partitions sorted, the later of a partition reported twice kept.
    #[test]
    fn json_from_the_views_is_the_owned_document() {
        let outcomes = mixed();
        let owned = kdp_client::describe::to_outcomes(&outcomes);
        let mut want = Vec::new();
        json::write_describe_producers(&mut want, &merge(owned, 7)).unwrap();
        let got = rendered(Output::Json, false, &outcomes);
        assert_eq!(got, String::from_utf8(want).unwrap());
        // orders-3 as broker 1 answered it last; orders-1's producers by id
        assert!(!got.contains("\"ProducerId\": 9,"), "{got}");
        let at = |id: &str| got.find(&format!("\"ProducerId\": {id},"));
        assert!(at("3").is_some() && at("3") < at("12"), "{got}");
    }

    /// Table and JSON lines from the views are those of the owned outcomes
    /// (producers sorted by id, equal ids in the broker's order).
    #[test]
    fn table_and_jsonl_from_the_views_are_the_owned_ones() {
        let outcomes = mixed();
        let owned = kdp_client::describe::to_outcomes(&outcomes);
        for show_empty in [false, true] {
            let mut sorted = owned.clone();
            sorted.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            let mut answers: Vec<_> = sorted.iter().map(LeaderAnswer::of).collect();
            let summary = DescribeSummary {
                partitions: outcomes.len(),
                failed: 2,
                ..Default::default()
            };
            let style = TableStyle {
                fixed_broker: false,
                show_empty,
                now_ms: 1_795_953_700_000,
            };
            let mut table = Vec::new();
            write_table(&mut table, &mut answers, &summary, style).unwrap();
            assert_eq!(
                rendered(Output::Table, show_empty, &outcomes),
                String::from_utf8(table).unwrap()
            );
            let mut lines = Vec::new();
            for batch in [&owned[..4], &owned[4..]] {
                for o in batch {
                    let mut o = o.clone();
                    if let Ok(ps) = &mut o.result {
                        ps.sort_by_key(|p| p.producer_id);
                    }
                    push_jsonl(&mut lines, &o, show_empty, &|_, _, _| None).unwrap();
                }
            }
            let got = rendered(Output::Jsonl, show_empty, &outcomes);
            assert_eq!(got, String::from_utf8(lines).unwrap());
            let ids: Vec<_> = got
                .lines()
                .filter(|l| l.contains("\"Partition\":3,\"BrokerId\":2"))
                .map(|l| {
                    (
                        l.contains("\"ProducerId\":9"),
                        l.contains("\"LastSequence\":1,"),
                    )
                })
                .collect();
            // 4, then the two 9s in the broker's order (sequence 1 first)
            assert_eq!(ids, [(false, false), (true, true), (true, false)]);
        }
    }
}

/// What `--output jsonl` allocates, counted on the test's own thread: the
/// lines come from the response's view, so the count does not follow the
/// producers.
#[cfg(test)]
// a global allocator is unsafe to implement; this one only forwards to `System`
#[allow(unsafe_code)]
mod alloc_tests {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    use super::*;
    use kdp_wire::messages::PartitionResponse;

    struct Counting;

    thread_local! {
        static COUNTING: Cell<bool> = const { Cell::new(false) };
        static COUNT: Cell<usize> = const { Cell::new(0) };
    }

    // forwards to System, counting on this thread only
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if COUNTING.with(Cell::get) {
                COUNT.with(|c| c.set(c.get() + 1));
            }
            // SAFETY: the caller's contract is System's.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract is System's.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            if COUNTING.with(Cell::get) {
                COUNT.with(|c| c.set(c.get() + 1));
            }
            // SAFETY: the caller's contract is System's.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static A: Counting = Counting;

    /// One response of `partitions` partitions of `per` producers each
    /// (ids descending, so each is sorted), and its outcomes.
    fn response(partitions: i32, per: i64) -> Vec<FramedOutcome> {
        let resp = DescribeProducersResponse {
            topics: vec![TopicResponse {
                name: "t".into(),
                partitions: (0..partitions)
                    .map(|i| PartitionResponse {
                        partition_index: i,
                        active_producers: (0..per)
                            .map(|id| ProducerState {
                                producer_id: per - id,
                                last_timestamp: 1_795_953_600_000,
                                current_txn_start_offset: id,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let body = bytes::Bytes::from(kdp_wire::encode_to_vec(&resp, 0));
        let frame = std::sync::Arc::new(kdp_wire::view::Validated::new(body, 0).unwrap());
        (0..partitions)
            .map(|i| FramedOutcome {
                broker_id: Some(1),
                partition: ("t".into(), i),
                result: Ok(frame.clone()),
            })
            .collect()
    }

    /// Allocations while `--output jsonl` writes one response's lines.
    fn jsonl_allocations(outcomes: Vec<FramedOutcome>) -> usize {
        let mut sink = std::io::sink();
        let mut r = Renderer::new(Output::Jsonl, false, false, 0, &mut sink);
        COUNT.with(|c| c.set(0));
        COUNTING.with(|c| c.set(true));
        r.results(0, outcomes);
        COUNTING.with(|c| c.set(false));
        r.finish(&DescribeSummary::default()).unwrap();
        COUNT.with(Cell::get)
    }

    /// The owned path built a vector of producers per partition (100
    /// here) and the producers' sort more; the view's costs a few
    /// allocations a response, the same for 100 producers or 10,000.
    #[test]
    fn jsonl_builds_no_producers() {
        let small = jsonl_allocations(response(100, 1));
        let large = jsonl_allocations(response(100, 100));
        assert!(small <= 16, "{small} allocations for 100 producers");
        // the reused sort buffer grows to the largest partition's size
        assert!(
            large <= small + 8,
            "{large} allocations for 10,000 producers, {small} for 100"
        );
    }
}
