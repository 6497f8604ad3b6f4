//! `kdp owners`: which application, instance and task writes each
//! transactional id, and whether it is still there. kdp-workflows reads
//! (`owners`), kdp-domain judges ([`kdp_domain::owners`]); this file
//! connects, renders and picks the exit status.

use std::io::{self, BufWriter, Write};

use kdp_domain::diagnose::blocked::{command, HeldGap};
use kdp_domain::groups::Visibility;
use kdp_domain::owners::{Advice, Application, Framework, Owner, Owners, Verdict};
use kdp_domain::repair::Action;
use kdp_domain::severity::Severity;
use kdp_workflows::clock::now_ms;
use kdp_workflows::owners::{read_owners_and_groups, HeldRead, OwnersRead, Scope};
use serde::Serialize;

use crate::cmd::blocked::shell_word;
use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::repair;
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::colour::Style;
use crate::output::records::{or_dash, Record};
use crate::output::table::{self, Cell, Column};
use crate::output::{age, Output, Rfc3339, BUFFER};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Each transactional id attributed to the framework that made it, by the scheme the framework
builds its ids with, and confirmed by evidence (docs/OWNERS.md):
  kafka-streams     <application.id>-<process UUID>-<thread>: the application's group lists its
                    live instances (the process id in each member's subscription, or each
                    member's ProcessId in StreamsGroupDescribe for a KIP-1071 streams group)
  kafka-connect     <group.id>-<connector>-<task> of a Connect group (protocol type connect): the
                    worker whose assignment holds the task; connect-cluster-<group.id> is its leader
  flink-kafka-sink  <prefix>-<subtask>-<checkpoint>, only with sibling ids of the same prefix and
                    subtask (Flink has no group)
Verdicts:
  live          its instance is a member of the group (Flink: one of its subtask's two newest
                transactions)
  orphaned      the group was read, is settled (Stable or Empty), and no member owns it: its
                instance is gone; an open transaction blocks read_committed consumers until its
                coordinator aborts it at start + timeout
  lingering     Flink: a sibling started after it committed while it is still open: its job
                moved on (a restart that did not probe it)
  unknown       the scheme matched but the evidence could not be read: the group could not be
                read (a KIP-1071 streams group on a broker without StreamsGroupDescribe), is
                hidden by ACLs, is not listed, is rebalancing, or a member's bytes are unreadable;
                Flink: two jobs write its prefix and subtask
  unattributed  no known scheme, or a shape without the evidence (a lone Flink-shaped id, a
                prefix with a counter such as Spring's): never a framework picked by shape
GroupsBlocked: the consumer groups committed at the LSO an open transaction holds on any of its
partitions, as `kdp blocked` judges them (blocked or waiting behind it), read over the partitions
the open transactions pin; `none` when it holds none, `-` when kdp could not tell (said on stderr).
Action: the force-terminate command for an orphaned or lingering open transaction; never for a
live one. For Flink's newest transactions it says what an abort discards (the one pre-committed
in the last checkpoint holds data Flink checkpointed and will try to commit).

The summary after the ids: per application its live instances, ids, open transactions, orphaned
and lingering ones, ids started per hour over the span of their start times (Flink makes one per
checkpoint and subtask; Streams instances restarting without their state show as churn), the
groups its open transactions hold back, and TwoJobs: Flink subtasks two jobs write on one prefix
(in start order their ids switch between two increasing checkpoint sequences, again and again; a
restart never does). Their ids are unknown: which transactions are whose cannot be told.

Whole cluster by default; --transactional-id, --group and --prefix narrow it (a Flink id's siblings
are read too). Exit status: 0 every open transaction's owner is decided and none is orphaned or
lingering, 4 an open transaction is orphaned or lingering or two Flink jobs write one prefix, 1 an
answer is missing (an open transaction's verdict is unknown, a broker did not list its
transactions, an id was not described), 2 bad usage, 3 the cluster could not be reached.

Examples:
  kdp owners --bootstrap-server localhost:9092
  kdp owners --bootstrap-server localhost:9092 --group orders-app --output json
  kdp owners --bootstrap-server localhost:9092 --prefix ingest-sink-")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Only this transactional id; repeat for several.
    #[arg(long, value_name = "ID")]
    pub transactional_id: Vec<String>,
    /// Only the ids of this group's application (Streams application id, Connect group id);
    /// repeat for several.
    #[arg(long, value_name = "GROUP")]
    pub group: Vec<String>,
    /// Only ids starting with this; repeat for several.
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Vec<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// One transactional id.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    kind: &'static str,
    transactional_id: String,
    framework: Option<&'static str>,
    application: Option<String>,
    instance: Option<String>,
    task: Option<String>,
    state: Option<String>,
    producer_id: Option<i64>,
    producer_epoch: Option<i16>,
    transaction_start_rfc3339: Option<Rfc3339>,
    transaction_start_ms: Option<i64>,
    transaction_age_ms: Option<i64>,
    transaction_timeout_ms: Option<i32>,
    /// The partitions an open transaction pins, `topic-partition`.
    pinned_partitions: Vec<String>,
    /// The consumer groups at the LSO its open transaction holds (`kdp
    /// blocked`'s verdicts blocked and waiting); null when kdp could not
    /// tell.
    groups_blocked: Option<Vec<String>>,
    verdict: &'static str,
    #[serde(skip)]
    severity: Severity,
    evidence: String,
    /// Kafka's error name when the coordinator did not describe it.
    error: Option<&'static str>,
    /// The command that ends it, or what kdp advises instead.
    action: Option<String>,
    /// Flink: one of its subtask's newest transactions.
    newest_checkpoint: bool,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        let pinned = if self.pinned_partitions.is_empty() {
            "-".to_string()
        } else {
            self.pinned_partitions.join(",")
        };
        let mut cells = table::plain(vec![
            self.transactional_id.clone(),
            or_dash(self.framework),
            or_dash(self.application.as_deref()),
            or_dash(self.instance.as_deref()),
            or_dash(self.task.as_deref()),
            or_dash(self.state.as_deref()),
            self.transaction_start_ms
                .filter(|_| self.transaction_age_ms.is_some())
                .map_or_else(|| "-".into(), |s| age(s, self.now_ms)),
            pinned,
            groups_cell(self.groups_blocked.as_deref()),
        ]);
        cells.push(Cell::new(self.verdict, Style::from(self.severity)));
        cells.push(self.evidence.clone().into());
        cells.push(or_dash(self.action.as_deref()).into());
        cells
    }
}

