//! `--watch DURATION`: the command again every DURATION until Ctrl-C
//! (exit 0). On a terminal each round redraws the screen in place under a
//! title line, and lines that were not on the previous screen are
//! highlighted (with colour on); into a pipe or a file each round is
//! written whole (one JSON document, or its JSON lines, per round) so a
//! reader can take them one by one.

use std::collections::HashSet;
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use crate::cmd::cluster;
use crate::exit;
use crate::output::table;
use crate::signal::Signals;

/// The `--watch` flag, shared by the commands that take it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WatchArgs {
    /// Run again every DURATION (e.g. 5s, 1m) until Ctrl-C, which exits 0:
    /// on a terminal the screen is redrawn and what changed is highlighted;
    /// piped, each round is written whole (one JSON document per round).
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub watch: Option<Duration>,
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = crate::duration::parse_age(s)?;
    if d < Duration::from_millis(100) {
        return Err("the interval must be at least 100ms".into());
    }
    Ok(d)
}

/// Runs `round` once (no `every`), or every `every` until SIGINT/SIGTERM.
/// `title` heads each redrawn screen (the command as typed).
pub fn run(
    every: Option<Duration>,
    title: &str,
    round: impl AsyncFnMut(&mut dyn Write) -> i32,
) -> i32 {
    match every {
        None => cluster::block_on_stdout(round),
        Some(every) => cluster::block_on(watch(every, title, round)),
    }
}

async fn watch(
    every: Duration,
    title: &str,
    mut round: impl AsyncFnMut(&mut dyn Write) -> i32,
) -> i32 {
    let mut signals = Signals::install();
    let terminal = io::stdout().is_terminal();
    let mut screen = Screen {
        terminal,
        colour: terminal && table::layout().colour,
        previous: HashSet::new(),
    };
    let mut n = 0u64;
    loop {
        n += 1;
        let mut buf = Vec::new();
        let code = tokio::select! {
            code = round(&mut buf) => code,
            sig = signals.recv() => return stopped(sig),
        };
        if let Err(e) = screen.draw(title, every, n, code, &buf) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return exit::OK; // the reader has what it wanted
            }
            fail!("cannot write output: {e}");
            return exit::PARTIAL;
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            sig = signals.recv() => return stopped(sig),
        }
    }
}

fn stopped(signal: &str) -> i32 {
    tracing::debug!("--watch stopped by {signal}");
    exit::OK
}

/// What the last round showed, to highlight what is new.
struct Screen {
    terminal: bool,
    colour: bool,
    previous: HashSet<String>,
}

impl Screen {
    fn draw(
        &mut self,
        title: &str,
        every: Duration,
        n: u64,
        code: i32,
        buf: &[u8],
    ) -> io::Result<()> {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        if !self.terminal {
            out.write_all(buf)?;
            return out.flush();
        }
        let text = String::from_utf8_lossy(buf);
        let mut frame = String::with_capacity(text.len() + 256);
        // home, clear the screen: the round replaces the last one in place
        frame.push_str("\x1b[H\x1b[2J");
        let status = match code {
            exit::OK => String::new(),
            c => format!("  (exit {c})"),
        };
        frame.push_str(&format!(
            "Every {}: {title}  round {n}, {}{status}\n\n",
            humantime::format_duration(every),
            crate::output::Rfc3339::at(kdp_workflows::clock::now_ms())
                .map(|t| t.to_string())
                .unwrap_or_default()
        ));
        let mut seen = HashSet::with_capacity(self.previous.len());
        for line in text.lines() {
            let changed = n > 1 && !self.previous.contains(line);
            if changed && self.colour {
                // reverse video: what differs from the last round
                frame.push_str("\x1b[7m");
                frame.push_str(line);
                frame.push_str("\x1b[0m\n");
            } else {
                frame.push_str(line);
                frame.push('\n');
            }
            seen.insert(line.to_string());
        }
        self.previous = seen;
        out.write_all(frame.as_bytes())?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_below_100ms_is_refused() {
        assert!(parse_interval("10ms").is_err());
        assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
    }
}
