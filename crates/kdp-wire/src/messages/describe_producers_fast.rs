//! The whole-body check of a DescribeProducers v0 response in its usual
//! shape, in one pass over a slice: the fast half of the view's check.
//!
//! It accepts a subset of what the declared check accepts: every count a
//! shortest-form varint of at most three bytes, every name and error
//! message null or under 127 ASCII bytes, every tag section empty (so
//! every producer lies at a fixed stride), nothing after the body.
//! Anything else, valid or not, it leaves to the declared check, which
//! names the field and byte of an error. The position stays a slice in
//! registers: no reader, no `Result`, no error built on the way. One topic
//! of one partition (a describe of a single partition) has its own inline
//! path with fixed-size heads; any other shape goes through the general
//! walk, out of line.

/// A producer's six numbers (int64, int32, int32, int64, int32, int64),
/// which any bytes are; its tag section follows.
const PRODUCER_FIELDS: usize = 8 + 4 + 4 + 8 + 4 + 8;

/// A producer in the usual shape: its six numbers and an empty tag
/// section.
const PRODUCER: usize = PRODUCER_FIELDS + 1;

/// Where the tag sections of four producers in a row lie in their bytes.
const TAGS_OF_FOUR: [usize; 4] = [
    PRODUCER_FIELDS,
    PRODUCER + PRODUCER_FIELDS,
    2 * PRODUCER + PRODUCER_FIELDS,
    3 * PRODUCER + PRODUCER_FIELDS,
];

/// True only for a whole body the declared check accepts with every
/// producer at a fixed stride (see the module's docs).
#[inline]
pub(crate) fn accepts(body: &[u8]) -> bool {
    one_partition(body) || any_shape(body)
}

/// [`accepts`] for any number of topics and partitions, out of line and
/// cold, so that the one-partition path is laid out as a straight line
/// (a large body spends its time in the walk, not in reaching it).
#[cold]
#[inline(never)]
fn any_shape(body: &[u8]) -> bool {
    response(body).is_some_and(<[u8]>::is_empty)
}

/// [`accepts`] for one topic of one partition with a null ErrorMessage and
/// under 127 producers (the answer about a single partition), inline: the
/// same verdict as [`any_shape`] on such a body and false on any other,
/// with fixed-size heads read in one step each and the body's length
/// checked once against the one it must have. Always inline: at one
/// producer a call and its saved registers cost a sixth of the check.
#[inline(always)]
fn one_partition(b: &[u8]) -> bool {
    // ThrottleTimeMs, one topic, its name's length.
    let Some((&[_, _, _, _, 2, n @ 1..=0x7f], b)) = b.split_first_chunk::<6>() else {
        return false;
    };
    let Some((name, b)) = b.split_at_checked(usize::from(n - 1)) else {
        return false;
    };
    // One partition: PartitionIndex, ErrorCode, a null ErrorMessage, the
    // producer count.
    let Some((&[2, _, _, _, _, _, _, 0, p @ 1..=0x7f], b)) = b.split_first_chunk::<9>() else {
        return false;
    };
    // The producers, then the partition's, the topic's and the response's
    // empty tag sections, and nothing else.
    let Some((producers, &[0, 0, 0])) = b.split_last_chunk::<3>() else {
        return false;
    };
    // The name last: a name outside 8 to 16 bytes is a call, and nothing
    // has to live across it.
    producers.len() == usize::from(p - 1) * PRODUCER
        && empty_producer_tags(producers)
        && short_ascii(name)
}

/// Each function takes the bytes at a value and gives back what follows
/// it, or `None` for anything outside the usual shape.
#[inline]
fn response(b: &[u8]) -> Option<&[u8]> {
    let (_throttle_time_ms, b) = b.split_first_chunk::<4>()?;
    let (topics, mut b) = count(b)?;
    // Every topic and partition takes bytes (3 and 9 at the least) or
    // fails, so a count the input cannot hold ends as the bytes do.
    for _ in 0..topics {
        b = topic(b)?;
    }
    empty_tags(b)
}

#[inline]
fn topic(b: &[u8]) -> Option<&[u8]> {
    let (true, b) = nullable_short_ascii(b)? else {
        return None;
    };
    let (partitions, mut b) = count(b)?;
    for _ in 0..partitions {
        b = partition(b)?;
    }
    empty_tags(b)
}

