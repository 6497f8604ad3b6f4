//! A records blob: batch framing, CRC, decompression (bounded at 1 MiB),
//! records, control records, and re-encoding what decodes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::record_batches(data);
});
