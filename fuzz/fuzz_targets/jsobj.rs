//! JavaScript object literals to JSON on arbitrary text: no panic, and
//! whatever `parse` accepts is valid JSON once printed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaparse_sdk::jsobj;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = jsobj::to_json(text);
    if let Ok(value) = jsobj::parse(text) {
        let printed = value.to_string();
        assert!(serde_json::from_str::<serde_json::Value>(&printed).is_ok());
    }
});
