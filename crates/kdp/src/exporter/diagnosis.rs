//! The diagnosis input of the exporter: hanging and stuck transactions,
//! fenced producers, diverged replicas and the records an open transaction
//! blocks. Its metrics are registered today (so rules and dashboards can use
//! them) and stay without series until a [`Diagnose`] source feeds them:
//! [`ClusterDiagnosis`] (the joined scan of `kdp find-hanging`), called
//! after each scan, or the test hook [`FileDiagnosis`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use kdp_client::Client;
use serde::Deserialize;

/// Why a transaction is reported. A closed set: it becomes the `reason`
/// label, and labels must stay bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Hanging: the coordinator has no transaction for this producer.
    NoTransaction,
    /// Hanging: the partition is not in the coordinator's transaction.
    PartitionNotInTransaction,
    /// Stuck: PrepareCommit for longer than the timeout, markers not written.
    PrepareCommit,
    /// Stuck: PrepareAbort for longer than the timeout, markers not written.
    PrepareAbort,
}

impl Reason {
    pub const ALL: [Reason; 4] = [
        Reason::NoTransaction,
        Reason::PartitionNotInTransaction,
        Reason::PrepareCommit,
        Reason::PrepareAbort,
    ];

    /// The `reason` label value.
    pub fn label(self) -> &'static str {
        match self {
            Reason::NoTransaction => "no_transaction",
            Reason::PartitionNotInTransaction => "partition_not_in_transaction",
            Reason::PrepareCommit => "prepare_commit",
            Reason::PrepareAbort => "prepare_abort",
        }
    }

    /// Stuck (the coordinator still has it, its markers never landed) rather
    /// than hanging (the coordinator does not know it).
    pub fn is_stuck(self) -> bool {
        matches!(self, Reason::PrepareCommit | Reason::PrepareAbort)
    }
}

/// One open transaction the diagnosis reports as hanging or stuck.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub topic: String,
    pub partition: i32,
    pub reason: Reason,
}

/// A number about one partition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionValue {
    pub topic: String,
    pub partition: i32,
    pub value: u64,
}

/// What the diagnosis found after one scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnosis {
    /// Hanging and stuck transactions, one entry each.
    #[serde(default)]
    pub transactions: Vec<Finding>,
    /// Producers still listed on a partition whose instance the coordinator
    /// has fenced, counted per partition.
    #[serde(default)]
    pub fenced_producers: Vec<PartitionValue>,
    /// Producers whose state differs between replicas, per partition;
    /// `None` when the replicas were not asked (no series then, rather than
    /// zeros that would claim they agree).
    #[serde(default)]
    pub replica_divergences: Option<Vec<PartitionValue>>,
    /// Records between the last stable offset and the high watermark.
    #[serde(default)]
    pub blocked_records: Vec<PartitionValue>,
}

/// The boxed future a [`Diagnose`] returns (no async-trait dependency).
pub type DiagnoseFuture<'a> = Pin<Box<dyn Future<Output = Option<Diagnosis>> + Send + 'a>>;

/// A source of diagnoses, asked once after each successful scan. `None`:
/// no diagnosis this time (the diagnosis metrics then have no series and
/// `kdp_diagnosis_available` is 0).
pub trait Diagnose: Send + Sync {
    fn diagnose(&self, client: Arc<Client>) -> DiagnoseFuture<'_>;
}

/// A diagnosis read from a JSON file after each scan: the test hook behind
/// the hidden `--diagnosis-file` flag, so the alerting path (metrics, rules,
/// a real Prometheus) can be tested before the diagnosis exists. A file that
/// cannot be read or parsed gives no diagnosis (and a warning), never a crash.
pub struct FileDiagnosis(pub PathBuf);

impl Diagnose for FileDiagnosis {
    fn diagnose(&self, _client: Arc<Client>) -> DiagnoseFuture<'_> {
        Box::pin(async move {
            // a small file: read inline
            let text = match std::fs::read_to_string(&self.0) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(file = %self.0.display(), error = %e, "cannot read the diagnosis file");
                    return None;
                }
            };
            match serde_json::from_str(&text) {
                Ok(d) => Some(d),
                Err(e) => {
                    tracing::warn!(file = %self.0.display(), error = %e, "cannot parse the diagnosis file");
                    None
                }
            }
        })
    }
}

/// The real diagnosis, after each scan: the joined scan behind
/// `kdp find-hanging` and `describe --with-transactions` (hanging and stuck
/// transactions by Kafka's rule and kdp's, fenced producers under
/// transaction protocol v1, records held back by open transactions).
/// With `compare_replicas`, every replica is asked as well (what
/// `kdp compare-replicas` does) and the producers whose state differs
/// between replicas are counted per partition; that multiplies the scan's
/// requests by the replication factor, so it is asked for explicitly.
pub struct ClusterDiagnosis {
    /// The partitions and bounds of each run.
    pub describe: kdp_client::DescribeOptions,
    /// Also ask every replica, for `kdp_replica_divergences`.
    pub compare_replicas: bool,
}

