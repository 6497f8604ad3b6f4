//! The diagnosis input of the exporter: what one scan's diagnosis found
//! (hanging, stuck and undecided transactions, fenced producers, diverged
//! replicas, the records open transactions block), and the sources that
//! make it: [`super::findings::ClusterDiagnosis`] (the lookups behind
//! `kdp find-hanging`, fed by the scan's own DescribeProducers answers) or
//! the test hook [`FileDiagnosis`].
//!
//! How the verdicts relate: every open transaction (`kdp_open_transactions`)
//! holds records back from read_committed consumers until it ends, so
//! `kdp_blocked_records` counts the records of every open transaction, live
//! or not. Only candidates (open, their producer idle longer than the
//! maximum transaction timeout, Kafka's rule) are judged: hanging (no
//! coordinator will end it), stuck (the coordinator decided, its markers
//! never landed) or unknown (kdp could not tell, e.g. the id is hidden by
//! ACLs or a broker did not answer). `kdp_blocked_records_by_verdict` splits
//! each partition's blocked records by the verdict of the transaction that
//! holds its last stable offset, so the sum over `verdict` is
//! `kdp_blocked_records` and a live transaction's records show as `open`.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use kdp_client::{Client, TimeBound};
use kdp_domain::diagnose::summary::Diagnosis;
use kdp_domain::partition::ProducerFields;
use kdp_domain::protocol::TxnProtocol;
use kdp_domain::{DescribeSummary, PartitionOutcome};
use kdp_workflows::diagnosis::ComparedReplicas;

/// What one scan described, kept for the diagnosis: each partition with
/// only the producers [`Diagnose::keeps`] asked for.
pub struct Scanned {
    /// When the scan started (ms since the epoch).
    pub now_ms: i64,
    pub partitions: Vec<PartitionOutcome>,
    pub summary: DescribeSummary,
    /// Every replica compared, when the scan asked them for
    /// [`Diagnose::compares_replicas`] (its one pass over every replica).
    pub replicas: Option<kdp_client::Result<ComparedReplicas>>,
}

/// The boxed future a [`Diagnose`] returns (no async-trait dependency).
pub type DiagnoseFuture<'a> = Pin<Box<dyn Future<Output = Option<Diagnosis>> + Send + 'a>>;

/// A source of diagnoses, asked once after each scan that reached the
/// cluster, with what the scan described. `None`: no diagnosis this time
/// (the diagnosis metrics then have no series, `kdp_diagnosis_available`
/// is 0 and the scan counts as partial).
pub trait Diagnose: Send + Sync {
    /// Whether the diagnosis needs producer `p` of the scan (cluster running
    /// `protocol`), read where it lies; the others are only counted, never
    /// built.
    fn keeps(&self, p: &dyn ProducerFields, protocol: TxnProtocol) -> bool;

    /// Whether [`Diagnose::keeps`] depends on the protocol (asked before the
    /// scan only then).
    fn needs_protocol(&self) -> bool;

    /// Whether the diagnosis compares every replica: the scan then asks
    /// every replica once, for the leaders' view too, and hands them over
    /// ([`Scanned::replicas`]).
    fn compares_replicas(&self) -> bool {
        false
    }

    /// The diagnosis of `scanned`, within the scan's `bound` (`None`: none).
    fn diagnose<'a>(
        &'a self,
        client: Arc<Client>,
        scanned: Scanned,
        bound: &'a TimeBound,
    ) -> DiagnoseFuture<'a>;
}

/// A diagnosis read from a JSON file after each scan: the test hook behind
/// the hidden `--diagnosis-file` flag, so the alerting path (metrics, rules,
/// a real Prometheus) can be tested with every kind of finding. A file that
/// cannot be read or parsed gives no diagnosis (and a warning), never a crash.
pub struct FileDiagnosis(pub PathBuf);

impl Diagnose for FileDiagnosis {
    fn keeps(&self, _: &dyn ProducerFields, _: TxnProtocol) -> bool {
        false
    }

    fn needs_protocol(&self) -> bool {
        false
    }

    fn diagnose<'a>(
        &'a self,
        _client: Arc<Client>,
        _: Scanned,
        _: &'a TimeBound,
    ) -> DiagnoseFuture<'a> {
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

#[cfg(test)]
mod tests {
    use kdp_domain::diagnose::hanging::{Problem, UnknownKind};

    use super::*;

    #[test]
    fn reads_the_documented_shape_and_refuses_unknown_fields() {
        let d: Diagnosis = serde_json::from_str(
            r#"{"transactions": [{"topic": "t", "partition": 0, "reason": "prepare_abort"}],
                "unknown_transactions": [{"topic": "t", "partition": 1, "reason": "listing_incomplete"}],
                "blocked_records": [{"topic": "t", "partition": 0, "value": 12}]}"#,
        )
        .unwrap();
        assert_eq!(d.transactions[0].reason, Problem::PrepareAbort);
        assert!(d.transactions[0].reason.is_stuck());
        assert_eq!(
            d.unknown_transactions[0].reason,
            UnknownKind::ListingIncomplete
        );
        assert!(d.fenced_producers.is_empty());
        assert!(d.is_complete());
        assert!(serde_json::from_str::<Diagnosis>(r#"{"hanging": []}"#).is_err());
        assert!(serde_json::from_str::<Diagnosis>(
            r#"{"transactions": [{"topic": "t", "partition": 0, "reason": "made_up"}]}"#
        )
        .is_err());
    }
}
