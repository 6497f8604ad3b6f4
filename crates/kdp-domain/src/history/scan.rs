//! One pass over a `__transaction_state` partition's records, as they come
//! off the wire: the holes in its offsets, how far it reaches, and the
//! decoded records of the wanted ids (others are skipped after their key).
//! Pure and streaming, so a partition of any size is read in one pass with
//! memory for the wanted ids only.

use std::collections::BTreeSet;

use kdp_wire::coordinator::txn_log::{decode_entry, key_transactional_id};
use kdp_wire::records::{Batch, BatchError, BatchHeader, TimestampType};

use crate::history::changes::{Hole, LogRecord};
use crate::history::id::{History, Undecoded};
use crate::history::reach::Reach;

/// The scan of one partition.
#[derive(Debug, Clone)]
pub struct PartitionScan {
    wanted: BTreeSet<String>,
    reach: Reach,
    next: i64,
    records: Vec<LogRecord>,
    undecoded: Vec<Undecoded>,
}

impl PartitionScan {
    /// A scan of `partition` for `wanted` ids, from `start_offset` (the log
    /// start, or where `since_ms` begins) up to `end_offset` (the high
    /// watermark when reading began).
    pub fn new(
        partition: i32,
        wanted: impl IntoIterator<Item = String>,
        log_start_offset: i64,
        start_offset: i64,
        end_offset: i64,
        since_ms: Option<i64>,
    ) -> Self {
        PartitionScan {
            wanted: wanted.into_iter().collect(),
            reach: Reach {
                partition,
                log_start_offset,
                start_offset,
                end_offset,
                high_watermark: end_offset,
                first_record: None,
                holes: Vec::new(),
                since_ms,
                records: 0,
            },
            next: start_offset,
            records: Vec::new(),
            undecoded: Vec::new(),
        }
    }

    /// The offset the next record is expected at.
    pub fn next_offset(&self) -> i64 {
        self.next
    }

    /// Whether every offset up to the end has been seen.
    pub fn done(&self) -> bool {
        self.next >= self.reach.end_offset
    }

    /// One record, in offset order. Records before the next expected
    /// offset (a batch fetched again) and at or past the end are ignored;
    /// so are records older than `--since`, which still count as read.
    pub fn record(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        if offset < self.next || offset >= self.reach.end_offset {
            return;
        }
        self.hole_to(offset);
        self.next = offset.saturating_add(1);
        self.reach.records += 1;
        if self.reach.since_ms.is_some_and(|since| timestamp < since) {
            return;
        }
        if self.reach.first_record.is_none() {
            self.reach.first_record = Some((offset, timestamp));
        }
        let Some(key) = key else {
            self.undecoded.push(Undecoded {
                offset,
                error: "a record without a key".into(),
            });
            return;
        };
        match key_transactional_id(key) {
            Ok(id) if !self.wanted.contains(&id) => {}
            Ok(_) => match decode_entry(key, value) {
                Ok(entry) => self.records.push(LogRecord {
                    offset,
                    timestamp,
                    entry,
                }),
                Err(e) => self.undecoded.push(Undecoded {
                    offset,
                    error: e.to_string(),
                }),
            },
            // a key kdp cannot read may be one of the wanted ids
            Err(e) => self.undecoded.push(Undecoded {
                offset,
                error: e.to_string(),
            }),
        }
    }

    /// One record batch of the partition, as a Fetch returned it: its CRC
    /// checked, its records decompressed into at most `limit` bytes, each
    /// record fed in, and the offsets up to the batch's last counted as
    /// read (the cleaner may have removed records inside it). A batch the
    /// scan already passed is skipped. A broken batch is an error naming
    /// its byte offset: the partition's history cannot be trusted past it.
    pub fn batch(&mut self, batch: &Batch<'_>, limit: usize) -> Result<(), BatchError> {
        let h = batch.header();
        if h.last_offset() < self.next {
            return Ok(());
        }
        batch.verify_crc()?;
        if !h.is_control() {
            let data = batch.records_data(limit)?;
            data.check_count()?;
            let log_append = h.timestamp_type() == TimestampType::LogAppendTime;
            for record in data.iter() {
                let record = record?;
                let offset = h.base_offset.saturating_add(i64::from(record.offset_delta));
                let timestamp = if log_append {
                    h.max_timestamp
                } else {
                    h.base_timestamp.saturating_add(record.timestamp_delta)
                };
                self.record(
                    offset,
                    timestamp,
                    record.key.as_deref(),
                    record.value.as_deref(),
                );
            }
        }
        self.read_up_to(h.next_offset());
        Ok(())
    }

