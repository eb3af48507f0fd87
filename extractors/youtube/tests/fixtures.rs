#[test]
fn fixtures_replay() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_youtube::YouTube>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}
