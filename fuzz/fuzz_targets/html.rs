//! The SDK's HTML helpers on arbitrary text: no panic, and what they return
//! is a slice of the input where they promise one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaparse_sdk::html;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for id in ["__UNIVERSAL_DATA_FOR_REHYDRATION__", "RENDER_DATA", "x"] {
        if let Some(script) = html::script_by_id(text, id) {
            assert!(text.contains(script));
        }
        let _ = html::attr_by_id(text, id, "content");
    }
    for name in ["window.__INITIAL_STATE__", "_ROUTER_DATA", "a"] {
        if let Some(value) = html::assigned_value(text, name) {
            assert!(text.contains(value));
        }
    }
    if let Some(b) = html::balanced(text) {
        assert!(text.starts_with(b) || text.contains(b));
    }
    let _ = html::decode_entities(text);
    for tag in html::tags(text).take(1000) {
        let _ = tag.attr("href");
        let _ = tag.attr("content");
    }
});