    /// A batch that could not be read (its error): its offsets count as
    /// read, not as removed, and the error is kept: its records may be the
    /// wanted ids'.
    pub fn skip_batch(&mut self, header: &BatchHeader, error: String) {
        self.undecoded.push(Undecoded {
            offset: header.base_offset,
            error,
        });
        let end = header.next_offset().min(self.reach.end_offset);
        self.next = self.next.max(end);
    }

    /// Bytes of the log that are not a batch kdp reads (a legacy message
    /// set, broken framing), at `offset` when known.
    pub fn unreadable(&mut self, offset: Option<i64>, error: String) {
        self.undecoded.push(Undecoded {
            offset: offset.unwrap_or(self.next),
            error,
        });
    }

    /// The offsets a batch covered that hold no record (compacted away at
    /// the end of a batch, or a whole batch removed): everything before
    /// `offset` has been read.
    pub fn read_up_to(&mut self, offset: i64) {
        let offset = offset.min(self.reach.end_offset);
        self.hole_to(offset);
        self.next = self.next.max(offset);
    }

    /// Records the offsets from the next expected one up to `offset` as
    /// removed, joined to a hole that ends where they start.
    fn hole_to(&mut self, offset: i64) {
        if offset <= self.next {
            return;
        }
        match self.reach.holes.last_mut() {
            Some(h) if h.end == self.next => h.end = offset,
            _ => self.reach.holes.push(Hole {
                start: self.next,
                end: offset,
            }),
        }
    }

