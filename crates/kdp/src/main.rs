//! `kdp`: describe the producers of Kafka partitions, decode and encode the
//! DescribeProducers wire format, and run a mock cluster.

use std::process::ExitCode;

use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// An error line on stderr, `kdp: MESSAGE`: red on a terminal with colour on
/// (see `output::colour::error`), plain otherwise.
macro_rules! fail {
    ($($arg:tt)*) => {
        $crate::output::colour::emit(&$crate::output::colour::error(&format!($($arg)*)))
    };
}

mod cmd;
mod duration;
mod exit;
mod exporter;
mod fd_limit;
mod lifted;
mod malloc;
mod output;
mod progress;
mod properties;
mod signal;

/// Kafka's DescribeProducers API, for operators: which producers write to a
/// partition, which are zombies, which open transaction pins the last stable
/// offset.
#[derive(Parser)]
#[command(name = "kdp", version, propagate_version = true)]
#[command(after_help = "\
Start with `kdp demo` (no cluster needed), then `kdp describe --bootstrap-server HOST:PORT`.

The connection flags (--bootstrap-server, --command-config, --command-property, --timeout,
--context) and --output go before or after the subcommand. The cluster is, in this order:
--bootstrap-server, KDP_BOOTSTRAP_SERVER, the context's (--context, KDP_CONTEXT, `kdp context
use`), bootstrap.servers of the properties. Kafka's names work too: `kdp transactions` takes
kafka-transactions.sh's subcommands (list, describe, describe-producers, find-hanging, abort,
forceTerminateTransaction).

Tables fit the terminal (or COLUMNS): the least important columns are shortened or left out
first; -o wide shows all, --columns A,B picks them, --no-headers drops the header line.
Logging: -v, -vv, or RUST_LOG=kdp=debug. `kdp explain NAME` explains a client exception or a
verdict; `kdp completions SHELL` and `kdp man` install completion and manual pages.")]
struct Cli {
    /// More logging on stderr (-v info, -vv debug, -vvv trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    #[command(flatten)]
    globals: cmd::globals::Globals,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe the producers of partitions of a real cluster.
    #[command(alias = "describe-producers")]
    Describe(cmd::describe::Args),
    /// Find open transactions no coordinator will end (hanging) or whose markers never land (stuck).
    FindHanging(cmd::find_hanging::Args),
    /// Consumer groups held at a pinned LSO, the transaction pinning it, and what unblocks it.
    Blocked(cmd::blocked::Args),
    /// Consumer lag in records a read_committed consumer would receive, beside Kafka's offset lag.
    Lag(cmd::lag::Args),
    /// Transactional ids' state changes from the transaction log: who fenced whom, and when.
    History(cmd::history::Args),
    /// Which application, instance and task writes each transactional id, and whether it is still there.
    Owners(cmd::owners::Args),
    /// Abort one partition's open transaction at its leader (raw; prefer force-terminate).
    Abort(cmd::abort::Args),
    /// End transactional ids' transactions at their coordinators and fence their producers.
    #[command(alias = "forceTerminateTransaction")]
    ForceTerminate(cmd::force_terminate::Args),
    /// List and describe transactions at their coordinators; every kafka-transactions.sh subcommand.
    Transactions(cmd::transactions_tool::Command),
    /// Ask every replica of each partition and show where their producer state differs.
    CompareReplicas(cmd::compare_replicas::Args),
    /// A partition's record batches over the wire, with each producer's sequence judged.
    Batches(cmd::batches::Args),
    /// Producer ids each broker holds, by topic: expiry, epochs near 32767, prefixes, churn.
    Producers(cmd::producers::Args),
    /// Name clusters (bootstrap list, properties) once and use them by name.
    Context(cmd::context::Args),
    /// Explain a client exception or a kdp verdict, and the kdp command that answers it.
    Explain(cmd::explain::Args),
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
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(cmd::completions::Args),
    /// Write the manual pages, one per subcommand.
    Man(cmd::man::Args),
}

/// The clap definition of the whole command line: what `kdp completions`
/// and `kdp man` are generated from.
fn definition() -> clap::Command {
    Cli::command()
}

/// The flag whose long runs are lifted out before clap parses
/// (`kdp transactions describe`, one occurrence per id): [`lifted`].
const REPEATED: &str = "--transactional-id";

/// clap's matches of `argv`, and the values of a run of [`REPEATED`]
/// lifted out of it, which belong after the values clap gives for
/// `transactions describe --transactional-id`. The lifted parse is kept
/// only when it is `transactions describe` and clap took every occurrence
/// left as that flag; otherwise the whole command line is parsed (and
/// any error is clap's own for it).
fn matches_of(argv: Vec<std::ffi::OsString>) -> clap::error::Result<(clap::ArgMatches, Lift)> {
    if let Some(l) = lifted::lift(&argv, REPEATED) {
        if let Ok(m) = definition().try_get_matches_from(&l.argv) {
            let ids = m
                .subcommand_matches("transactions")
                .and_then(|t| t.subcommand_matches("describe"))
                .and_then(|d| d.try_get_many::<String>("transactional_id").ok().flatten())
                .map_or(0, Iterator::count);
            if ids == l.left {
                return Ok((m, (l.at, l.values)));
            }
        }
    }
    definition()
        .try_get_matches_from(argv)
        .map(|m| (m, (0, Vec::new())))
}

/// Lifted `--transactional-id` values, and where they go among clap's.
type Lift = (usize, Vec<String>);

/// The parsed command line, the lifted `--transactional-id` values put
/// back after clap's.
fn parse_cli(matches: &mut clap::ArgMatches, (at, lifted): Lift) -> clap::error::Result<Cli> {
    let mut cli = Cli::from_arg_matches_mut(matches)?;
    if let Command::Transactions(t) = &mut cli.command {
        if let cmd::transactions_tool::Sub::Coordinator(cmd::transactions::Sub::Describe {
            transactional_id,
            ..
        }) = &mut t.command
        {
            let at = at.min(transactional_id.len());
            transactional_id.splice(at..at, lifted);
        }
    }
    Ok(cli)
}

fn main() -> ExitCode {
    let (mut matches, lifted) = match matches_of(std::env::args_os().collect()) {
        Ok(m) => m,
        Err(e) => e.exit(),
    };
    let sources = cmd::globals::Sources::of(&matches);
    let mut cli = match parse_cli(&mut matches, lifted) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let no_color = std::env::var_os("NO_COLOR");
    let stderr_colour = cli
        .globals
        .color
        .enabled(std::io::stderr().is_terminal(), no_color.as_deref());
    let stdout_colour = cli
        .globals
        .color
        .enabled(std::io::stdout().is_terminal(), no_color.as_deref());
    output::colour::set_stderr(stderr_colour);
    // a service logs what it does (info) by default; the one-shot commands warn only
    let (default_level, json) = match &cli.command {
        Command::Exporter(a) => ("info", a.log_format == cmd::exporter::LogFormat::Json),
        _ => ("warn", false),
    };
    init_logging(cli.verbose, default_level, json, stderr_colour);
    output::failures::set_all_keys(cli.verbose > 0);
    let wide = match prepare(&mut cli.command, &cli.globals, &sources) {
        Ok(w) => w,
        Err(msg) => {
            eprintln!("{}", output::colour::error(&msg));
            return ExitCode::from(exit::USAGE as u8);
        }
    };
    output::table::set_layout(output::table::Layout {
        width: cmd::globals::screen_width(),
        wide,
        columns: cli.globals.columns.clone(),
        no_headers: cli.globals.no_headers,
        colour: stdout_colour,
    });
    let code = match cli.command {
        Command::Describe(args) => cmd::describe::run(args),
        Command::FindHanging(args) => cmd::find_hanging::run(args),
        Command::Blocked(args) => cmd::blocked::run(args),
        Command::Lag(args) => cmd::lag::run(args),
        Command::History(args) => cmd::history::run(args),
        Command::Owners(args) => cmd::owners::run(args),
        Command::Abort(args) => cmd::abort::run(args),
        Command::ForceTerminate(args) => cmd::force_terminate::run(args),
        Command::Transactions(args) => cmd::transactions_tool::run(args),
        Command::CompareReplicas(args) => cmd::compare_replicas::run(args),
        Command::Batches(args) => cmd::batches::run(args),
        Command::Producers(args) => cmd::producers::run(args),
        Command::Context(args) => {
            cmd::context::run(args, cli.globals.connection.0.context.as_deref())
        }
        Command::Explain(args) => cmd::explain::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Encode(args) => cmd::encode::run(args),
        Command::MockBroker(args) => cmd::mock_broker::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Exporter(args) => cmd::exporter::run(args),
        Command::Completions(args) => cmd::completions::run(args, definition()),
        Command::Man(args) => cmd::man::run(args, definition()),
    };
    // an unknown --columns name is bad usage, whichever table refused it
    let code = if output::table::columns_refused() {
        exit::USAGE
    } else {
        code
    };
    ExitCode::from(code as u8)
}

/// Fills in each cluster command's connection (environment, context,
/// properties), turns `--output wide` into a table with every column (the
/// returned flag), and refuses connection flags where they mean nothing.
fn prepare(
    command: &mut Command,
    globals: &cmd::globals::Globals,
    matches: &cmd::globals::Sources,
) -> Result<bool, String> {
    use cmd::context::apply;
    let ctx = globals.connection.0.context.as_deref();
    let mut wide = false;
    let mut table = |o: &mut output::Output| {
        if *o == output::Output::Wide {
            *o = output::Output::Table;
            wide = true;
        }
    };
    match command {
        Command::Describe(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::FindHanging(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Blocked(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Lag(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::History(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Owners(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Abort(a) => {
            cmd::globals::refuse_output(matches, "abort")?;
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::ForceTerminate(a) => {
            cmd::globals::refuse_output(matches, "force-terminate")?;
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::CompareReplicas(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Batches(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Producers(a) => {
            table(&mut a.output);
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
        }
        Command::Transactions(t) => {
            if let Some(o) = t.output_mut() {
                table(o);
            }
            if let cmd::transactions_tool::Sub::DescribeProducers(a) = &mut t.command {
                apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
            }
            for c in t.clusters_mut() {
                apply(ctx, &mut c.bootstrap_server, &mut c.client)?;
            }
        }
        Command::Exporter(a) => {
            cmd::globals::refuse_output(matches, "exporter")?;
            apply(ctx, &mut a.cluster.bootstrap_server, &mut a.cluster.client)?;
            // a scan is bounded by the interval when no --timeout says otherwise
            if !cmd::globals::given(matches, "timeout") {
                a.cluster.timeout = a.cluster.timeout.min(a.interval);
            }
        }
        Command::Demo(a) => {
            table(&mut a.output);
            cmd::globals::refuse_connection_flags(matches, "demo", false)?;
        }
        Command::Context(c) => {
            if !matches!(c.command, cmd::context::Sub::Add { .. }) {
                cmd::globals::refuse_connection_flags(matches, "context", true)?;
            }
        }
        Command::Decode(_) => cmd::globals::refuse_connection_flags(matches, "decode", true)?,
        Command::Encode(_) => cmd::globals::refuse_connection_flags(matches, "encode", true)?,
        Command::MockBroker(_) => {
            cmd::globals::refuse_connection_flags(matches, "mock-broker", true)?
        }
        Command::Explain(_) => cmd::globals::refuse_connection_flags(matches, "explain", true)?,
        Command::Completions(_) => {
            cmd::globals::refuse_connection_flags(matches, "completions", true)?
        }
        Command::Man(_) => cmd::globals::refuse_connection_flags(matches, "man", true)?,
    }
    Ok(wide)
}

/// Logs go to stderr, coloured only when `--color` says so for stderr
/// (by default: a terminal, and `NO_COLOR` unset or empty): escapes in a
/// log file or pipe are noise.
fn init_logging(verbose: u8, default_level: &str, json: bool, colour: bool) {
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
        .with_ansi(colour)
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        definition().debug_assert();
    }

    /// Connection flags before or after the subcommand give the same
    /// arguments, for every cluster command and Kafka's names.
    #[test]
    fn connection_flags_anywhere() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["kdp"];
            argv.extend_from_slice(args);
            Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"))
        };
        let b = "--bootstrap-server";
        for args in [
            &["transactions", "list", b, "h:1", "--timeout", "5s"][..],
            &["transactions", b, "h:1", "--timeout", "5s", "list"],
            &[b, "h:1", "--timeout", "5s", "transactions", "list"],
        ] {
            let Command::Transactions(t) = parse(args).command else {
                panic!("{args:?}")
            };
            let c = t.clusters_mut_ref();
            assert_eq!(c.bootstrap_server, "h:1", "{args:?}");
            assert_eq!(c.timeout, std::time::Duration::from_secs(5), "{args:?}");
        }
        for args in [
            &[
                "find-hanging",
                b,
                "h:1",
                "-o",
                "json",
                "--command-property",
                "client.id=x",
            ][..],
            &[
                b,
                "h:1",
                "-o",
                "json",
                "--command-property",
                "client.id=x",
                "find-hanging",
            ],
            &[
                "transactions",
                b,
                "h:1",
                "find-hanging",
                "--output",
                "json",
                "--command-property",
                "client.id=x",
            ],
        ] {
            let a = match parse(args).command {
                Command::FindHanging(a) => a,
                Command::Transactions(t) => match t.command {
                    cmd::transactions_tool::Sub::FindHanging(a) => a,
                    _ => panic!("{args:?}"),
                },
                _ => panic!("{args:?}"),
            };
            assert_eq!(a.cluster.bootstrap_server, "h:1", "{args:?}");
            assert_eq!(a.output, output::Output::Json, "{args:?}");
            assert_eq!(a.cluster.client.command_property.len(), 1, "{args:?}");
        }
        for args in [
            &["describe", b, "h:1", "--timeout", "2s"][..],
            &[b, "h:1", "--timeout", "2s", "describe"],
            &["describe-producers", b, "h:1", "--timeout", "2s"],
        ] {
            let Command::Describe(a) = parse(args).command else {
                panic!("{args:?}")
            };
            assert_eq!(a.cluster.bootstrap_server, "h:1", "{args:?}");
            assert_eq!(
                a.cluster.timeout,
                std::time::Duration::from_secs(2),
                "{args:?}"
            );
        }
        for args in [
            &[
                "forceTerminateTransaction",
                b,
                "h:1",
                "--transactional-id",
                "t",
            ][..],
            &[
                "transactions",
                b,
                "h:1",
                "forceTerminateTransaction",
                "--transactional-id",
                "t",
            ],
            &[
                "transactions",
                "force-terminate",
                "--transactional-id",
                "t",
                b,
                "h:1",
            ],
        ] {
            let a = match parse(args).command {
                Command::ForceTerminate(a) => a,
                Command::Transactions(t) => match t.command {
                    cmd::transactions_tool::Sub::ForceTerminate(a) => a,
                    _ => panic!("{args:?}"),
                },
                _ => panic!("{args:?}"),
            };
            assert_eq!(a.cluster.bootstrap_server, "h:1", "{args:?}");
        }
        let Command::Transactions(t) = parse(&[
            "transactions",
            "describe-producers",
            "--topic",
            "t",
            b,
            "h:1",
        ])
        .command
        else {
            panic!()
        };
        assert!(matches!(
            t.command,
            cmd::transactions_tool::Sub::DescribeProducers(_)
        ));
    }

    /// What `transactions describe` was given: (bootstrap, ids, output) or
    /// clap's error, rendered.
    type Described = Result<(String, Vec<String>, output::Output), String>;

    fn described(cli: clap::error::Result<Cli>) -> Described {
        let cli = cli.map_err(|e| format!("{:?}: {}", e.kind(), e.render()))?;
        match cli.command {
            Command::Transactions(t) => match t.command {
                cmd::transactions_tool::Sub::Coordinator(cmd::transactions::Sub::Describe {
                    transactional_id,
                    output,
                }) => Ok((t.cluster.bootstrap_server, transactional_id, output)),
                _ => Err("another subcommand".into()),
            },
            _ => Err("another command".into()),
        }
    }

    /// The lifted parse of repeated `--transactional-id` gives what clap
    /// gives for the whole command line, errors included, with Kafka's
    /// flag names and forms anywhere in the run.
    #[test]
    fn lifted_transactional_ids_parse_as_clap_does() {
        let t = "--transactional-id";
        let b = "--bootstrap-server";
        let cases: &[&[&str]] = &[
            &["transactions", b, "h:1", "describe", t, "a", t, "b", t, "c"],
            &[
                "transactions",
                b,
                "h:1",
                "describe",
                t,
                "c",
                t,
                "a",
                t,
                "c",
                "-o",
                "json",
            ],
            &[
                "transactions",
                "describe",
                t,
                "a",
                t,
                "b",
                b,
                "h:1",
                "--output",
                "json",
            ],
            &[
                "transactions",
                "describe",
                "--transactional-id=x",
                t,
                "a",
                t,
                "b",
                b,
                "h:1",
            ],
            &[
                "transactions",
                "describe",
                t,
                "a",
                t,
                "b",
                "-o",
                "json",
                t,
                "z",
                b,
                "h:1",
            ],
            &[
                "transactions",
                "describe",
                t,
                "a",
                t,
                "b",
                t,
                "-c",
                b,
                "h:1",
            ],
            &["transactions", "describe", t, "a", t, "b", t],
            &["transactions", "describe", t, "a", t, "b", "--", t, "c"],
            &["transactions", "describe", t, "a", t, "b", "--nope"],
            &["transactions", "describe", t, "a", t, "b", "--help"],
            &["transactions", "describe", "-o", t, "a", t, "b", b, "h:1"],
            &["transactions", t, "a", t, "b", "describe", b, "h:1"],
            &["transactions", "list", t, "a", t, "b", b, "h:1"],
            &["force-terminate", t, "a", t, "b", b, "h:1"],
            &["transactions", "describe", b, "h:1"],
            &["transactions", "describe", t, "a", b, "h:1"],
        ];
        for args in cases {
            let argv: Vec<std::ffi::OsString> = std::iter::once("kdp")
                .chain(args.iter().copied())
                .map(Into::into)
                .collect();
            let whole = described(Cli::try_parse_from(&argv));
            let lifted =
                described(matches_of(argv.clone()).and_then(|(mut m, l)| parse_cli(&mut m, l)));
            assert_eq!(lifted, whole, "{args:?}");
        }
        // the first case, spelled out: every id, in the order given
        let argv = [
            "kdp",
            "transactions",
            b,
            "h:1",
            "describe",
            t,
            "a",
            t,
            "b",
            t,
            "c",
        ];
        let (mut m, lifted) = matches_of(argv.iter().map(Into::into).collect()).expect("parses");
        assert_eq!(lifted, (1, vec!["b".to_string(), "c".into()]), "the run");
        let (_, ids, _) = described(parse_cli(&mut m, lifted)).expect("describe");
        assert_eq!(ids, ["a", "b", "c"]);
    }
}
