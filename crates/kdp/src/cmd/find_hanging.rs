//! `kdp find-hanging`: open transactions that no coordinator will end, and
//! those stuck with their markers unwritten, across the whole cluster.

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use kdp_domain::diagnose::blocked::HeldGroups;
use kdp_domain::diagnose::hanging::{self, OpenTxn, Verdict};
use kdp_domain::diagnose::Findings;
use kdp_domain::joined::{max_timeout, Joined};
use kdp_domain::key_error::Failures;
use kdp_domain::repair::{findings_judged, plan_findings};
use kdp_domain::retained::Retain;
use kdp_workflows::groups::held_groups_judged;
use kdp_workflows::join::{join_keeping, JoinOptions, Keep};
use kdp_workflows::prior::Prior;
use serde::Serialize;

use crate::cmd::blocked;
use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::owner_of;
use crate::cmd::repair::{self, ConfirmArgs};
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::failures;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::{age, Output, Rfc3339};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
A transaction is a candidate when a producer has one open on a partition (CurrentTxnStartOffset
set) and has not written there for longer than the maximum transaction timeout. Kafka's rule
(kafka-transactions.sh find-hanging) then asks the coordinators: it hangs when no coordinator
lists a transactional id for the producer, the coordinator does not know the id, or the
partition is not in the coordinator's transaction. kdp gives the same verdicts, with the reason,
and two more (`kdp explain NAME` says more of each term):
  hanging   no coordinator will end it (Kafka's rule above): it pins the LSO until aborted.
  stuck     the coordinator is in PrepareCommit/PrepareAbort for longer than the timeout and the
            markers were never written (KAFKA-19999): Kafka's rule says 'not hanging' while the
            LSO stays pinned.
  unknown   the caller may not describe the transactional id (ListTransactions silently hides
            such ids; kdp probes with an unused id to learn whether it could see every id), a
            broker did not answer, or the producer's LastTimestamp is unknown (0 or -1: no age,
            so a transaction no coordinator knows may have just begun): never reported as
            hanging, which Kafka's tool would do. The exporter gives the same verdicts.
  ok        (with --all) the coordinator still tracks the transaction.
Each row shows the transactional id, the open transaction's age (TxnAge), the records it
blocks from read_committed consumers (BlockedRecords: high watermark minus LSO) and the consumer
groups whose committed offset is at the LSO it holds (BlockedGroups: how many in the table, their
names in JSON; '-'/null where the groups could not all be read; kdp blocked says more).

Without --topic and --broker-id the whole cluster is searched, internal topics included. The
timeout is the brokers' transaction.max.timeout.ms unless --max-transaction-timeout is given.

Exit status: 0 nothing hangs, 4 something hangs or is stuck, 1 errors or unknown verdicts,
2 bad usage, 3 the cluster could not be reached.

--repair plans one step for every hanging, stuck or unknown row, prints the plan (numbered),
asks once (--yes skips the question; without a terminal --yes is required; when stdout is not a
terminal the plan is also written to stderr right before the question), re-checks each step and
runs it; the results carry the plan's numbers:
  force-terminate  the transactional id is known and its Ongoing transaction holds the partition
                   (preferred: the coordinator aborts and fences the producer)
  abort            otherwise (a raw WriteTxnMarkers abort at the leader; needs ALTER or
                   CLUSTER_ACTION on the cluster)
  skip             a transaction stuck in PrepareCommit/PrepareAbort: its outcome is decided and
                   only the coordinator may write it (move the coordinator); never sent
  manual           a row with verdict unknown (an id hidden by ACLs, a broker that did not list):
                   kdp cannot tell whether a coordinator still tracks it, so it prints the
                   command to run by hand (kdp abort ... --start-offset O) and why; never sent
With --repair the exit status is 0 every step sent is done (or --dry-run, or nothing to repair),
1 some step failed or was not sent because the cluster changed, 4 none failed but skipped or
manual steps were left to an operator, 2 refused, 3 unreachable.
With --output json/csv the plan and results go to stderr.

