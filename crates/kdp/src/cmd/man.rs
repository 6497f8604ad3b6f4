//! `kdp man`: the manual pages, generated from the same clap definitions as
//! `--help` and `kdp completions`: `kdp.1` lists every subcommand, and each
//! subcommand has its page (`kdp-find-hanging.1`, `kdp-transactions-list.1`).

use std::path::PathBuf;

use crate::exit;

/// `kdp man`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Example:
  kdp man --dir ~/.local/share/man/man1 && man kdp-find-hanging")]
pub struct Args {
    /// The directory to write the pages to (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

/// Writes the pages of `definition` (the whole command line) to `--dir`.
pub fn run(args: Args, definition: clap::Command) -> i32 {
    let written = std::fs::create_dir_all(&args.dir)
        .and_then(|()| clap_mangen::generate_to(definition, &args.dir));
    match written {
        Ok(()) => {
            eprintln!("kdp: manual pages written to {}", args.dir.display());
            exit::OK
        }
        Err(e) => {
            eprintln!(
                "{}",
                crate::output::colour::error(&format!(
                    "cannot write the manual pages to {}: {e}",
                    args.dir.display()
                ))
            );
            exit::PARTIAL
        }
    }
}
