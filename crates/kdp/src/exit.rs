//! Exit statuses, the same for every subcommand.

/// Everything asked for was done.
pub const OK: i32 = 0;
/// Malformed input, or some partitions answered with errors (the rest was printed).
pub const PARTIAL: i32 = 1;
/// Bad usage (clap also exits with 2).
pub const USAGE: i32 = 2;
/// The cluster could not be reached.
pub const UNREACHABLE: i32 = 3;
/// A diagnosis found something: a hanging or stuck transaction, diverged
/// replicas.
pub const FOUND: i32 = 4;
