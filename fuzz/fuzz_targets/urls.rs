//! Input URL parsing and share-text URL finding on arbitrary text: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)] // each target uses one body
#[path = "../bodies/sdk.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::urls(data));
