//! The parse request body parser on arbitrary bytes: no panic; an accepted
//! body yields a string never longer than the body.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../bodies/host.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::body(data));