/// The producers whose state differs between replicas, per partition; a
/// partition whose replicas agree has a zero.
fn divergences(replicas: &kdp_client::txn::replicas::Replicas) -> Vec<PartitionValue> {
    use kdp_client::diagnose::replicas::compare;
    use std::collections::BTreeSet;
    replicas
        .iter()
        .map(|((topic, partition), by_broker)| {
            let producers: BTreeSet<i64> =
                compare(by_broker).iter().map(|d| d.producer_id).collect();
            PartitionValue {
                topic: topic.clone(),
                partition: *partition,
                value: u64::try_from(producers.len()).unwrap_or(u64::MAX),
            }
        })
        .collect()
}

impl ClusterDiagnosis {
    fn findings(joined: &kdp_client::txn::join::Joined) -> Diagnosis {
        use kdp_client::diagnose::flags::{flags, Context, Flag};
        use kdp_client::diagnose::hanging::{
            decide, is_candidate, HangingReason, OpenTxn, Verdict,
        };
        use kdp_client::txn::join::DEFAULT_MAX_TRANSACTION_TIMEOUT_MS;
        use std::collections::BTreeMap;

        let max_timeout = joined
            .cluster_max_timeout_ms
            .unwrap_or(DEFAULT_MAX_TRANSACTION_TIMEOUT_MS);
        let mut out = Diagnosis::default();
        for (topic, partition, p) in joined.open_transactions() {
            if !is_candidate(p, joined.now_ms, max_timeout) {
                continue;
            }
            let txn = OpenTxn {
                topic: topic.to_string(),
                partition,
                producer: p.clone(),
            };
            let reason = match decide(&txn, &joined.view, joined.now_ms, max_timeout) {
                Verdict::Hanging(HangingReason::NoTransaction) => Reason::NoTransaction,
                Verdict::Hanging(HangingReason::PartitionNotInTransaction) => {
                    Reason::PartitionNotInTransaction
                }
                Verdict::Stuck {
                    state: kdp_wire::TxnState::PrepareCommit,
                } => Reason::PrepareCommit,
                Verdict::Stuck { .. } => Reason::PrepareAbort,
                Verdict::NotHanging | Verdict::Unknown(_) => continue,
            };
            out.transactions.push(Finding {
                topic: topic.to_string(),
                partition,
                reason,
            });
        }
        let cx = Context {
            now_ms: joined.now_ms,
            protocol: joined.protocol,
            max_transaction_timeout_ms: max_timeout,
            producer_id_expiration_ms: joined.producer_id_expiration_ms,
        };
        let mut fenced: BTreeMap<(String, i32), u64> = BTreeMap::new();
        for (topic, partition, p) in joined.producers() {
            let coordinator = joined.coordinator(p);
            if flags(p, topic, partition, &coordinator, &cx).contains(&Flag::Fenced) {
                *fenced.entry((topic.to_string(), partition)).or_default() += 1;
            }
        }
        out.fenced_producers = fenced
            .into_iter()
            .map(|((topic, partition), value)| PartitionValue {
                topic,
                partition,
                value,
            })
            .collect();
        out.blocked_records = joined
            .offsets
            .iter()
            .filter_map(|((topic, partition), o)| {
                let o = o.as_ref().ok()?;
                Some(PartitionValue {
                    topic: topic.clone(),
                    partition: *partition,
                    value: u64::try_from(o.blocked()).unwrap_or(0),
                })
            })
            .collect();
        out
    }
}

impl Diagnose for ClusterDiagnosis {
    fn diagnose(&self, client: Arc<Client>) -> DiagnoseFuture<'_> {
        Box::pin(async move {
            let opts = kdp_client::txn::join::JoinOptions {
                describe: self.describe.clone(),
                open_only: false,
            };
            let mut found = match kdp_client::txn::join::join(&client, &opts).await {
                Ok(joined) => ClusterDiagnosis::findings(&joined),
                Err(e) => {
                    tracing::warn!(error = %e, "diagnosis failed; its metrics keep no series this scan");
                    return None;
                }
            };
            if self.compare_replicas {
                use kdp_client::txn::replicas::describe_every_replica;
                match describe_every_replica(&client, &self.describe).await {
                    Ok((replicas, failures)) => {
                        if !failures.is_empty() {
                            tracing::warn!(
                                failures = failures.len(),
                                "some replicas could not be asked; their divergences are not counted"
                            );
                        }
                        found.replica_divergences = Some(divergences(&replicas));
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot ask every replica this scan"),
                }
            }
            Some(found)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_documented_shape_and_refuses_unknown_fields() {
        let d: Diagnosis = serde_json::from_str(
            r#"{"transactions": [{"topic": "t", "partition": 0, "reason": "prepare_abort"}],
                "blocked_records": [{"topic": "t", "partition": 0, "value": 12}]}"#,
        )
        .unwrap();
        assert_eq!(d.transactions[0].reason, Reason::PrepareAbort);
        assert!(d.transactions[0].reason.is_stuck());
        assert!(d.fenced_producers.is_empty());
        assert!(serde_json::from_str::<Diagnosis>(r#"{"hanging": []}"#).is_err());
        assert!(serde_json::from_str::<Diagnosis>(
            r#"{"transactions": [{"topic": "t", "partition": 0, "reason": "made_up"}]}"#
        )
        .is_err());
    }
}
