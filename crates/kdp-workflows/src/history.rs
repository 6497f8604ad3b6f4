//! Reading the histories of transactional ids over the wire: Metadata for
//! `__transaction_state`'s partition count, Kafka's hash rule for each id's
//! partition, ListOffsets for the log's bounds (and `--since`), then the
//! partition's batches through [`kdp_client::fetch::read_batches`], in chunks,
//! into one [`PartitionScan`] per partition. One [`TimeBound`] for all of
//! it.

use std::collections::BTreeMap;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::fetch::{read_batches, FetchSettings, ReadError, ReadFrom, ReadRequest};
use kdp_client::txn::offsets::list_offsets;
use kdp_domain::history::id::{missing_acl, HistoryError, IdHistory};
use kdp_domain::history::scan::PartitionScan;
use kdp_domain::joined::Joined;
use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;
use kdp_wire::coordinator::txn_log::{partition_for, TRANSACTION_STATE_TOPIC};
use kdp_wire::messages::list_offsets::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, READ_UNCOMMITTED};
use kdp_wire::records::DEFAULT_MAX_DECOMPRESSED;
use kdp_wire::ErrorCode;

/// How to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// How the requests batch.
    pub driver: DriverOptions,
    /// Only records written at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// The principal the client authenticates as (`User:NAME`), for the
    /// ACL a refusal names; `None`: a placeholder.
    pub principal: Option<String>,
}

/// How far a read has come, after each chunk of batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadProgress {
    /// The `__transaction_state` partition being read.
    pub partition: i32,
    /// Offsets read of this partition so far.
    pub read: i64,
    /// Offsets to read of this partition.
    pub total: i64,
}

/// Batches per Fetch round: `__transaction_state` holds one record a batch.
const CHUNK: usize = 5_000;

fn denied(principal: Option<&str>) -> HistoryError {
    let advice = missing_acl(ErrorCode::TOPIC_AUTHORIZATION_FAILED).unwrap_or_default();
    HistoryError::Denied {
        code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
        advice: match principal {
            Some(p) => advice.replace("User:<principal>", p),
            None => advice,
        },
    }
}

fn key_error(e: &KeyError, principal: Option<&str>) -> HistoryError {
    if e.code == ErrorCode::TOPIC_AUTHORIZATION_FAILED {
        denied(principal)
    } else {
        HistoryError::Failed(format!(
            "{}{}",
            e.name(),
            e.message
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        ))
    }
}

fn read_error(e: &ReadError, principal: Option<&str>) -> HistoryError {
    if e.code() == ErrorCode::TOPIC_AUTHORIZATION_FAILED {
        denied(principal)
    } else {
        HistoryError::Failed(e.to_string())
    }
}

/// Whether a failure is time running out (the read is then partial, not
/// failed).
fn out_of_time(code: ErrorCode) -> bool {
    code == ErrorCode::REQUEST_TIMED_OUT
}

/// The histories of `ids`, in the order given; `progress` hears after each
/// chunk of a partition.
pub async fn read_histories_with(
    client: &SharedClient,
    ids: &[String],
    opts: &ReadOptions,
    bound: &TimeBound,
    mut progress: impl FnMut(ReadProgress),
) -> Vec<IdHistory> {
    let principal = opts.principal.as_deref();
    let fail_all = |partition: Option<i32>, e: HistoryError| -> Vec<IdHistory> {
        ids.iter()
            .map(|id| IdHistory {
                transactional_id: id.clone(),
                partition,
                result: Err(e.clone()),
            })
            .collect()
    };
    let timeout = bound.request_limit();
    let topic = TRANSACTION_STATE_TOPIC.to_string();
    let count = match client
        .metadata_within(Some(std::slice::from_ref(&topic)), timeout)
        .await
    {
        Err(e) => return fail_all(None, HistoryError::Failed(format!("Metadata: {e}"))),
        Ok(md) => match md.topic(TRANSACTION_STATE_TOPIC) {
            None => return fail_all(None, HistoryError::NoTransactionLog),
            Some(t) if t.error_code == ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
                return fail_all(None, denied(principal))
            }
            Some(t) if t.error_code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                return fail_all(None, HistoryError::NoTransactionLog)
            }
            Some(t) if t.error_code != ErrorCode::NONE || t.partitions.is_empty() => {
                return fail_all(
                    None,
                    HistoryError::Failed(format!("Metadata of {topic}: {}", t.error_code)),
                )
            }
            Some(t) => i32::try_from(t.partitions.len()).unwrap_or(i32::MAX),
        },
    };
    let mut by_partition: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    for id in ids {
        if let Some(p) = partition_for(id, count) {
            by_partition.entry(p).or_default().push(id.clone());
        }
    }
    let mut done: BTreeMap<String, IdHistory> = BTreeMap::new();
    for (partition, wanted) in by_partition {
        let result = read_partition(client, partition, &wanted, opts, bound, &mut progress).await;
        match result {
            Ok(scan) => {
                for h in scan.finish() {
                    done.insert(
                        h.transactional_id.clone(),
                        IdHistory {
                            transactional_id: h.transactional_id.clone(),
                            partition: Some(partition),
                            result: Ok(h),
                        },
                    );
                }
            }
            Err(e) => {
                for id in wanted {
                    done.insert(
                        id.clone(),
                        IdHistory {
                            transactional_id: id,
                            partition: Some(partition),
                            result: Err(e.clone()),
                        },
                    );
                }
            }
        }
    }
    ids.iter()
        .map(|id| {
            done.get(id).cloned().unwrap_or_else(|| IdHistory {
                transactional_id: id.clone(),
                partition: None,
                result: Err(HistoryError::Failed("no partition".into())),
            })
        })
        .collect()
}

