//! The lag's reads: each partition's read_committed count ([`Tally`])
//! fed from Fetch requests batched per leader ([`fetch_many`]), round
//! after round, until every count reaches its LSO, its bytes budget or a
//! failure. Each answer is folded into its partition's count as its
//! response arrives and dropped, so what the reads hold is the counts and
//! the responses in flight: at most `DriverOptions::max_concurrent_brokers`
//! requests at once, each within `MaxBytes`.
//!
//! A broker spends a request's `MaxBytes` on the partitions in the order
//! asked: a partition after it is spent comes back empty or cut inside a
//! batch ([`FetchedChunk::bytes_before`] not 0). Such an answer says
//! nothing of the log: the partition is asked again from where its count
//! stands in the next round. Each request's first partition with records
//! gets at least one whole batch (KIP-74), so every round moves on.
//!
//! A count is settled ([`Tally::settle`]) as soon as its read is over
//! (done, stopped by its budget, failed): it keeps one answer per
//! offset it is asked from, and its batches and committed offsets go.

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::fetch::{fetch_many, FetchAsk, FetchSettings, FetchedChunk};
use kdp_client::metadata::ClusterMetadata;
use kdp_domain::key_error::KeyError;
use kdp_domain::lag::{Stop, Tally};
use kdp_domain::partition::TopicPartition;
use kdp_wire::records::{Batch, Batches, DEFAULT_MAX_DECOMPRESSED};
use kdp_wire::ErrorCode;

/// The most a partition's `PartitionMaxBytes` grows to for a batch larger
/// than asked (a broker that does not return a first batch whole).
const MAX_PARTITION_BYTES: i32 = 64 << 20;

/// A round's asks go in waves of this many full sets of concurrent
/// requests (`max_keys_per_request` × `max_concurrent_brokers` each): a
/// Fetch run's asks, requests and routing grow with what it is given, and
/// a cluster's partitions at once cost more than their counts (issue 30).
const WAVE_REQUESTS: usize = 4;

/// One partition's count and what it cost.
#[derive(Debug)]
pub struct Reading {
    /// The partition.
    pub tp: TopicPartition,
    /// The count so far (boxed: moved as it is into the partition's
    /// slot).
    pub tally: Box<Tally>,
    /// Why the read stopped before the LSO, when it did.
    pub stopped: Option<Stop>,
    /// Bytes of batches read.
    pub bytes: u64,
    /// Fetch requests that asked for it.
    pub fetches: u64,
    /// The offsets counts are asked from (a batch holding one is
    /// decompressed for its records' offsets), until the count is
    /// settled for them.
    committed: Vec<i64>,
    /// `PartitionMaxBytes`, grown for a batch larger than asked.
    partition_max_bytes: i32,
    /// Answers in a row with nothing from the next offset that no
    /// earlier partition of their response can have cut.
    empty_answers: u8,
}

impl Reading {
    /// What `tally` has left to read of `tp`; `committed`: the offsets
    /// counts are asked from.
    pub fn new(
        tp: TopicPartition,
        tally: Tally,
        committed: Vec<i64>,
        partition_max_bytes: i32,
    ) -> Reading {
        Reading {
            tp,
            tally: Box::new(tally),
            stopped: None,
            bytes: 0,
            fetches: 0,
            committed,
            partition_max_bytes: partition_max_bytes.max(1),
            empty_answers: 0,
        }
    }

    /// The next Fetch of this partition, `None` once the read is over
    /// (done, failed, or `budget` bytes read).
    fn ask(&mut self, budget: u64) -> Option<FetchAsk> {
        if self.stopped.is_some() || self.tally.is_done() {
            return None;
        }
        if self.bytes >= budget {
            self.stopped = Some(Stop::Budget { bytes: self.bytes });
            self.settle();
            return None;
        }
        // never ask for more than the budget has left (a broker still
        // returns a first batch larger than asked whole, KIP-74)
        let left = i32::try_from(budget - self.bytes).unwrap_or(i32::MAX);
        self.fetches += 1;
        Some(FetchAsk {
            partition: self.tp.clone(),
            offset: self.tally.next_offset(),
            partition_max_bytes: self.partition_max_bytes.min(left.max(1)),
        })
    }

    /// Settles the count for the offsets it is asked from, once its read
    /// is over.
    fn settle(&mut self) {
        self.tally.settle(&self.committed);
        self.committed = Vec::new();
    }

    /// Folds one answer (or why there is none) into the count, settled
    /// when the read is over.
    fn absorb(&mut self, answer: Result<FetchedChunk, KeyError>) {
        self.fold(answer);
        if self.stopped.is_some() || self.tally.is_done() {
            self.settle();
        }
    }

