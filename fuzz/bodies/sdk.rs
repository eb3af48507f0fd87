//! The SDK fuzz targets' bodies, one function each: the cargo-fuzz targets
//! (`fuzz/fuzz_targets/`, nightly) and the stable smoke test
//! (`tests/tests/e2e/fuzz_smoke.rs`, in CI) both include this file, so the
//! smoke test exercises exactly what the fuzzer does.

use mediaparse_sdk::{html, jsobj, share, urls};

/// HTML helpers: no panic; what they return is a slice of the input where they promise one.
pub fn html(data: &[u8]) {
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
}

/// JavaScript object literals: no panic; whatever `parse` accepts is valid JSON once printed.
pub fn jsobj(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = jsobj::to_json(text);
    if let Ok(value) = jsobj::parse(text) {
        let printed = value.to_string();
        assert!(serde_json::from_str::<serde_json::Value>(&printed).is_ok());
    }
}

/// Input URL parsing and share-text URL finding: no panic.
pub fn urls(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(url) = share::first_url(text) {
        let _ = urls::InputUrl::parse(&url);
    }
    let _ = urls::InputUrl::parse(text);
}
