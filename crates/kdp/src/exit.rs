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

/// The status for a request that failed as a whole: bad input (a broker
/// the cluster does not have) is usage, a cluster that could not be reached
/// (or TLS/SASL that failed) is unreachable, anything else a failed request.
pub fn for_error(e: &kdp_client::Error) -> i32 {
    if e.is_bad_input() {
        USAGE
    } else if e.is_connection_error() || e.is_fatal() {
        UNREACHABLE
    } else {
        PARTIAL
    }
}

/// Prints why a request failed as a whole and gives its status.
pub fn report(e: &kdp_client::Error) -> i32 {
    let code = for_error(e);
    // red on a terminal (see output::colour)
    if code == UNREACHABLE {
        eprintln!(
            "{}",
            crate::output::colour::error(&format!("cannot reach the cluster: {e}"))
        );
    } else {
        eprintln!("{}", crate::output::colour::error(&e.to_string()));
    }
    code
}
