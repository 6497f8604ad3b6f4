//! What every command that talks to a cluster shares: the one set of flags
//! to reach it (named as in Kafka's tools), connecting within `--timeout`
//! (the command's one [`TimeBound`]), and turning `--topic`/`--partition`
//! into a selection.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::{
    BrokerAddress, Client, ClientConfig, DescribeOptions, Retrying, TimeBound, TopicSelection,
};
use kdp_domain::joined::Joined;
use kdp_domain::key_error::Failures;
use kdp_workflows::join::JoinOptions;

use crate::exit;
use crate::output::failures;
use crate::properties;

/// How to reach the cluster: the one declaration of the connection flags,
/// which every command that talks to a cluster flattens (the exporter
/// included) and the top level takes too ([`TopLevel`]). The flags are
/// global: they go before or after the subcommand (`kdp transactions list
/// --bootstrap-server B` as well as `kdp transactions --bootstrap-server B
/// list`); an empty bootstrap list is filled in by `main` from the
/// environment, the context or the properties.
#[derive(clap::Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Brokers to bootstrap from, tried in order. Without it: KDP_BOOTSTRAP_SERVER,
    /// then the context's (--context, KDP_CONTEXT, `kdp context use`), then
    /// bootstrap.servers of --command-config.
    #[arg(
        long,
        value_name = "HOST:PORT[,HOST:PORT...]",
        global = true,
        default_value = "",
        hide_default_value = true,
        env = "KDP_BOOTSTRAP_SERVER"
    )]
    pub bootstrap_server: String,
    #[command(flatten)]
    pub client: properties::ClientArgs,
    /// Bound on the whole command (connecting, retries included), e.g. 500ms, 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TIMEOUT, value_parser = crate::duration::parse,
          global = true)]
    pub timeout: Duration,
    /// The context (see `kdp context`) of a cluster command. Default: KDP_CONTEXT, then the
    /// current context; flags and KDP_BOOTSTRAP_SERVER override what it holds.
    #[arg(long, global = true, value_name = "CONTEXT", env = "KDP_CONTEXT")]
    pub context: Option<String>,
}

/// `--timeout` when none is given.
pub const DEFAULT_TIMEOUT: &str = "30s";

impl ClusterArgs {
    /// The flags to reach `bootstrap`, everything else as by default.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        ClusterArgs {
            bootstrap_server: bootstrap.into(),
            client: properties::ClientArgs::default(),
            timeout: crate::duration::parse(DEFAULT_TIMEOUT).unwrap_or(Duration::from_secs(30)),
            context: None,
        }
    }
}

/// The connection flags at the top level, so that they may come before the
/// subcommand: [`ClusterArgs`] itself, its flags hidden there (each command
/// documents them in its own help) but `--context`, which every command
/// takes.
#[derive(Debug, Clone)]
pub struct TopLevel(pub ClusterArgs);

/// The connection flags that the top level's help leaves to each command's.
const HIDDEN_AT_TOP: &[&str] = &[
    "bootstrap_server",
    "command_config",
    "command_property",
    "timeout",
];

fn hidden_at_top(cmd: clap::Command) -> clap::Command {
    HIDDEN_AT_TOP
        .iter()
        .fold(cmd, |cmd, id| cmd.mut_arg(id, |a| a.hide(true)))
}

impl clap::FromArgMatches for TopLevel {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        ClusterArgs::from_arg_matches(matches).map(TopLevel)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

impl clap::Args for TopLevel {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        hidden_at_top(ClusterArgs::augment_args(cmd))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        hidden_at_top(ClusterArgs::augment_args_for_update(cmd))
    }
}

/// A connected client and the one bound on time every step of the command
/// draws on.
pub struct Connected {
    /// The client.
    pub client: Arc<Client>,
    /// The command's `--timeout`, its request timeout and retry policy.
    pub bound: TimeBound,
    /// The SASL user the config names (`User:NAME`), for audit records;
    /// `None` when the config names none (PLAINTEXT, SSL, OAUTHBEARER).
    pub principal: Option<String>,
}

impl Connected {
    /// Describe options over `topics` and `broker_id`.
    pub fn describe_options(
        &self,
        topics: Option<Vec<TopicSelection>>,
        broker_id: Option<i32>,
    ) -> DescribeOptions {
        DescribeOptions {
            topics,
            broker_id,
            ..Default::default()
        }
    }
}

