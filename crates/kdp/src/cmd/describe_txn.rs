//! `kdp describe --with-transactions`: each producer joined with its
//! transactional id and the coordinator's view, and flagged where the data
//! proves something (see `kdp_client::diagnose::flags`).

use std::io::{self, Write};

use kdp_client::diagnose::flags::{flags, Context, Coordinator};
use kdp_client::txn::join::{Joined, DEFAULT_MAX_TRANSACTION_TIMEOUT_MS};
use kdp_client::DescribeOptions;
use serde::Serialize;

use crate::cmd::cluster::{self, Connected};
use crate::exit;
use crate::output::colour;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::Column;
use crate::output::{rfc3339, Output};

/// One producer on one partition, joined.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    topic: String,
    partition: i32,
    producer_id: i64,
    producer_epoch: i32,
    last_sequence: i32,
    last_timestamp: i64,
    last_timestamp_rfc3339: Option<String>,
    coordinator_epoch: i32,
    current_txn_start_offset: i64,
    transactional_id: Option<String>,
    transaction_state: Option<String>,
    transaction_timeout_ms: Option<i32>,
    coordinator_producer_epoch: Option<i16>,
    flags: Vec<&'static str>,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for Row {
    fn cells(&self) -> Vec<String> {
        vec![
            self.topic.clone(),
            self.partition.to_string(),
            self.producer_id.to_string(),
            self.producer_epoch.to_string(),
            self.last_sequence.to_string(),
            records::when(self.last_timestamp, self.now_ms),
            self.coordinator_epoch.to_string(),
            if self.current_txn_start_offset >= 0 {
                self.current_txn_start_offset.to_string()
            } else {
                "None".into()
            },
            or_dash(self.transactional_id.as_deref()),
            or_dash(self.transaction_state.as_deref()),
            or_dash(self.transaction_timeout_ms),
            or_dash(self.coordinator_producer_epoch),
            if self.flags.is_empty() {
                "-".into()
            } else {
                self.flags.join(",")
            },
        ]
    }
}

/// The table's columns, the least important left out first on a narrow screen.
const HEADER: &[Column] = &[
    Column::new("Topic", 0),
    Column::new("Partition", 0),
    Column::new("ProducerId", 0),
    Column::new("Epoch", 3),
    Column::new("LastSequence", 6),
    Column::new("LastTimestamp", 5),
    Column::new("CoordinatorEpoch", 7),
    Column::new("TxnStartOffset", 4),
    Column::text("TransactionalId", 1),
    Column::new("TxnState", 2),
    Column::new("TxnTimeoutMs", 8),
    Column::new("CoordinatorProducerEpoch", 9),
    Column::text("Flags", 0).styled(colour::flags),
];

/// The joined rows.
pub fn rows(joined: &Joined) -> Vec<Row> {
    let cx = Context {
        now_ms: joined.now_ms,
        protocol: joined.protocol,
        max_transaction_timeout_ms: joined
            .cluster_max_timeout_ms
            .unwrap_or(DEFAULT_MAX_TRANSACTION_TIMEOUT_MS),
        producer_id_expiration_ms: joined.producer_id_expiration_ms,
    };
    let mut rows: Vec<Row> = joined
        .producers()
        .map(|(topic, partition, p)| {
            let id = joined.view.listed.get(&p.producer_id);
            let coordinator = joined.coordinator(p);
            let t = match &coordinator {
                Coordinator::Known(t) => Some(*t),
                _ => None,
            };
            Row {
                topic: topic.to_string(),
                partition,
                producer_id: p.producer_id,
                producer_epoch: p.producer_epoch,
                last_sequence: p.last_sequence,
                last_timestamp: p.last_timestamp,
                last_timestamp_rfc3339: rfc3339(p.last_timestamp),
                coordinator_epoch: p.coordinator_epoch,
                current_txn_start_offset: p.current_txn_start_offset,
                transactional_id: id.cloned(),
                transaction_state: t.map(|t| t.transaction_state.clone()),
                transaction_timeout_ms: t.map(|t| t.transaction_timeout_ms),
                coordinator_producer_epoch: t.map(|t| t.producer_epoch),
                flags: flags(p, topic, partition, &coordinator, &cx)
                    .into_iter()
                    .map(|f| f.as_str())
                    .collect(),
                now_ms: joined.now_ms,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (&a.topic, a.partition, a.producer_id).cmp(&(&b.topic, b.partition, b.producer_id))
    });
    rows
}

/// Runs the joined describe on a connected client.
pub async fn run_to(
    conn: &Connected,
    opts: DescribeOptions,
    output: Output,
    out: &mut dyn Write,
) -> i32 {
    let joined = match cluster::join(conn, opts, false).await {
        Ok(j) => j,
        Err(code) => return code,
    };
    let rows = rows(&joined);
    let failed = cluster::report_failed_partitions(&joined);
    if output == Output::Table {
        eprintln!(
            "kdp: transaction protocol {} ({}); flags: {}",
            joined.protocol.as_str(),
            match joined.protocol {
                kdp_client::diagnose::TxnProtocol::V1 => "epochs change only when an instance starts",
                kdp_client::diagnose::TxnProtocol::V2 => "every transaction end bumps the epoch",
            },
            match joined.protocol {
                kdp_client::diagnose::TxnProtocol::V1 => "fenced, open-too-long, orphan, idle",
                kdp_client::diagnose::TxnProtocol::V2 =>
                    "open-too-long, orphan, idle (fenced cannot be told from a healthy epoch bump under v2)",
            }
        );
    }
    if let Err(e) = records::write(out, output, "Producers", HEADER, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("kdp: cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    if failed == 0 {
        exit::OK
    } else {
        exit::PARTIAL
    }
}
