//! The primitive readers and writers of `kdp_wire::codec`: varint bounds,
//! size functions that match the writers, strict booleans and lengths, and
//! the fast paths agreeing with the general ones.

use kdp_wire::codec::{
    nullable_string_len_v, string_len_v, uvarint32_len, uvarint64_len, varint32_len, varint64_len,
    Reader,
};
use kdp_wire::error::DecodeErrorKind;
use kdp_wire::{PutWire, TaggedFields};
use proptest::prelude::*;

fn u32_edges() -> Vec<u32> {
    let mut v = vec![0, 1, u32::MAX, u32::MAX - 1];
    for bits in [7, 14, 21, 28, 31] {
        let b = 1u32 << bits;
        v.extend([b - 1, b, b + 1]);
    }
    v
}

#[test]
fn uvarint32_round_trips_at_every_boundary() {
    for v in u32_edges() {
        let mut buf = Vec::new();
        buf.put_uvarint32(v);
        assert_eq!(buf.len(), uvarint32_len(v), "{v}");
        let mut r = Reader::new(&buf);
        assert_eq!(r.uvarint32().unwrap(), v);
        assert!(r.is_empty());
        // Every prefix is a truncation, at the varint's first byte.
        for n in 0..buf.len() {
            let err = Reader::new(&buf[..n]).uvarint32().unwrap_err();
            assert_eq!(err.offset(), 0);
            assert!(
                matches!(err.kind(), DecodeErrorKind::Truncated { .. }),
                "{err}"
            );
        }
    }
}

#[test]
fn uvarint64_round_trips_and_rejects_an_eleventh_bit() {
    for v in [
        0u64,
        1,
        127,
        128,
        u64::from(u32::MAX) + 1,
        u64::MAX >> 1,
        u64::MAX,
    ] {
        let mut buf = Vec::new();
        buf.put_uvarint64(v);
        assert_eq!(buf.len(), uvarint64_len(v), "{v}");
        assert_eq!(Reader::new(&buf).uvarint64().unwrap(), v);
    }
    // 10 bytes whose last carries more than the one bit left.
    let mut buf = vec![0xff; 9];
    buf.push(0x02);
    let err = Reader::new(&buf).uvarint64().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0: unsigned varint64 is longer than 10 bytes"
    );
    // Overlong.
    let err = Reader::new(&[0xff, 0x80, 0x00]).uvarint64().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0: unsigned varint64 is not in its shortest form (3 bytes, last one 0x00)"
    );
}

#[test]
fn zigzag_varints() {
    for v in [0i32, -1, 1, -64, 63, -65, 64, i32::MIN, i32::MAX] {
        let mut buf = Vec::new();
        buf.put_varint32(v);
        assert_eq!(buf.len(), varint32_len(v));
        assert_eq!(Reader::new(&buf).varint32().unwrap(), v);
    }
    for v in [0i64, -1, 1, i64::MIN, i64::MAX, i64::from(i32::MIN) - 1] {
        let mut buf = Vec::new();
        buf.put_varint64(v);
        assert_eq!(buf.len(), varint64_len(v));
        assert_eq!(Reader::new(&buf).varint64().unwrap(), v);
    }
    // -1 is 01, 1 is 02.
    let mut buf = Vec::new();
    buf.put_varint32(-1);
    buf.put_varint32(1);
    assert_eq!(buf, [1, 2]);
}

#[test]
fn booleans_are_0_or_1() {
    assert!(!Reader::new(&[0]).bool().unwrap());
    assert!(Reader::new(&[1]).bool().unwrap());
    let err = Reader::new(&[9, 2]).bool().unwrap_err();
    assert_eq!(err.to_string(), "at byte 0: boolean byte is 9, not 0 or 1");
}

#[test]
fn string_sizes_match_the_writer() {
    for len in [0usize, 1, 126, 127, 128, 16_383, 16_384, 40_000] {
        let s = "x".repeat(len);
        for flexible in [true, false] {
            let mut buf = Vec::new();
            buf.put_string_v(&s, flexible);
            assert_eq!(buf.len(), string_len_v(&s, flexible), "{len} {flexible}");
            let mut r = Reader::new(&buf);
            let back = r.string_v(flexible).unwrap();
            // A classic string stops at i16::MAX bytes (the writer cuts it).
            let max = if flexible { usize::MAX } else { 32_767 };
            assert_eq!(back.len(), len.min(max));
        }
    }
    let mut buf = Vec::new();
    buf.put_nullable_string_v(None, true);
    buf.put_nullable_string_v(None, false);
    assert_eq!(buf, [0, 0xff, 0xff]);
    assert_eq!(nullable_string_len_v(None, true), 1);
    assert_eq!(nullable_string_len_v(None, false), 2);
}

