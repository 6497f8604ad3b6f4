//! `kdp describe --with-transactions`: each producer joined with its
//! transactional id and the coordinator's view, and flagged where the data
//! proves something (see `kdp_domain::diagnose::flags`). `fenced` comes from
//! one verdict (`kdp_domain::diagnose::fence`): the transaction log of each
//! producer's transactional id, read here, on both protocol generations, or
//! the epochs under protocol v1.

use std::collections::BTreeMap;
use std::io::{self, Write};

use kdp_client::DescribeOptions;
use kdp_domain::diagnose::blocked::HeldGroups;
use kdp_domain::diagnose::fence::{FenceProof, FenceSource, FenceUnknown, FenceVerdict};
use kdp_domain::diagnose::flags::{flags, Coordinator};
use kdp_domain::history::IdHistory;
use kdp_domain::joined::Joined;
use kdp_domain::protocol::TxnProtocol;
use kdp_wire::messages::ProducerState;
use kdp_workflows::describe::{around, Around};
use kdp_workflows::history::ReadOptions;
use kdp_workflows::join::{join_keeping, JoinOptions, Keep};
use kdp_workflows::prior::Prior;

use crate::cmd::blocked;
use crate::cmd::cluster::{self, Connected};
use crate::cmd::owner_of;
use crate::exit;
use crate::output::colour::Style;
use crate::output::producers::{self, FencedJson, TxnFields};
use crate::output::records::{self, or_dash};
use crate::output::table::{self, plain, Cell, Column};
use crate::output::{Output, Rfc3339, BUFFER};

/// One producer on one partition, joined.
#[derive(Debug)]
pub struct Row {
    topic: String,
    partition: i32,
    producer: ProducerState,
    txn: TxnFields,
    fence: Option<FenceVerdict>,
    owner_cell: Cell,
    now_ms: i64,
}