Examples:
  kdp find-hanging --bootstrap-server localhost:9092
  kdp find-hanging --bootstrap-server localhost:9092 --topic orders --partition 3 --output json
  kdp find-hanging --bootstrap-server localhost:9092 --broker-id 2 --max-transaction-timeout 5m")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Topic to search; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Partition to search, for every --topic given; repeat or comma-separate.
    #[arg(long, value_name = "PARTITION", requires = "topic", value_delimiter = ',',
          value_parser = clap::value_parser!(i32).range(0..))]
    pub partition: Vec<i32>,
    /// Search the partitions with a replica on this broker, asking it.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(i32).range(0..))]
    pub broker_id: Option<i32>,
    /// Candidates are idle longer than this: a bare number is minutes, as in
    /// kafka-transactions.sh (15 = 15m), or a duration (90s, 0). Default: the
    /// cluster's transaction.max.timeout.ms.
    #[arg(long, value_name = "MINUTES|DURATION", value_parser = crate::duration::parse_kafka_minutes)]
    pub max_transaction_timeout: Option<Duration>,
    /// Also list candidates whose transaction the coordinator still tracks.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Repair what was found (see below), after a plan and a confirmation.
    #[arg(long, conflicts_with = "watch")]
    pub repair: bool,
    #[command(flatten)]
    pub confirm: ConfirmArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// One candidate and its verdict.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    topic: String,
    partition: i32,
    producer_id: i64,
    producer_epoch: i32,
    coordinator_epoch: i32,
    start_offset: i64,
    last_timestamp: i64,
    last_timestamp_rfc3339: Option<Rfc3339>,
    transactional_id: Option<String>,
    coordinator_state: Option<String>,
    transaction_start_time_ms: Option<i64>,
    transaction_age_ms: Option<i64>,
    blocked_records: Option<i64>,
    /// The consumer groups at the LSO this transaction holds (null: kdp
    /// could not read them all).
    blocked_groups: Option<Vec<String>>,
    verdict: &'static str,
    reason: String,
    kafka_says_hanging: bool,
    /// Who writes the transactional id (`kdp owners`); null without one,
    /// or when the owners could not be read.
    owner: Option<owner_of::OwnerField>,
    #[serde(skip)]
    owner_cell: Cell,
    /// The verdict itself, which the exit status is decided from.
    #[serde(skip)]
    judged: Verdict,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        let mut cells = plain(vec![
            self.topic.clone(),
            self.partition.to_string(),
            self.producer_id.to_string(),
            self.producer_epoch.to_string(),
            self.coordinator_epoch.to_string(),
            self.start_offset.to_string(),
            records::when(self.last_timestamp, self.now_ms),
            or_dash(self.transactional_id.as_deref()),
            self.transaction_age_ms.map_or_else(
                || "-".into(),
                |a| age(self.now_ms.saturating_sub(a), self.now_ms),
            ),
            or_dash(self.blocked_records),
            or_dash(self.blocked_groups.as_ref().map(Vec::len)),
        ]);
        cells.push(Cell::new(
            self.reason.clone(),
            self.judged.kind().severity().into(),
        ));
        cells.push(self.owner_cell.clone());
        cells
    }
}

/// The table's columns, the least important left out first on a narrow screen.
const HEADER: &[Column] = &[
    Column::new("Topic", 0),
    Column::new("Partition", 0),
    Column::new("ProducerId", 0),
    Column::new("ProducerEpoch", 4),
    Column::new("CoordinatorEpoch", 6),
    Column::new("StartOffset", 3),
    Column::new("LastTimestamp", 5),
    Column::text("TransactionalId", 2),
    Column::new("TxnAge", 1),
    Column::new("BlockedRecords", 0),
    Column::new("BlockedGroups", 1),
    Column::text("Verdict", 0),
    Column::text("Owner", 7),
];

