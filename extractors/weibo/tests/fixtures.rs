//! Replays every recorded case under `fixtures/` (native, no wasm).

#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_weibo::Weibo>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}
