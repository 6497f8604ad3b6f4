//! Record batches v2: every header field at its byte against Kafka's wire
//! format, round trips through every codec, the `kafka-protocol` crate's
//! encoder and decoder as a peer, every-prefix truncation, a wrong CRC
//! named by the batch's offset, legacy magic, partial last batches and
//! control records.

use std::borrow::Cow;

use bytes::{Bytes, BytesMut};
use kdp_wire::records::compression::{self, DecompressError};
use kdp_wire::records::header::{decrement_sequence, increment_sequence};
use kdp_wire::records::*;
use proptest::prelude::*;

const LIMIT: usize = DEFAULT_MAX_DECOMPRESSED;

fn record(offset_delta: i32, key: Option<&[u8]>, value: Option<&[u8]>) -> Record<'static> {
    Record {
        attributes: 0,
        timestamp_delta: i64::from(offset_delta) * 3,
        offset_delta,
        key: key.map(|k| Cow::Owned(k.to_vec())),
        value: value.map(|v| Cow::Owned(v.to_vec())),
        headers: Vec::new(),
    }
}

fn sample(compression: Compression) -> RecordBatch<'static> {
    let mut first = record(0, Some(b"k"), Some(b"hello"));
    first.headers.push(RecordHeader {
        key: Cow::Borrowed(b"trace"),
        value: None,
    });
    RecordBatch {
        base_offset: 1000,
        partition_leader_epoch: 7,
        attributes: Attributes::new(compression, TimestampType::CreateTime, true, false, false),
        last_offset_delta: 1,
        base_timestamp: 1_764_400_000_000,
        max_timestamp: 1_764_400_000_003,
        producer_id: 4242,
        producer_epoch: 3,
        base_sequence: 17,
        records: vec![first, record(1, None, Some(b"world"))],
    }
}

fn only_batch(blob: &[u8]) -> Batch<'_> {
    let mut batches = Batches::new(blob);
    let batch = batches.next().expect("a batch").expect("valid");
    assert!(batches.next().is_none());
    assert_eq!(batches.partial(), None);
    batch
}

/// Every header field at the byte Kafka's `DefaultRecordBatch` puts it,
/// and the record's varints as `DefaultRecord.writeTo` writes them.
#[test]
fn an_uncompressed_batch_byte_by_byte() {
    let bytes = sample(Compression::None).encode().unwrap();
    let be = |at: usize, n: usize| bytes[at..at + n].to_vec();
    assert_eq!(be(0, 8), 1000i64.to_be_bytes()); // BaseOffset
    assert_eq!(be(8, 4), ((bytes.len() - 12) as i32).to_be_bytes()); // BatchLength
    assert_eq!(be(12, 4), 7i32.to_be_bytes()); // PartitionLeaderEpoch
    assert_eq!(bytes[16], 2); // Magic
    let crc = crc32c::crc32c(&bytes[21..]);
    assert_eq!(be(17, 4), crc.to_be_bytes()); // CRC over Attributes..end
    assert_eq!(be(21, 2), [0, 0x10]); // Attributes: transactional, no codec
    assert_eq!(be(23, 4), 1i32.to_be_bytes()); // LastOffsetDelta
    assert_eq!(be(27, 8), 1_764_400_000_000i64.to_be_bytes());
    assert_eq!(be(35, 8), 1_764_400_000_003i64.to_be_bytes());
    assert_eq!(be(43, 8), 4242i64.to_be_bytes()); // ProducerId
    assert_eq!(be(51, 2), 3i16.to_be_bytes()); // ProducerEpoch
    assert_eq!(be(53, 4), 17i32.to_be_bytes()); // BaseSequence
    assert_eq!(be(57, 4), 2i32.to_be_bytes()); // RecordCount
                                               // Record 0: length 19 (zig-zag 38), attributes 0, timestamp delta 0,
                                               // offset delta 0, key length 1 (2) "k", value length 5 (10) "hello",
                                               // one header (2): key length 5 (10) "trace", null value (-1 -> 1).
    let mut record0 = vec![38, 0, 0, 0, 2, b'k', 10];
    record0.extend_from_slice(b"hello");
    record0.extend_from_slice(&[2, 10]);
    record0.extend_from_slice(b"trace");
    record0.push(1);
    assert_eq!(&bytes[61..61 + record0.len()], &record0[..]);
    // Record 1: length 11 (22), timestamp delta 3 (6), offset delta 1 (2),
    // null key (1).
    let mut record1 = vec![22, 0, 6, 2, 1, 10];
    record1.extend_from_slice(b"world");
    record1.push(0);
    assert_eq!(&bytes[61 + record0.len()..], &record1[..]);

    let batch = only_batch(&bytes);
    let h = batch.header();
    assert_eq!((h.last_offset(), h.last_sequence()), (1001, 18));
    assert!(h.is_transactional() && !h.is_control() && batch.crc_valid());
    assert_eq!(h.compression(), Some(Compression::None));
    assert_eq!(h.delete_horizon_ms(), None);
    assert_eq!(
        RecordBatch::from_batch(&batch, LIMIT).unwrap(),
        sample(Compression::None)
    );
}