/// The verdict rows of a joined scan, candidates only: kdp-domain's one
/// judgement of it, `found`
/// ([`kdp_domain::diagnose::findings`](fn@kdp_domain::diagnose::findings),
/// which the exporter counts too), rendered. A producer whose LastTimestamp
/// is unknown is `unknown` (exit 1), never `hanging`, as in the exporter.
pub fn rows(joined: &Joined, found: &Findings, all: bool, held: &HeldGroups) -> Vec<Row> {
    let mut rows = Vec::new();
    for (judged, verdict) in found.candidates() {
        if *verdict == Verdict::NotHanging && !all {
            continue;
        }
        let (topic, partition, p) = (judged.topic.as_str(), judged.partition, &judged.producer);
        let txn = OpenTxn {
            topic: topic.to_string(),
            partition,
            producer: p.clone(),
        };
        let state = joined.coordinator_state(p.producer_id);
        let tracked = joined.tracked(topic, partition, p.producer_id);
        let start = hanging::transaction_start_ms(tracked, p);
        rows.push(Row {
            topic: topic.to_string(),
            partition,
            producer_id: p.producer_id,
            producer_epoch: p.producer_epoch,
            coordinator_epoch: p.coordinator_epoch,
            start_offset: p.current_txn_start_offset,
            last_timestamp: p.last_timestamp,
            last_timestamp_rfc3339: Rfc3339::at(p.last_timestamp),
            transactional_id: hanging::transactional_id(&joined.view, &txn).map(str::to_string),
            coordinator_state: state.map(|t| t.transaction_state.clone()),
            transaction_start_time_ms: tracked.map(|t| t.transaction_start_time_ms),
            transaction_age_ms: kdp_domain::time::age_ms(start, joined.now_ms),
            blocked_records: joined
                .offsets
                .get(&(topic.to_string(), partition))
                .and_then(|o| o.as_ref().ok())
                .map(|o| o.blocked()),
            blocked_groups: held
                .of(topic, partition, p.producer_id)
                .map(<[String]>::to_vec),
            verdict: verdict.kind().label(),
            reason: verdict.explain(),
            kafka_says_hanging: hanging::kafka_says_hanging(&txn, &joined.view),
            owner: None,
            owner_cell: "-".into(),
            judged: verdict.clone(),
            now_ms: joined.now_ms,
        });
    }
    rows
}

/// `kdp find-hanging`.
pub fn run(args: Args) -> i32 {
    let every = args.watch.watch;
    watch::run(every, "kdp find-hanging", async |out| {
        run_to(args.clone(), out).await
    })
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    if !args.repair && (args.confirm.dry_run || args.confirm.yes) {
        fail!("--dry-run and --yes go with --repair");
        return exit::USAGE;
    }
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    run_on(&conn, &args, out).await
}

