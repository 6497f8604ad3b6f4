//! Decompression bombs are refused within the stated memory bound
//! (`kdp_wire::records::compression`): the output never grows past the
//! limit, and a zstd frame asking for a huge window is refused before the
//! window is allocated. Measured with a counting allocator (this test
//! binary's global allocator), per thread.

// A global allocator is unsafe to implement; it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;

use kdp_wire::records::compression::{self, DecompressError};
use kdp_wire::records::*;

struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|l| {
            l.set(l.get() + layout.size());
            let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
        });
        let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(layout.size())));
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak live bytes above the start, and the largest allocation, of `f`.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, PEAK.with(Cell::get) - base, LARGEST.with(Cell::get))
}

const LIMIT: usize = 1 << 20;
const BOMB: usize = 32 << 20;

/// `BOMB` zero bytes through a streaming encoder, never all in memory.
fn bomb(codec: Compression) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    match codec {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            for _ in 0..BOMB >> 20 {
                e.write_all(&zeros).unwrap();
            }
            e.finish().unwrap()
        }
        Compression::Lz4 => {
            let mut e = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
            for _ in 0..BOMB >> 20 {
                e.write_all(&zeros).unwrap();
            }
            e.finish().0
        }
        Compression::Zstd => {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
            e.window_log(20).unwrap();
            for _ in 0..BOMB >> 20 {
                e.write_all(&zeros).unwrap();
            }
            e.finish().unwrap()
        }
        Compression::Snappy => {
            // xerial framing of 32 KiB blocks of zeros, the same block
            // repeated: each declares 32 KiB.
            let block = snap::raw::Encoder::new()
                .compress_vec(&zeros[..32 << 10])
                .unwrap();
            let mut out = b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01".to_vec();
            for _ in 0..BOMB >> 15 {
                out.extend((block.len() as i32).to_be_bytes());
                out.extend_from_slice(&block);
            }
            out
        }
        Compression::None => unreachable!(),
    }
}

/// A batch whose records section is `section`, declaring one record.
fn batch_around(codec: Compression, section: &[u8]) -> Vec<u8> {
    let mut bytes = RecordBatch::default().encode().unwrap();
    // An empty uncompressed batch; claim the codec, a record and the
    // section, with length and CRC to match.
    let attributes = Attributes::new(codec, TimestampType::CreateTime, false, false, false);
    bytes[21..23].copy_from_slice(&attributes.0.to_be_bytes());
    bytes.extend_from_slice(section);
    let length = (bytes.len() - 12) as i32;
    bytes[8..12].copy_from_slice(&length.to_be_bytes());
    bytes[57..61].copy_from_slice(&1i32.to_be_bytes());
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    bytes
}

#[test]
fn bombs_of_every_codec_stop_at_the_limit() {
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let section = bomb(codec);
        assert!(
            section.len() < BOMB / 16,
            "{codec}: {} bytes",
            section.len()
        );
        let bytes = batch_around(codec, &section);
        let batch = Batches::new(&bytes).next().unwrap().unwrap();
        let (result, peak, largest) = measure(|| batch.records(LIMIT));
        let err = result.unwrap_err();
        assert_eq!(
            err.kind,
            BatchErrorKind::DecompressedTooLarge {
                codec,
                limit: LIMIT
            },
            "{codec}"
        );
        assert!(err.to_string().contains("1048576-byte limit"), "{err}");
        // The output (at most the limit) and the codec's working set:
        // gzip's window, LZ4's 4 MiB block at most, zstd's 1 MiB window
        // here and its buffers.
        assert!(
            largest <= LIMIT + (4 << 20) + (64 << 10),
            "{codec}: largest {largest}"
        );
        assert!(peak <= 2 * LIMIT + (6 << 20), "{codec}: peak {peak}");
        assert!(peak < BOMB / 8, "{codec}: peak {peak}");
        // Exactly at the limit passes: the bound is the output's size.
        let (ok, _, _) = measure(|| compression::decompress(codec, &section, BOMB));
        assert_eq!(ok.unwrap().len(), BOMB, "{codec}");
    }
}

/// A snappy block declares its size first: a claim of 4 GiB is refused
/// before anything is allocated for it.
#[test]
fn a_snappy_size_claim_is_refused_before_allocating() {
    // Varint 0xffffffff, then one literal byte.
    let block = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x41];
    let (result, peak, _) = measure(|| compression::snappy::decompress(&block, LIMIT));
    assert_eq!(
        result.unwrap_err(),
        DecompressError::TooLarge { limit: LIMIT }
    );
    assert!(peak <= 64 << 10, "peak {peak}");
}

/// A zstd frame asking for a 2 GiB window is refused before the window is
/// allocated; the limit sets the largest window allowed.
#[test]
fn a_zstd_frame_asking_for_a_huge_window_is_refused() {
    // Magic, descriptor (no single segment, no content size), window
    // descriptor for 2^31, then a last raw block of one byte.
    let frame = [
        0x28,
        0xb5,
        0x2f,
        0xfd,
        0x00,
        21 << 3,
        0x09,
        0x00,
        0x00,
        0x41,
    ];
    let (result, peak, largest) = measure(|| compression::zstd::decompress(&frame, LIMIT));
    assert!(
        matches!(result, Err(DecompressError::Invalid(_))),
        "{result:?}"
    );
    assert!(
        largest <= 1 << 20 && peak <= 2 << 20,
        "largest {largest}, peak {peak}"
    );
    assert_eq!(compression::zstd::window_log_max(LIMIT), 23);
    assert_eq!(
        compression::zstd::window_log_max(DEFAULT_MAX_DECOMPRESSED),
        26
    );
    assert_eq!(compression::zstd::window_log_max(usize::MAX), 27);
}
