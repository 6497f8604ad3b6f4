//! kdp's output hot paths without a cluster: the record writer (every
//! diagnosis command's `--output json` / `jsonl` / table) and the JSON line
//! of a producer (`describe --output jsonl`), into a sink that discards.
//!
//! ```text
//! cargo bench -p kdp --bench output -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::io::{self, Write};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kdp_domain::PartitionOutcome;
use kdp_wire::messages::ProducerState;
use serde::Serialize;

// kdp is a binary: its output module is compiled into the bench as it is.
// (its unit tests are not run here: under `clippy --all-targets` their
// imports would be unused)
#[allow(dead_code, unused_imports)]
#[path = "../src/output/mod.rs"]
mod output;

use output::records::{self, Record};
use output::table::{plain, Cell, Column};
use output::{Output, Rfc3339};

/// A sink that counts bytes and keeps none, like `> /dev/null`.
#[derive(Default)]
struct Discard(u64);

impl Write for Discard {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A row shaped like `transactions describe`'s.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Row {
    coordinator_id: i32,
    transactional_id: String,
    producer_id: i64,
    producer_epoch: i16,
    transaction_state: &'static str,
    transaction_timeout_ms: i32,
    current_transaction_start_time_ms: Option<i64>,
    current_transaction_start_time: Option<Rfc3339>,
    topic_partitions: Vec<String>,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        plain(vec![
            self.coordinator_id.to_string(),
            self.transactional_id.clone(),
            self.producer_id.to_string(),
            self.producer_epoch.to_string(),
            self.transaction_state.into(),
            self.transaction_timeout_ms.to_string(),
            records::when(
                self.current_transaction_start_time_ms.unwrap_or(-1),
                1_795_953_600_000,
            ),
            self.topic_partitions.join(","),
        ])
    }
}

const COLUMNS: &[Column] = &[
    Column::new("CoordinatorId", 4),
    Column::text("TransactionalId", 0),
    Column::new("ProducerId", 1),
    Column::new("ProducerEpoch", 3),
    Column::new("TransactionState", 0),
    Column::new("TransactionTimeoutMs", 5),
    Column::new("CurrentTransactionStartTime", 2),
    Column::text("TopicPartitions", 0),
];

fn rows(n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| {
            let start = 1_795_953_600_000 - (i as i64) * 1_000;
            Row {
                coordinator_id: (i % 3) as i32,
                transactional_id: format!("orders-tx-{i}"),
                producer_id: 4_000_000 + i as i64 * 7,
                producer_epoch: (i % 17) as i16,
                transaction_state: "Ongoing",
                transaction_timeout_ms: 60_000,
                current_transaction_start_time_ms: Some(start),
                current_transaction_start_time: Rfc3339::at(start),
                topic_partitions: vec![format!("orders-{}", i % 10)],
            }
        })
        .collect()
}

fn record_writer(c: &mut Criterion) {
    let mut g = c.benchmark_group("records");
    for n in [1_000usize, 10_000] {
        let rows = rows(n);
        g.throughput(Throughput::Elements(n as u64));
        for (label, format) in [
            ("json", Output::Json),
            ("jsonl", Output::Jsonl),
            ("table", Output::Table),
        ] {
            g.bench_with_input(BenchmarkId::new(label, n), &rows, |b, rows| {
                b.iter(|| {
                    let mut sink = Discard::default();
                    records::write(&mut sink, format, "Transactions", COLUMNS, rows)
                        .expect("a discarding sink does not fail");
                    black_box(sink.0)
                })
            });
        }
    }
    g.finish();
}

fn producer_lines(c: &mut Criterion) {
    let n = 1_000usize;
    let outcome = PartitionOutcome {
        topic: "orders".into(),
        partition: 7,
        broker_id: Some(2),
        result: Ok((0..n)
            .map(|i| ProducerState {
                producer_id: 4_000_000 + i as i64 * 7,
                producer_epoch: (i % 17) as i32,
                last_sequence: (i * 31 % 100_000) as i32,
                last_timestamp: 1_795_953_600_000 - i as i64,
                coordinator_epoch: 5,
                current_txn_start_offset: if i % 2 == 0 { -1 } else { i as i64 * 100 },
                ..Default::default()
            })
            .collect()),
    };
    let mut g = c.benchmark_group("jsonl");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("producer_lines/1000", |b| {
        b.iter(|| {
            let mut out = io::BufWriter::with_capacity(output::BUFFER, Discard::default());
            output::producers::push_jsonl(&mut out, &outcome, false, &|_, _, _| None)
                .expect("a discarding sink does not fail");
            out.flush().expect("a discarding sink does not fail");
            black_box(out.get_ref().0)
        })
    });
    g.finish();
}

criterion_group!(benches, record_writer, producer_lines);
criterion_main!(benches);
