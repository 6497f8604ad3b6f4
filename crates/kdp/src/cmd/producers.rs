//! `kdp producers`: producer-id pressure. How many producer ids each broker
//! holds (as its `ProducerIdCount` gauge counts them), by topic, when they
//! expire, which epochs near 32767, which transactional-id prefixes make
//! one id per task, and with `--since` how fast new ones come.

use std::io::{self, Write};

use kdp_domain::diagnose::pressure::{self, churn, Churn, Pressure, DEFAULT_EPOCH_MARGIN};
use kdp_workflows::pressure::{scan, ScanOptions};
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs};
use crate::exit;
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::{age, Output};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Every replica of every partition is asked (DescribeProducers per broker), so a broker's count is
one per partition replica and producer, leaders and followers alike: what its ProducerIdCount
gauge counts. A producer is transactional when it has an open transaction or has written a
transaction marker (coordinator epoch 0 or more); one that has done neither on a partition looks
idempotent there. Expiry uses each broker's producer.id.expiration.ms: an id with no open
transaction goes once idle that long; ids past it and still held mean the broker's expiration
check has not run (producer.id.expiration.check.interval.ms). A transactional id's prefix is the
id with its trailing counters and uuid removed (sink-3-17 -> sink); several ids under one prefix
look like one transactional id per task.

--since FILE compares with a previous `kdp producers --output json`, and --interval DURATION with
a first scan that long before: new and gone ids per broker and topic, new ids per second, and for
each producer near the end of its epochs the epochs it used per hour and when it reaches 32767 at
that rate. Transactions in PrepareEpochFence for longer than their timeout (a fence the
coordinator has not finished) are listed too.

Exit status: 0 nothing crossed, 4 a threshold crossed, an epoch within --epoch-margin or a fence
past its timeout,
1 some broker did not answer (totals partial) or nothing was scanned, 2 bad usage,
3 the cluster could not be reached.

Examples:
  kdp producers --bootstrap-server localhost:9092
  kdp producers --bootstrap-server localhost:9092 -o json > before.json
  kdp producers --bootstrap-server localhost:9092 --since before.json --max-new-per-second 5")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Topic to scan; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Report only this broker; repeat for several. Default: every broker.
    #[arg(long, value_name = "ID")]
    pub broker_id: Vec<i32>,
    /// A previous `--output json` of this command, for new and gone ids.
    #[arg(long, value_name = "FILE", conflicts_with = "interval")]
    pub since: Option<std::path::PathBuf>,
    /// Scan twice, this long apart (e.g. 1m), for new and gone ids and
    /// epoch rates between the two scans.
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub interval: Option<std::time::Duration>,
    /// Exit 4 when a broker holds more producer ids than this.
    #[arg(long, value_name = "N")]
    pub max_producer_ids_per_broker: Option<u64>,
    /// Exit 4 when a broker gains new producer ids faster than this (needs --since or --interval).
    #[arg(long, value_name = "R")]
    pub max_new_per_second: Option<f64>,
    /// Epochs within this many of 32767 are near exhaustion (exit 4).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_EPOCH_MARGIN,
          value_parser = clap::value_parser!(i32).range(0..=32767))]
    pub epoch_margin: i32,
    /// How many topics the top-topics table shows.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// The JSON document: the report, and churn when `--since` was given.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Doc<'a> {
    #[serde(flatten)]
    pressure: &'a Pressure,
    churn: &'a [Churn],
}

struct BrokerRow<'a>(
    &'a pressure::BrokerPressure,
    i64,
    Option<(u64, u64, Option<f64>)>,
);

impl Serialize for BrokerRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

fn idle(ms: Option<i64>, now: i64) -> String {
    ms.map_or_else(|| "-".into(), |ms| age(now.saturating_sub(ms), now))
}

