//! The flags every command takes before or after its subcommand: the
//! connection flags (the one declaration,
//! [`ClusterArgs`](crate::cmd::cluster::ClusterArgs), which each
//! cluster command flattens too, so that clap hands a value given before
//! the subcommand to it), colour and the table layout.

use clap::parser::ValueSource;

use crate::cmd::cluster::TopLevel;
use crate::output::colour::ColorChoice;
use crate::output::Output;

/// The top-level flags. The connection flags but `--context` are hidden
/// here: each command that uses them documents them in its own help.
#[derive(clap::Args, Debug)]
pub struct Globals {
    #[command(flatten)]
    pub connection: TopLevel,
    #[arg(long, short = 'o', global = true, hide = true, value_enum)]
    pub output: Option<Output>,
    /// Colour verdicts, flags and errors: auto (on a terminal, unless NO_COLOR is set), always,
    /// never.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Print these table columns, in this order (header names, any case).
    #[arg(long, global = true, value_delimiter = ',', value_name = "A,B,...")]
    pub columns: Vec<String>,
    /// Print tables without their header line (for scripts).
    #[arg(long, global = true)]
    pub no_headers: bool,
}

/// The flags that reach a cluster.
const CONNECTION: &[&str] = &[
    "bootstrap_server",
    "command_config",
    "command_property",
    "timeout",
    "context",
];

/// Where the flags checked after parsing got their values, read from
/// clap's matches before these are moved into the typed command line:
/// moved, not copied, since a copy of the matches copies every value
/// (thousands of `--transactional-id`s).
pub struct Sources(Vec<(&'static str, Option<ValueSource>)>);

impl Sources {
    /// The sources of the connection flags and `--output` in `matches`.
    pub fn of(matches: &clap::ArgMatches) -> Sources {
        let ids = CONNECTION.iter().chain(&["output"]);
        Sources(ids.map(|id| (*id, matches.value_source(id))).collect())
    }

    fn value_source(&self, id: &str) -> Option<ValueSource> {
        self.0.iter().find(|(k, _)| *k == id).and_then(|(_, s)| *s)
    }
}

/// Refuses connection flags (and `--output`, unless the command has one)
/// given to a command that does not talk to a cluster: accepted, they would
/// be silently ignored.
pub fn refuse_connection_flags(
    matches: &Sources,
    command: &str,
    output_too: bool,
) -> Result<(), String> {
    let extra: &[&str] = if output_too { &["output"] } else { &[] };
    for id in CONNECTION.iter().chain(extra) {
        if matches.value_source(id) == Some(ValueSource::CommandLine) {
            return Err(format!(
                "--{} does not apply to `kdp {command}`",
                id.replace('_', "-")
            ));
        }
    }
    Ok(())
}

/// Whether the user gave flag `id` (on the command line or through its
/// environment variable), rather than leaving it at its default.
pub fn given(matches: &Sources, id: &str) -> bool {
    matches!(
        matches.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// Refuses `--output` for a command without one.
pub fn refuse_output(matches: &Sources, command: &str) -> Result<(), String> {
    if matches.value_source("output") == Some(ValueSource::CommandLine) {
        return Err(format!("--output does not apply to `kdp {command}`"));
    }
    Ok(())
}

/// The width tables fit: `COLUMNS` when set to a number, else the
/// terminal's when stdout is one; `None` (every column in full) when stdout
/// is piped without `COLUMNS`.
pub fn screen_width() -> Option<usize> {
    use std::io::IsTerminal;
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    if columns.is_some() {
        return columns;
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
        .filter(|&c| c > 0)
}
