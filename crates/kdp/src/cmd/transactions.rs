//! `kdp transactions list|describe`: the coordinators' view, as
//! `kafka-transactions.sh list` and `describe` print it, plus times as
//! RFC 3339 and ages; every broker asked, ids batched per coordinator.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::list::ListFilters;
use kdp_domain::key_error::{Failures, KeyError};
use kdp_workflows::clock::now_ms;
use kdp_workflows::transactions::{list, Entry};
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::failures;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::{Output, Rfc3339};

/// `kdp transactions`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

/// The subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Sub {
    /// List transactions on every broker (ListTransactions), merged.
    #[command(after_help = "\
Columns as kafka-transactions.sh list: TransactionalId, Coordinator (the broker that lists it),
ProducerId, TransactionState; then CurrentTransactionStartTime (RFC 3339 and age, asked of each
coordinator with DescribeTransactions; `-` when it keeps none). Transactional ids the caller may not DESCRIBE are left out by the
brokers, silently.

Filters: --state (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort,
PrepareEpochFence, Dead) and --producer-id repeat; --min-duration needs Kafka 3.8+ and
--transactional-id-pattern Kafka 4.1+ (an older broker is an error naming the feature).

Exit status: 0 listed by every broker, 1 some broker or start time failed (the rest is printed), 2 bad usage,
3 the cluster could not be reached.

Examples:
  kdp transactions --bootstrap-server localhost:9092 list
  kdp transactions --bootstrap-server localhost:9092 list --state Ongoing --min-duration 10m")]
    List {
        /// Keep transactions in this state (Kafka's names, case-sensitive); repeat for several.
        #[arg(long, value_name = "STATE")]
        state: Vec<kdp_wire::TxnState>,
        /// Keep transactions of this producer id; repeat for several.
        #[arg(long, value_name = "ID")]
        producer_id: Vec<i64>,
        /// Keep transactions running longer than this (e.g. 10m).
        #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse_age)]
        min_duration: Option<Duration>,
        /// Keep transactional ids matching this regular expression (RE2/J syntax).
        #[arg(long, value_name = "REGEX")]
        transactional_id_pattern: Option<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
        output: Output,
        #[command(flatten)]
        watch: WatchArgs,
    },
    /// Describe transactional ids at their coordinators (DescribeTransactions).
    #[command(after_help = "\
Columns as kafka-transactions.sh describe, plus the start time as RFC 3339 and its age.

Exit status: 0 every id described, 1 some failed (e.g. TRANSACTIONAL_ID_NOT_FOUND,
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the rest is printed), 2 bad usage, 3 unreachable.

Example:
  kdp transactions --bootstrap-server localhost:9092 describe --transactional-id orders-tx-1")]
    Describe {
        /// The transactional id; repeat for several.
        #[arg(long, value_name = "ID", required = true)]
        transactional_id: Vec<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
        output: Output,
    },
}

/// The cluster flags sit before the subcommand, as in kafka-transactions.sh.
#[derive(clap::Args, Debug, Clone)]
pub struct Command {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub args: Args,
}

/// One listed transaction, rendered from the workflow's compact entry (a
/// listing of 300,000 ids keeps only the entries, each row borrows one).
struct ListRow<'a> {
    entry: &'a Entry,
    now_ms: i64,
}

impl ListRow<'_> {
    /// The coordinator's start time, when it described one; `None` when it
    /// keeps none (e.g. `Empty`, not asked) or the describe failed.
    fn started(&self) -> (Option<i64>, Option<Rfc3339>, Option<i64>) {
        started(self.entry.start_time_ms, self.now_ms)
    }
}

impl Serialize for ListRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let e = self.entry;
        let (start_ms, start, duration) = self.started();
        let mut st = s.serialize_struct("ListRow", 7)?;
        st.serialize_field("TransactionalId", &*e.transactional_id)?;
        st.serialize_field("Coordinator", &e.coordinator)?;
        st.serialize_field("ProducerId", &e.producer_id)?;
        st.serialize_field("TransactionState", e.state.as_str())?;
        // From DescribeTransactions: what `--min-duration` filtered on.
        st.serialize_field("CurrentTransactionStartTimeMs", &start_ms)?;
        st.serialize_field("CurrentTransactionStartTime", &start)?;
        st.serialize_field("TransactionDurationMs", &duration)?;
        st.end()
    }
}

impl Record for ListRow<'_> {
    fn cells(&self) -> Vec<Cell> {
        let e = self.entry;
        plain(vec![
            e.transactional_id.to_string(),
            e.coordinator.to_string(),
            e.producer_id.to_string(),
            e.state.as_str().to_owned(),
            self.started()
                .0
                .map_or_else(|| "-".into(), |ms| records::when(ms, self.now_ms)),
        ])
    }
}

/// A coordinator's TransactionStartTimeMs as the rows show it: the time
/// (`None` when unknown: 0 or below), its RFC 3339 form, and its age at `now`.
fn started(start_ms: i64, now: i64) -> (Option<i64>, Option<Rfc3339>, Option<i64>) {
    let start = kdp_domain::time::known_ms(start_ms);
    (
        start,
        start.and_then(Rfc3339::at),
        start.map(|s| now.saturating_sub(s)),
    )
}

/// The listed ids without a start time because their describe failed,
/// by cause.
fn start_failures(failures: &[(Arc<str>, KeyError)]) -> Failures<&str> {
    let mut f = Failures::new();
    for (id, err) in failures {
        f.add(&**id, err);
    }
    f
}