/// The command on a connected client.
pub async fn run_on(conn: &Connected, args: &Args, out: &mut dyn Write) -> i32 {
    let describe = conn.describe_options(
        cluster::selection(&args.topic, &args.partition),
        args.broker_id,
    );
    let given = args
        .max_transaction_timeout
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    // without --all nothing but the candidates is shown: only they are
    // looked up and only their partitions' offsets read; the Owner column
    // takes the join's descriptions (the listing stays filtered: most runs
    // show no id to find an owner for); of the producers, only those with
    // an open transaction are kept: nothing here reads another
    let opts = JoinOptions::new(describe, true)
        .candidates_only(given)
        .retaining(Retain::Selected);
    let keep = Keep::Descriptions;
    let (joined, transactions) = match join_keeping(&conn.client, &opts, keep, &conn.bound).await {
        Ok((j, t)) => (Ok(j), t),
        Err(e) => (Err(e), None),
    };
    let joined = match cluster::reported(conn, joined) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let (max_timeout_ms, source) = max_timeout(given, joined.cluster_max_timeout_ms);
    let source = source.describe();
    tracing::info!(max_timeout_ms, source, "candidate threshold");
    // what made the answer partial first: the brokers that did not list
    // their transactions, before what follows from it (the groups' column)
    let mut unlisted = Failures::new();
    for (broker, e) in &joined.listing_errors {
        unlisted.add(format!("broker {broker}"), e);
    }
    failures::report("ListTransactions failed", "brokers", &unlisted);
    let failed = cluster::report_failed_partitions(&joined);
    let dopts = conn.describe_options(None, None).driver_options();
    // the one judgement of the scan: the rows, their groups' column and
    // the repair plan all read it
    let found = kdp_domain::diagnose::findings(&joined, max_timeout_ms);
    let (held, groups) =
        held_groups_judged(&conn.client, &joined, &found, &dopts, &conn.bound).await;
    let held = blocked::report_held(held);
    let mut rows = rows(&joined, &found, args.all, &held);
    let ids: std::collections::BTreeSet<String> = rows
        .iter()
        .filter_map(|r| r.transactional_id.clone())
        .collect();
    let prior = Prior {
        transactions,
        groups,
    };
    let owners = owner_of::owners_after(conn, ids.into_iter().collect(), prior).await;
    for r in &mut rows {
        let o = r.transactional_id.as_ref().and_then(|id| owners.get(id));
        r.owner = owner_of::field(o);
        r.owner_cell = owner_of::cell(o);
    }
    if let Err(e) = records::write(out, args.output, "Transactions", HEADER, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    let problems = rows.iter().filter(|r| r.judged.is_problem()).count();
    let unknown = rows
        .iter()
        .filter(|r| matches!(r.judged, Verdict::Unknown(_)))
        .count();
    let checked = joined.summary.partitions.saturating_sub(failed);
    if checked == 0 {
        // an answer from nothing is no answer: never "all clear"
        fail!(
            "nothing was checked: {}",
            if joined.summary.partitions == 0 {
                "no partition matched the selection".to_string()
            } else {
                format!(
                    "none of the {} partitions could be described",
                    joined.summary.partitions
                )
            }
        );
        return exit::PARTIAL;
    }
    if args.output == Output::Table && rows.is_empty() {
        let not_checked = if failed > 0 || !joined.listing_errors.is_empty() {
            format!(
                "; not checked: {failed} partition(s) not described, {} broker(s) that did not list their transactions",
                joined.listing_errors.len()
            )
        } else {
            String::new()
        };
        fail!(
            "no hanging or stuck transaction in {checked} partitions (candidates idle longer than {} from {}){not_checked}",
            humantime::format_duration(Duration::from_millis(u64::try_from(max_timeout_ms).unwrap_or(0))),
            source
        );
    }
    if args.repair {
        let connection = repair::connection_flags(&args.cluster);
        let mut plan = plan_findings(&findings_judged(&joined, &found), &connection);
        owner_of::spare_live(&mut plan, &owners);
        if plan.is_empty() {
            eprintln!("kdp: nothing to repair");
            return exit::OK;
        }
        let stderr = io::stderr();
        let mut err = stderr.lock();
        let (to, seen_at_prompt): (&mut dyn Write, bool) = if args.output == Output::Table {
            (out, io::stdout().is_terminal())
        } else {
            // the plan goes to stderr, where the question is
            (&mut err, true)
        };
        let _ = writeln!(to);
        return repair::carry_out(
            "find-hanging --repair",
            conn,
            to,
            seen_at_prompt,
            plan,
            &args.confirm,
        )
        .await
        .unwrap_or_else(|stopped| stopped);
    }
    if problems > 0 {
        exit::FOUND
    } else if unknown > 0 || failed > 0 || !joined.listing_errors.is_empty() {
        exit::PARTIAL
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kdp_domain::coordinator::{CoordinatorView, Description};
    use kdp_domain::protocol::TxnProtocol;
    use kdp_domain::{DescribeSummary, PartitionOutcome};
    use kdp_wire::messages::{ProducerState, TopicData, TransactionState};

    use super::*;
    use kdp_domain::diagnose::findings;
    use kdp_domain::diagnose::summary::Diagnosis;

    const NOW: i64 = 10_000_000_000;
    const TIMEOUT: i64 = 900_000;
    const HOUR: i64 = 3_600_000;

    fn open(pid: i64, last_timestamp: i64, start: i64) -> ProducerState {
        ProducerState {
            producer_id: pid,
            producer_epoch: 1,
            last_timestamp,
            coordinator_epoch: 1,
            current_txn_start_offset: start,
            ..Default::default()
        }
    }

    fn partition(topic: &str, partition: i32, producers: Vec<ProducerState>) -> PartitionOutcome {
        PartitionOutcome {
            topic: topic.into(),
            partition,
            broker_id: Some(1),
            result: Ok(producers),
        }
    }

    fn described(id: &str, pid: i64, state: &str, tp: (&str, i32)) -> TransactionState {
        TransactionState {
            transactional_id: id.into(),
            transaction_state: state.into(),
            transaction_start_time_ms: NOW - HOUR,
            producer_id: pid,
            topics: vec![TopicData {
                topic: tp.0.into(),
                partitions: vec![tp.1],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// A cluster where every id is visible and every broker answered, with
    /// one transaction of each verdict, two of them without a LastTimestamp.
    fn joined() -> Joined {
        let mut view = CoordinatorView {
            listing_complete: true,
            may_describe_any: true,
            ..Default::default()
        };
        for (pid, id, state, tp) in [
            (20, "tracked", "Ongoing", ("b", 0)),
            (21, "decided", "PrepareCommit", ("b", 1)),
            (22, "elsewhere", "Ongoing", ("b", 9)),
        ] {
            view.listed.insert(pid, id.into());
            view.descriptions.insert(
                id.into(),
                Description::Described(described(id, pid, state, tp)),
            );
        }
        Joined {
            now_ms: NOW,
            unkept_writes: Default::default(),
            partitions: vec![
                // no coordinator knows 10 (a time: hanging) nor 11 and 12
                // (no time: unknown); 13 wrote a second ago (no candidate)
                partition(
                    "a",
                    0,
                    vec![
                        open(10, NOW - HOUR, 5),
                        open(11, 0, 3),
                        open(13, NOW - 1_000, 9),
                    ],
                ),
                partition("a", 1, vec![open(12, -1, 7)]),
                partition(
                    "b",
                    0,
                    vec![
                        open(20, NOW - HOUR, 1),
                        open(21, 0, 2),
                        open(22, NOW - HOUR, 3),
                    ],
                ),
                partition("b", 1, vec![open(21, NOW - HOUR, 4)]),
            ],
            summary: DescribeSummary::default(),
            protocol: TxnProtocol::V1,
            cluster_max_timeout_ms: Some(TIMEOUT),
            producer_id_expiration_ms: None,
            view,
            offsets: BTreeMap::new(),
            listing_errors: Vec::new(),
            unfinished: Vec::new(),
            candidates_only: None,
        }
    }

    /// The same joined state given to `find-hanging` and to the exporter
    /// gives the same verdict on every transaction; a producer without a
    /// LastTimestamp is unknown in both (find-hanging called it hanging).
    #[test]
    fn find_hanging_and_the_exporter_give_the_same_verdicts() {
        let j = joined();
        let mut listed: Vec<(String, i32, &str)> =
            rows(&j, &findings(&j, TIMEOUT), false, &HeldGroups::default())
                .iter()
                .map(|r| (r.topic.clone(), r.partition, r.verdict))
                .collect();
        let d = Diagnosis::of(&j);
        let mut counted: Vec<(String, i32, &str)> = d
            .transactions
            .iter()
            .map(|f| {
                let kind = if f.reason.is_stuck() {
                    "stuck"
                } else {
                    "hanging"
                };
                (f.topic.clone(), f.partition, kind)
            })
            .chain(
                d.unknown_transactions
                    .iter()
                    .map(|u| (u.topic.clone(), u.partition, "unknown")),
            )
            .collect();
        listed.sort();
        counted.sort();
        assert_eq!(listed, counted);
        assert_eq!(
            listed,
            vec![
                ("a".to_string(), 0, "hanging"),
                ("a".to_string(), 0, "unknown"),
                ("a".to_string(), 1, "unknown"),
                // 22: its transaction holds b-9, not b-0; 21 on b-0: not
                // in its transaction and no time
                ("b".to_string(), 0, "hanging"),
                ("b".to_string(), 0, "unknown"),
                ("b".to_string(), 1, "stuck"),
            ]
        );
        let unknown_ts: Vec<_> = rows(&j, &findings(&j, TIMEOUT), false, &HeldGroups::default())
            .into_iter()
            .filter(|r| r.last_timestamp <= 0)
            .map(|r| r.reason)
            .collect();
        assert_eq!(
            unknown_ts,
            ["unknown: the producer's LastTimestamp is unknown, so its age cannot be told"; 3]
        );
    }

    /// Unknown verdicts leave find-hanging's exit at 1, so the rows must
    /// carry them as unknown, not as problems.
    #[test]
    fn an_unknown_timestamp_is_no_problem_in_the_rows() {
        let j = joined();
        let rows = rows(&j, &findings(&j, TIMEOUT), true, &HeldGroups::default());
        let pid11 = rows.iter().find(|r| r.producer_id == 11).expect("11");
        assert!(!pid11.judged.is_problem());
        assert!(matches!(pid11.judged, Verdict::Unknown(_)));
        // --all lists the tracked one too, never the live one
        assert!(rows
            .iter()
            .any(|r| r.producer_id == 20 && r.verdict == "ok"));
        assert!(!rows.iter().any(|r| r.producer_id == 13));
    }
}