impl Record for BrokerRow<'_> {
    fn cells(&self) -> Vec<Cell> {
        let (b, now) = (self.0, self.1);
        if !b.answered {
            return plain(vec![
                b.broker.to_string(),
                "no answer".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                or_dash(b.expiration_ms),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        plain(vec![
            b.broker.to_string(),
            if b.complete {
                b.producer_ids.to_string()
            } else {
                format!("{} (partial)", b.producer_ids)
            },
            b.transactional.to_string(),
            b.idempotent.to_string(),
            idle(b.oldest_idle_ms, now),
            idle(b.median_idle_ms, now),
            or_dash(b.expiration_ms),
            b.expiring_within_hour.to_string(),
            b.expiring_within_day.to_string(),
            b.past_expiration.to_string(),
            or_dash(self.2.and_then(|c| c.2).map(|r| format!("{r:.2}"))),
        ])
    }
}

macro_rules! record {
    ($t:ty, |$s:ident| $cells:expr) => {
        impl Record for $t {
            fn cells(&self) -> Vec<Cell> {
                let $s = self;
                plain($cells)
            }
        }
    };
}

#[derive(Serialize)]
struct TopicRow<'a>(&'a pressure::TopicPressure);
record!(TopicRow<'_>, |r| vec![
    r.0.topic.clone(),
    if r.0.partial {
        format!("{} (partial)", r.0.producer_ids)
    } else {
        r.0.producer_ids.to_string()
    },
    r.0.distinct_producers.to_string(),
    if r.0.max_epoch < 0 {
        "-".into()
    } else {
        r.0.max_epoch.to_string()
    },
    r.0.near_exhaustion.to_string(),
]);

#[derive(Serialize)]
struct EpochRow<'a>(&'a pressure::NearEpoch);
record!(EpochRow<'_>, |r| vec![
    r.0.producer_id.to_string(),
    r.0.producer_epoch.to_string(),
    r.0.epochs_left.to_string(),
    or_dash(r.0.transactional_id.clone()),
    r.0.topics.iter().cloned().collect::<Vec<_>>().join(","),
    or_dash(r.0.epochs_per_hour.map(|v| format!("{v:.1}"))),
    or_dash(r.0.exhausted_at_ms.and_then(crate::output::Rfc3339::at)),
]);

struct FenceRow<'a>(&'a pressure::EpochFence, i64);
impl Serialize for FenceRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}
record!(FenceRow<'_>, |r| vec![
    r.0.transactional_id.clone(),
    r.0.producer_id.to_string(),
    r.0.coordinator.to_string(),
    r.0.transaction_start_time_ms
        .map_or_else(|| "-".into(), |ms| records::when(ms, r.1)),
    r.0.transaction_timeout_ms.to_string(),
]);

#[derive(Serialize)]
struct PrefixRow<'a>(&'a pressure::PrefixCount);
record!(PrefixRow<'_>, |r| vec![
    r.0.prefix.clone(),
    r.0.tail.label().to_string(),
    r.0.transactional_ids.to_string(),
    if r.0.one_per_task() {
        "yes".into()
    } else {
        "no".into()
    },
]);

#[derive(Serialize)]
struct ChurnRow<'a>(&'a Churn);
record!(ChurnRow<'_>, |r| vec![
    r.0.broker.to_string(),
    r.0.topic.clone(),
    r.0.new.to_string(),
    r.0.gone.to_string(),
    or_dash(r.0.new_per_second.map(|v| format!("{v:.2}"))),
]);

