//! The SDK's HTML helpers on arbitrary text: no panic, and what they return
//! is a slice of the input where they promise one.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)] // each target uses one body
#[path = "../bodies/sdk.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::html(data));