/// One described transactional id.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct DescribeRow {
    coordinator_id: i32,
    transactional_id: String,
    producer_id: i64,
    producer_epoch: i16,
    transaction_state: String,
    transaction_timeout_ms: i32,
    current_transaction_start_time_ms: Option<i64>,
    current_transaction_start_time: Option<Rfc3339>,
    transaction_duration_ms: Option<i64>,
    topic_partitions: Vec<String>,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for DescribeRow {
    fn cells(&self) -> Vec<Cell> {
        plain(vec![
            self.coordinator_id.to_string(),
            self.transactional_id.clone(),
            self.producer_id.to_string(),
            self.producer_epoch.to_string(),
            self.transaction_state.clone(),
            self.transaction_timeout_ms.to_string(),
            match self.current_transaction_start_time_ms {
                Some(ms) => records::when(ms, self.now_ms),
                None => "-".into(),
            },
            or_dash(self.transaction_duration_ms),
            self.topic_partitions.join(","),
        ])
    }
}

/// `kdp transactions ...`.
pub fn run(cmd: Command) -> i32 {
    let every = match &cmd.args.command {
        Sub::List { watch, .. } => {
            // a long listing's answers are megabytes each: given back to
            // the system when freed, not kept as heap for the
            // descriptions that follow (the peak of 300,000 ids,
            // docs/PERFORMANCE.md)
            crate::malloc::fix_mmap_threshold();
            watch.watch
        }
        Sub::Describe { .. } => None,
    };
    watch::run(every, "kdp transactions list", async |out| {
        run_to(cmd.clone(), out).await
    })
}

/// The command, output on `out`.
pub async fn run_to(cmd: Command, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&cmd.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    run_on(&conn, cmd.args.command, out).await
}

/// The command on a connected client.
pub async fn run_on(conn: &Connected, sub: Sub, out: &mut dyn Write) -> i32 {
    let dopts = conn.describe_options(None, None).driver_options();
    let (result, failed) = match sub {
        Sub::List {
            state,
            producer_id,
            min_duration,
            transactional_id_pattern,
            output,
            watch: _,
        } => {
            let filters = ListFilters {
                states: state,
                producer_ids: producer_id,
                min_duration_ms: min_duration
                    .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
                transactional_id_pattern,
            };
            let listed = match list(&conn.client, &filters, &dopts, &conn.bound).await {
                Ok(l) => l,
                Err(e) => {
                    fail!("{e}");
                    return if e.is_connection_error() {
                        exit::UNREACHABLE
                    } else {
                        exit::PARTIAL
                    };
                }
            };
            for (broker, s) in &listed.unknown_state_filters {
                eprintln!("kdp: broker {broker} does not know the state {s:?}");
            }
            let mut unlisted = Failures::new();
            for (broker, e) in &listed.failed {
                unlisted.add(format!("broker {broker}"), e);
            }
            // what left the list partial first, then the start times
            failures::report("ListTransactions failed", "brokers", &unlisted);
            let undescribed = start_failures(&listed.start_failures);
            failures::report("start time unknown", "transactional ids", &undescribed);
            let failed = unlisted.len() + undescribed.len();
            let now = now_ms();
            let rows: Vec<ListRow<'_>> = listed
                .entries
                .iter()
                .map(|entry| ListRow { entry, now_ms: now })
                .collect();
            let header = [
                Column::text("TransactionalId", 0),
                Column::new("Coordinator", 2),
                Column::new("ProducerId", 1),
                Column::new("TransactionState", 0),
                Column::new("CurrentTransactionStartTime", 3),
            ];
            (
                records::write(out, output, "Transactions", &header, &rows),
                failed,
            )
        }
        Sub::Describe {
            transactional_id,
            output,
        } => {
            let now = now_ms();
            let mut ids = transactional_id;
            ids.sort();
            ids.dedup();
            let described = describe_transactions(&conn.client, ids, &dopts, &conn.bound).await;
            let mut rows = Vec::new();
            let mut undescribed = Failures::new();
            for (id, d) in described {
                match d.result {
                    Ok(t) => {
                        let (start_ms, start, duration) = started(t.transaction_start_time_ms, now);
                        rows.push(DescribeRow {
                            coordinator_id: d.coordinator.unwrap_or(-1),
                            transactional_id: id,
                            producer_id: t.producer_id,
                            producer_epoch: t.producer_epoch,
                            transaction_state: t.transaction_state,
                            transaction_timeout_ms: t.transaction_timeout_ms,
                            current_transaction_start_time_ms: start_ms,
                            current_transaction_start_time: start,
                            transaction_duration_ms: duration,
                            topic_partitions: t
                                .topics
                                .iter()
                                .flat_map(|td| {
                                    td.partitions
                                        .iter()
                                        .map(move |p| format!("{}-{p}", td.topic))
                                })
                                .collect(),
                            now_ms: now,
                        });
                    }
                    Err(e) => undescribed.add(id, &e),
                }
            }
            failures::report(
                "DescribeTransactions failed",
                "transactional ids",
                &undescribed,
            );
            let failed = undescribed.len();
            let header = [
                Column::new("CoordinatorId", 4),
                Column::text("TransactionalId", 0),
                Column::new("ProducerId", 1),
                Column::new("ProducerEpoch", 3),
                Column::new("TransactionState", 0),
                Column::new("TransactionTimeoutMs", 5),
                Column::new("CurrentTransactionStartTime", 2),
                Column::new("TransactionDurationMs", 1),
                Column::text("TopicPartitions", 0),
            ];
            (
                records::write(out, output, "Transactions", &header, &rows),
                failed,
            )
        }
    };
    if let Err(e) = result {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    if failed > 0 {
        exit::PARTIAL
    } else {
        exit::OK
    }
}
