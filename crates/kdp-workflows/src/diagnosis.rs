//! What the exporter reads after each scan to diagnose it, within the
//! scan's bound: the lookups behind `kdp find-hanging` fed with the scan's
//! own DescribeProducers answers (the cluster is described once per scan),
//! beside them every consumer group, and then, when asked, every replica
//! (unless the scan's own pass over every replica already read them).
//! Each part is answered or failed on its own; kdp-domain sums them up
//! ([`Diagnosis`](kdp_domain::diagnose::summary::Diagnosis)).

use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::describe::DescribeOptions;
use kdp_client::error::Result;
use kdp_domain::groups::read::GroupsRead;
use kdp_domain::joined::Joined;
use kdp_domain::partition::{DescribeSummary, PartitionOutcome};

use crate::groups::{read_groups, ReadOptions};
use crate::join::{join_described, JoinOptions};
use crate::replicas::compare_every_replica;
pub use crate::replicas::{ComparedReplicas, EveryReplica};

/// What to read besides the join.
#[derive(Debug, Clone, Default)]
pub struct DiagnosisOptions {
    /// The partitions and batching, as for `describe`.
    pub describe: DescribeOptions,
    /// Read every consumer group (state, members, committed offsets).
    pub groups: bool,
    /// Ask every replica of each partition too (multiplies the requests by
    /// the replication factor).
    pub replicas: bool,
}

/// A scan already described: when it started and the partitions it kept.
#[derive(Debug, Clone)]
pub struct Described {
    /// When the describe started (ms since the epoch).
    pub now_ms: i64,
    /// Each partition, with the producers the diagnosis needs.
    pub partitions: Vec<PartitionOutcome>,
    /// The describe's counts.
    pub summary: DescribeSummary,
    /// Every replica compared, when the scan already asked them (the
    /// leaders' describe was part of that pass): taken instead of asking again.
    pub replicas: Option<Result<ComparedReplicas>>,
}

/// What the diagnosis read, each part answered or failed on its own.
#[derive(Debug)]
pub struct Gathered {
    /// The join (`Err`: the cluster could not be reached).
    pub joined: Result<Joined>,
    /// The groups, when asked.
    pub groups: Option<Result<GroupsRead>>,
    /// Every replica compared, when asked and the join was made.
    pub replicas: Option<Result<ComparedReplicas>>,
}

/// The join of `described` and, beside it, the groups; then every replica.
pub async fn gather(
    client: &SharedClient,
    described: Described,
    opts: &DiagnosisOptions,
    bound: &TimeBound,
) -> Gathered {
    let join_opts = JoinOptions::new(opts.describe.clone(), false);
    let join = join_described(
        client,
        &join_opts,
        described.now_ms,
        described.partitions,
        described.summary,
        bound,
    );
    // the groups are read beside the lookups, within the same bound
    let groups = async {
        if !opts.groups {
            return None;
        }
        let read = ReadOptions {
            members: true,
            ..Default::default()
        };
        Some(read_groups(client, &read, &opts.describe.driver_options(), bound).await)
    };
    let (joined, groups) = tokio::join!(join, groups);
    let replicas = match described.replicas {
        _ if !opts.replicas || joined.is_err() => None,
        Some(read) => Some(read),
        None => Some(compare_every_replica(client, &opts.describe, bound).await),
    };
    Gathered {
        joined,
        groups,
        replicas,
    }
}
