//! Reading a partition's batches: from an offset forward, or its last N
//! batches, found from ListOffsets' bounds and read backwards in chunks.
//! One deadline for the whole read; every Fetch goes through the driver.

use bytes::Bytes;
use kdp_wire::messages::list_offsets::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, READ_UNCOMMITTED};
use kdp_wire::records::{Batch, BatchError, BatchHeader, Batches};
use kdp_wire::ErrorCode;

use super::request::{fetch_once, FetchSettings, FetchedChunk};
use crate::admin::DriverOptions;
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::metadata::ClusterMetadata;
use crate::txn::offsets::list_offsets;
use kdp_domain::key_error::KeyError;
use kdp_domain::partition::TopicPartition;

/// One whole batch of a partition, owning its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedBatch {
    bytes: Bytes,
    header: BatchHeader,
}

impl FetchedBatch {
    /// The batch's header.
    pub fn header(&self) -> &BatchHeader {
        &self.header
    }

    /// The batch's bytes, as the broker stored them.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The batch, to check its CRC and read its records.
    pub fn batch(&self) -> Result<Batch<'_>, BatchError> {
        Batch::parse(&self.bytes, 0)
    }
}

/// Where a read starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// The batch holding this offset, and every batch after it.
    Offset(i64),
    /// The last N batches before the high watermark.
    Last(usize),
}

/// What to read.
#[derive(Debug, Clone)]
pub struct ReadRequest {
    /// The partition.
    pub partition: TopicPartition,
    /// Where to start.
    pub from: ReadFrom,
    /// At most this many batches (from an offset); `None`: up to the end.
    pub max_batches: Option<usize>,
    /// Fetch from this replica instead of the leader (Fetch v11+ lets a
    /// consumer read a follower, up to that follower's high watermark).
    pub broker_id: Option<i32>,
    /// How each Fetch asks.
    pub settings: FetchSettings,
}

/// The batches read, with the partition's bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRead {
    /// The partition.
    pub partition: TopicPartition,
    /// The replica that answered the last Fetch.
    pub broker: Option<i32>,
    /// The log start offset (ListOffsets, earliest).
    pub log_start_offset: i64,
    /// The leader's high watermark (ListOffsets, latest).
    pub high_watermark: i64,
    /// The last stable offset of the last Fetch, or -1.
    pub last_stable_offset: i64,
    /// The batches, in offset order.
    pub batches: Vec<FetchedBatch>,
    /// Entries that could not be read as v2 batches (legacy message sets,
    /// broken framing), each naming its offset.
    pub unreadable: Vec<BatchError>,
    /// Whether the first batch read is the log's first.
    pub reaches_log_start: bool,
    /// Fetch requests sent.
    pub fetches: usize,
}

/// How far a long read has come (for progress on stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Batches read so far.
    pub batches: usize,
    /// Fetches sent so far.
    pub fetches: usize,
    /// The next offset to read.
    pub next_offset: i64,
    /// Where this stretch of the read ends.
    pub end_offset: i64,
}

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// ListOffsets (the log's bounds) failed.
    #[error("ListOffsets of {topic}-{partition}: {}{}", .error.name(), msg(.error))]
    Offsets {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The broker's or kdp's error.
        error: KeyError,
    },
    /// A Fetch failed.
    #[error("Fetch of {topic}-{partition} at offset {offset}: {}{}", .error.name(), msg(.error))]
    Fetch {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The offset asked for.
        offset: i64,
        /// The broker's or kdp's error.
        error: KeyError,
    },
    /// The offset asked for is not in the log.
    #[error("offset {offset} is outside the log of {topic}-{partition} (log start {log_start_offset}, high watermark {high_watermark})")]
    OffsetOutOfRange {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The offset asked for.
        offset: i64,
        /// The log start offset.
        log_start_offset: i64,
        /// The high watermark.
        high_watermark: i64,
    },
}

fn msg(e: &KeyError) -> String {
    e.message
        .as_deref()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default()
}