#[test]
fn every_codec_round_trips_and_is_named_as_kafka_names_it() {
    for codec in Compression::ALL {
        let batch = sample(codec);
        let bytes = batch.encode().unwrap();
        let decoded = only_batch(&bytes);
        assert_eq!(decoded.header().compression(), Some(codec));
        assert_eq!(decoded.header().attributes.compression_id(), codec.id());
        assert!(decoded.crc_valid(), "{codec}");
        assert_eq!(
            RecordBatch::from_batch(&decoded, LIMIT).unwrap(),
            batch,
            "{codec}"
        );
        assert_eq!(Compression::from_name(codec.name()), Some(codec));
    }
    let names: Vec<&str> = Compression::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["none", "gzip", "snappy", "lz4", "zstd"]);
}

/// What Kafka's Java producer writes for snappy: xerial's stream header,
/// then big-endian chunk lengths; a bare snappy block is read too, and a
/// header repeated between chunks (streams written back to back).
#[test]
fn snappy_is_xerial_framed_and_bare_blocks_are_read() {
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let framed = compression::snappy::compress(&data).unwrap();
    assert_eq!(
        &framed[..16],
        b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"
    );
    let first_chunk = u32::from_be_bytes(framed[16..20].try_into().unwrap()) as usize;
    let first = snap::raw::Decoder::new()
        .decompress_vec(&framed[20..20 + first_chunk])
        .unwrap();
    assert_eq!(first.len(), 32 * 1024, "xerial's 32 KiB blocks");
    assert_eq!(
        compression::snappy::decompress(&framed, LIMIT).unwrap(),
        data
    );

    let bare = snap::raw::Encoder::new().compress_vec(&data).unwrap();
    assert_eq!(compression::snappy::decompress(&bare, LIMIT).unwrap(), data);

    let mut twice = framed.clone();
    twice.extend_from_slice(&framed);
    let mut expected = data.clone();
    expected.extend_from_slice(&data);
    assert_eq!(
        compression::snappy::decompress(&twice, LIMIT).unwrap(),
        expected
    );

    let cut = &framed[..framed.len() - 3];
    assert!(matches!(
        compression::snappy::decompress(cut, LIMIT),
        Err(DecompressError::Invalid(_))
    ));
}

