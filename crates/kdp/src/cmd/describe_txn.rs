//! `kdp describe --with-transactions`: each producer joined with its
//! transactional id and the coordinator's view, and flagged where the data
//! proves something (see `kdp_client::diagnose::flags`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use kdp_client::diagnose::blocked::HeldGroups;
use kdp_client::diagnose::flags::{flags, Context, Coordinator};
use kdp_client::txn::join::{Joined, DEFAULT_MAX_TRANSACTION_TIMEOUT_MS};
use kdp_client::DescribeOptions;
use kdp_wire::messages::ProducerState;

use crate::cmd::blocked;
use crate::cmd::cluster::{self, Connected};
use crate::exit;
use crate::output::colour;
use crate::output::producers::{self, TxnFields};
use crate::output::records::{self, or_dash};
use crate::output::table::{self, Column};
use crate::output::{Output, BUFFER};

/// One producer on one partition, joined.
#[derive(Debug)]
pub struct Row {
    topic: String,
    partition: i32,
    producer: ProducerState,
    txn: TxnFields,
    now_ms: i64,
}

impl Row {
    /// The table's cells, in the order of [`HEADER`].
    fn cells(&self) -> Vec<String> {
        let p = &self.producer;
        vec![
            self.topic.clone(),
            self.partition.to_string(),
            p.producer_id.to_string(),
            p.producer_epoch.to_string(),
            p.last_sequence.to_string(),
            records::when(p.last_timestamp, self.now_ms),
            p.coordinator_epoch.to_string(),
            or_dash(Some(p.current_txn_start_offset).filter(|&o| o >= 0)),
            or_dash(self.txn.transactional_id.as_deref()),
            or_dash(self.txn.transaction_state.as_deref()),
            or_dash(self.txn.transaction_timeout_ms),
            or_dash(self.txn.coordinator_producer_epoch),
            or_dash(self.txn.blocked_groups.as_ref().map(Vec::len)),
            if self.txn.flags.is_empty() {
                "-".into()
            } else {
                self.txn.flags.join(",")
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
    Column::new("BlockedGroups", 3),
    Column::text("Flags", 0).styled(colour::flags),
];

/// The joined rows; `held` gives each open transaction's blocked groups.
pub fn rows(joined: &Joined, held: &HeldGroups) -> Vec<Row> {
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
                producer: p.clone(),
                txn: TxnFields {
                    transactional_id: id.cloned(),
                    transaction_state: t.map(|t| t.transaction_state.clone()),
                    transaction_timeout_ms: t.map(|t| t.transaction_timeout_ms),
                    coordinator_producer_epoch: t.map(|t| t.producer_epoch),
                    flags: flags(p, topic, partition, &coordinator, &cx)
                        .into_iter()
                        .map(|f| f.as_str())
                        .collect(),
                    blocked_groups: held
                        .of(topic, partition, p.producer_id)
                        .map(<[String]>::to_vec),
                },
                now_ms: joined.now_ms,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (&a.topic, a.partition, a.producer.producer_id).cmp(&(
            &b.topic,
            b.partition,
            b.producer.producer_id,
        ))
    });
    rows
}

/// Writes the rows: a table of them, or `describe`'s own JSON and JSON
/// lines with the transaction fields added to each producer.
fn write(out: &mut dyn Write, output: Output, joined: &Joined, rows: &[Row]) -> io::Result<()> {
    let added: BTreeMap<(&str, i32, i64), &TxnFields> = rows
        .iter()
        .map(|r| {
            (
                (r.topic.as_str(), r.partition, r.producer.producer_id),
                &r.txn,
            )
        })
        .collect();
    let lookup = |topic: &str, partition: i32, id: i64| added.get(&(topic, partition, id)).copied();
    match output {
        Output::Table | Output::Wide => {
            let mut buf = io::BufWriter::with_capacity(BUFFER, out);
            table::write(&mut buf, HEADER, &mut |sink| {
                for r in rows {
                    sink(&r.cells());
                }
            })?;
            buf.flush()
        }
        Output::Json => producers::write_json_with(
            out,
            &joined.partitions,
            joined.summary.max_throttle_time_ms,
            &lookup,
        ),
        Output::Jsonl => {
            let mut buf = io::BufWriter::with_capacity(BUFFER, out);
            for o in &joined.partitions {
                producers::push_jsonl(&mut buf, o, false, &lookup)?;
            }
            buf.flush()
        }
    }
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
    let max_timeout_ms = joined
        .cluster_max_timeout_ms
        .unwrap_or(DEFAULT_MAX_TRANSACTION_TIMEOUT_MS);
    let held = blocked::held_groups_of(conn, &joined, max_timeout_ms).await;
    let rows = rows(&joined, &held);
    let failed = cluster::report_failed_partitions(&joined);
    if output == Output::Table {
        fail!(
            "transaction protocol {} ({}); flags: {}",
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
    if let Err(e) = write(out, output, &joined, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    if failed == 0 {
        exit::OK
    } else {
        exit::PARTIAL
    }
}
