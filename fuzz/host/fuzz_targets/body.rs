//! The parse request body parser on arbitrary bytes: no panic; an accepted
//! body yields a string that was in it (after JSON unescaping) and is never
//! longer than the body.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(input) = mediaparse::http::body::parse_input(data) {
        assert!(input.len() <= data.len());
    }
});
