//! JavaScript object literals to JSON on arbitrary text: no panic, and
//! whatever `parse` accepts is valid JSON once printed.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)] // each target uses one body
#[path = "../bodies/sdk.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::jsobj(data));
