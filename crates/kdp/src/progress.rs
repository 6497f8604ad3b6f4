//! A progress bar on stderr for long scans, shared by the commands that walk
//! many partitions.

use std::io::{self, IsTerminal};

/// Partitions from which on a progress bar is drawn (stderr on a terminal only).
const PROGRESS_MIN_PARTITIONS: u64 = 1000;

/// A progress bar on stderr, only on a terminal and only for many partitions.
pub struct Progress {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
    planned: u64,
    done: u64,
}

impl Progress {
    pub fn new() -> Self {
        Progress {
            enabled: io::stderr().is_terminal(),
            bar: None,
            planned: 0,
            done: 0,
        }
    }

    /// `n` more partitions will be described.
    pub fn planned(&mut self, n: u64) {
        self.planned += n;
        if let Some(bar) = &self.bar {
            bar.set_length(self.planned);
        } else if self.enabled && self.planned >= PROGRESS_MIN_PARTITIONS {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(self.planned),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} partitions [{bar:30}] {elapsed}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(self.done);
            self.bar = Some(bar);
        }
    }

    /// `n` more partitions were described.
    pub fn done(&mut self, n: u64) {
        self.done += n;
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
        }
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
