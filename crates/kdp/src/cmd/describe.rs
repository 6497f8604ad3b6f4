//! Not yet built.

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> i32 {
    eprintln!("kdp: not yet implemented");
    crate::exit::USAGE
}
