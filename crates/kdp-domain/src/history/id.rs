//! One transactional id's history, or why it could not be read.

use kdp_wire::coordinator::txn_log::TRANSACTION_STATE_TOPIC;
use kdp_wire::ErrorCode;

use crate::history::changes::{state_changes, LogRecord, StateChange};
use crate::history::reach::Reach;

/// A record of the id whose key or value did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecoded {
    /// Its offset.
    pub offset: i64,
    /// Why (field path and byte offset).
    pub error: String,
}

/// One transactional id's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The transactional id.
    pub transactional_id: String,
    /// How much of its partition was read.
    pub reach: Reach,
    /// Its state changes, in log order.
    pub changes: Vec<StateChange>,
    /// Records of the partition that did not decode (a key or value of a
    /// version kdp does not know, or broken bytes); they may belong to the
    /// id.
    pub undecoded: Vec<Undecoded>,
}

impl History {
    /// The id's history among a partition's decoded `records`.
    pub fn build(
        transactional_id: &str,
        records: &[LogRecord],
        reach: Reach,
        undecoded: Vec<Undecoded>,
    ) -> History {
        let changes = state_changes(transactional_id, records, &reach.holes);
        History {
            transactional_id: transactional_id.to_string(),
            reach,
            changes,
            undecoded,
        }
    }

    /// The changes that started another producer instance.
    pub fn instance_changes(&self) -> impl Iterator<Item = &StateChange> {
        self.changes.iter().filter(|c| c.instance_change)
    }
}

/// Why an id's history could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryError {
    /// The broker refused (`code`); `advice` names the missing ACL.
    Denied {
        /// The error code (TOPIC_AUTHORIZATION_FAILED).
        code: ErrorCode,
        /// What to grant, as a `kafka-acls.sh` command.
        advice: String,
    },
    /// The cluster has no `__transaction_state` topic: no transactional
    /// producer ever ran on it.
    NoTransactionLog,
    /// The partition could not be read (the error).
    Failed(String),
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::Denied { code, advice } => write!(f, "{code}: {advice}"),
            HistoryError::NoTransactionLog => write!(
                f,
                "the cluster has no {TRANSACTION_STATE_TOPIC} topic (no transactional producer has run on it)"
            ),
            HistoryError::Failed(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for HistoryError {}

/// One asked-for id: its partition (when the partition count was known)
/// and its history, or why there is none.
#[derive(Debug, Clone)]
pub struct IdHistory {
    /// The transactional id.
    pub transactional_id: String,
    /// Its `__transaction_state` partition, by Kafka's hash rule.
    pub partition: Option<i32>,
    /// The history.
    pub result: Result<History, HistoryError>,
}

/// What to grant when reading `__transaction_state` was refused.
pub fn missing_acl(code: ErrorCode) -> Option<String> {
    match code {
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => Some(format!(
            "reading the transaction log needs READ on topic {TRANSACTION_STATE_TOPIC} (READ \
             includes the DESCRIBE that Metadata and ListOffsets need): kafka-acls.sh \
             --bootstrap-server <broker> --add --allow-principal User:<principal> --operation Read \
             --topic {TRANSACTION_STATE_TOPIC}"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_read_names_the_acl() {
        let advice = missing_acl(ErrorCode::TOPIC_AUTHORIZATION_FAILED).unwrap();
        assert!(
            advice.contains("--operation Read --topic __transaction_state"),
            "{advice}"
        );
        assert_eq!(missing_acl(ErrorCode::NOT_LEADER_OR_FOLLOWER), None);
    }
}
