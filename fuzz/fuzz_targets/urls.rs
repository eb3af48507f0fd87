//! Input URL parsing and share-text URL finding on arbitrary text: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaparse_sdk::{share, urls};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(url) = share::first_url(text) {
        let _ = urls::InputUrl::parse(&url);
    }
    let _ = urls::InputUrl::parse(text);
});
