//! Colour on a terminal only: `--color auto` (the default) colours when the
//! stream is a terminal and `NO_COLOR` (no-color.org) is unset or empty;
//! `always` and `never` decide regardless. Escapes in a pipe or a file are
//! noise for the next program.

use kdp_domain::severity::Severity;

/// `--color`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether a stream gets colour: `terminal` is whether it is one,
    /// `no_color` the value of `NO_COLOR`.
    pub fn enabled(self, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

/// What a coloured cell means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// No colour.
    Plain,
    /// Healthy (green).
    Good,
    /// Worth a look (yellow).
    Warn,
    /// Needs action (red).
    Bad,
    /// Not decided (magenta).
    Unknown,
}

/// `text` in `style`'s colour (SGR escapes), or as it is for [`Style::Plain`].
pub fn paint(style: Style, text: &str) -> String {
    let code = match style {
        Style::Plain => return text.to_string(),
        Style::Good => "32",
        Style::Warn => "33",
        Style::Bad => "31",
        Style::Unknown => "35",
    };
    if text.is_empty() {
        return String::new();
    }
    format!("\x1b[{code}m{text}\x1b[0m")
}

impl From<Severity> for Style {
    /// A verdict's colour, from its type: ok green, warning yellow,
    /// problem red, unknown magenta.
    fn from(s: Severity) -> Style {
        match s {
            Severity::Ok => Style::Good,
            Severity::Warning => Style::Warn,
            Severity::Problem => Style::Bad,
            Severity::Unknown => Style::Unknown,
        }
    }
}

static STDERR_COLOUR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets whether [`error`] colours (from `--color` and stderr).
pub fn set_stderr(colour: bool) {
    STDERR_COLOUR.store(colour, std::sync::atomic::Ordering::Relaxed);
}

thread_local! {
    /// Lines a test captures instead of stderr (see [`capture`]).
    static CAPTURED: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Writes one line to stderr (or to the test's capture on this thread).
pub fn emit(line: &str) {
    let kept = CAPTURED.with_borrow_mut(|c| c.as_mut().map(|c| c.push(line.to_string())));
    if kept.is_none() {
        eprintln!("{line}");
    }
}

/// From now on this thread's [`emit`] lines are kept, not written, until
/// [`captured`] takes them (a test of what a command says, on a
/// current-thread runtime).
#[cfg(test)]
pub fn capture() {
    CAPTURED.with_borrow_mut(|c| *c = Some(Vec::new()));
}

/// The lines kept since [`capture`]; stderr again from now on.
#[cfg(test)]
pub fn captured() -> Vec<String> {
    CAPTURED.with_borrow_mut(|c| c.take().unwrap_or_default())
}

/// An error line for stderr: `kdp: MESSAGE`, red on a terminal.
pub fn error(message: &str) -> String {
    let line = format!("kdp: {message}");
    if STDERR_COLOUR.load(std::sync::atomic::Ordering::Relaxed) {
        paint(Style::Bad, &line)
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        let auto = ColorChoice::Auto;
        assert!(auto.enabled(true, None));
        assert!(auto.enabled(true, Some("".as_ref())));
        assert!(!auto.enabled(true, Some("1".as_ref())));
        assert!(!auto.enabled(false, None));
        assert!(ColorChoice::Always.enabled(false, Some("1".as_ref())));
        assert!(!ColorChoice::Never.enabled(true, None));
        assert_eq!(paint(Style::Bad, "x"), "\x1b[31mx\x1b[0m");
        assert_eq!(paint(Style::Plain, "x"), "x");
    }
}