const HEADER: &[Column] = &[
    Column::text("TransactionalId", 0),
    Column::new("Framework", 2),
    Column::text("Application", 1),
    Column::text("Instance", 3),
    Column::new("Task", 2),
    Column::new("State", 1),
    Column::new("TxnAge", 1),
    Column::text("Pinned", 2),
    Column::text("GroupsBlocked", 1),
    Column::text("Verdict", 0),
    Column::text("Evidence", 4),
    Column::text("Action", 1),
];

/// One application's summary.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AppRow {
    kind: &'static str,
    framework: &'static str,
    application: String,
    /// Null when its group could not be read.
    live_instances: Option<usize>,
    ids: usize,
    open_transactions: usize,
    orphaned: usize,
    lingering: usize,
    unknown: usize,
    ids_per_hour: Option<f64>,
    oldest_stuck_ms: Option<i64>,
    /// The consumer groups its open transactions hold back; null when kdp
    /// could not tell.
    groups_blocked: Option<Vec<String>>,
    /// Flink: each subtask two jobs write, with the evidence.
    collisions: Vec<CollisionRow>,
    #[serde(skip)]
    flink: bool,
}

/// Two Flink jobs on one subtask of a prefix.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CollisionRow {
    subtask: u32,
    /// The two sequences of ids, the higher counters first.
    sequences: Vec<SequenceRow>,
    /// How often, in start order, the ids switch from one to the other.
    switches: usize,
    evidence: String,
}

/// One job's increasing run of ids.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SequenceRow {
    first: String,
    last: String,
    ids: usize,
    topics: Vec<String>,
}

/// A groups-blocked cell: the group ids, `none`, or `-` when unknown.
fn groups_cell(groups: Option<&[String]>) -> String {
    match groups {
        None => "-".into(),
        Some([]) => "none".into(),
        Some(g) => g.join(","),
    }
}

impl Record for AppRow {
    fn cells(&self) -> Vec<Cell> {
        table::plain(vec![
            self.framework.to_string(),
            self.application.clone(),
            or_dash(self.live_instances),
            self.ids.to_string(),
            self.open_transactions.to_string(),
            self.orphaned.to_string(),
            self.lingering.to_string(),
            self.unknown.to_string(),
            or_dash(self.ids_per_hour.map(|c| format!("{c:.1}"))),
            or_dash(self.oldest_stuck_ms.map(|ms| {
                humantime::format_duration(std::time::Duration::from_secs(
                    (ms.max(0) / 1000) as u64,
                ))
                .to_string()
            })),
            groups_cell(self.groups_blocked.as_deref()),
            if self.flink {
                self.collisions.len().to_string()
            } else {
                "-".into()
            },
        ])
    }
}

