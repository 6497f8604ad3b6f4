//! Every message the registry declares, through its view
//! (`kdp_wire::view`), input picked as in `every_api` (two selector bytes,
//! then the body): the view's check accepts exactly what the owned decoder
//! accepts, fails with the same error (kind, byte offset, field path), and
//! the view of an accepted body reads, accessor by accessor, the decoder's
//! value. The check lives in `kdp_wire::fuzz_checks::every_view`, shared
//! with the `fuzz_corpus` test.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::every_view(data);
});