/// Kafka's LZ4 frame: 64 KiB independent blocks (BD byte 0x40), a correct
/// header checksum (KAFKA-3160), no content checksum.
#[test]
fn lz4_is_the_frame_kafka_writes() {
    let data = vec![7u8; 200_000];
    let frame = compression::lz4::compress(&data).unwrap();
    assert_eq!(&frame[..4], &0x184D_2204u32.to_le_bytes());
    let flg = frame[4];
    assert_eq!(flg >> 6, 1, "version 01");
    assert_ne!(flg & 0x20, 0, "independent blocks");
    assert_eq!(flg & 0x04, 0, "no content checksum");
    assert_eq!(frame[5], 0x40, "64 KiB blocks");
    assert_eq!(compression::lz4::decompress(&frame, LIMIT).unwrap(), data);
    // A frame cut short is an error, not silently less data.
    for cut in [frame.len() - 1, frame.len() - 4, 12] {
        assert!(
            compression::lz4::decompress(&frame[..cut], LIMIT).is_err(),
            "cut at {cut}"
        );
    }
}

#[test]
fn a_wrong_crc_names_the_batch_offset() {
    let first = sample(Compression::None).encode().unwrap();
    let mut second = sample(Compression::Gzip);
    second.base_offset = 1002;
    let mut blob = first.clone();
    blob.extend(second.encode().unwrap());
    // Flip a bit in the second batch's producer id.
    blob[first.len() + 45] ^= 1;
    let batches: Vec<_> = Batches::new(&blob).map(Result::unwrap).collect();
    assert!(batches[0].crc_valid());
    assert!(!batches[1].crc_valid());
    let err = batches[1].verify_crc().unwrap_err();
    assert_eq!(err.position, first.len());
    assert_eq!(err.base_offset, Some(1002));
    assert!(
        matches!(err.kind, BatchErrorKind::CrcMismatch { stored, computed } if stored != computed)
    );
    assert!(
        err.to_string().starts_with(&format!(
            "batch at byte {} (base offset 1002): CRC-32C mismatch: stored 0x",
            first.len()
        )),
        "{err}"
    );
    // Reading its records checks the CRC first, as Kafka's consumer does.
    assert_eq!(batches[1].records(LIMIT).unwrap_err(), err);
}

/// A fetch may end inside a batch: every prefix of two batches gives the
/// whole batches before the cut and then stops quietly, saying how many
/// bytes of the cut batch were there.
#[test]
fn every_prefix_ends_in_a_partial_batch_not_an_error() {
    let a = sample(Compression::None).encode().unwrap();
    let mut b = sample(Compression::Lz4);
    b.base_offset = 1002;
    let b = b.encode().unwrap();
    let mut blob = a.clone();
    blob.extend_from_slice(&b);
    for n in 0..=blob.len() {
        let mut batches = Batches::new(&blob[..n]);
        let whole: Vec<i64> = (&mut batches)
            .map(|r| {
                r.unwrap_or_else(|e| panic!("prefix {n}: {e}"))
                    .header()
                    .base_offset
            })
            .collect();
        let (expected, start) = if n < a.len() {
            (vec![], 0)
        } else if n < blob.len() {
            (vec![1000], a.len())
        } else {
            (vec![1000, 1002], blob.len())
        };
        assert_eq!(whole, expected, "prefix {n}");
        let partial = batches.partial();
        if n == start {
            assert_eq!(partial, None, "prefix {n}");
        } else {
            let p = partial.unwrap_or_else(|| panic!("prefix {n}: no partial"));
            assert_eq!((p.position, p.available), (start, n - start), "prefix {n}");
            let size = if start == 0 { a.len() } else { b.len() };
            assert_eq!(p.size, (n - start >= 12).then_some(size), "prefix {n}");
            assert_eq!(p.base_offset.is_some(), n - start >= 8);
        }
    }
}

