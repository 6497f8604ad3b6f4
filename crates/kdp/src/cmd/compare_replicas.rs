//! `kdp compare-replicas`: every replica of each partition asked for its
//! producer state, and the differences shown field by field.

use std::collections::BTreeMap;
use std::io::{self, Write};

use kdp_domain::diagnose::replicas::ReplicaError;
use kdp_domain::diagnose::replicas::Verdict;
use kdp_workflows::replicas::compare_replicas;
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::exit;
use crate::output::records::{self, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::Output;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Each replica answers DescribeProducers from its own producer state (brokers do no leader check),
so asking every replica of a partition shows a follower that lost a producer, kept an older
epoch or sequence, or still holds a transaction open. One row per difference: the producer, the
field (ActiveProducers when a replica does not list the producer at all) and each replica's value.
A follower that is catching up differs for a moment; run again to tell lag from divergence.

Exit status: 0 all replicas agree, 4 some differ, 1 some replica could not be asked, 2 bad usage,
3 the cluster could not be reached.

Examples:
  kdp compare-replicas --bootstrap-server localhost:9092
  kdp compare-replicas --bootstrap-server localhost:9092 --topic orders --partition 0,1")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Topic to compare; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Partition to compare, for every --topic given; repeat or comma-separate.
    #[arg(long, value_name = "PARTITION", requires = "topic", value_delimiter = ',',
          value_parser = clap::value_parser!(i32).range(0..))]
    pub partition: Vec<i32>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// One difference.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Row {
    topic: String,
    partition: i32,
    producer_id: i64,
    field: &'static str,
    values: BTreeMap<i32, String>,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        plain(vec![
            self.topic.clone(),
            self.partition.to_string(),
            self.producer_id.to_string(),
            self.field.to_string(),
            self.values
                .iter()
                .map(|(b, v)| format!("{b}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ])
    }
}

/// `kdp compare-replicas`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = conn.describe_options(cluster::selection(&args.topic, &args.partition), None);
    let comparison = match compare_replicas(&conn.client, &opts, &conn.bound).await {
        Ok(c) => c,
        Err(e) => return exit::report(&e),
    };
    for f in &comparison.failures {
        match f {
            ReplicaError::Broker { broker, error } => fail!("broker {broker}: {error}"),
            ReplicaError::Lost => fail!("a broker's scan ended without an answer"),
            ReplicaError::Partition {
                partition: (topic, partition),
                broker,
                error,
            } => fail!(
                "{topic}-{partition} on broker {broker}: {} {}",
                error.name(),
                error.message.as_deref().unwrap_or("")
            ),
        }
    }
    let verdict = comparison.verdict();
    let rows: Vec<Row> = comparison
        .differences
        .into_iter()
        .map(|((topic, partition), d)| Row {
            topic,
            partition,
            producer_id: d.producer_id,
            field: d.field,
            values: d.values,
        })
        .collect();
    let header = [
        Column::new("Topic", 0),
        Column::new("Partition", 0),
        Column::new("ProducerId", 0),
        Column::new("Field", 0),
        Column::text("Replicas", 0),
    ];
    if let Err(e) = records::write(out, args.output, "Differences", &header, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    match verdict {
        Verdict::Differ { .. } => exit::FOUND,
        Verdict::Nothing => {
            // an answer from nothing is no answer: never "all agree"
            fail!("nothing was compared: no replica answered for any selected partition");
            exit::PARTIAL
        }
        Verdict::Unchecked { partitions, failed } => {
            fail!(
                "no difference among the replicas that answered on {partitions} partitions; \
                 not checked: {failed} replica(s) or broker(s) that failed (above), so the \
                 replicas may still differ"
            );
            exit::PARTIAL
        }
        Verdict::Agree { partitions } => {
            if args.output == Output::Table {
                eprintln!("kdp: all replicas agree on {partitions} partitions");
            }
            exit::OK
        }
    }
}
