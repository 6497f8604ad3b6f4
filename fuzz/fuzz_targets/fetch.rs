//! Fetch requests and responses at every version kdp declares (the first
//! byte picks which), and the record batches of an accepted response.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdp_wire::fuzz_checks::fetch(data);
});