/// Inside a batch whose framing is whole, every cut of the records
/// section (BatchLength and CRC fixed up to match) is an error naming a
/// record field, never a panic nor a shorter list.
#[test]
fn every_truncated_records_section_is_an_error() {
    let whole = sample(Compression::None).encode().unwrap();
    for n in 61..whole.len() {
        let mut cut = whole[..n].to_vec();
        cut[8..12].copy_from_slice(&((n - 12) as i32).to_be_bytes());
        let crc = crc32c::crc32c(&cut[21..]);
        cut[17..21].copy_from_slice(&crc.to_be_bytes());
        let batch = only_batch(&cut);
        let err = batch.records(LIMIT).unwrap_err();
        match &err.kind {
            BatchErrorKind::Records {
                decompressed: false,
                error,
            } => {
                assert!(error.path().starts_with("Record"), "cut {n}: {err}");
                assert!(error.offset() <= n, "cut {n}: {err}");
            }
            other => panic!("cut {n}: {other:?}"),
        }
    }
    // Bytes after the declared records: Kafka's "records still remaining".
    let mut long = whole.clone();
    long.push(0);
    let length = (long.len() - 12) as i32;
    long[8..12].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&long[21..]);
    long[17..21].copy_from_slice(&crc.to_be_bytes());
    let err = only_batch(&long).records(LIMIT).unwrap_err();
    assert!(err.to_string().contains("1 trailing bytes"), "{err}");
}

/// A legacy message (magic 1) is named as such, and the v2 batch after it
/// is still read: the framing is the same.
#[test]
fn legacy_magic_is_a_typed_error_and_reading_goes_on() {
    // A magic v1 message: offset, size 22, crc, magic 1, attributes,
    // timestamp, null key, empty value.
    let mut legacy = 5i64.to_be_bytes().to_vec();
    legacy.extend(22i32.to_be_bytes());
    legacy.extend([0, 0, 0, 0, 1, 0]);
    legacy.extend(0i64.to_be_bytes());
    legacy.extend((-1i32).to_be_bytes());
    legacy.extend(0i32.to_be_bytes());
    assert_eq!(legacy.len(), 34);
    let mut blob = legacy.clone();
    blob.extend(sample(Compression::None).encode().unwrap());
    let mut batches = Batches::new(&blob);
    let err = batches.next().unwrap().unwrap_err();
    assert_eq!(err.kind, BatchErrorKind::LegacyMagic { magic: 1 });
    assert_eq!((err.position, err.base_offset), (0, Some(5)));
    assert!(err.to_string().contains("legacy message set"), "{err}");
    let next = batches.next().unwrap().unwrap();
    assert_eq!((next.position(), next.header().base_offset), (34, 1000));
    assert!(batches.next().is_none());

    // A magic Kafka never defined, or a length below any format's
    // smallest entry, breaks the framing: the iterator stops there.
    let mut bad = sample(Compression::None).encode().unwrap();
    bad[16] = 3;
    let mut batches = Batches::new(&bad);
    assert_eq!(
        batches.next().unwrap().unwrap_err().kind,
        BatchErrorKind::InvalidMagic { magic: 3 }
    );
    assert!(batches.next().is_none());
    let mut short = sample(Compression::None).encode().unwrap();
    short[8..12].copy_from_slice(&13i32.to_be_bytes());
    let mut batches = Batches::new(&short);
    assert_eq!(
        batches.next().unwrap().unwrap_err().kind,
        BatchErrorKind::LengthTooSmall { length: 13 }
    );
    assert!(batches.next().is_none());
}

