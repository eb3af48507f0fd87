//! The SDK fuzz targets' bodies, one function each: the cargo-fuzz targets
//! (`fuzz/fuzz_targets/`, nightly) and the stable smoke test
//! (`tests/tests/e2e/fuzz_smoke.rs`, in CI) both include this file, so the
//! smoke test exercises exactly what the fuzzer does.

use mediaparse_sdk::{html, jsobj, share, urls};

/// Where `part` sits in `text`: `part` must be a slice of it.
fn offset_in(text: &str, part: &str) -> usize {
    let start = part.as_ptr() as usize - text.as_ptr() as usize;
    assert!(
        start + part.len() <= text.len(),
        "a returned slice lies outside the input"
    );
    start
}

/// `value` is one balanced object or array: it opens with `{` or `[`,
/// closes with the matching bracket, and `balanced` finds exactly it again.
fn assert_balanced(value: &str) {
    let close = match value.as_bytes().first() {
        Some(b'{') => b'}',
        Some(b'[') => b']',
        _ => panic!("balanced value {value:?} does not open an object or array"),
    };
    assert_eq!(value.as_bytes().last(), Some(&close), "{value:?}");
    assert_eq!(html::balanced(value), Some(value));
}

/// HTML helpers: no panic; what they return is the part of the input they
/// promise (a script element's content, the value after `name =`, a
/// balanced object). Bytes that are not UTF-8 are replaced, so every input
/// reaches the parsers.
pub fn html(data: &[u8]) {
    let text = &String::from_utf8_lossy(data);
    for id in ["__UNIVERSAL_DATA_FOR_REHYDRATION__", "RENDER_DATA", "x"] {
        if let Some(script) = html::script_by_id(text, id) {
            // Inside a start tag carrying the id, up to the next `</script`.
            let at = offset_in(text, script);
            let before = text[..at].trim_end();
            assert!(before.ends_with('>'), "{script:?} does not follow a tag");
            assert!(before.contains(id), "{script:?}: no tag with id {id}");
            let after = text[at + script.len()..].trim_start();
            assert!(
                after.to_ascii_lowercase().starts_with("</script"),
                "{script:?} is not followed by </script"
            );
            assert!(!script.to_ascii_lowercase().contains("</script"));
        }
        let _ = html::attr_by_id(text, id, "content");
    }
    for name in ["window.__INITIAL_STATE__", "_ROUTER_DATA", "a"] {
        if let Some(value) = html::assigned_value(text, name) {
            // `name`, then `=`, then the balanced value.
            let at = offset_in(text, value);
            let before = text[..at].trim_end();
            let assigned = before.strip_suffix('=').map(str::trim_end);
            assert!(
                assigned.is_some_and(|b| b.ends_with(name)),
                "{value:?} is not assigned to {name}"
            );
            assert_balanced(value);
        }
    }
    if let Some(b) = html::balanced(text) {
        assert_eq!(offset_in(text, b), 0, "balanced starts at the start");
        assert_balanced(b);
    }
    let _ = html::decode_entities(text);
    for tag in html::tags(text).take(1000) {
        assert!(tag.end <= text.len() && text.is_char_boundary(tag.end));
        assert_eq!(text.as_bytes()[tag.end - 1], b'>', "a tag ends after its >");
        let _ = tag.attr("href");
        let _ = tag.attr("content");
    }
}

/// JavaScript object literals: no panic; whatever `parse` accepts is valid JSON once printed.
pub fn jsobj(data: &[u8]) {
    let text = &String::from_utf8_lossy(data);
    let _ = jsobj::to_json(text);
    if let Ok(value) = jsobj::parse(text) {
        let printed = value.to_string();
        assert!(serde_json::from_str::<serde_json::Value>(&printed).is_ok());
    }
}

/// Input URL parsing and share-text URL finding: no panic.
pub fn urls(data: &[u8]) {
    let text = &String::from_utf8_lossy(data);
    if let Some(url) = share::first_url(text) {
        let _ = urls::InputUrl::parse(&url);
    }
    let _ = urls::InputUrl::parse(text);
}
