//! `kdp`: describe the producers of Kafka partitions, decode and encode the
//! DescribeProducers wire format, and run a mock cluster.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod duration;
mod exit;
mod exporter;
mod fd_limit;
mod output;
mod progress;
mod properties;
mod signal;

/// Kafka's DescribeProducers API, for operators: which producers write to a
/// partition, which are zombies, which open transaction pins the last stable
/// offset.
#[derive(Parser)]
#[command(name = "kdp", version, propagate_version = true)]
#[command(after_help = "Start with `kdp demo` (no cluster needed), then \
`kdp describe --bootstrap-server HOST:PORT`.\nLogging: -v, -vv, or RUST_LOG=kdp=debug.")]
struct Cli {
    /// More logging on stderr (-v info, -vv debug, -vvv trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe the producers of partitions of a real cluster.
    Describe(cmd::describe::Args),
    /// Find open transactions no coordinator will end (hanging) or whose markers never land (stuck).
    FindHanging(cmd::find_hanging::Args),
    /// Abort one partition's open transaction at its leader (raw; prefer force-terminate).
    Abort(cmd::abort::Args),
    /// End transactional ids' transactions at their coordinators and fence their producers.
    ForceTerminate(cmd::force_terminate::Args),
    /// List and describe transactions at their coordinators.
    Transactions(cmd::transactions::Command),
    /// Ask every replica of each partition and show where their producer state differs.
    CompareReplicas(cmd::compare_replicas::Args),
    /// Decode DescribeProducers wire bytes into JSON in the seed's shape.
    Decode(cmd::decode::DecodeArgs),
    /// Encode JSON in the seed's shape into DescribeProducers wire bytes.
    Encode(cmd::encode::EncodeArgs),
    /// Run a mock cluster (every broker of a cluster file) that Kafka clients accept.
    MockBroker(cmd::mock_broker::Args),
    /// Start a built-in mock cluster and describe it: kdp without a cluster.
    Demo(cmd::demo::Args),
    /// Scan a cluster on an interval and serve producer state to Prometheus.
    Exporter(cmd::exporter::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // a service logs what it does (info) by default; the one-shot commands warn only
    let (default_level, json) = match &cli.command {
        Command::Exporter(a) => ("info", a.log_format == cmd::exporter::LogFormat::Json),
        _ => ("warn", false),
    };
    init_logging(cli.verbose, default_level, json);
    let code = match cli.command {
        Command::Describe(args) => cmd::describe::run(args),
        Command::FindHanging(args) => cmd::find_hanging::run(args),
        Command::Abort(args) => cmd::abort::run(args),
        Command::ForceTerminate(args) => cmd::force_terminate::run(args),
        Command::Transactions(args) => cmd::transactions::run(args),
        Command::CompareReplicas(args) => cmd::compare_replicas::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Encode(args) => cmd::encode::run(args),
        Command::MockBroker(args) => cmd::mock_broker::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Exporter(args) => cmd::exporter::run(args),
    };
    ExitCode::from(code as u8)
}

/// Logs go to stderr, coloured only when stderr is a terminal and `NO_COLOR`
/// (no-color.org) is unset or empty: escapes in a log file or pipe are noise.
fn init_logging(verbose: u8, default_level: &str, json: bool) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => default_level,
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    if json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_current_span(false)
            .init();
        return;
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .init();
}

fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::colour;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())));
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
