//! The scan behind [`crate::diagnose::pressure`]: every replica's producers
//! (DescribeProducers of each broker), each broker's
//! `producer.id.expiration.ms` (DescribeConfigs) and the transactional ids
//! (ListTransactions), all on one deadline.

use std::collections::{BTreeMap, BTreeSet};

use crate::describe::DescribeOptions;
use kdp_wire::TxnState;

use crate::diagnose::pressure::{EpochFence, Inputs};
use crate::error::Result;
use crate::time::known_ms;
use crate::txn::configs::{broker_configs, PRODUCER_ID_EXPIRATION_MS};
use crate::txn::describe::describe_transactions;
use crate::txn::list::{list_transactions, ListFilters};
use crate::txn::replicas::{describe_every_replica, ReplicaError, Replicas};
use crate::txn::SharedClient;

/// What the brokers answered, and which failed at what.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every replica's producers.
    pub replicas: Replicas,
    /// The brokers of the cluster.
    pub brokers: BTreeSet<i32>,
    /// Brokers whose whole scan failed, and why.
    pub failed: BTreeMap<i32, Vec<String>>,
    /// Brokers that failed some request (a partition, configs, listing).
    pub incomplete: BTreeMap<i32, Vec<String>>,
    /// Scans that ended without saying which broker (a lost task).
    pub lost: usize,
    /// Each broker's `producer.id.expiration.ms`.
    pub expiration_ms: BTreeMap<i32, i64>,
    /// Transactional id by producer id.
    pub transactional_ids: BTreeMap<i64, String>,
    /// Transactions listed in `PrepareEpochFence`, with their start and
    /// timeout from DescribeTransactions.
    pub epoch_fences: Vec<EpochFence>,
}

/// Scans the partitions `opts` selects on every broker. `Err`: the cluster
/// could not be listed.
pub async fn scan(client: &SharedClient, opts: &DescribeOptions) -> Result<Scan> {
    let deadline = opts.deadline();
    let opts = DescribeOptions {
        deadline: Some(deadline),
        ..opts.clone()
    };
    let (replicas, errors) = describe_every_replica(client, &opts).await?;
    let mut s = Scan {
        replicas,
        ..Default::default()
    };
    for e in errors {
        match e {
            ReplicaError::Broker { broker, error } => s
                .failed
                .entry(broker)
                .or_default()
                .push(format!("DescribeProducers: {error}")),
            ReplicaError::Partition {
                partition: (t, p),
                broker,
                error,
            } => s
                .incomplete
                .entry(broker)
                .or_default()
                .push(format!("DescribeProducers {t}-{p}: {}", error.name())),
            ReplicaError::Lost => s.lost += 1,
        }
    }
    let dopts = opts.driver_options();
    let configs = broker_configs(client, &[PRODUCER_ID_EXPIRATION_MS], &dopts).await?;
    for (b, c) in configs {
        s.brokers.insert(b);
        match c {
            Ok(c) => {
                if let Some(ms) = c
                    .get(PRODUCER_ID_EXPIRATION_MS)
                    .and_then(|v| v.as_deref()?.parse::<i64>().ok())
                {
                    s.expiration_ms.insert(b, ms);
                }
            }
            Err(e) => s
                .incomplete
                .entry(b)
                .or_default()
                .push(format!("DescribeConfigs: {}", e.name())),
        }
    }
    let mut fencing = Vec::new();
    for (b, l) in list_transactions(client, &ListFilters::default(), &dopts).await? {
        s.brokers.insert(b);
        match l {
            Ok(l) => {
                for t in l.transactions {
                    if t.transaction_state.parse() == Ok(TxnState::PrepareEpochFence) {
                        fencing.push((t.transactional_id.clone(), t.producer_id, b));
                    }
                    s.transactional_ids
                        .insert(t.producer_id, t.transactional_id);
                }
            }
            Err(e) => s
                .incomplete
                .entry(b)
                .or_default()
                .push(format!("ListTransactions: {}", e.name())),
        }
    }
    if !fencing.is_empty() {
        let ids = fencing.iter().map(|f| f.0.clone()).collect();
        let described = describe_transactions(client, ids, &dopts).await;
        for (id, producer_id, coordinator) in fencing {
            match described.get(&id).map(|d| &d.result) {
                Some(Ok(t)) => s.epoch_fences.push(EpochFence {
                    transactional_id: id,
                    producer_id,
                    coordinator,
                    transaction_start_time_ms: known_ms(t.transaction_start_time_ms),
                    transaction_timeout_ms: t.transaction_timeout_ms,
                }),
                Some(Err(e)) => s
                    .incomplete
                    .entry(coordinator)
                    .or_default()
                    .push(format!("DescribeTransactions {id}: {}", e.name())),
                None => s
                    .incomplete
                    .entry(coordinator)
                    .or_default()
                    .push(format!("DescribeTransactions {id}: no answer")),
            }
        }
    }
    // a broker whose every partition failed answered nothing at all
    let answered: std::collections::BTreeSet<i32> = s
        .replicas
        .values()
        .flat_map(|by| by.keys().copied())
        .collect();
    let silent: Vec<i32> = s
        .incomplete
        .keys()
        .copied()
        .filter(|b| !answered.contains(b))
        .collect();
    for b in silent {
        if let Some(why) = s.incomplete.remove(&b) {
            s.failed.entry(b).or_default().extend(why);
        }
    }
    s.brokers.extend(s.failed.keys().copied());
    s.brokers.extend(s.incomplete.keys().copied());
    Ok(s)
}

impl Scan {
    /// The pressure report's inputs at `now_ms`.
    pub fn inputs(&self, now_ms: i64, epoch_margin: i32, top: usize) -> Inputs<'_> {
        Inputs {
            replicas: Some(&self.replicas),
            brokers: self.brokers.clone(),
            failed: self.failed.keys().copied().collect(),
            incomplete: self.incomplete.keys().copied().collect(),
            lost: self.lost,
            expiration_ms: self.expiration_ms.clone(),
            transactional_ids: self.transactional_ids.clone(),
            now_ms,
            epoch_margin,
            top,
            only_brokers: BTreeSet::new(),
            epoch_fences: self.epoch_fences.clone(),
        }
    }
}