const APP_HEADER: &[Column] = &[
    Column::new("Framework", 0),
    Column::text("Application", 0),
    Column::new("LiveInstances", 0),
    Column::new("Ids", 0),
    Column::new("Open", 0),
    Column::new("Orphaned", 0),
    Column::new("Lingering", 0),
    Column::new("Unknown", 1),
    Column::new("IdsPerHour", 2),
    Column::new("OldestStuck", 1),
    Column::text("GroupsBlocked", 1),
    Column::new("TwoJobs", 1),
];

/// What kdp advises for an id, as a cell: the command that ends it, or why
/// none.
pub fn action(o: &Owner, connection: &[String]) -> Option<String> {
    match o.advice() {
        Advice::ForceTerminate => command(
            &Action::ForceTerminate {
                transactional_id: o.transactional_id.clone(),
            },
            connection,
        )
        .map(|args| {
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" ")
        }),
        Advice::NewestCheckpoint => Some(
            "none: Flink's newest checkpoint (an abort discards data Flink checkpointed)".into(),
        ),
        Advice::LeaveToWriter => Some("none: its writer is live".into()),
        Advice::Nothing | Advice::Undecided => None,
    }
}

/// The row of one judged id.
pub fn row(o: &Owner, now_ms: i64, connection: &[String]) -> Row {
    let a = o.attribution.as_ref();
    let t = o.txn.as_ref().ok();
    Row {
        kind: "owner",
        transactional_id: o.transactional_id.clone(),
        framework: a.map(|a| a.framework.label()),
        application: a.map(|a| a.application.clone()),
        instance: a.and_then(|a| a.instance.clone()),
        task: a.map(|a| a.task.to_string()),
        state: t.map(|t| t.state_name.clone()),
        producer_id: t.map(|t| t.producer_id),
        producer_epoch: t.map(|t| t.producer_epoch),
        transaction_start_rfc3339: t.and_then(|t| t.start_ms).and_then(Rfc3339::at),
        transaction_start_ms: t.and_then(|t| t.start_ms),
        transaction_age_ms: o.open_age_ms(now_ms),
        transaction_timeout_ms: t.map(|t| t.timeout_ms),
        pinned_partitions: t
            .filter(|t| t.is_open())
            .map(|t| {
                t.partitions
                    .iter()
                    .map(|(t, p)| format!("{t}-{p}"))
                    .collect()
            })
            .unwrap_or_default(),
        groups_blocked: o.groups_blocked.clone(),
        verdict: o.verdict.label(),
        severity: o.verdict.severity(),
        evidence: o.evidence.to_string(),
        error: o.txn.as_ref().err().map(|e| e.name()),
        action: action(o, connection),
        newest_checkpoint: o.newest_checkpoint,
        now_ms,
    }
}

