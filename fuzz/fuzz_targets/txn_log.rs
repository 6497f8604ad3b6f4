//! `__transaction_state` keys and values (the first byte picks which):
//! strict decoding, canonical re-encoding, JSON round trip. The check lives
//! in `kdp_wire::fuzz_checks`, shared with the `fuzz_corpus` test.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::txn_log(data);
});
