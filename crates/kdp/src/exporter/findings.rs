//! The exporter's real diagnosis: the lookups behind `kdp find-hanging`
//! (kdp-workflows' `diagnosis::gather`) fed with the scan's own
//! DescribeProducers answers, so the cluster is described once per scan,
//! within the scan's one bound. The scan keeps only the producers the lookups need (with
//! an open transaction, and under transaction protocol v1 the transactional
//! ones, which may be fenced), not every producer.
//!
//! The verdicts are not the exporter's own: [`Diagnosis::of`] counts
//! kdp-domain's one judgement
//! ([`kdp_domain::diagnose::findings`](fn@kdp_domain::diagnose::findings),
//! the one `kdp find-hanging` lists), so the two never disagree on a
//! transaction (an unknown LastTimestamp is `unknown_timestamp` in both).

use std::collections::BTreeSet;
use std::sync::Arc;

use kdp_client::{Client, TimeBound};
use kdp_domain::diagnose::summary::{self, add_replicas, Diagnosis, GroupsFound};
use kdp_domain::lag::found::LagFold;
use kdp_domain::lag::WaveGaps;
use kdp_domain::partition::ProducerFields;
use kdp_domain::protocol::TxnProtocol;
use kdp_workflows::diagnosis::{gather, Described, DiagnosisOptions, Gathered};
use kdp_workflows::lag_waves::FirstPass;

use super::diagnosis::{Diagnose, DiagnoseFuture, Scanned};

/// The real diagnosis, after each scan: hanging and stuck transactions by
/// Kafka's rule and kdp's, the candidates it cannot judge, fenced producers
/// under transaction protocol v1, records held back by open transactions.
/// With `compare_replicas`, every replica is asked as well (what
/// `kdp compare-replicas` does; the scan's one pass over every replica,
/// which is the leaders' describe too) and the producers whose state
/// differs between replicas are counted per partition; that multiplies the
/// scan's requests by the replication factor, so it is asked for
/// explicitly.
pub struct ClusterDiagnosis {
    /// The partitions and batching of each run.
    pub describe: kdp_client::DescribeOptions,
    /// Also ask every replica, for `kdp_replica_divergences`.
    pub compare_replicas: bool,
    /// Read the consumer groups for the `kdp_group_*` series, a group at
    /// the LSO counting as blocked once the transaction's producer has
    /// written nothing for this long (ms); `None`: no group series.
    pub groups_blocked_after_ms: Option<i64>,
    /// Read each group's lag in records for the `kdp_group_lag_*` series
    /// (`--lag`); `None`: no lag series.
    pub lag: Option<kdp_workflows::lag::LagReadOptions>,
    /// The lag series per partition (`--per-partition`): what the lag is
    /// folded to as it is judged.
    pub lag_per_partition: bool,
    /// What the lag's reads proved, carried to the next scan: a partition
    /// never written transactionally is fetched again only when its log
    /// grew (kdp-domain's `lag::Known`).
    pub lag_known: std::sync::Mutex<kdp_domain::lag::Known>,
}

impl Diagnose for ClusterDiagnosis {
    fn keeps(&self, p: &dyn ProducerFields, protocol: TxnProtocol) -> bool {
        summary::needs(p, protocol)
    }

    fn needs_protocol(&self) -> bool {
        true
    }

    fn compares_replicas(&self) -> bool {
        self.compare_replicas
    }