fn app_row(a: &Application) -> AppRow {
    AppRow {
        kind: "application",
        framework: a.framework.label(),
        application: a.application.clone(),
        live_instances: a.live_instances,
        ids: a.ids,
        open_transactions: a.open,
        orphaned: a.orphaned,
        lingering: a.lingering,
        unknown: a.unknown,
        ids_per_hour: a.churn_per_hour,
        oldest_stuck_ms: a.oldest_stuck_ms,
        groups_blocked: a.groups_blocked.clone(),
        collisions: a
            .collisions
            .iter()
            .map(|(subtask, c)| CollisionRow {
                subtask: *subtask,
                sequences: c
                    .sequences
                    .iter()
                    .map(|q| SequenceRow {
                        first: q.first.clone(),
                        last: q.last.clone(),
                        ids: q.ids,
                        topics: q.topics.iter().cloned().collect(),
                    })
                    .collect(),
                switches: c.switches,
                evidence: c.to_string(),
            })
            .collect(),
        flink: a.framework == Framework::FlinkKafkaSink,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document<'a> {
    owners: &'a [Row],
    applications: &'a [AppRow],
}

fn write(out: &mut dyn Write, format: Output, rows: &[Row], apps: &[AppRow]) -> io::Result<()> {
    let mut buf = BufWriter::with_capacity(BUFFER, out);
    match format {
        Output::Table | Output::Wide => {
            table::write(&mut buf, HEADER, &mut |sink| {
                for r in rows {
                    sink(&r.cells());
                }
            })?;
            if !apps.is_empty() {
                buf.write_all(b"\n")?;
                table::write(&mut buf, APP_HEADER, &mut |sink| {
                    for r in apps {
                        sink(&r.cells());
                    }
                })?;
            }
        }
        Output::Json => {
            let doc = Document {
                owners: rows,
                applications: apps,
            };
            serde_json::to_writer_pretty(&mut buf, &doc)?;
            buf.write_all(b"\n")?;
        }
        Output::Jsonl => {
            for r in rows {
                serde_json::to_writer(&mut buf, r)?;
                buf.write_all(b"\n")?;
            }
            for a in apps {
                serde_json::to_writer(&mut buf, a)?;
                buf.write_all(b"\n")?;
            }
        }
    }
    buf.flush()
}

/// `kdp owners`.
pub fn run(args: Args) -> i32 {
    let every = args.watch.watch;
    watch::run(every, "kdp owners", async |out| {
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

/// What was not read, said on stderr; the exit status of a judged read.
pub fn report(read: &OwnersRead) {
    for (broker, e) in &read.listing_failures {
        eprintln!(
            "kdp: broker {broker} did not list its transactions: {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        );
    }
    for (broker, e) in &read.input.group_listing_failures {
        eprintln!(
            "kdp: broker {broker} did not list its groups: {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        );
    }
    match &read.input.visibility {
        Visibility::Limited => eprintln!(
            "kdp: the group listing may leave out groups this principal may not DESCRIBE: \
             ids of their applications are unknown, not orphaned"
        ),
        Visibility::Unknown(e) => eprintln!(
            "kdp: whether the group listing leaves out groups is unknown ({})",
            e.name()
        ),
        Visibility::Named | Visibility::Any => {}
    }
    for a in &read.judged.applications {
        for (subtask, c) in &a.collisions {
            eprintln!(
                "kdp: two Flink jobs write prefix {} (subtask {subtask}): {c}; \
                 give each job its own transactional-id prefix",
                a.application
            );
        }
    }
    let unknown = read
        .judged
        .owners
        .iter()
        .filter(|o| o.is_open() && o.groups_blocked.is_none())
        .count();
    if unknown > 0 {
        let why = match &read.held {
            None => "the groups were not read".to_string(),
            Some(HeldRead::JoinFailed(e)) => format!("the pinned partitions were not read: {e}"),
            Some(HeldRead::Read(Err(e))) => format!("the groups could not be read: {e}"),
            Some(HeldRead::Read(Ok(r))) => match HeldGap::of(Some(r)) {
                HeldGap::NotRead => "the groups could not be read".to_string(),
                HeldGap::ListingFailed { brokers } => {
                    format!("{brokers} broker(s) did not list their groups")
                }
                HeldGap::MayHide => "ACLs may hide groups from the listing".into(),
                HeldGap::OffsetsNotRead => {
                    "some groups' or partitions' offsets were not read".into()
                }
            },
        };
        eprintln!("kdp: GroupsBlocked unknown ('-') for {unknown} open transaction(s): {why}");
    }
}

/// The exit status of a judgement: 4 an open transaction is orphaned or
/// lingering, or two Flink jobs write one prefix; 1 an answer is missing;
/// 0 decided and clear.
pub fn status(judged: &Owners) -> i32 {
    let stuck = judged
        .owners
        .iter()
        .any(|o| o.is_open() && matches!(o.verdict, Verdict::Orphaned | Verdict::Lingering));
    let collided = judged.applications.iter().any(|a| !a.collisions.is_empty());
    if stuck || collided {
        exit::FOUND
    } else if !judged.decided() {
        exit::PARTIAL
    } else {
        exit::OK
    }
}

/// The command on a connected client (the in-process tests' entry).
pub async fn run_on(conn: &Connected, args: &Args, out: &mut dyn Write) -> i32 {
    let scope = Scope {
        transactional_ids: args.transactional_id.clone(),
        groups: args.group.clone(),
        prefixes: args.prefix.clone(),
    };
    let dopts = conn.describe_options(None, None).driver_options();
    let now = now_ms();
    let read = match read_owners_and_groups(&conn.client, &scope, now, &dopts, &conn.bound).await {
        Ok(r) => r,
        Err(e) => return exit::report(&e),
    };
    report(&read);
    let connection = repair::connection_flags(&args.cluster);
    let rows: Vec<Row> = read
        .judged
        .owners
        .iter()
        .map(|o| row(o, now, &connection))
        .collect();
    let apps: Vec<AppRow> = read.judged.applications.iter().map(app_row).collect();
    if let Err(e) = write(out, args.output, &rows, &apps) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("kdp: cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    let code = status(&read.judged);
    if code == exit::PARTIAL {
        let unknown = read
            .judged
            .owners
            .iter()
            .filter(|o| o.is_open() && o.verdict == Verdict::Unknown)
            .count();
        let undescribed = read.judged.owners.iter().filter(|o| o.txn.is_err()).count();
        eprintln!(
            "kdp: the answer is not decided: {unknown} open transaction(s) of unknown owner, \
             {undescribed} id(s) not described, {} broker(s) that did not list transactions",
            read.listing_failures.len()
        );
    } else if rows.is_empty() && args.output == Output::Table {
        eprintln!("kdp: no transactional id in scope");
    }
    code
}
