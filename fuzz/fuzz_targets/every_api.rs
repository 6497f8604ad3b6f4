//! Every message the registry declares (`kdp_wire::registry::DECLARED`), at
//! every declared version (the first two bytes pick which): strict
//! decoding, canonical re-encoding, the JSON form. A new API in the
//! registry is fuzzed here without a new target.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::every_api(data);
});