impl Row {
    /// The table's cells, in the order of [`HEADER`].
    fn cells(&self) -> Vec<Cell> {
        let p = &self.producer;
        let flags = &self.txn.flags;
        let mut cells = plain(vec![
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
        ]);
        let text = if flags.is_empty() {
            "-".into()
        } else {
            let labels: Vec<&str> = flags.iter().map(|f| f.label()).collect();
            labels.join(",")
        };
        // the gravest flag colours the cell
        let style = flags.iter().map(|f| f.severity()).max();
        cells.push(Cell::new(text, style.map_or(Style::Plain, Style::from)));
        cells.push(
            match &self.txn.fenced {
                Some(f) => f.source.unwrap_or(f.verdict).to_string(),
                None => "-".into(),
            }
            .into(),
        );
        cells.push(self.owner_cell.clone());
        cells
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
    Column::text("Flags", 0),
    Column::new("FencedFrom", 10),
    Column::text("Owner", 11),
];

/// What a fence verdict shows in JSON.
fn fenced_json(v: &FenceVerdict) -> FencedJson {
    FencedJson {
        verdict: v.label(),
        source: v.source().map(FenceSource::label),
        detail: detail(v),
    }
}

/// The evidence of a fence, or why it is unknown.
pub fn detail(v: &FenceVerdict) -> Option<String> {
    Some(match v {
        FenceVerdict::Fenced(FenceProof::Log {
            offset,
            timestamp,
            cause,
            to,
        }) => format!(
            "the transaction log shows {} at offset {offset} ({}): producer {} epoch {}",
            cause.label(),
            or_dash(Rfc3339::at(*timestamp)),
            to.producer_id,
            to.epoch
        ),
        FenceVerdict::Fenced(FenceProof::Epochs { coordinator_epoch }) => format!(
            "the partition's epoch is below the coordinator's ({coordinator_epoch}): under transaction \
             protocol v1 only a new instance or the coordinator bumps it"
        ),
        FenceVerdict::NotFenced { .. } => return None,
        FenceVerdict::Unknown(why) => match why {
            FenceUnknown::LogUnreadable(e) => format!("the transaction log could not be read: {e}"),
            FenceUnknown::NoTransactionalId => {
                "no transactional id is known for the producer (hidden by ACLs, or not listed)".into()
            }
            FenceUnknown::NotInLog => {
                "the transaction log read holds no record of this producer id at this epoch".into()
            }
            FenceUnknown::Gap { offset } => format!(
                "records of the id before offset {offset} were removed by compaction: an instance \
                 change may be among them"
            ),
            FenceUnknown::Unfinished { offset } => {
                format!("the transaction log was read only up to offset {offset} (--timeout)")
            }
            FenceUnknown::NotRead => "the transaction log was not read".into(),
        },
    })
}

/// The joined rows; `histories` are the transaction logs read, by id, and
/// `held` gives each open transaction's blocked groups.
pub fn rows(joined: &Joined, histories: &[IdHistory], held: &HeldGroups) -> Vec<Row> {
    let by_id: BTreeMap<&str, &IdHistory> = histories
        .iter()
        .map(|h| (h.transactional_id.as_str(), h))
        .collect();
    let cx = joined.flags_context();
    let mut rows: Vec<Row> = joined
        .producers()
        .map(|(topic, partition, p)| {
            let id = joined.view.listed.get(&p.producer_id);
            let coordinator = joined.coordinator(p);
            let t = match &coordinator {
                Coordinator::Known(t) => Some(*t),
                _ => None,
            };
            let fence = joined.fence_from_logs(p, &by_id);
            let not_fenced = FenceVerdict::NotFenced { from_log: false };
            Row {
                topic: topic.to_string(),
                partition,
                producer: p.clone(),
                txn: TxnFields {
                    transactional_id: id.cloned(),
                    transaction_state: t.map(|t| t.transaction_state.clone()),
                    transaction_timeout_ms: t.map(|t| t.transaction_timeout_ms),
                    coordinator_producer_epoch: t.map(|t| t.producer_epoch),
                    flags: flags(
                        p,
                        topic,
                        partition,
                        &coordinator,
                        &cx,
                        fence.as_ref().unwrap_or(&not_fenced),
                    ),
                    fenced: fence.as_ref().map(fenced_json),
                    blocked_groups: held
                        .of(topic, partition, p.producer_id)
                        .map(<[String]>::to_vec),
                    owner: None,
                },
                fence,
                owner_cell: "-".into(),
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
    // the Owner column takes the join's descriptions and the groups'
    // read (`prior`), asking them no more
    let jopts = JoinOptions::new(opts, false);
    let (joined, transactions) =
        match join_keeping(&conn.client, &jopts, Keep::Descriptions, &conn.bound).await {
            Ok((j, t)) => (Ok(j), t),
            Err(e) => (Err(e), None),
        };
    let joined = match cluster::reported(conn, joined) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let logs = ReadOptions {
        driver: conn.describe_options(None, None).driver_options(),
        since_ms: None,
        principal: conn.principal.clone(),
    };
    let groups = conn.describe_options(None, None).driver_options();
    // the logs and the groups do not wait for each other
    let (Around { histories, held }, groups) =
        around(&conn.client, &joined, &logs, &groups, &conn.bound).await;
    let held = blocked::report_held(held);
    let mut rows = rows(&joined, &histories, &held);
    let open_id = |r: &Row| {
        (r.producer.current_txn_start_offset >= 0)
            .then(|| r.txn.transactional_id.clone())
            .flatten()
    };
    let ids: std::collections::BTreeSet<String> = rows.iter().filter_map(open_id).collect();
    let prior = Prior {
        transactions,
        groups,
    };
    let owners = owner_of::owners_after(conn, ids.into_iter().collect(), prior).await;
    for r in &mut rows {
        let o = open_id(r).and_then(|id| owners.get(&id));
        r.txn.owner = owner_of::field(o);
        r.owner_cell = owner_of::cell(o);
    }
    let failed = cluster::report_failed_partitions(&joined);
    // a verdict the log could not give is not "checked": never exit 0 on it
    let unchecked: Vec<&Row> = rows
        .iter()
        .filter(|r| r.fence.as_ref().is_some_and(FenceVerdict::is_unchecked))
        .collect();
    if output == Output::Table {
        fail!(
            "transaction protocol {} ({}); flags: fenced (from the transaction log: an instance change \
             after the writes{}), open-too-long, orphan, idle",
            joined.protocol.label(),
            match joined.protocol {
                TxnProtocol::V1 => "epochs change only when an instance starts",
                TxnProtocol::V2 => "every transaction end bumps the epoch",
            },
            match joined.protocol {
                TxnProtocol::V1 => "; or an epoch below the coordinator's",
                TxnProtocol::V2 => "",
            }
        );
        for r in &rows {
            let Some(v) = &r.fence else { continue };
            if v.is_fenced() || matches!(v, FenceVerdict::Unknown(_)) {
                if let Some(d) = detail(v) {
                    eprintln!(
                        "note: {}-{} producer {}: {}: {d}",
                        r.topic,
                        r.partition,
                        r.producer.producer_id,
                        if v.is_fenced() {
                            "fenced"
                        } else {
                            "fenced unknown"
                        }
                    );
                }
            }
        }
    }
    if let Err(e) = write(out, output, &joined, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    if !unchecked.is_empty() {
        fail!(
            "fenced not checked for {} producer(s): see FencedFrom / Fenced.Detail",
            unchecked.len()
        );
    }
    if failed == 0 && unchecked.is_empty() {
        exit::OK
    } else {
        exit::PARTIAL
    }
}