impl ReadError {
    /// The Kafka error code behind the failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            ReadError::Offsets { error, .. } | ReadError::Fetch { error, .. } => error.code,
            ReadError::OffsetOutOfRange { .. } => ErrorCode::OFFSET_OUT_OF_RANGE,
        }
    }

    /// What to grant when the failure is an ACL's: Fetch needs READ on the
    /// topic, ListOffsets DESCRIBE.
    pub fn advice(&self) -> Option<String> {
        let (api, operation, topic) = match self {
            ReadError::Offsets { topic, error, .. }
                if error.code == ErrorCode::TOPIC_AUTHORIZATION_FAILED =>
            {
                ("ListOffsets", "DESCRIBE", topic)
            }
            ReadError::Fetch { topic, error, .. }
                if error.code == ErrorCode::TOPIC_AUTHORIZATION_FAILED =>
            {
                ("Fetch", "READ", topic)
            }
            _ => return None,
        };
        let op = if operation == "READ" {
            "Read"
        } else {
            "Describe"
        };
        Some(format!(
            "{api} needs {operation} on topic {topic}: grant it to this principal \
             (kafka-acls.sh --add --allow-principal <principal> --operation {op} --topic {topic})"
        ))
    }
}

struct Reader<'a> {
    client: &'a SharedClient,
    req: &'a ReadRequest,
    bound: &'a TimeBound,
    metadata: ClusterMetadata,
    settings: FetchSettings,
    fetches: usize,
    broker: Option<i32>,
    last_stable_offset: i64,
    unreadable: Vec<BatchError>,
}

/// The most a Fetch's PartitionMaxBytes grows to when a batch is larger
/// than asked (a broker from before KIP-74, or a limit below a batch).
const MAX_PARTITION_BYTES: i32 = 64 << 20;

impl Reader<'_> {
    fn error(&self, offset: i64, error: KeyError) -> ReadError {
        ReadError::Fetch {
            topic: self.req.partition.0.clone(),
            partition: self.req.partition.1,
            offset,
            error,
        }
    }

    async fn fetch(&mut self, offset: i64) -> Result<FetchedChunk, ReadError> {
        self.fetches += 1;
        let chunk = fetch_once(
            self.client,
            &self.req.partition,
            offset,
            self.req.broker_id,
            &mut self.metadata,
            &self.settings,
            self.bound,
        )
        .await
        .map_err(|e| self.error(offset, e))?;
        self.broker = Some(chunk.broker);
        self.last_stable_offset = chunk.last_stable_offset;
        Ok(chunk)
    }

    /// Batches from `from` until `end` (an offset) or `stop_before` (a
    /// base offset already read) or `max` batches.
    async fn forward(
        &mut self,
        from: i64,
        end: i64,
        stop_before: Option<i64>,
        max: Option<usize>,
        progress: &mut impl FnMut(Progress),
        done_before: usize,
    ) -> Result<Vec<FetchedBatch>, ReadError> {
        let mut out: Vec<FetchedBatch> = Vec::new();
        let mut next = from;
        while next < end && max.is_none_or(|m| out.len() < m) {
            let chunk = self.fetch(next).await?;
            let mut batches = Batches::new(&chunk.records);
            let mut progressed = false;
            let mut stop = false;
            for item in &mut batches {
                match item {
                    Ok(batch) => {
                        let h = *batch.header();
                        if h.last_offset() < next {
                            continue;
                        }
                        if stop_before.is_some_and(|s| h.base_offset >= s) || h.base_offset >= end {
                            stop = true;
                            break;
                        }
                        let start = batch.position();
                        out.push(FetchedBatch {
                            bytes: chunk.records.slice(start..start + batch.size()),
                            header: h,
                        });
                        next = h.next_offset();
                        progressed = true;
                        if max.is_some_and(|m| out.len() >= m) {
                            stop = true;
                            break;
                        }
                    }
                    Err(e) => {
                        if let Some(base) = e.base_offset.filter(|&b| b >= next) {
                            next = base.saturating_add(1);
                            progressed = true;
                        }
                        self.unreadable.push(e);
                    }
                }
            }
            progress(Progress {
                batches: done_before + out.len(),
                fetches: self.fetches,
                next_offset: next,
                end_offset: end,
            });
            if stop || next >= chunk.high_watermark {
                break;
            }
            if !progressed {
                // Nothing whole came back: a batch larger than asked for.
                let needed = batches.partial().and_then(|p| p.size).unwrap_or(0);
                let grown = i32::try_from(needed)
                    .unwrap_or(i32::MAX)
                    .max(self.settings.partition_max_bytes.saturating_mul(2));
                if chunk.records.is_empty()
                    || self.settings.partition_max_bytes >= MAX_PARTITION_BYTES
                {
                    break;
                }
                self.settings.partition_max_bytes = grown.min(MAX_PARTITION_BYTES);
            }
        }
        Ok(out)
    }
}