#[test]
fn compact_strings_fast_and_general_paths_agree() {
    // Lengths around the one-byte fast path (up to 126 bytes), each as
    // valid, invalid UTF-8 at the end, and cut short by one byte.
    for len in [0usize, 1, 125, 126, 127, 128, 300] {
        let s = "é".repeat(len / 2) + &"a".repeat(len % 2);
        let mut ok = Vec::new();
        ok.put_string_v(&s, true);
        let mut r = Reader::new(&ok);
        assert_eq!(
            r.compact_nullable_string().unwrap().as_deref(),
            Some(&s[..])
        );
        assert!(r.is_empty());

        if len > 0 {
            let mut bad = ok.clone();
            *bad.last_mut().unwrap() = 0xff;
            let err = Reader::new(&bad).compact_nullable_string().unwrap_err();
            assert_eq!(
                err.offset(),
                bad.len() - 1 - usize::from(len % 2 == 0),
                "{len}"
            );
            assert!(matches!(err.kind(), DecodeErrorKind::InvalidUtf8 { .. }));

            let short = &ok[..ok.len() - 1];
            let err = Reader::new(short).compact_nullable_string().unwrap_err();
            assert_eq!(err.offset(), 0);
            assert_eq!(
                err.kind(),
                &DecodeErrorKind::LengthExceedsInput {
                    what: "string",
                    len: s.len() as u64,
                    left: s.len() - 1
                }
            );
        }
    }
    let mut r = Reader::new(&[0, 7]);
    assert_eq!(r.compact_nullable_string().unwrap(), None);
    assert_eq!(r.offset(), 1);
}

#[test]
fn compact_array_counts_fast_and_general_paths_agree() {
    // Count 3 of 4-byte elements: exactly enough, or one byte short.
    let mut r = Reader::new(&[4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
    assert_eq!(r.i32_array_v(true).unwrap(), [1, 2, 3]);
    assert!(r.is_empty());
    let err = Reader::new(&[4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0])
        .i32_array_v(true)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0: array count 3 needs at least 12 bytes but only 10 are left"
    );
    // A two-byte count (127 elements) takes the general path.
    let mut buf = vec![0x80, 0x01];
    buf.extend(std::iter::repeat_n(0u8, 127 * 4));
    assert_eq!(Reader::new(&buf).i32_array_v(true).unwrap().len(), 127);
    // Null.
    let err = Reader::new(&[0]).i32_array_v(true).unwrap_err();
    assert!(matches!(
        err.kind(),
        DecodeErrorKind::UnexpectedNull { what: "array" }
    ));
    // Classic arrays: int32 count, -1 null, other negatives malformed.
    let err = Reader::new(&[0xff, 0xff, 0xff, 0xfe])
        .i32_array_v(false)
        .unwrap_err();
    assert_eq!(err.to_string(), "at byte 0: array has negative length -2");
}

#[test]
fn bounded_sub_readers_keep_absolute_offsets() {
    let data = [9u8, 9, 0, 0, 0, 5, 1];
    let mut r = Reader::new(&data);
    r.take(2, "skip").unwrap();
    let mut sub = r.sub_reader(4, "sub").unwrap();
    assert_eq!(sub.offset(), 2);
    assert_eq!(sub.i32().unwrap(), 5);
    let err = sub.i8().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 6: int8 needs 1 bytes but only 0 are left"
    );
    assert_eq!(r.remaining(), 1);
    let err = r.finish().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 6: 1 trailing bytes after the end of the message"
    );
}

#[test]
fn tagged_field_sections_round_trip() {
    let mut t = TaggedFields::default();
    t.insert(7, vec![1]);
    t.insert(0, vec![]);
    t.insert(u32::MAX, vec![2; 200]);
    let mut buf = Vec::new();
    buf.put_tagged_fields(&t);
    assert_eq!(buf.len(), kdp_wire::codec::tagged_fields_len(&t));
    assert_eq!(&buf[..5], &[3, 0, 0, 7, 1]);
    let mut r = Reader::new(&buf);
    assert_eq!(r.tagged_fields().unwrap(), t);
    assert!(r.is_empty());
    let mut empty = Vec::new();
    empty.put_tagged_fields(&TaggedFields::default());
    assert_eq!(empty, [0]);
}

proptest! {
    #[test]
    fn any_uvarint32_round_trips(v in any::<u32>()) {
        let mut buf = Vec::new();
        buf.put_uvarint32(v);
        prop_assert_eq!(buf.len(), uvarint32_len(v));
        let mut r = Reader::new(&buf);
        prop_assert_eq!(r.uvarint32().unwrap(), v);
        prop_assert!(r.is_empty());
    }

    /// Any 1 to 6 bytes: either the shortest encoding of the value read,
    /// or an error at byte 0.
    #[test]
    fn uvarint32_accepts_exactly_the_shortest_forms(bytes in proptest::collection::vec(any::<u8>(), 1..7)) {
        let mut r = Reader::new(&bytes);
        match r.uvarint32() {
            Ok(v) => {
                let mut canonical = Vec::new();
                canonical.put_uvarint32(v);
                prop_assert_eq!(&bytes[..r.offset()], &canonical[..]);
            }
            Err(e) => prop_assert_eq!(e.offset(), 0),
        }
    }
}