/// [`read_histories_with`] without progress.
pub async fn read_histories(
    client: &SharedClient,
    ids: &[String],
    opts: &ReadOptions,
    bound: &TimeBound,
) -> Vec<IdHistory> {
    read_histories_with(client, ids, opts, bound, |_| {}).await
}

/// One partition's scan, read from its start (or `since_ms`) to the high
/// watermark it had when reading began.
async fn read_partition(
    client: &SharedClient,
    partition: i32,
    wanted: &[String],
    opts: &ReadOptions,
    bound: &TimeBound,
    progress: &mut impl FnMut(ReadProgress),
) -> Result<PartitionScan, HistoryError> {
    let (since_ms, driver, principal) = (opts.since_ms, &opts.driver, opts.principal.as_deref());
    let tp: TopicPartition = (TRANSACTION_STATE_TOPIC.to_string(), partition);
    let one = |timestamp| {
        let keys = vec![tp.clone()];
        async move {
            list_offsets(client, keys, timestamp, READ_UNCOMMITTED, driver, bound)
                .await
                .into_values()
                .next()
                .unwrap_or_else(|| {
                    Err(KeyError::client(
                        ErrorCode::UNKNOWN_SERVER_ERROR,
                        "no ListOffsets answer",
                    ))
                })
        }
    };
    let (earliest, latest) = tokio::join!(one(EARLIEST_TIMESTAMP), one(LATEST_TIMESTAMP));
    let log_start = earliest.map_err(|e| key_error(&e, principal))?;
    let high_watermark = latest.map_err(|e| key_error(&e, principal))?;
    let start = match since_ms {
        None => log_start,
        // the first offset written at or after then; none: nothing since
        Some(t) => match one(t).await.map_err(|e| key_error(&e, principal))? {
            o if o < 0 => high_watermark,
            o => o.max(log_start),
        },
    };
    let mut scan = PartitionScan::new(
        partition,
        wanted.iter().cloned(),
        log_start,
        start,
        high_watermark,
        since_ms,
    );
    let total = high_watermark.saturating_sub(start);
    while !scan.done() {
        let req = ReadRequest {
            partition: tp.clone(),
            from: ReadFrom::Offset(scan.next_offset()),
            max_batches: Some(CHUNK),
            broker_id: None,
            settings: FetchSettings::default(),
        };
        let read = match read_batches(client, &req, bound, |_| {}).await {
            Ok(r) => r,
            // out of time after some progress: what was read, said to be partial
            Err(e) if out_of_time(e.code()) && scan.next_offset() > start => break,
            Err(e) => return Err(read_error(&e, principal)),
        };
        let before = scan.next_offset();
        for b in &read.batches {
            let parsed = b.batch();
            let outcome = parsed.and_then(|batch| scan.batch(&batch, DEFAULT_MAX_DECOMPRESSED));
            if let Err(e) = outcome {
                scan.skip_batch(b.header(), e.to_string());
            }
        }
        for e in &read.unreadable {
            scan.unreadable(e.base_offset, e.to_string());
        }
        progress(ReadProgress {
            partition,
            read: scan.next_offset().saturating_sub(start),
            total,
        });
        if scan.next_offset() == before {
            // nothing came back below the high watermark: the rest is unread
            break;
        }
    }
    Ok(scan)
}

/// The histories of every transactional id the coordinators listed for
/// `joined`'s producers ([`Joined::listed_ids`]): what `describe
/// --with-transactions` reads the fence verdicts from.
pub async fn read_listed(
    client: &SharedClient,
    joined: &Joined,
    opts: &ReadOptions,
    bound: &TimeBound,
) -> Vec<IdHistory> {
    let ids = joined.listed_ids();
    if ids.is_empty() {
        return Vec::new();
    }
    read_histories(client, &ids, opts, bound).await
}