#[test]
fn unknown_compression_ids_and_negative_counts_are_typed() {
    let mut batch = sample(Compression::None);
    batch.attributes = Attributes(batch.attributes.0 | 5);
    let bytes = batch.encode().unwrap();
    let b = only_batch(&bytes);
    assert_eq!(b.header().compression(), None);
    assert_eq!(
        b.records(LIMIT).unwrap_err().kind,
        BatchErrorKind::UnknownCompression { id: 5 }
    );
    let mut bytes = sample(Compression::None).encode().unwrap();
    bytes[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    assert_eq!(
        only_batch(&bytes).records(LIMIT).unwrap_err().kind,
        BatchErrorKind::NegativeRecordCount { count: -1 }
    );
    // A count the bytes cannot hold is refused before allocating for it.
    bytes[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    let err = only_batch(&bytes).records(LIMIT).unwrap_err();
    assert!(err.to_string().contains("RecordCount"), "{err}");
}

/// Transaction markers as the coordinator writes them: key version 0 and
/// the type, value version 0 and the coordinator epoch.
#[test]
fn control_batches_carry_their_marker() {
    for (commit, name) in [(true, "COMMIT"), (false, "ABORT")] {
        let marker = ControlRecord::marker_record(commit, 9);
        assert_eq!(
            marker.key.as_deref(),
            Some(&[0, 0, 0, u8::from(commit)][..])
        );
        assert_eq!(marker.value.as_deref(), Some(&[0, 0, 0, 0, 0, 9][..]));
        let batch = RecordBatch {
            base_offset: 50,
            attributes: Attributes::new(
                Compression::None,
                TimestampType::CreateTime,
                true,
                true,
                false,
            ),
            producer_id: 4242,
            producer_epoch: 3,
            base_sequence: -1,
            records: vec![marker],
            ..RecordBatch::default()
        };
        let bytes = batch.encode().unwrap();
        let b = only_batch(&bytes);
        let control = b.control(LIMIT).unwrap().unwrap();
        assert_eq!(control.control_type.name(), name);
        assert_eq!(control.marker.map(|m| m.coordinator_epoch), Some(9));
    }
    let data = sample(Compression::None).encode().unwrap();
    assert_eq!(only_batch(&data).control(LIMIT).unwrap(), None);
    // Kafka refuses a key under 4 bytes; other types carry no marker.
    let short = Record {
        key: Some(Cow::Borrowed(&[0, 0, 0])),
        ..Record::default()
    };
    assert!(ControlRecord::parse(&short).is_err());
    let leader = Record {
        key: Some(Cow::Borrowed(&[0, 0, 0, 2])),
        ..Record::default()
    };
    let parsed = ControlRecord::parse(&leader).unwrap();
    assert_eq!(
        (parsed.control_type, parsed.marker),
        (ControlType::LeaderChange, None)
    );
    assert_eq!(ControlType::from_id(77), ControlType::Unknown(77));
}

/// Sequences wrap past Int.MAX to 0, as Kafka's `incrementSequence` does.
#[test]
fn sequences_wrap_like_kafkas() {
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 1, 3), 1);
    assert_eq!(increment_sequence(5, 3), 8);
    assert_eq!(decrement_sequence(0, 1), i32::MAX);
    assert_eq!(decrement_sequence(8, 3), 5);
    let mut batch = sample(Compression::None);
    batch.base_sequence = i32::MAX;
    let bytes = batch.encode().unwrap();
    assert_eq!(only_batch(&bytes).header().last_sequence(), 0);
    batch.base_sequence = -1;
    let bytes = batch.encode().unwrap();
    assert_eq!(only_batch(&bytes).header().last_sequence(), -1);
    // Hostile deltas give Java's answer, not a panic.
    let _ = increment_sequence(i32::MIN, i32::MIN);
    let _ = decrement_sequence(i32::MIN, i32::MAX);
}

#[test]
fn log_append_time_and_delete_horizon_attributes() {
    let a = Attributes::new(
        Compression::Zstd,
        TimestampType::LogAppendTime,
        false,
        true,
        true,
    );
    assert_eq!(a.0, 0x04 | 0x08 | 0x20 | 0x40);
    assert_eq!(a.timestamp_type(), TimestampType::LogAppendTime);
    assert!(a.is_control() && a.has_delete_horizon() && !a.is_transactional());
    let mut batch = sample(Compression::None);
    batch.attributes = Attributes::new(
        Compression::None,
        TimestampType::CreateTime,
        false,
        false,
        true,
    );
    let bytes = batch.encode().unwrap();
    assert_eq!(
        only_batch(&bytes).header().delete_horizon_ms(),
        Some(1_764_400_000_000)
    );
}