#[inline]
fn partition(b: &[u8]) -> Option<&[u8]> {
    // The usual head in one step: PartitionIndex and ErrorCode, a null
    // ErrorMessage and a one-byte producer count; else field by field.
    let (producers, b) = match b.split_first_chunk::<8>() {
        Some((&[_, _, _, _, _, _, 0, n @ 1..=0x7f], b)) => (usize::from(n - 1), b),
        _ => {
            let (_partition_index_and_error_code, b) = b.split_first_chunk::<6>()?;
            let (_error_message, b) = nullable_short_ascii(b)?;
            count(b)?
        }
    };
    let (array, b) = b.split_at_checked(producers.checked_mul(PRODUCER)?)?;
    if !empty_producer_tags(array) {
        return None;
    }
    empty_tags(b)
}

/// Whether every producer's tag section in `array`, exactly a whole
/// number of producers, is empty: four a step, then one. The stride is a
/// constant, so the tag bytes are found with no count kept and no length
/// checked but the loops' own (the general `fixed_structs` walks a count
/// and a stride it is given: a fifth of this check's instructions at one
/// producer). Always inline: at one producer the call would cost as
/// much as the loop.
#[inline(always)]
fn empty_producer_tags(array: &[u8]) -> bool {
    let mut rest = array;
    while let Some((four, after)) = rest.split_first_chunk::<{ 4 * PRODUCER }>() {
        // Constant positions in a fixed-size chunk: four loads, no loop
        // (an iterator's `step_by` stays a call when inlined into another
        // crate). A byte not there, which cannot be, reads as a tag.
        let tag = |at: usize| four.get(at).copied().unwrap_or(u8::MAX);
        let [a, b, c, d] = TAGS_OF_FOUR;
        if tag(a) | tag(b) | tag(c) | tag(d) != 0 {
            return false;
        }
        rest = after;
    }
    while let Some(([.., tag], after)) = rest.split_first_chunk::<PRODUCER>() {
        if *tag != 0 {
            return false;
        }
        rest = after;
    }
    true
}

/// A non-null compact array count: `n + 1` as a shortest-form varint of
/// one to three bytes (counts under 2^21 - 1).
#[inline]
fn count(b: &[u8]) -> Option<(usize, &[u8])> {
    let (n, rest) = match *b {
        [n @ 0..=0x7f, ref rest @ ..] => (u32::from(n), rest),
        [lo @ 0x80..=0xff, hi @ 1..=0x7f, ref rest @ ..] => {
            (u32::from(lo & 0x7f) | u32::from(hi) << 7, rest)
        }
        [lo @ 0x80..=0xff, mid @ 0x80..=0xff, hi @ 1..=0x7f, ref rest @ ..] => (
            u32::from(lo & 0x7f) | u32::from(mid & 0x7f) << 7 | u32::from(hi) << 14,
            rest,
        ),
        _ => return None,
    };
    // 0 is null: the declared check names that error.
    Some((n.checked_sub(1)? as usize, rest))
}

/// A compact nullable string, null or under 127 ASCII bytes (so UTF-8);
/// whether it was present.
#[inline]
fn nullable_short_ascii(b: &[u8]) -> Option<(bool, &[u8])> {
    match *b {
        [0, ref rest @ ..] => Some((false, rest)),
        [n @ 1..=0x7f, ref rest @ ..] => {
            let (s, rest) = rest.split_at_checked(usize::from(n - 1))?;
            short_ascii(s).then_some((true, rest))
        }
        _ => None,
    }
}

/// Whether `s` is ASCII: a name of 8 to 16 bytes (most topic names) as
/// the two 8-byte words that cover it, overlapping; any other length
/// through `is_ascii`. The same answer either way; `is_ascii`'s loop and
/// its tail cost more than the check at one producer otherwise does.
/// Always inline (the words are a few instructions, a call costs more),
/// the loop out of line.
#[inline(always)]
fn short_ascii(s: &[u8]) -> bool {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    match (s.first_chunk::<8>(), s.last_chunk::<8>()) {
        (Some(head), Some(tail)) if s.len() <= 16 => {
            (u64::from_ne_bytes(*head) | u64::from_ne_bytes(*tail)) & HIGH_BITS == 0
        }
        _ => any_ascii(s),
    }
}

/// [`short_ascii`] of any other length.
#[inline(never)]
fn any_ascii(s: &[u8]) -> bool {
    s.is_ascii()
}

/// An empty tagged-field section: one zero byte.
#[inline]
fn empty_tags(b: &[u8]) -> Option<&[u8]> {
    match *b {
        [0, ref rest @ ..] => Some(rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