    fn diagnose<'a>(
        &'a self,
        client: Arc<Client>,
        scanned: Scanned,
        bound: &'a TimeBound,
    ) -> DiagnoseFuture<'a> {
        Box::pin(async move {
            let opts = DiagnosisOptions {
                describe: self.describe.clone(),
                // with the lag, the groups are read once, after the join
                groups: self.groups_blocked_after_ms.is_some() && self.lag.is_none(),
                replicas: self.compare_replicas,
            };
            let described = Described {
                now_ms: scanned.now_ms,
                partitions: scanned.partitions,
                summary: scanned.summary,
                replicas: scanned.replicas,
            };
            let Gathered {
                joined,
                groups,
                replicas,
            } = gather(&client, described, &opts, bound).await;
            let joined = match joined {
                Ok(joined) => joined,
                Err(e) => {
                    tracing::warn!(error = %e, "diagnosis failed; its metrics keep no series this scan");
                    return None;
                }
            };
            let mut found = Diagnosis::of(&joined);
            // without the lag, the groups were read whole beside the join
            match (groups, self.groups_blocked_after_ms) {
                (Some(Ok(read)), Some(blocked_after)) => {
                    add_groups(&mut found, GroupsFound::of(&joined, &read, blocked_after));
                }
                (Some(Err(e)), _) => {
                    tracing::warn!(error = %e, "consumer groups not read; no group series this scan");
                    found.failed_requests += 1;
                }
                _ => {}
            }
            if let Some(lag_opts) = &self.lag {
                let driver = self.describe.driver_options();
                // with the lag, one first pass over the groups serves both:
                // the group series judge only the partitions an open
                // transaction pins (or may pin), so only their topics'
                // offsets are kept; the lag reads its waves after
                let pinned = match self.groups_blocked_after_ms {
                    Some(_) => GroupsFound::topics_read(&joined),
                    None => BTreeSet::new(),
                };
                // the group series count members; the lag needs none
                let heads = kdp_workflows::lag::LagReadOptions {
                    members: lag_opts.members || self.groups_blocked_after_ms.is_some(),
                    ..lag_opts.clone()
                };
                let first =
                    FirstPass::read(&client, &heads, &driver, bound, |t| pinned.contains(t)).await;
                match first {
                    Err(e) => {
                        tracing::warn!(error = %e, "consumer groups not read; no group or lag series this scan");
                        found.failed_requests += 1;
                        if self.groups_blocked_after_ms.is_some() {
                            found.failed_requests += 1;
                        }
                    }
                    Ok(first) => {
                        if let Some(blocked_after) = self.groups_blocked_after_ms {
                            let g = GroupsFound::of(&joined, first.groups(), blocked_after);
                            add_groups(&mut found, g);
                        }
                        // taken out for the scan (scans never overlap), put back after
                        let mut known = self
                            .lag_known
                            .lock()
                            .map(|mut k| std::mem::take(&mut *k))
                            .unwrap_or_default();
                        // folded into the series as judged: no row per committed
                        // offset is held
                        let mut fold = LagFold::new(self.lag_per_partition);
                        let mut gaps = WaveGaps::new();
                        let mut join_failed = false;
                        let (mut fetched, mut bytes, mut fetches) = (0usize, 0u64, 0u64);
                        let waves = first
                            .read_waves(&client, lag_opts, &driver, bound, Some(&mut known), |g| {
                                fetched += g.fetched.len();
                                bytes += g.bytes_read;
                                fetches += g.fetches;
                                gaps.add(kdp_domain::lag::lag_each(
                                    &g.groups,
                                    &g.partitions,
                                    &g.blocked,
                                    &lag_opts.lag,
                                    |row| fold.add(&row),
                                ));
                                join_failed |= g.join_error.is_some();
                            })
                            .await;
                        tracing::debug!(
                            waves,
                            partitions_fetched = fetched,
                            bytes_read = bytes,
                            fetches,
                            "lag read"
                        );
                        if let Ok(mut k) = self.lag_known.lock() {
                            *k = known;
                        }
                        let lag = fold.finish(&gaps.finish());
                        if lag.failed_requests > 0 || join_failed {
                            tracing::warn!(
                                failed = lag.failed_requests,
                                "some lag could not be read; those groups have no lag series"
                            );
                        }
                        found.failed_requests += lag.failed_requests;
                        found.lag = Some(lag);
                    }
                }
            }
            match replicas {
                Some(Ok((compared, failures))) => {
                    if !failures.is_empty() {
                        tracing::warn!(
                            failures = failures.len(),
                            "some replicas could not be asked; their divergences are not counted"
                        );
                    }
                    add_replicas(&mut found, &compared, &failures);
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "cannot ask every replica this scan");
                    found.failed_requests += 1;
                }
                None => {}
            }
            Some(found)
        })
    }
}

/// The group series of a scan, counted in.
fn add_groups(found: &mut Diagnosis, g: GroupsFound) {
    if g.failed_requests > 0 {
        tracing::warn!(
            failed = g.failed_requests,
            "some consumer groups could not be read; they have no group series"
        );
    }
    found.failed_requests += g.failed_requests;
    found.groups = Some(g);
}