/// `kdp producers`.
pub fn run(args: Args) -> i32 {
    cluster::block_on_stdout(async |out| run_to(args, out).await)
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let before: Option<Pressure> = match &args.since {
        None => None,
        Some(path) => {
            let read = std::fs::read(path)
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()));
            match read {
                Ok(mut p) => {
                    Pressure::normalize(&mut p);
                    Some(p)
                }
                Err(e) => {
                    fail!(
                        "--since {}: not a `kdp producers --output json`: {e}",
                        path.display()
                    );
                    return exit::USAGE;
                }
            }
        }
    };
    if args.max_new_per_second.is_some() && args.since.is_none() && args.interval.is_none() {
        fail!("--max-new-per-second needs --since FILE or --interval DURATION");
        return exit::USAGE;
    }
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let options = ScanOptions {
        epoch_margin: args.epoch_margin,
        top: args.top,
        only_brokers: args.broker_id.iter().copied().collect(),
        ..ScanOptions::default()
    };
    let mut before = before;
    if let Some(every) = args.interval {
        // the first of two scans: the baseline, as --since would read it
        let opts = conn.describe_options(cluster::selection(&args.topic, &[]), None);
        match scan(&conn.client, &opts, &options, &conn.bound).await {
            Ok(s) => before = Some(s.pressure),
            Err(e) => return exit::report(&e),
        };
        tokio::time::sleep(every).await;
    }
    // the second scan has a budget of its own, as the first had
    let opts = conn.describe_options(cluster::selection(&args.topic, &[]), None);
    let mut s = match scan(&conn.client, &opts, &options, &conn.bound).await {
        Ok(s) => s,
        Err(e) => return exit::report(&e),
    };
    for (b, why) in s.failed.iter().chain(&s.incomplete) {
        for w in why {
            fail!("broker {b}: {w}");
        }
    }
    if s.lost > 0 {
        fail!("{} broker scan(s) ended without an answer", s.lost);
    }
    let mut p = std::mem::take(&mut s.pressure);
    if let Some(b) = &before {
        pressure::epoch_rates(b, &mut p);
    }
    let churn = before.as_ref().map(|b| churn(b, &p)).unwrap_or_default();
    let per_broker_rate = |broker: i32| -> Option<(u64, u64, Option<f64>)> {
        let c = pressure::broker_churn(before.as_ref()?, &p, &churn, broker);
        Some((c.new, c.gone, c.new_per_second))
    };
    if let Err(e) = render(out, &args, &p, &churn, &per_broker_rate) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    let mut found = !p.epochs_near_exhaustion.is_empty();
    for f in &p.epoch_fences_past_timeout {
        fail!(
            "{} (producer id {}) has been in PrepareEpochFence longer than its timeout ({} ms): \
             its coordinator, broker {}, has not finished fencing it",
            f.transactional_id,
            f.producer_id,
            f.transaction_timeout_ms,
            f.coordinator
        );
        found = true;
    }
    if let Some(max) = args.max_producer_ids_per_broker {
        for b in p.brokers.iter().filter(|b| b.producer_ids > max) {
            fail!(
                "broker {} holds {} producer ids (> {max})",
                b.broker,
                b.producer_ids
            );
            found = true;
        }
    }
    if let Some(max) = args.max_new_per_second {
        for b in &p.brokers {
            if let Some((new, _, Some(r))) = per_broker_rate(b.broker) {
                if r > max {
                    fail!(
                        "broker {} gained {new} producer ids, {r:.2}/s (> {max})",
                        b.broker
                    );
                    found = true;
                }
            }
        }
    }
    if s.answered == 0 {
        fail!("nothing was scanned: no replica answered for any selected partition");
        return exit::PARTIAL;
    }
    if found {
        exit::FOUND
    } else if p.partial {
        fail!("totals are partial: some broker did not answer (above)");
        exit::PARTIAL
    } else {
        exit::OK
    }
}

