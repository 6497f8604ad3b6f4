//! The exporter's real diagnosis: the lookups behind `kdp find-hanging`
//! (kdp-workflows' `join_described`) fed with the scan's own DescribeProducers
//! answers, so the cluster is described once per scan, and bounded by the
//! scan's deadline. The scan keeps only the producers the lookups need (with
//! an open transaction, and under transaction protocol v1 the transactional
//! ones, which may be fenced), not every producer.
//!
//! The verdicts are not the exporter's own: [`findings`] counts
//! kdp-domain's one judgement
//! ([`kdp_domain::diagnose::findings`](fn@kdp_domain::diagnose::findings),
//! the one `kdp find-hanging` lists), so the two never disagree on a
//! transaction (an unknown LastTimestamp is `unknown_timestamp` in both).

use std::sync::Arc;
use std::time::Duration;

use kdp_client::Client;
use kdp_domain::diagnose::summary::{self, add_replicas, Diagnosis, GroupsFound};
use kdp_domain::protocol::TxnProtocol;
use kdp_wire::messages::ProducerState;
use tokio::time::Instant;

use super::diagnosis::{Diagnose, DiagnoseFuture, Scanned};

/// The real diagnosis, after each scan: hanging and stuck transactions by
/// Kafka's rule and kdp's, the candidates it cannot judge, fenced producers
/// under transaction protocol v1, records held back by open transactions.
/// With `compare_replicas`, every replica is asked as well (what
/// `kdp compare-replicas` does) and the producers whose state differs
/// between replicas are counted per partition; that multiplies the scan's
/// requests by the replication factor, so it is asked for explicitly.
pub struct ClusterDiagnosis {
    /// The partitions and bounds of each run (the timeout is replaced by
    /// what is left of the scan's deadline).
    pub describe: kdp_client::DescribeOptions,
    /// Also ask every replica, for `kdp_replica_divergences`.
    pub compare_replicas: bool,
    /// Read the consumer groups for the `kdp_group_*` series, a group at
    /// the LSO counting as blocked once the transaction's producer has
    /// written nothing for this long (ms); `None`: no group series.
    pub groups_blocked_after_ms: Option<i64>,
}

impl ClusterDiagnosis {
    /// The describe options with what is left until `deadline`.
    fn bounded(&self, deadline: Instant) -> kdp_client::DescribeOptions {
        kdp_client::DescribeOptions {
            timeout: deadline.saturating_duration_since(Instant::now()),
            ..self.describe.clone()
        }
    }
}

impl Diagnose for ClusterDiagnosis {
    fn keeps(&self, p: &ProducerState, protocol: TxnProtocol) -> bool {
        summary::needs(p, protocol)
    }

    fn needs_protocol(&self) -> bool {
        true
    }

    fn diagnose(
        &self,
        client: Arc<Client>,
        scanned: Scanned,
        deadline: Instant,
    ) -> DiagnoseFuture<'_> {
        Box::pin(async move {
            let opts = kdp_workflows::join::JoinOptions {
                describe: self.bounded(deadline),
                open_only: false,
                lookups: Default::default(),
            };
            // the lookups end a little before the deadline, so that what
            // failed comes back as errors rather than as a cut-off scan
            let left = deadline.saturating_duration_since(Instant::now());
            let soft = deadline - (left / 10).min(Duration::from_secs(1));
            let join = kdp_workflows::join::join_described(
                &client,
                &opts,
                scanned.now_ms,
                scanned.partitions,
                scanned.summary,
                kdp_client::Deadline::new(soft, left),
            );
            // the groups are read beside the lookups, by the same deadline
            let groups = async {
                let blocked_after = self.groups_blocked_after_ms?;
                let dopts = kdp_client::DescribeOptions {
                    deadline: Some(kdp_client::Deadline::new(soft, left)),
                    ..self.bounded(deadline)
                }
                .driver_options();
                let read = kdp_workflows::groups::ReadOptions {
                    members: true,
                    ..Default::default()
                };
                let r = kdp_workflows::groups::read_groups(&client, &read, &dopts);
                Some((tokio::time::timeout_at(deadline, r).await, blocked_after))
            };
            let (joined, groups) = tokio::join!(tokio::time::timeout_at(deadline, join), groups);
            let joined = match joined {
                Ok(Ok(joined)) => joined,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "diagnosis failed; its metrics keep no series this scan");
                    return None;
                }
                Err(_) => {
                    tracing::warn!("diagnosis did not finish within the scan timeout; its metrics keep no series this scan");
                    return None;
                }
            };
            let mut found = Diagnosis::of(&joined);
            match groups {
                None => {}
                Some((Ok(Ok(read)), blocked_after)) => {
                    let g = GroupsFound::of(&joined, &read, blocked_after);
                    if g.failed_requests > 0 {
                        tracing::warn!(
                            failed = g.failed_requests,
                            "some consumer groups could not be read; they have no group series"
                        );
                    }
                    found.failed_requests += g.failed_requests;
                    found.groups = Some(g);
                }
                Some((Ok(Err(e)), _)) => {
                    tracing::warn!(error = %e, "consumer groups not read; no group series this scan");
                    found.failed_requests += 1;
                }
                Some((Err(_), _)) => {
                    tracing::warn!("consumer groups not read within the scan timeout; no group series this scan");
                    found.failed_requests += 1;
                }
            }
            if self.compare_replicas {
                use kdp_workflows::replicas::describe_every_replica;
                let bounded = self.bounded(deadline);
                let every = describe_every_replica(&client, &bounded);
                match tokio::time::timeout_at(deadline, every).await {
                    Ok(Ok((replicas, failures))) => {
                        if !failures.is_empty() {
                            tracing::warn!(
                                failures = failures.len(),
                                "some replicas could not be asked; their divergences are not counted"
                            );
                        }
                        add_replicas(&mut found, &replicas, &failures);
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "cannot ask every replica this scan");
                        found.failed_requests += 1;
                    }
                    Err(_) => {
                        tracing::warn!("the replicas did not answer within the scan timeout");
                        found.failed_requests += 1;
                    }
                }
            }
            Some(found)
        })
    }
}
