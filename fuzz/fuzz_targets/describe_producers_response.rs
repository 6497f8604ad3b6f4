//! Decode arbitrary bytes; whatever is accepted must re-encode to exactly
//! the input and decode again to the same value. The check itself lives in
//! `kdp_wire::fuzz_checks`, shared with the `fuzz_corpus` test.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::describe_producers_response(data);
});