/// Connects as `args` say; on failure prints why (prefixed `kdp:`) and
/// returns the exit status.
pub async fn connect(args: &ClusterArgs) -> Result<Connected, i32> {
    // the command's one bound: its deadline starts now
    let bound = TimeBound::after(args.timeout);
    let bootstrap = BrokerAddress::parse_list(&args.bootstrap_server).map_err(|e| {
        fail!("--bootstrap-server: {e}");
        exit::USAGE
    })?;
    let props = args.client.load().map_err(|msg| {
        fail!("{msg}");
        exit::USAGE
    })?;
    for warning in props.warnings() {
        eprintln!("{warning}");
    }
    let principal = match &props.security.sasl {
        Some(
            kdp_client::security::SaslConfig::Plain { username, .. }
            | kdp_client::security::SaslConfig::Scram { username, .. },
        ) => Some(format!("User:{username}")),
        _ => None,
    };
    let (mut config, request_timeout) = client_config(&props, args.timeout).map_err(|msg| {
        fail!("{msg}");
        exit::USAGE
    })?;
    if std::io::stderr().is_terminal() {
        config.on_retry = Some(Arc::new(say_retrying));
    }
    // the bootstrap draws on the command's budget and says why it failed
    let bound = bound.with_request_timeout(request_timeout);
    match Client::connect_within(bootstrap, config, &bound).await {
        Ok(c) => Ok(Connected {
            client: Arc::new(c),
            bound,
            principal,
        }),
        Err(e) => {
            fail!("cannot reach the cluster: {e}");
            Err(exit::UNREACHABLE)
        }
    }
}

/// One line on stderr for what the client keeps retrying (told once per
/// operation), so a terminal is not left blank until the deadline.
fn say_retrying(what: &Retrying) {
    fail!("{what}");
}

/// The client settings the properties (security included) and a command's
/// timeout give; the second value is one request's bound.
pub fn client_config(
    props: &properties::ClientProps,
    timeout: Duration,
) -> Result<(ClientConfig, Duration), String> {
    let mut config = ClientConfig::default();
    props
        .security
        .apply(&mut config)
        .map_err(|e| e.to_string())?;
    config.connection.client_id = Some(props.client_id.clone().unwrap_or_else(|| "kdp".into()));
    let request_timeout = props
        .request_timeout
        .unwrap_or(Duration::from_secs(30))
        .min(timeout);
    config.connection.request_timeout = request_timeout;
    // keep trying the bootstrap list until the deadline, then say why it failed
    config.bootstrap_timeout = timeout;
    config.connect_timeout = props
        .connect_timeout
        .unwrap_or(Duration::from_secs(10))
        .min(timeout);
    Ok((config, request_timeout))
}

/// `--topic` and `--partition` as a selection; `None` is the whole cluster.
/// Each partition applies to every topic.
pub fn selection(topics: &[String], partitions: &[i32]) -> Option<Vec<TopicSelection>> {
    if topics.is_empty() {
        return None;
    }
    let partitions = (!partitions.is_empty()).then(|| {
        let mut ps = partitions.to_vec();
        ps.sort_unstable();
        ps.dedup();
        ps
    });
    let mut names = topics.to_vec();
    names.sort();
    names.dedup();
    Some(
        names
            .into_iter()
            .map(|name| TopicSelection {
                name,
                partitions: partitions.clone(),
            })
            .collect(),
    )
}

/// The joined describe (producers, their coordinators' transactions, the
/// partitions' offsets); a cluster that cannot be reached is reported on
/// stderr and gives the exit status.
pub async fn join(
    conn: &Connected,
    describe: DescribeOptions,
    open_only: bool,
) -> Result<Joined, i32> {
    join_with(conn, describe, open_only, |o| o).await
}

/// [`join`] with its options adjusted by `adjust` (e.g. candidates only).
pub async fn join_with(
    conn: &Connected,
    describe: DescribeOptions,
    open_only: bool,
    adjust: impl FnOnce(JoinOptions) -> JoinOptions,
) -> Result<Joined, i32> {
    let opts = adjust(JoinOptions::new(describe, open_only));
    reported(
        conn,
        kdp_workflows::join::join(&conn.client, &opts, &conn.bound).await,
    )
}