// ---------------------------------------------------------------------------
// Properties, and the peer.

fn arb_bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..40))
}

fn arb_batch() -> impl Strategy<Value = RecordBatch<'static>> {
    let header = prop::collection::vec(
        (
            prop::collection::vec(any::<u8>(), 0..12),
            prop::option::of(prop::collection::vec(any::<u8>(), 0..12)),
        ),
        0..3,
    );
    let records = prop::collection::vec(
        (any::<i8>(), any::<i64>(), arb_bytes(), arb_bytes(), header),
        0..6,
    );
    (
        (
            any::<i64>(),
            any::<i32>(),
            0u8..5,
            any::<bool>(),
            any::<bool>(),
        ),
        (
            any::<i64>(),
            any::<i64>(),
            any::<i64>(),
            any::<i16>(),
            any::<i32>(),
        ),
        records,
    )
        .prop_map(
            |((base, epoch, codec, txn, append), (bt, mt, pid, pe, seq), records)| {
                let compression = Compression::from_id(codec).unwrap();
                let ts = if append {
                    TimestampType::LogAppendTime
                } else {
                    TimestampType::CreateTime
                };
                let records: Vec<Record<'static>> = records
                    .into_iter()
                    .enumerate()
                    .map(|(i, (attributes, td, key, value, headers))| Record {
                        attributes,
                        timestamp_delta: td,
                        offset_delta: i as i32,
                        key: key.map(Cow::Owned),
                        value: value.map(Cow::Owned),
                        headers: headers
                            .into_iter()
                            .map(|(k, v)| RecordHeader {
                                key: Cow::Owned(k),
                                value: v.map(Cow::Owned),
                            })
                            .collect(),
                    })
                    .collect();
                RecordBatch {
                    base_offset: base,
                    partition_leader_epoch: epoch,
                    attributes: Attributes::new(compression, ts, txn, false, false),
                    last_offset_delta: records.len().saturating_sub(1) as i32,
                    base_timestamp: bt,
                    max_timestamp: mt,
                    producer_id: pid,
                    producer_epoch: pe,
                    base_sequence: seq,
                    records,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any batch, any codec: decoded back to the same values; uncompressed
    /// ones re-encode byte for byte; every record's own prefixes fail.
    #[test]
    fn batches_round_trip(batch in arb_batch()) {
        let bytes = batch.encode().unwrap();
        let decoded = only_batch(&bytes);
        prop_assert!(decoded.crc_valid());
        prop_assert_eq!(decoded.size(), bytes.len());
        let back = RecordBatch::from_batch(&decoded, LIMIT).unwrap();
        prop_assert_eq!(&back, &batch);
        if batch.attributes.compression() == Some(Compression::None) {
            prop_assert_eq!(bytes.len(), 61 + batch.records_len());
            prop_assert_eq!(back.encode().unwrap(), bytes);
        }
        for r in &batch.records {
            let mut one = Vec::new();
            r.put(&mut one);
            prop_assert_eq!(one.len(), r.wire_len());
            for n in 0..one.len() {
                let mut reader = kdp_wire::Reader::new(&one[..n]);
                prop_assert!(Record::read(&mut reader).is_err());
            }
        }
    }

    /// kdp's batches read by the `kafka-protocol` crate, and the crate's
    /// batches (every codec) read by kdp, to the same records.
    #[test]
    fn the_peer_agrees(batch in arb_batch()) {
        // The peer derives the batch fields from its records: give it
        // batches it can express (sequences per record, timestamps from
        // the base, base timestamp the smallest).
        let mut batch = batch;
        batch.base_timestamp = batch.base_timestamp.clamp(0, 1 << 50);
        for (i, r) in batch.records.iter_mut().enumerate() {
            r.timestamp_delta = if i == 0 { 0 } else { (r.timestamp_delta & 0xffff) + i as i64 };
            r.attributes = 0;
            // The peer keeps headers in a map: unique UTF-8 keys.
            r.headers = r.headers.iter().enumerate().map(|(j, h)| RecordHeader {
                key: Cow::Owned(format!("h{j}").into_bytes()),
                value: h.value.clone(),
            }).collect();
        }
        if batch.records.is_empty() {
            return Ok(());
        }
        batch.max_timestamp = batch.base_timestamp + batch.records.iter().map(|r| r.timestamp_delta).max().unwrap_or(0);
        batch.base_sequence = batch.base_sequence.max(0) & 0x0fff_ffff;
        batch.producer_id = batch.producer_id.max(0);
        batch.producer_epoch = batch.producer_epoch.max(0);
        batch.attributes = Attributes::new(
            batch.attributes.compression().unwrap(),
            TimestampType::CreateTime,
            batch.attributes.is_transactional(),
            false,
            false,
        );
        let peer_records = to_peer(&batch);

        let ours = batch.encode().unwrap();
        let mut input = Bytes::from(ours.clone());
        let set = kafka_protocol::records::RecordBatchDecoder::decode(&mut input).unwrap();
        prop_assert_eq!(&set.records, &peer_records);

        let options = kafka_protocol::records::RecordEncodeOptions {
            version: 2,
            compression: peer_compression(batch.attributes.compression().unwrap()),
        };
        let mut theirs = BytesMut::new();
        kafka_protocol::records::RecordBatchEncoder::encode(&mut theirs, &peer_records, &options).unwrap();
        let theirs = theirs.to_vec();
        let decoded = only_batch(&theirs);
        prop_assert!(decoded.crc_valid());
        let mut expected = batch.clone();
        expected.partition_leader_epoch = decoded.header().partition_leader_epoch;
        prop_assert_eq!(RecordBatch::from_batch(&decoded, LIMIT).unwrap(), expected);
        if batch.attributes.compression() == Some(Compression::None) {
            prop_assert_eq!(&theirs[12..], &ours[12..].iter().enumerate().map(|(i, b)| {
                // The peer writes PartitionLeaderEpoch -1 (and so a CRC
                // that does not cover it): compare the rest.
                if i < 4 { theirs[12 + i] } else { *b }
            }).collect::<Vec<u8>>()[..]);
        }
    }
}

fn peer_compression(c: Compression) -> kafka_protocol::records::Compression {
    use kafka_protocol::records::Compression as P;
    match c {
        Compression::None => P::None,
        Compression::Gzip => P::Gzip,
        Compression::Snappy => P::Snappy,
        Compression::Lz4 => P::Lz4,
        Compression::Zstd => P::Zstd,
    }
}

fn to_peer(batch: &RecordBatch<'_>) -> Vec<kafka_protocol::records::Record> {
    batch
        .records
        .iter()
        .map(|r| kafka_protocol::records::Record {
            transactional: batch.attributes.is_transactional(),
            control: false,
            delete_horizon: false,
            partition_leader_epoch: batch.partition_leader_epoch,
            producer_id: batch.producer_id,
            producer_epoch: batch.producer_epoch,
            timestamp_type: kafka_protocol::records::TimestampType::Creation,
            offset: batch.base_offset + i64::from(r.offset_delta),
            sequence: batch.base_sequence + r.offset_delta,
            timestamp: batch.base_timestamp + r.timestamp_delta,
            key: r.key.as_deref().map(Bytes::copy_from_slice),
            value: r.value.as_deref().map(Bytes::copy_from_slice),
            headers: r
                .headers
                .iter()
                .map(|h| {
                    (
                        kafka_protocol::protocol::StrBytes::from_string(
                            String::from_utf8(h.key.to_vec()).unwrap(),
                        ),
                        h.value.as_deref().map(Bytes::copy_from_slice),
                    )
                })
                .collect(),
        })
        .collect()
}