fn render(
    out: &mut dyn Write,
    args: &Args,
    p: &Pressure,
    churn: &[Churn],
    rate: &dyn Fn(i32) -> Option<(u64, u64, Option<f64>)>,
) -> io::Result<()> {
    if args.output != Output::Table && args.output != Output::Wide {
        let doc = Doc { pressure: p, churn };
        // stdout is line-buffered: the held ids would be a write per line
        let mut out = io::BufWriter::with_capacity(1 << 16, &mut *out);
        if args.output == Output::Json {
            serde_json::to_writer_pretty(&mut out, &doc)?;
        } else {
            serde_json::to_writer(&mut out, &doc)?;
        }
        out.write_all(b"\n")?;
        return out.flush();
    }
    let now = p.scanned_at_ms;
    writeln!(
        out,
        "Producer ids per broker{}: {} in all",
        if p.partial { " (partial)" } else { "" },
        p.total_producer_ids
    )?;
    let brokers: Vec<BrokerRow<'_>> = p
        .brokers
        .iter()
        .map(|b| BrokerRow(b, now, rate(b.broker)))
        .collect();
    let header = [
        Column::new("Broker", 0),
        Column::new("ProducerIds", 0),
        Column::new("Transactional", 2),
        Column::new("Idempotent", 2),
        Column::new("OldestIdle", 3),
        Column::new("MedianIdle", 3),
        Column::new("ExpirationMs", 4),
        Column::new("ExpiringIn1h", 1),
        Column::new("ExpiringIn1d", 1),
        Column::new("PastExpiration", 1),
        Column::new("NewPerSecond", 1),
    ];
    records::write(out, args.output, "Brokers", &header, &brokers)?;
    writeln!(out, "\nTop topics by producer ids")?;
    let topics: Vec<TopicRow<'_>> = p
        .top_topics
        .iter()
        .filter_map(|t| p.topics.iter().find(|x| &x.topic == t))
        .map(TopicRow)
        .collect();
    let header = [
        Column::text("Topic", 0),
        Column::new("ProducerIds", 0),
        Column::new("Producers", 1),
        Column::new("MaxEpoch", 1),
        Column::new("NearExhaustion", 1),
    ];
    records::write(out, args.output, "Topics", &header, &topics)?;
    writeln!(out, "\nEpochs within {} of 32767", args.epoch_margin)?;
    let rows: Vec<EpochRow<'_>> = p.epochs_near_exhaustion.iter().map(EpochRow).collect();
    let header = [
        Column::new("ProducerId", 0),
        Column::new("ProducerEpoch", 0),
        Column::new("EpochsLeft", 0),
        Column::text("TransactionalId", 0),
        Column::text("Topics", 2),
        Column::new("EpochsPerHour", 1),
        Column::new("ExhaustedAt", 1),
    ];
    records::write(out, args.output, "Epochs", &header, &rows)?;
    if !p.epoch_fences_past_timeout.is_empty() {
        writeln!(out, "\nIn PrepareEpochFence longer than the timeout")?;
        let rows: Vec<FenceRow<'_>> = p
            .epoch_fences_past_timeout
            .iter()
            .map(|f| FenceRow(f, now))
            .collect();
        let header = [
            Column::text("TransactionalId", 0),
            Column::new("ProducerId", 0),
            Column::new("Coordinator", 1),
            Column::new("TransactionStartTime", 0),
            Column::new("TransactionTimeoutMs", 1),
        ];
        records::write(out, args.output, "Fences", &header, &rows)?;
    }
    writeln!(out, "\nTransactional-id prefixes")?;
    let rows: Vec<PrefixRow<'_>> = p.prefixes.iter().take(args.top).map(PrefixRow).collect();
    let header = [
        Column::text("Prefix", 0),
        Column::new("Tail", 1),
        Column::new("TransactionalIds", 0),
        Column::new("OnePerTask", 0),
    ];
    records::write(out, args.output, "Prefixes", &header, &rows)?;
    if args.since.is_some() || args.interval.is_some() {
        writeln!(out, "\nChurn since the previous scan")?;
        let rows: Vec<ChurnRow<'_>> = churn
            .iter()
            .filter(|c| c.new + c.gone > 0)
            .map(ChurnRow)
            .collect();
        let header = [
            Column::new("Broker", 0),
            Column::text("Topic", 0),
            Column::new("New", 0),
            Column::new("Gone", 0),
            Column::new("NewPerSecond", 0),
        ];
        records::write(out, args.output, "Churn", &header, &rows)?;
    }
    Ok(())
}
