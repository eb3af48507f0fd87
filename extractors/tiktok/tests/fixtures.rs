//! Replays every recorded case under `fixtures/` (SDK harness, no wasm).

use mediaparse_extractor_tiktok::TikTok;

#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<TikTok>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}
