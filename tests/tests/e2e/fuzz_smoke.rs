//! Fuzz smoke on stable: every cargo-fuzz target's body
//! (`fuzz/bodies/`, the very functions the nightly targets call) on a fixed
//! number of generated inputs — raw bytes, and strings stitched from the
//! fragments the parsers care about (tags, quotes, escapes, multi-byte
//! characters, URLs, JSON). `MEDIAPARSE_FUZZ_CASES` (default 2,000 per
//! target) sets the count; the README records the last long run.

#[path = "../../../fuzz/bodies/host.rs"]
mod host_bodies;
#[path = "../../../fuzz/bodies/sdk.rs"]
mod sdk_bodies;

use proptest::prelude::*;

const FRAGMENTS: &[&str] = &[
    "<script id=\"__UNIVERSAL_DATA_FOR_REHYDRATION__\" type=\"application/json\">",
    "<script id=\"RENDER_DATA\">",
    "</script>",
    "<meta id=\"x\" content=\"",
    "<a href='",
    "window.__INITIAL_STATE__=",
    "_ROUTER_DATA = ",
    "a=",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    ";",
    "'",
    "\"",
    "`",
    "\\",
    "\\u00",
    "\\x4",
    "&amp;",
    "&#x",
    "&quot;",
    "ո",
    "🌅",
    "\u{0}",
    "\n",
    " ",
    "undefined",
    "null",
    "true",
    "1e309",
    "-0",
    "new Date(1)",
    "https://www.tiktok.com/@a/video/7305827432509082913",
    "https://v.douyin.com/abc/",
    "http://",
    "%2F",
    "?a=b#c",
    "{\"url\":",
    "{\"link\":",
    "\"https://x.com/a/status/1\"",
];

fn fragments() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..48)
        .prop_map(|parts| parts.concat().into_bytes())
}

fn inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..512), fragments()]
}

fn config() -> ProptestConfig {
    let cases = std::env::var("MEDIAPARSE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn html(data in inputs()) {
        sdk_bodies::html(&data);
    }

    #[test]
    fn jsobj(data in inputs()) {
        sdk_bodies::jsobj(&data);
    }

    #[test]
    fn urls(data in inputs()) {
        sdk_bodies::urls(&data);
    }

    #[test]
    fn body(data in inputs()) {
        host_bodies::body(&data);
    }
}

/// The crash the fuzzer once found (README "Fuzzing"), kept as a case.
#[test]
fn known_crashers_stay_fixed() {
    sdk_bodies::jsobj("'ո".as_bytes());
    host_bodies::body(b"{\"url\":\"\\ud800\"}");
}