    /// [`Reading::absorb`] before the settling.
    fn fold(&mut self, answer: Result<FetchedChunk, KeyError>) {
        let chunk = match answer {
            Ok(chunk) => chunk,
            Err(e) => {
                self.stopped = Some(Stop::Failed(e));
                return;
            }
        };
        let offset = chunk.fetch_offset;
        self.bytes = self.bytes.saturating_add(chunk.records.len() as u64);
        self.tally.answer(chunk.aborted_transactions.as_deref());
        let mut batches = Batches::new(&chunk.records);
        for item in &mut batches {
            let batch = match item {
                Ok(batch) => batch,
                Err(e) => {
                    self.stopped = Some(Stop::Failed(KeyError::client(
                        ErrorCode::CORRUPT_MESSAGE,
                        e.to_string(),
                    )));
                    return;
                }
            };
            let h = *batch.header();
            let control = if h.is_control() {
                batch
                    .control(DEFAULT_MAX_DECOMPRESSED)
                    .ok()
                    .flatten()
                    .map(|r| r.control_type)
            } else {
                None
            };
            let offsets = if !h.is_control() && Tally::needs_offsets(&h, &self.committed) {
                record_offsets(&batch)
            } else {
                None
            };
            self.tally.batch(&h, control, offsets);
        }
        if self.tally.next_offset() > offset {
            self.empty_answers = 0;
            return;
        }
        if chunk.bytes_before > 0 {
            // the request's MaxBytes ran out before this partition
            return;
        }
        if chunk.records.is_empty() {
            // Nothing from `offset` below the LSO: compacted away. Asked
            // twice, as an answer a quota throttled is empty too (the
            // broker holds the next request until the throttle ends).
            self.empty_answers += 1;
            if self.empty_answers >= 2 {
                self.tally.nothing_more();
            }
            return;
        }
        // a batch larger than asked for
        if self.partition_max_bytes >= MAX_PARTITION_BYTES {
            self.stopped = Some(Stop::Failed(KeyError::client(
                ErrorCode::RECORD_LIST_TOO_LARGE,
                "a batch larger than 64 MiB",
            )));
            return;
        }
        let needed = batches.partial().and_then(|p| p.size).unwrap_or(0);
        self.partition_max_bytes = i32::try_from(needed)
            .unwrap_or(i32::MAX)
            .max(self.partition_max_bytes.saturating_mul(2))
            .min(MAX_PARTITION_BYTES);
    }
}

/// Reads every partition of `readings` up to its count's end (at most
/// `budget` bytes each) in rounds of Fetch requests batched per leader
/// (`driver`: partitions per request, brokers at once; `settings`:
/// isolation, `PartitionMaxBytes`' start and `MaxBytes`). `metadata`: the
/// partitions' topic ids, leaders and epochs when known. Each round is
/// sent in waves of [`WAVE_REQUESTS`] sets of concurrent requests. Returns
/// the readings, by partition, and the Fetch requests sent.
pub async fn read_all(
    client: &SharedClient,
    mut readings: Vec<Reading>,
    mut metadata: ClusterMetadata,
    settings: &FetchSettings,
    budget: u64,
    driver: &DriverOptions,
    bound: &TimeBound,
) -> (Vec<Reading>, u64) {
    // found by binary search as answers arrive: no copy of every name
    if !readings.is_sorted_by(|a, b| a.tp < b.tp) {
        readings.sort_by(|a, b| a.tp.cmp(&b.tp));
    }
    let wave = driver
        .max_keys_per_request
        .max(1)
        .saturating_mul(driver.max_concurrent_brokers.max(1))
        .saturating_mul(WAVE_REQUESTS);
    let mut requests = 0;
    loop {
        if bound.is_past() {
            for r in readings
                .iter_mut()
                .filter(|r| r.stopped.is_none() && !r.tally.is_done())
            {
                r.stopped = Some(Stop::Failed(KeyError::client(
                    ErrorCode::REQUEST_TIMED_OUT,
                    "the timeout passed before the read reached the LSO",
                )));
                r.settle();
            }
            break;
        }
        // the round in waves of asks: what a Fetch run holds at once
        // (its asks, requests, routing) follows the wave, not the cluster
        let mut cursor = 0;
        let mut asked = false;
        while !bound.is_past() {
            let mut asks: Vec<FetchAsk> = Vec::new();
            while asks.len() < wave {
                let Some(r) = readings.get_mut(cursor) else {
                    break;
                };
                cursor += 1;
                asks.extend(r.ask(budget));
            }
            if asks.is_empty() {
                break;
            }
            asked = true;
            requests += fetch_many(
                client,
                asks,
                &mut metadata,
                settings,
                driver,
                bound,
                |tp, answer| {
                    let at = readings.binary_search_by(|r| r.tp.cmp(&tp));
                    if let Some(r) = at.ok().and_then(|i| readings.get_mut(i)) {
                        r.absorb(answer);
                    }
                },
            )
            .await;
        }
        if !asked && !bound.is_past() {
            break;
        }
    }
    // every read is over: settled where the answers did not (a partition
    // no answer reached)
    for r in &mut readings {
        r.settle();
    }
    (readings, requests)
}

/// The offsets of a batch's records (`None` when they cannot be read:
/// the count from inside it is then a bound).
fn record_offsets(batch: &Batch<'_>) -> Option<Vec<i64>> {
    let data = batch.records_data(DEFAULT_MAX_DECOMPRESSED).ok()?;
    let base = batch.header().base_offset;
    let mut out = Vec::with_capacity(data.count().min(batch.size()));
    for r in data.iter() {
        out.push(base.saturating_add(i64::from(r.ok()?.offset_delta)));
    }
    Some(out)
}
