//! How much a verdict asks of an operator: one scale for every typed
//! verdict, so that output styles a verdict from its type, never from its
//! text.

/// How much a verdict asks of an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Checked, and fine.
    Ok,
    /// Worth a look; nothing is broken yet.
    Warning,
    /// Needs action.
    Problem,
    /// Not decided: kdp could not tell.
    Unknown,
}