    /// The histories of the wanted ids, ending the scan. A scan that did
    /// not reach the high watermark (time ran out) says where it stopped
    /// ([`Reach::end_offset`], [`Reach::complete`]): the rest is unread,
    /// not removed.
    pub fn finish(self) -> Vec<History> {
        let PartitionScan {
            wanted,
            mut reach,
            next,
            records,
            undecoded,
        } = self;
        reach.end_offset = reach.end_offset.min(next.max(reach.start_offset));
        wanted
            .iter()
            .map(|id| History::build(id, &records, reach.clone(), undecoded.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::coordinator::encode_record;
    use kdp_wire::coordinator::txn_log::{TransactionLogKey, TransactionLogValue};
    use kdp_wire::TxnState;

    fn key(id: &str) -> Vec<u8> {
        encode_record(
            &TransactionLogKey {
                transactional_id: id.into(),
                ..Default::default()
            },
            0,
        )
    }

    fn value(epoch: i16, state: TxnState) -> Vec<u8> {
        encode_record(
            &TransactionLogValue {
                producer_id: 9,
                producer_epoch: epoch,
                transaction_timeout_ms: 60_000,
                transaction_status: state.id(),
                transaction_partitions: None,
                transaction_last_update_timestamp_ms: 5,
                transaction_start_timestamp_ms: -1,
                ..Default::default()
            },
            1,
        )
    }

    #[test]
    fn holes_reach_and_the_wanted_ids() {
        let mut scan = PartitionScan::new(7, ["a".to_string()], 0, 0, 10, None);
        let (ka, kb) = (key("a"), key("b"));
        let v0 = value(0, TxnState::Empty);
        scan.record(0, 100, Some(&ka), Some(&v0));
        scan.record(1, 101, Some(&kb), Some(&v0));
        // offsets 2..4 compacted away
        scan.record(4, 104, Some(&ka), None);
        scan.record(4, 104, Some(&ka), None); // fetched again: ignored
        scan.record(5, 105, Some(&ka), Some(&[0, 9])); // a version kdp does not know
        scan.read_up_to(8); // the batch ended at 7, offsets 6 and 7 removed
        assert!(!scan.done());
        scan.record(9, 109, Some(&ka), Some(&value(1, TxnState::Empty)));
        assert!(scan.done());
        let h = scan.finish().pop().unwrap();
        assert_eq!(h.transactional_id, "a");
        assert_eq!(
            h.reach.holes,
            [Hole { start: 2, end: 4 }, Hole { start: 6, end: 9 }]
        );
        assert_eq!(h.reach.first_record, Some((0, 100)));
        assert_eq!(h.reach.records, 5);
        assert_eq!(h.changes.len(), 3);
        assert!(
            h.changes[1].gap_before,
            "a hole lies between offsets 0 and 4"
        );
        assert_eq!(h.undecoded.len(), 1);
        assert_eq!(h.undecoded[0].offset, 5);
        assert!(
            h.undecoded[0].error.contains("Value.Version"),
            "{}",
            h.undecoded[0].error
        );
    }

    #[test]
    fn batches_feed_their_records_and_a_compacted_tail_is_a_hole() {
        use kdp_wire::records::{Attributes, Compression, Record, RecordBatch};
        use std::borrow::Cow;
        let (ka, v) = (key("a"), value(0, TxnState::Empty));
        let batch = |base, deltas: &[i32], last_delta, compression| {
            RecordBatch {
                base_offset: base,
                attributes: Attributes::new(
                    compression,
                    TimestampType::CreateTime,
                    false,
                    false,
                    false,
                ),
                last_offset_delta: last_delta,
                base_timestamp: 1_000,
                max_timestamp: 1_000 + i64::from(last_delta),
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
                records: deltas
                    .iter()
                    .map(|&d| Record {
                        offset_delta: d,
                        timestamp_delta: i64::from(d),
                        key: Some(Cow::Borrowed(&ka[..])),
                        value: Some(Cow::Borrowed(&v[..])),
                        ..Record::default()
                    })
                    .collect(),
                ..RecordBatch::default()
            }
            .encode()
            .unwrap()
        };
        // offsets 0-2, then a compacted batch 3-6 that kept 3 and 5 (zstd)
        let mut blob = batch(0, &[0, 1, 2], 2, Compression::None);
        blob.extend(batch(3, &[0, 2], 3, Compression::Zstd));
        let mut scan = PartitionScan::new(0, ["a".to_string()], 0, 0, 8, None);
        for b in kdp_wire::records::Batches::new(&blob) {
            scan.batch(&b.unwrap(), kdp_wire::records::DEFAULT_MAX_DECOMPRESSED)
                .unwrap();
        }
        assert_eq!(scan.next_offset(), 7);
        let h = scan.finish().pop().unwrap();
        assert_eq!(
            h.changes.iter().map(|c| c.offset).collect::<Vec<_>>(),
            [0, 1, 2, 3, 5]
        );
        assert_eq!(h.changes[4].timestamp, 1_002);
        assert_eq!(
            h.reach.holes,
            [Hole { start: 4, end: 5 }, Hole { start: 6, end: 7 }]
        );
        // a flipped byte: the CRC names the batch
        let mut bad = batch(0, &[0], 0, Compression::None);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let mut scan = PartitionScan::new(0, ["a".to_string()], 0, 0, 8, None);
        let b = kdp_wire::records::Batches::new(&bad)
            .next()
            .unwrap()
            .unwrap();
        assert!(scan.batch(&b, 1 << 20).is_err());
    }

    #[test]
    fn since_skips_older_records_and_an_unfinished_scan_says_where_it_stopped() {
        let mut scan = PartitionScan::new(0, ["a".to_string()], 0, 0, 100, Some(150));
        let ka = key("a");
        let v = value(0, TxnState::Empty);
        scan.record(0, 100, Some(&ka), Some(&v));
        scan.record(1, 200, Some(&ka), Some(&v));
        let h = scan.finish().pop().unwrap();
        assert_eq!(h.changes.len(), 1);
        assert_eq!(h.reach.first_record, Some((1, 200)));
        assert_eq!(h.reach.end_offset, 2, "read up to offset 2 of 100");
        assert!(!h.reach.complete());
        assert!(h.reach.holes.is_empty());
    }
}
