//! The host fuzz target's body (`fuzz/host/fuzz_targets/body.rs`, nightly),
//! also run by the stable smoke test (`tests/tests/e2e/fuzz_smoke.rs`).

/// The parse request body parser: no panic; an accepted body yields a
/// string never longer than the body.
pub fn body(data: &[u8]) {
    if let Ok(input) = mediaparse::http::body::parse_input(data) {
        assert!(input.len() <= data.len());
    }
}