/// A join's answer as the commands report it: the cluster that could not
/// be reached as the exit status, each phase that ran out of time on stderr.
pub fn reported(conn: &Connected, joined: kdp_client::Result<Joined>) -> Result<Joined, i32> {
    let joined = joined.map_err(|e| exit::report(&e))?;
    for phase in &joined.unfinished {
        fail!(
            "{phase} did not answer within --timeout ({}): its results are partial",
            humantime::format_duration(conn.bound.deadline().budget())
        );
    }
    Ok(joined)
}

/// Reports on stderr each partition the join could not describe; how many,
/// with the phases that ran out of time ([`join`] named them), so that a
/// partial answer never exits 0.
pub fn report_failed_partitions(joined: &Joined) -> usize {
    let mut failed = Failures::new();
    for o in &joined.partitions {
        if let Err(e) = &o.result {
            failed.add(format!("{}-{}", o.topic, o.partition), e);
        }
    }
    failures::report("DescribeProducers failed", "partitions", &failed);
    joined.unfinished.len() + failed.len()
}

/// Runs a command on a fresh single-threaded runtime with stdout, locked
/// once, as its output.
pub fn block_on_stdout(command: impl AsyncFnOnce(&mut dyn std::io::Write) -> i32) -> i32 {
    block_on(async {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        command(&mut out).await
    })
}

/// Runs a command's future on a fresh single-threaded runtime.
pub fn block_on(f: impl std::future::Future<Output = i32>) -> i32 {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => {
            fail!("cannot start the async runtime: {e}");
            exit::PARTIAL
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {

    use kdp_domain::joined::JoinPhase;
    use kdp_domain::protocol::TxnProtocol;

    use super::*;

    /// A join whose configs ran out of time has no failed partition, but its
    /// answer (the threshold) is partial: the commands must not exit 0.
    #[test]
    fn a_phase_that_ran_out_counts_as_a_failure() {
        let joined = Joined {
            unfinished: vec![JoinPhase::DescribeConfigs],
            ..Joined::new(0, TxnProtocol::V1)
        };
        assert_eq!(report_failed_partitions(&joined), 1);
        let done = Joined {
            unfinished: Vec::new(),
            ..joined
        };
        assert_eq!(report_failed_partitions(&done), 0);
    }

    /// kdp-test-support's cluster: the client on it, within `budget`.
    pub(crate) async fn connected(
        cluster: &kdp_test_support::StallCluster,
        budget: Duration,
    ) -> Connected {
        let config = ClientConfig {
            connector: Arc::new(cluster.clone()),
            ..Default::default()
        };
        let client = Client::connect(cluster.bootstrap(), config).await.unwrap();
        Connected {
            client: Arc::new(client),
            bound: TimeBound::after(budget).with_request_timeout(Duration::from_secs(5)),
            principal: None,
        }
    }

    /// The same claim end to end: against the demo cluster with
    /// DescribeConfigs stalled, the join ends by the budget naming the phase,
    /// and what the commands count as failed is not zero.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_phase_makes_the_join_partial_and_counted() {
        let cluster = kdp_test_support::StallCluster::demo();
        let conn = connected(&cluster, Duration::from_secs(10)).await;
        cluster.stall(kdp_wire::api::DESCRIBE_CONFIGS);
        let start = tokio::time::Instant::now();
        let joined = join(&conn, conn.describe_options(None, None), true)
            .await
            .unwrap();
        assert!(
            start.elapsed() <= Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(joined.unfinished, vec![JoinPhase::DescribeConfigs]);
        assert!(report_failed_partitions(&joined) > 0);
    }

    /// Every partition answered with an error: each is reported, none is
    /// counted as checked.
    #[tokio::test(start_paused = true)]
    async fn partitions_answered_with_an_error_are_each_counted() {
        let cluster = kdp_test_support::StallCluster::demo();
        let conn = connected(&cluster, Duration::from_secs(10)).await;
        let denied = kdp_wire::ErrorCode::TOPIC_AUTHORIZATION_FAILED;
        cluster.fault(
            kdp_wire::api::DESCRIBE_PRODUCERS,
            kdp_test_support::Fault::Error(denied),
        );
        let joined = join(&conn, conn.describe_options(None, None), true)
            .await
            .unwrap();
        assert!(joined.summary.partitions > 0);
        assert!(joined
            .partitions
            .iter()
            .all(|o| o.result.as_ref().is_err_and(|e| e.code == denied)));
        assert_eq!(
            report_failed_partitions(&joined),
            joined.summary.partitions + joined.unfinished.len()
        );
    }
}
