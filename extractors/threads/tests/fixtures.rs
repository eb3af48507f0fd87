#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_threads::Threads>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}