/// Reads a partition's batches as `req` says, every request drawing on
/// `bound`. `progress` hears after each Fetch.
pub async fn read_batches(
    client: &SharedClient,
    req: &ReadRequest,
    bound: &TimeBound,
    mut progress: impl FnMut(Progress),
) -> Result<PartitionRead, ReadError> {
    // one partition: nothing to batch
    let opts = DriverOptions::default();
    let (topic, partition) = req.partition.clone();
    let offsets_error = |error| ReadError::Offsets {
        topic: topic.clone(),
        partition,
        error,
    };
    let keys = vec![req.partition.clone()];
    let (earliest, latest) = tokio::join!(
        list_offsets(
            client,
            keys.clone(),
            EARLIEST_TIMESTAMP,
            READ_UNCOMMITTED,
            &opts,
            bound
        ),
        list_offsets(
            client,
            keys,
            LATEST_TIMESTAMP,
            READ_UNCOMMITTED,
            &opts,
            bound
        ),
    );
    let missing = || KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, "no ListOffsets answer");
    let log_start = earliest
        .into_values()
        .next()
        .unwrap_or_else(|| Err(missing()))
        .map_err(offsets_error)?;
    let high_watermark = latest
        .into_values()
        .next()
        .unwrap_or_else(|| Err(missing()))
        .map_err(offsets_error)?;
    let mut reader = Reader {
        client,
        req,
        bound,
        metadata: ClusterMetadata::default(),
        settings: req.settings.clone(),
        fetches: 0,
        broker: None,
        last_stable_offset: -1,
        unreadable: Vec::new(),
    };
    let batches = match req.from {
        ReadFrom::Offset(offset) => {
            if offset < log_start || offset > high_watermark {
                return Err(ReadError::OffsetOutOfRange {
                    topic,
                    partition,
                    offset,
                    log_start_offset: log_start,
                    high_watermark,
                });
            }
            reader
                .forward(
                    offset,
                    high_watermark,
                    None,
                    req.max_batches,
                    &mut progress,
                    0,
                )
                .await?
        }
        ReadFrom::Last(n) => {
            last_batches(&mut reader, n, log_start, high_watermark, &mut progress).await?
        }
    };
    let reaches_log_start = batches
        .first()
        .is_some_and(|b| b.header.base_offset <= log_start)
        || (batches.is_empty() && log_start >= high_watermark);
    Ok(PartitionRead {
        partition: req.partition.clone(),
        broker: reader.broker,
        log_start_offset: log_start,
        high_watermark,
        last_stable_offset: reader.last_stable_offset,
        batches,
        unreadable: reader.unreadable,
        reaches_log_start,
        fetches: reader.fetches,
    })
}

/// The last `n` batches: a window of offsets before the end, read
/// forward, widened backwards (from the offsets per batch seen so far)
/// until it holds `n` batches or reaches the log start.
async fn last_batches(
    reader: &mut Reader<'_>,
    n: usize,
    log_start: i64,
    end: i64,
    progress: &mut impl FnMut(Progress),
) -> Result<Vec<FetchedBatch>, ReadError> {
    if n == 0 || end <= log_start {
        return Ok(Vec::new());
    }
    // Every batch covers at least one offset: n offsets hold at most n.
    let mut start = end.saturating_sub(n as i64).max(log_start);
    let mut have = reader.forward(start, end, None, None, progress, 0).await?;
    while have.len() < n && start > log_start {
        let first = have.first().map_or(start, |b| b.header.base_offset);
        let spanned = end.saturating_sub(first).max(1);
        let per_batch = (spanned / (have.len().max(1) as i64)).max(1);
        let wanted = (n - have.len()) as i64;
        let window = wanted
            .saturating_mul(per_batch)
            .saturating_mul(2)
            .max(wanted);
        let new_start = first.saturating_sub(window).max(log_start);
        let stop = have.first().map(|b| b.header.base_offset);
        let earlier = reader
            .forward(
                new_start,
                first.max(new_start + 1),
                stop,
                None,
                progress,
                have.len(),
            )
            .await?;
        start = new_start;
        if earlier.is_empty() && new_start == log_start {
            break;
        }
        let mut merged = earlier;
        merged.extend(have);
        have = merged;
    }
    let skip = have.len().saturating_sub(n);
    Ok(have.split_off(skip))
}
