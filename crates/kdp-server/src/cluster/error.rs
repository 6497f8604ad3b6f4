//! Why a cluster file is refused: the JSON path of the offending value and
//! what is wrong with it.

/// A cluster file that does not parse or does not make sense.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ClusterError {
    /// JSON path of the offending value, e.g. `topics[0].partitions[3].leader`
    /// (`.` for the document itself).
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl ClusterError {
    pub(super) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ClusterError {
            path: path.into(),
            message: message.into(),
        }
    }
}
