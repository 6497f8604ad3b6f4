//! `--audit-log FILE`: one JSON line per action a repair sent (abort or
//! force-terminate), appended: when, against which cluster, as whom, the
//! plan step, its result, and its partitions before and after. Built only
//! from typed fields (ids, offsets, names): no configuration value reaches
//! it, so no secret can. Shape: docs/schemas/audit-log.schema.json.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use kdp_domain::repair::{
    Action, Done, Outcome, PartitionProof, PartitionState, Proof, Report, Snapshot,
};
use kdp_workflows::clock::now_ms;
use serde::Serialize;

use crate::output::Rfc3339;

/// Opens `path` to append, creating it readable by its owner only.
pub fn open(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct State {
    high_watermark: Option<i64>,
    last_stable_offset: Option<i64>,
    /// Producers with an open transaction, null when not read.
    open_producer_ids: Option<Vec<i64>>,
}

impl State {
    fn of(s: Option<&PartitionState>) -> State {
        let offsets = s.and_then(|s| s.offsets.as_ref().ok());
        State {
            high_watermark: offsets.map(|o| o.high_watermark),
            last_stable_offset: offsets.map(|o| o.last_stable_offset),
            open_producer_ids: s
                .and_then(|s| s.open.as_ref().ok())
                .map(|o| o.iter().map(|(p, _)| *p).collect()),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Partition {
    topic: String,
    partition: i32,
    start_offset: i64,
    before: State,
    /// Null when the step was not done (nothing was read again).
    after: Option<State>,
    lso_change: Option<&'static str>,
    records_released: Option<i64>,
    transaction_gone: Option<bool>,
    groups_can_advance: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Line<'a> {
    /// Never null in practice: the clock is past 1970.
    time: Option<Rfc3339>,
    time_ms: i64,
    command: &'a str,
    cluster_id: Option<&'a str>,
    principal: Option<&'a str>,
    step: usize,
    action: &'static str,
    transactional_id: Option<&'a str>,
    producer_id: i64,
    producer_epoch: i32,
    result: &'static str,
    detail: String,
    partitions: Vec<Partition>,
}

/// Who ran it and where.
pub struct Context<'a> {
    /// `abort`, `force-terminate`, `find-hanging --repair`.
    pub command: &'a str,
    /// The cluster id Metadata gave.
    pub cluster_id: Option<&'a str>,
    /// The SASL user, when the config names one.
    pub principal: Option<&'a str>,
}

/// Appends one line per sending step of `report`.
pub fn write(
    to: &mut dyn Write,
    ctx: &Context<'_>,
    before: &Snapshot,
    report: &Report,
    proof: &Proof,
) -> io::Result<()> {
    let time_ms = now_ms();
    let time = Rfc3339::at(time_ms);
    // the proof of each partition by key: a search per step's partition
    // would be quadratic in a repair of many partitions
    let proved: HashMap<(&str, i32), &PartitionProof> = proof
        .partitions
        .iter()
        .map(|q| ((q.topic.as_str(), q.partition), q))
        .collect();
    for o in &report.outcomes {
        let s = &o.step;
        let (action, transactional_id) = match &s.action {
            Action::Abort(_) => ("abort", s.seen.transactional_id()),
            Action::ForceTerminate { transactional_id } => {
                ("force-terminate", Some(transactional_id.as_str()))
            }
            Action::Skip(_) | Action::Manual(_) => continue,
        };
        let (result, detail) = match &o.outcome {
            Outcome::Done(Done::Aborted) => ("done", "aborted".to_string()),
            Outcome::Done(Done::Terminated(t)) => (
                "done",
                format!(
                    "terminated; producer {} now at epoch {}",
                    t.producer_id, t.producer_epoch
                ),
            ),
            Outcome::Refused(c) => ("not sent", c.to_string()),
            Outcome::Failed(f) => ("failed", f.to_string()),
            Outcome::Skipped => ("skipped", String::new()),
        };
        let partitions = s
            .seen
            .partitions
            .iter()
            .map(|p| {
                let key = p.key();
                let proved = proved.get(&(p.topic.as_str(), p.partition)).copied();
                Partition {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    start_offset: p.start_offset,
                    before: State::of(before.partitions.get(&key)),
                    after: proved.map(|q| State::of(Some(&q.after))),
                    lso_change: proved.map(|q| q.change.label()),
                    records_released: proved.and_then(|q| q.released()),
                    transaction_gone: proved.and_then(|q| q.transaction_gone),
                    groups_can_advance: proved
                        .map(|q| q.groups_can_advance.clone())
                        .unwrap_or_default(),
                }
            })
            .collect();
        let line = Line {
            time,
            time_ms,
            command: ctx.command,
            cluster_id: ctx.cluster_id,
            principal: ctx.principal,
            step: s.number,
            action,
            transactional_id,
            producer_id: s.seen.producer_id,
            producer_epoch: s.seen.producer_epoch,
            result,
            detail,
            partitions,
        };
        let text = serde_json::to_string(&line).map_err(io::Error::other)?;
        writeln!(to, "{text}")?;
    }
    to.flush()
}
